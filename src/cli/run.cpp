// The entry point behind main(): global options, --version, and dispatch to the named command.
#include "cli/run.hpp"

#include <exception>
#include <ostream>

#include "commands.hpp"
#include "knowledge/knowledge_base.hpp"

namespace cli {

namespace {
std::string version_text() {
  const auto& f = knowledge::KnowledgeBase::embedded().facts();
  return std::string("stackpin ") + STACKPIN_VERSION + " (knowledge: " + std::to_string(f.cudnn_archives.size()) +
         " cuDNN archives, " + std::to_string(f.driver_releases.size()) + " CUDA driver minimums, " +
         std::to_string(f.torch.size()) + " PyTorch, " + std::to_string(f.tensorflow.size()) + " TensorFlow and " +
         std::to_string(f.onnxruntime.size()) + " ONNX Runtime entries)";
}
}  // namespace

int run(const std::vector<std::string>& args, Io& io) {
  bool no_color = io.env.get("NO_COLOR").has_value();
  Context ctx{io, Style{io.out_is_tty && !no_color}, Style{io.err_is_tty && !no_color}, {}};

  CLI::App app{"stackpin: reproducible CUDA/cuDNN stacks from one manifest", "stackpin"};
  app.set_version_flag("--version", version_text());
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 the operation found a problem, 2 usage error, 3 nothing to run on (no GPU/driver), "
      "70 internal error.\nRun `stackpin COMMAND --help` for a command's options.");
  add_check(app, ctx);
  add_verify(app, ctx);
  add_stage(app, ctx);
  add_deb(app, ctx);
  add_convtest(app, ctx);
  add_generate(app, ctx);
  add_diff(app, ctx);
  add_doctor(app, ctx);
  add_capture(app, ctx);
  add_lock(app, ctx);
  add_fetch(app, ctx);
  add_apply(app, ctx);

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
  try {
    return ctx.action();
  } catch (const std::exception& e) {
    util::Error err(util::ErrorCode::internal, std::string("internal error: ") + e.what());
    err.hints.push_back("this is a bug in stackpin; please report it with the command you ran");
    render_error(io.err, err, ctx.err_style);
    return k_exit_internal;
  }
}

}  // namespace cli
