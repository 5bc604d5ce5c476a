// Prints an error with its file:line:col, the offending line and a hint, in colour when stderr is a terminal.
#include "render.hpp"

#include <ostream>

#include "cli/run.hpp"

namespace cli {

namespace {
std::string location_text(const util::SourceLocation& loc) {
  std::string s = loc.file;
  if (loc.line > 0) s += ":" + std::to_string(loc.line);
  if (loc.column > 0) s += ":" + std::to_string(loc.column);
  return s;
}

void render_excerpt(std::ostream& os, const util::SourceLocation& loc, const Style& style) {
  if (loc.line <= 0 || loc.excerpt.empty()) return;
  std::string num = std::to_string(loc.line);
  std::string pad(num.size(), ' ');
  os << "  " << pad << " |\n";
  os << "  " << num << " | " << loc.excerpt << "\n";
  if (loc.column > 0) {
    // keep tabs so the caret lines up with the excerpt
    std::string lead;
    for (int i = 0; i < loc.column - 1 && i < static_cast<int>(loc.excerpt.size()); ++i) lead += loc.excerpt[i] == '\t' ? '\t' : ' ';
    os << "  " << pad << " | " << lead << style.red("^") << "\n";
  }
}
}  // namespace

void render_error(std::ostream& os, const util::Error& e, const Style& style) {
  // a message quoting a hostile value is cut here at the latest (the readers cut what they quote)
  constexpr std::size_t k_max_message = 4096;
  std::string message = e.message.size() > k_max_message ? e.message.substr(0, k_max_message) + "... (cut)" : e.message;
  os << style.red(style.bold("error")) << ": " << message << "\n";
  if (e.where) {
    os << "  --> " << location_text(*e.where) << "\n";
    render_excerpt(os, *e.where, style);
  }
  if (!e.context.empty()) os << "  while " << e.context << "\n";
  for (const auto& h : e.hints) os << "  " << style.cyan("hint") << ": " << h << "\n";
}

void render_finding(std::ostream& os, const model::Finding& f, const Style& style) {
  std::string sev = model::to_string(f.severity);
  std::string label;
  switch (f.severity) {
    case model::Severity::error: label = style.red(style.bold(sev)); break;
    case model::Severity::warning: label = style.yellow(style.bold(sev)); break;
    case model::Severity::note: label = style.cyan(sev); break;
    case model::Severity::ok: label = style.green(sev); break;
  }
  os << label << " [" << f.rule << "] " << f.subject;
  if (f.where && f.where->line > 0) os << style.dim("  (" + location_text(*f.where) + ")");
  os << "\n";
  auto line = [&](const char* key, const std::string& v) {
    if (!v.empty()) os << "    " << key << v << "\n";
  };
  line("seen:     ", f.seen);
  line("expected: ", f.expected);
  line("fix:      ", f.fix);
  if (!f.source.empty()) os << "    " << style.dim("source:   " + f.source) << "\n";
}

std::string summary(const model::FindingCounts& c) {
  auto n = [](int k, const char* one, const char* many) { return std::to_string(k) + " " + (k == 1 ? one : many); };
  return n(c.errors, "error", "errors") + ", " + n(c.warnings, "warning", "warnings") + ", " + n(c.notes, "note", "notes") + ", " +
         std::to_string(c.oks) + " ok";
}

int exit_code_for(const util::Error& e) {
  switch (e.code) {
    case util::ErrorCode::usage: return k_exit_usage;
    case util::ErrorCode::internal: return k_exit_internal;
    default: return k_exit_failed;
  }
}

}  // namespace cli
