// The entry point behind main(): global options, --version, and dispatch to the named command.
#include "cli/run.hpp"

#include <CLI/CLI.hpp>

#include <exception>
#include <functional>
#include <map>
#include <ostream>

#include "commands.hpp"
#include "knowledge/knowledge_base.hpp"

namespace cli {

namespace {
// What each option's value is, as --help and the man page show it ("--dest DIR"), where CLI11
// would say only TEXT or UINT. An option missing here keeps CLI11's word, and a test fails on it.
const std::map<std::string, std::string>& value_names() {
  static const std::map<std::string, std::string> names = {
      {"--app-dir", "DIR"},
      {"--archives", "DIR"},
      {"--cache-dir", "DIR"},
      {"--chunk-size", "BYTES"},
      {"--compression", "KIND"},
      {"--bake", "FILE"},
      {"--context", "DIR"},
      {"--convtest", "FILE"},
      {"--cudart", "FILE"},
      {"--cudnn", "FILE"},
      {"--cwd", "DIR"},
      {"--deadline", "SECONDS"},
      {"--dest", "DIR"},
      {"--from-registry", "URL"},
      {"--device", "INDEX"},
      {"--dll-dir", "DIR"},
      {"--drive", "D=DIR"},
      {"--env", "NAME=VALUE"},
      {"--expect-cuda", "MAJOR"},
      {"--expect-cudnn", "VERSION"},
      {"--expect-driver", "VERSION"},
      {"--lock", "FILE"},
      {"--maintainer", "'NAME <EMAIL>'"},
      {"--manifest", "FILE"},
      {"--max-unpacked", "BYTES"},
      {"--decoder-memory", "MIB"},
      {"--context-dir", "DIR"},
      {"--min-rate", "BYTES"},
      {"--mirror", "URL"},
      {"--name", "NAME"},
      {"--out-dir", "DIR"},
      {"--output", "FILE"},
      {"-o", "FILE"},
      {"--path", "PATH"},
      {"--platform", "PLATFORM"},
      {"--prefix", "DIR"},
      {"--python", "FILE"},
      {"--redistrib", "FILE"},
      {"--rate-window", "SECONDS"},
      {"--registry", "REGISTRY"},
      {"--retries", "COUNT"},
      {"--runner-label", "LABEL"},
      {"--scope", "SCOPE"},
      {"--retry-delay-ms", "MS"},
      {"--root", "DIR"},
      {"--sha256", "HEX"},
      {"--site-packages", "DIR"},
      {"--size", "BYTES"},
      {"--stall-timeout", "SECONDS"},
      {"--tag", "TAG"},
      {"--target", "TARGET"},
      {"--user-path", "PATH"},
      {"--venv", "DIR"},
      {"--windows-root", "DIR"},
  };
  return names;
}

bool generic_type(const std::string& t) { return t == "TEXT" || t == "UINT" || t == "INT" || t == "FLOAT"; }

void name_option_values(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    if (o->get_positional() || o->get_type_size() == 0 || !generic_type(o->get_type_name())) continue;
    const auto& names = value_names();
    std::string name = o->get_name();  // the longest name
    if (auto it = names.find(name); it != names.end()) o->type_name(it->second);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) name_option_values(*sub);
}

std::string version_text() {
  const auto& f = knowledge::KnowledgeBase::embedded().facts();
  return std::string("stackpin ") + STACKPIN_VERSION + " (knowledge: " + std::to_string(f.cudnn_archives.size()) + " cuDNN archives, " +
         std::to_string(f.driver_releases.size()) + " CUDA driver minimums, " + std::to_string(f.torch.size()) + " PyTorch, " +
         std::to_string(f.tensorflow.size()) + " TensorFlow and " + std::to_string(f.onnxruntime.size()) + " ONNX Runtime entries)";
}
}  // namespace

void define_commands(CLI::App& app, Context& ctx) {
  // computed when asked for: the knowledge base it counts is parsed by the commands that need it
  app.set_version_flag("--version", std::function<std::string()>(version_text));
  app.require_subcommand(1);
  app.footer(k_exit_codes_footer);
  Command& root = *ctx.registry.command(&app);
  add_check(root, ctx);
  add_verify(root, ctx);
  add_stage(root, ctx);
  add_deb(root, ctx);
  add_sbom(root, ctx);
  add_convtest(root, ctx);
  add_generate(root, ctx);
  add_diff(root, ctx);
  add_inspect(root, ctx);
  add_doctor(root, ctx);
  add_capture(root, ctx);
  add_lock(root, ctx);
  add_fetch(root, ctx);
  add_apply(root, ctx);
  add_activate(root, ctx);
  add_mirror(root, ctx);
  name_option_values(app);
}

int run(const std::vector<std::string>& args, Io& io) {
  bool no_color = io.env.get("NO_COLOR").has_value();
  Context ctx(io, Style{io.out_is_tty && !no_color}, Style{io.err_is_tty && !no_color});

  CLI::App app{k_summary, "stackpin"};
  define_commands(app, ctx);

  // CLI11 wants argv order with the program name first and parses from the back.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e, io.out, io.err);
    if (code == 0) return k_exit_ok;  // --help, --version
    io.err << "Run `stackpin --help` for usage.\n";
    return k_exit_usage;
  }
  if (!ctx.action) return k_exit_usage;
  std::string command;  // the envelope's "command": the top-level subcommand that was parsed
  for (const CLI::App* sub : app.get_subcommands()) command = sub->get_name();
  try {
    auto outcome = ctx.action();
    return outcome ? *outcome : fail(ctx, command, outcome.error());
  } catch (const std::exception& e) {
    util::Error err(util::ErrorCode::internal, std::string("internal error: ") + e.what());
    err.hints.push_back("this is a bug in stackpin; please report it with the command you ran");
    render_error(io.err, err, ctx.err_style);
    return k_exit_internal;
  }
}

}  // namespace cli
