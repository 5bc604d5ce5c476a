// stackpin doctor [--manifest M] [--windows-root DIR --path STR [--user-path STR] [--drive D=DIR]...
//                 [--app-dir WINPATH] [--cwd WINPATH] [--python WINPATH] [--dll-dir WINPATH]... [--env NAME=VALUE]...]
//                 [--strict] [--json]
#include <iomanip>
#include <ostream>

#include "commands.hpp"
#include "core/doctor/doctor.hpp"
#include "core/verdict.hpp"
#include "format/json.hpp"
#include "format/manifest_reader.hpp"
#include "knowledge/knowledge_base.hpp"
#include "util/env.hpp"

namespace cli {

namespace {

struct DoctorCli {
  std::string manifest, windows_root, path, user_path, app_dir, cwd, python;
  std::vector<std::string> drives, dll_dirs, env, site_packages;
  bool strict = false;
  Option* user_path_opt = nullptr;
};

// "D=DIR" / "NAME=VALUE" -> the two sides; nullopt without '=' or with an empty left side.
std::optional<std::pair<std::string, std::string>> split_assignment(const std::string& s) {
  auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0) return std::nullopt;
  return std::make_pair(s.substr(0, eq), s.substr(eq + 1));
}

std::string state_of(const model::SearchDir& d) {
  if (d.quoted) return "quoted";
  if (d.duplicate_of) return "dup of " + std::to_string(*d.duplicate_of + 1);
  switch (d.mapping) {
    case model::PathMapping::drive_unmapped: return "unmapped";
    case model::PathMapping::unc: return "UNC";
    case model::PathMapping::variable: return "variable";
    case model::PathMapping::relative:
      if (d.local_path.empty()) return "relative";
      break;
    default: break;
  }
  return d.exists ? "exists" : "missing";
}

void render_order(std::ostream& os, const model::SearchOrder& o, const Style& st) {
  os << "\n" << st.bold(o.title) << "\n";
  for (std::size_t i = 0; i < o.dirs.size(); ++i) {
    const auto& d = o.dirs[i];
    std::string state = state_of(d);
    std::string shown = state == "exists" ? st.green(state) : state == "missing" ? st.yellow(state) : st.dim(state);
    os << "  " << std::setw(3) << (i + 1) << "  " << shown << std::string(state.size() < 10 ? 10 - state.size() : 1, ' ')
       << (d.windows_path.empty() ? d.raw : d.windows_path) << "  " << st.dim("(" + d.why + ")") << "\n";
    if (!d.local_path.empty()) os << "                 " << st.dim(d.local_path) << "\n";
  }
  for (const auto& n : o.notes) os << "  " << st.dim("note: " + n) << "\n";
  if (o.dlls.empty()) return;
  os << "  DLLs, in the order this search finds them (the first one loads):\n";
  for (const auto& l : o.dlls) {
    os << "    " << st.bold(l.name);
    if (l.copies.empty()) {
      os << "  " << st.yellow("not found") << "\n";
      continue;
    }
    os << "\n";
    for (std::size_t i = 0; i < l.copies.size(); ++i) {
      const auto& c = l.copies[i];
      os << "      " << (i == 0 ? st.green("loads ") : st.dim("later ")) << c.windows_path << "  [" << (c.dir + 1) << "]";
      if (!c.version.empty()) os << "  cuDNN " << c.version << (c.version_from == "file name" ? " (from the name)" : "");
      if (!c.machine.empty() && c.machine != "x64") os << "  " << c.machine;
      os << "\n";
    }
  }
}

void render_text(std::ostream& os, const DoctorCli& o, const model::DoctorReport& r, const Style& st) {
  os << st.bold("stackpin doctor");
  if (r.windows && o.windows_root.empty()) {
    os << ": this Windows machine (PATH from the registry's Machine and User values, and its loader)";
  } else if (r.windows) {
    os << ": Windows tree";
    for (const auto& [drive, dir] : r.windows->drives) os << " " << drive << "\\ = " << dir;
  }
  if (!r.expected.manifest.empty()) {
    os << "; manifest " << r.expected.manifest;
    if (!r.expected.cudnn_version.empty()) os << " (cuDNN " << r.expected.cudnn_version;
    if (!r.expected.cuda_version.empty()) os << ", CUDA " << r.expected.cuda_version;
    if (!r.expected.cudnn_version.empty()) os << ")";
  }
  os << "\n";
  for (const auto& f : r.findings) render_finding(os, f, st);
  if (r.windows) {
    render_order(os, r.windows->desktop, st);
    if (r.windows->python_order) render_order(os, *r.windows->python_order, st);
  }
  auto v = core::verdict(r.findings, o.strict);
  os << "\n" << summary(v.counts) << (v.by_strict ? " (--strict: warnings fail)" : "") << "\n";
}

Outcome run_doctor(const DoctorCli& o, Context& ctx) {
  const auto& kb = knowledge::KnowledgeBase::embedded();
  std::optional<model::Manifest> manifest;
  if (!o.manifest.empty()) {
    auto m = format::load_manifest(o.manifest);
    if (!m) return m.error();
    manifest = std::move(m).value();
  }
  core::DoctorOptions opts;
  opts.manifest = manifest ? &*manifest : nullptr;
  opts.env = &ctx.io.env;
  opts.site_packages = o.site_packages;
  if (!o.windows_root.empty()) {
    core::WindowsDoctorOptions w;
    w.root = o.windows_root;
    w.path = o.path;
    if (o.user_path_opt && o.user_path_opt->count()) w.user_path = o.user_path;
    w.app_dir = o.app_dir;
    w.cwd = o.cwd;
    w.python = o.python;
    w.dll_dirs = o.dll_dirs;
    auto drives = parse_drives(o.drives);
    if (!drives) return drives.error();
    w.drives = std::move(drives).value();
    for (const auto& e : o.env) {
      auto kv = split_assignment(e);
      if (!kv)
        return util::Error(util::ErrorCode::usage, "--env " + e + ": expected NAME=VALUE")
            .with_hint("e.g. --env CUDA_PATH=\"C:\\CUDA\\v12.4\"");
      w.env[kv->first] = kv->second;
    }
    opts.windows = std::move(w);
  } else if (util::host_is_windows()) {
    // this Windows machine: its registry's PATH values (or the ones given), its drives, and its loader
    std::optional<std::string> user_path;
    if (o.user_path_opt && o.user_path_opt->count()) user_path = o.user_path;
    auto live = live_windows_options(ctx, o.path, user_path);
    if (!live) return live.error();
    auto w = std::move(live).value();
    w.app_dir = o.app_dir;
    if (!o.cwd.empty()) w.cwd = o.cwd;
    w.python = o.python;
    w.dll_dirs = o.dll_dirs;
    opts.windows = std::move(w);
  }
  auto report = core::doctor(opts, kb);
  if (!report) return report.error();
  auto v = core::verdict(report->findings, o.strict);
  if (ctx.json)
    ctx.io.out << format::envelope("doctor", !v.failed, report->findings, format::to_json(*report), nullptr);
  else
    render_text(ctx.io.out, o, *report, ctx.out_style);
  return v.failed ? k_exit_failed : k_exit_ok;
}

}  // namespace

