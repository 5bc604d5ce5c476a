// The stackpin(1) man page, written from the same CLI11 definitions that `--help` prints, so the
// two cannot disagree: every command, subcommand, option and positional with its help text.
#include "cli/man.hpp"

#include <CLI/CLI.hpp>

#include <ostream>
#include <sstream>

#include "commands.hpp"

namespace cli {

namespace {

// Text for a roff line: backslashes are escaped, hyphens become \- (so a copied option is a real
// minus), and a line that would open with '.' or '\'' (a request) is guarded with \&.
std::string roff(const std::string& text, bool line_start = true) {
  std::string out;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = false;
    switch (c) {
      case '\\': out += "\\e"; break;
      case '-': out += "\\-"; break;
      case '\n':
        out += '\n';
        line_start = true;
        break;
      default: out += c;
    }
  }
  return out;
}

bool shown(const CLI::Option* o) { return !o->get_group().empty(); }

// "--dest DIR": the names in bold, the value in italics; positionals as their name in italics.
std::string option_tag(const CLI::Option* o) {
  if (o->get_positional()) return "\\fI" + roff(o->get_name(true), false) + "\\fR";
  std::string names = o->get_name(false, true);
  std::string tag;
  std::stringstream in(names);
  for (std::string name; std::getline(in, name, ',');) {
    if (!tag.empty()) tag += ", ";
    tag += "\\fB" + roff(name, false) + "\\fR";
  }
  if (o->get_type_size() != 0 && !o->get_type_name().empty()) tag += " \\fI" + roff(o->get_type_name(), false) + "\\fR";
  return tag;
}

// The options of `app`; --help only where `with_help` (every command has it; the page says so once).
void options(std::ostream& out, const CLI::App& app, bool with_help) {
  auto pick = [&](const CLI::Option* opt) { return shown(opt) && (with_help || opt->get_name() != "--help"); };
  for (const CLI::Option* o : app.get_options(pick)) {
    out << ".TP\n" << option_tag(o) << "\n";
    std::string text = o->get_description();
    if (o->get_required()) text += (text.empty() ? "" : " ") + std::string("(required)");
    if (!o->get_default_str().empty()) text += " (default: " + o->get_default_str() + ")";
    out << (text.empty() ? "\\&" : roff(text)) << "\n";
  }
}

std::vector<const CLI::App*> commands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return !sub->get_name().empty(); });
}

void synopsis_of(std::ostream& out, const CLI::App& app) {
  for (const CLI::Option* o : app.get_options([](const CLI::Option* opt) { return opt->get_positional() && shown(opt); })) {
    bool many = o->get_expected_max() > 1;
    out << " " << (o->get_required() ? "" : "[") << "\\fI" << roff(o->get_name(true), false) << "\\fR" << (many ? "..." : "")
        << (o->get_required() ? "" : "]");
  }
}

void command(std::ostream& out, const CLI::App& cmd, const std::string& path) {
  out << ".SS \"" << roff(path) << "\"\n";
  out << "\\fB" << roff(path) << "\\fR";
  if (!commands_of(cmd).empty()) out << " \\fICOMMAND\\fR";
  out << " [\\fIOPTIONS\\fR]";
  synopsis_of(out, cmd);
  out << "\n.PP\n" << roff(cmd.get_description()) << "\n";
  if (!cmd.get_footer().empty() && cmd.get_footer() != k_exit_codes_footer) out << ".PP\n" << roff(cmd.get_footer()) << "\n";
  options(out, cmd, false);
  for (const CLI::App* sub : commands_of(cmd)) command(out, *sub, path + " " + sub->get_name());
}

}  // namespace

void write_man_page(std::ostream& out) {
  std::ostringstream sink;
  util::MapEnv env;
  Io io{sink, sink, env, false, false};
  Context ctx(io, Style{false}, Style{false});
  CLI::App app{k_summary, "stackpin"};
  define_commands(app, ctx);

  out << ".\\\" stackpin(1): written by the build from the command definitions (src/cli/man.cpp); do not edit.\n";
  out << ".TH STACKPIN 1 \"\" \"stackpin " << STACKPIN_VERSION << "\" \"User Commands\"\n";
  out << ".SH NAME\nstackpin \\- reproducible CUDA and cuDNN stacks from one manifest\n";
  out << ".SH SYNOPSIS\n\\fBstackpin\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n.br\n\\fBstackpin\\fR \\fB\\-\\-version\\fR\n";
  out << ".SH DESCRIPTION\nA TOML manifest pins CUDA, cuDNN, the minimum driver, framework versions and GPUs; the commands "
         "below check it against the built-in knowledge base, fetch and verify NVIDIA's archives, stage, package and "
         "activate them, generate images, environments and scripts, test the result with a cuDNN convolution, and "
         "diagnose or capture a machine.\n";
  out << ".SH OPTIONS\n";
  options(out, app, true);
  out << ".SH COMMANDS\nEvery command also takes \\fB\\-h\\fR, \\fB\\-\\-help\\fR, which prints its options.\n";
  for (const CLI::App* cmd : commands_of(app)) command(out, *cmd, "stackpin " + cmd->get_name());
  out << ".SH EXIT STATUS\n";
  out << ".TP\n" << k_exit_ok << "\nSuccess; warnings alone do not fail unless \\fB\\-\\-strict\\fR.\n";
  out << ".TP\n" << k_exit_failed << "\nThe operation ran and found a problem.\n";
  out << ".TP\n" << k_exit_usage << "\nUsage error.\n";
  out << ".TP\n" << k_exit_nothing << "\nNothing to run on (no NVIDIA driver or GPU), when nothing else failed.\n";
  out << ".TP\n" << k_exit_internal << "\nInternal error (a bug in stackpin).\n";
  out << ".SH ENVIRONMENT\n.TP\n\\fBNO_COLOR\\fR\nWhen set, output is never coloured.\n";
  out << ".TP\n\\fBSTACKPIN_PYTHON\\fR\nThe Python interpreter whose pip resolves the Python lock and builds the environment \\fBapply\\fR "
         "provisions (default: python3 on PATH).\n";
  out << ".SH SEE ALSO\nThe documents under \\fIdocs/\\fR in stackpin's source tree (docs/manifest.md, docs/output.md "
         "and one page per command); \\fBstackpin\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR.\n";
}

}  // namespace cli
