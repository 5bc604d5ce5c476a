// stackpin diff A B [--strict] [--json]
#include <algorithm>
#include <filesystem>
#include <ostream>

#include "commands.hpp"
#include "core/archives/lock.hpp"
#include "core/diff/diff.hpp"
#include "core/verdict.hpp"
#include "format/json.hpp"
#include "format/lock_file.hpp"
#include "format/manifest_reader.hpp"

namespace cli {

namespace {

struct DiffOptions {
  std::string a, b;
  bool strict = false;
};

std::string weight_label(model::DiffWeight w, const Style& st) {
  std::string s = model::to_string(w);
  s += std::string(16 - std::min<std::size_t>(s.size(), 15), ' ');
  switch (w) {
    case model::DiffWeight::breaking: return st.red(st.bold(s));
    case model::DiffWeight::likely_breaking: return st.yellow(st.bold(s));
    case model::DiffWeight::compatible: return st.cyan(s);
    case model::DiffWeight::same: return st.green(s);
  }
  return s;
}

// `text` in lines of at most `width` characters (words are never split), each after `indent`.
std::string wrapped(const std::string& text, const std::string& indent, std::size_t width, const Style& st) {
  std::string out, line;
  auto flush = [&] {
    if (!line.empty()) out += indent + st.dim(line) + "\n";
    line.clear();
  };
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) flush();
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  flush();
  return out;
}

// "3 differences: 1 breaking, 1 likely breaking, 1 compatible"
std::string diff_summary(const model::DiffCounts& c) {
  int n = c.differences();
  return std::to_string(n) + (n == 1 ? " difference: " : " differences: ") + std::to_string(c.breaking) + " breaking, " +
         std::to_string(c.likely_breaking) + " likely breaking, " + std::to_string(c.compatible) + " compatible";
}

void render_diff(std::ostream& os, const model::DiffReport& r, bool strict, const Style& st) {
  os << "A: " << st.bold(r.a.path) << " (" << r.a.name << ")\n";
  os << "B: " << st.bold(r.b.path) << " (" << r.b.name << ")\n";
  auto c = r.counts();
  std::string compared = std::to_string(r.rows.size()) + " components compared";
  if (c.differences() == 0) {
    os << "\nA and B pin the same stack: no differences (" << compared << ")\n";
    return;
  }
  std::size_t width = 0;
  for (const auto& row : r.rows)
    if (row.weight != model::DiffWeight::same) width = std::max(width, row.component.size());
  const std::string indent(2 + 16 + 1, ' ');
  std::vector<std::string> groups;
  for (const auto& row : r.rows)
    if (row.weight != model::DiffWeight::same && std::find(groups.begin(), groups.end(), row.group) == groups.end())
      groups.push_back(row.group);
  for (const auto& g : groups) {
    os << "\n" << st.bold(g) << "\n";
    for (const auto& row : r.rows) {
      if (row.group != g || row.weight == model::DiffWeight::same) continue;
      std::string a = row.a.value_or("(not set)"), b = row.b.value_or("(not set)");
      os << "  " << weight_label(row.weight, st) << " " << row.component;
      if (width + a.size() + b.size() + 27 <= 110) {
        os << std::string(width - row.component.size(), ' ') << "  " << a << "  ->  " << b << "\n";
      } else {
        os << "\n" << indent << "A: " << a << "\n" << indent << "B: " << b << "\n";
      }
      os << wrapped(row.reason, indent, 100 - indent.size(), st);
    }
  }
  os << "\n" << diff_summary(c) << " (" << compared << ")";
  if (c.breaking == 0 && strict && c.likely_breaking > 0) os << " (--strict: likely-breaking differences fail)";
  os << "\n";
}

Outcome run_diff(const DiffOptions& o, Context& ctx) {
  auto a = format::load_manifest(o.a);
  auto b = format::load_manifest(o.b);
  if (!a || !b) {
    const util::Error& first = !a ? a.error() : b.error();
    if (ctx.json) return first;
    if (!a) render_error(ctx.io.err, a.error(), ctx.err_style);
    if (!b) render_error(ctx.io.err, b.error(), ctx.err_style);
    return exit_code_for(first);
  }
  // each manifest's lock, when one lies beside it: the GPU code `lock` read from its archives
  auto lock_of = [](const std::string& manifest) -> std::optional<model::Lock> {
    std::error_code ec;
    const auto path = core::default_lock_path(manifest);
    if (!std::filesystem::exists(path, ec)) return std::nullopt;
    auto lock = format::load_lock(path);
    return lock ? std::optional<model::Lock>(std::move(lock).value()) : std::nullopt;
  };
  const auto lock_a = lock_of(o.a), lock_b = lock_of(o.b);
  model::DiffReport report =
      core::diff_manifests(*a, *b, knowledge::KnowledgeBase::embedded(), lock_a ? &*lock_a : nullptr, lock_b ? &*lock_b : nullptr);
  auto v = core::verdict(report.findings, o.strict);  // breaking: error, likely breaking: warning
  if (ctx.json)
    ctx.io.out << format::envelope("diff", !v.failed, report.findings, format::to_json(report), nullptr);
  else
    render_diff(ctx.io.out, report, o.strict, ctx.out_style);
  return v.failed ? k_exit_failed : k_exit_ok;
}

}  // namespace

void add_diff(Command& app, Context& ctx) {
  auto opts = std::make_shared<DiffOptions>();
  auto* cmd = app.add_subcommand("diff", "Compare two manifests or captures and weigh every difference");
  cmd->add_option("A", opts->a, "The first manifest or capture")->required();
  cmd->add_option("B", opts->b, "The second manifest or capture")->required();
  cmd->add_flag("--strict", opts->strict, "Treat likely-breaking differences as failures (exit 1)");
  add_json_flag(cmd, ctx);
  cmd->footer(
      "Exit codes: 0 nothing breaking differs, 1 something breaking differs (or, with --strict, something "
      "likely breaking) or a manifest is bad, 2 usage error.");
  cmd->callback([opts, &ctx] { ctx.action = [opts, &ctx] { return run_diff(*opts, ctx); }; });
}

}  // namespace cli