void add_doctor(Command& app, Context& ctx) {
  auto c = std::make_shared<DoctorCli>();
  auto* cmd = app.add_subcommand("doctor", "Find what breaks a GPU stack: which cuDNN a program really loads, stale copies, missing DLLs");
  cmd->add_option("--site-packages", c->site_packages, "Linux: read installed frameworks from this site-packages (default: python3's)");
  cmd->add_option("--manifest", c->manifest, "Judge against this manifest's pins (cuDNN, CUDA, [targets.windows])");
  auto* root =
      cmd->add_option("--windows-root", c->windows_root, "Judge a Windows tree instead of this machine: the local directory C:\\ maps to");
  auto* path = cmd->add_option("--path", c->path, "The Windows PATH value (\"C:\\...;C:\\...\"), machine entries first");
  root->needs(path);
  // On Windows these describe the running machine too; elsewhere only a --windows-root tree
  auto about_a_tree = [&](Option* opt) {
    if (!util::host_is_windows()) opt->needs(root);
  };
  about_a_tree(path);
  c->user_path_opt =
      cmd->add_option("--user-path", c->user_path, "The User-scope PATH value: Windows appends it to the machine PATH given with --path");
  about_a_tree(c->user_path_opt);
  cmd->add_option("--drive", c->drives, "Map another drive letter: D=DIR (repeatable)")->needs(root);
  about_a_tree(cmd->add_option("--app-dir", c->app_dir, "The application's directory (default: python.exe's with --python)"));
  about_a_tree(cmd->add_option("--cwd", c->cwd, "The program's current directory"));
  about_a_tree(cmd->add_option("--python", c->python, "python.exe (3.8+) of the environment: also show what Python searches"));
  about_a_tree(cmd->add_option("--dll-dir", c->dll_dirs, "A directory the program adds with os.add_dll_directory (repeatable)"));
  cmd->add_option("--env", c->env, "NAME=VALUE for %NAME% in PATH entries beyond Windows' defaults (repeatable)")->needs(root);
  cmd->add_flag("--strict", c->strict, "Treat warnings as failures (exit 1)");
  add_json_flag(cmd, ctx);
  cmd->callback([c, &ctx] { ctx.action = [c, &ctx] { return run_doctor(*c, ctx); }; });
}

}  // namespace cli
