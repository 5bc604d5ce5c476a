// stackpin apply MANIFEST [--target windows|linux] [--venv DIR] [--dest DIR] [--archives DIR] [--platform P]
//                [--locked] [--dry-run] [--no-doctor] [--no-convtest] [fetch options] [--json]
#include <ostream>

#include "commands.hpp"
#include "core/apply/apply.hpp"
#include "core/archives/lock.hpp"
#include "core/layout/dest.hpp"
#include "core/verdict.hpp"
#include "format/json.hpp"
#include "format/lock_file.hpp"
#include "format/receipt.hpp"
#include "util/env.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace cli {
namespace {
namespace fs = std::filesystem;

struct ApplyCli {
  std::string manifest, target, dest, archives, platform, out_dir, venv;
  FetchFlags fetch;
  bool dry_run = false, no_doctor = false, no_convtest = false, strict = false, force = false, remove_stale = false;
  std::optional<std::uint64_t> max_unpacked;
  std::optional<std::uint64_t> decoder_memory;  // MiB
};

std::string status_text(model::StepStatus s, const Style& st) {
  std::string t = model::to_string(s);
  switch (s) {
    case model::StepStatus::done:
    case model::StepStatus::passed: return st.green(t);
    case model::StepStatus::failed: return st.red(t);
    case model::StepStatus::planned: return st.bold(t);
    default: return t;
  }
}

void print_apply(std::ostream& os, const model::ApplyReport& r, const Style& st) {
  os << st.bold(r.dry_run ? "plan" : "apply") << " " << r.manifest << ": target " << r.target << ", layout " << r.layout << ", platform "
     << r.platform << (r.dest.empty() ? "" : ", DEST " + r.dest) << (r.dry_run ? " (--dry-run: nothing is changed)" : "") << "\n";
  for (const auto& s : r.steps) {
    std::string status = model::to_string(s.status);
    os << "  " << s.name << std::string(s.name.size() < 11 ? 11 - s.name.size() : 1, ' ') << status_text(s.status, st)
       << std::string(status.size() < 10 ? 10 - status.size() : 1, ' ') << s.detail << "\n";
    for (const auto& l : s.lines) os << std::string(23, ' ') << l << "\n";
  }
  if (r.failed())
    os << st.red("apply failed") << ": the steps after the failed one did not run\n";
  else if (r.dry_run)
    os << st.bold("nothing changed") << " (--dry-run)\n";
  else if (!r.changed())
    os << st.green("nothing to do") << ": this machine already has this exact stack; nothing was changed\n";
  else
    os << st.green("applied") << "\n";
  if (!r.remaining.empty()) {
    os << "remaining for you:\n";
    for (const auto& x : r.remaining) os << "  - " << x << "\n";
  }
}

// The Python lock apply installs, with its SHA-256: the one the lock --locked chose records, else the
// one the lock beside the manifest records; either lock must agree with the manifest of the day (a
// lock of other frameworks is refused, as --locked refuses it), and the Python lock with the lock.
// nullopt when there is none.
util::Result<std::optional<std::pair<model::PyLock, std::string>>> python_lock_for(Context& ctx, const model::Manifest& m,
                                                                                   const std::string& manifest) {
  using Found = std::optional<std::pair<model::PyLock, std::string>>;
  const fs::path lock_path = !ctx.lock.file.empty() ? fs::path(ctx.lock.file) : core::default_lock_path(manifest);
  std::error_code ec;
  if (!fs::exists(lock_path, ec)) return Found();
  SP_TRY_ASSIGN(auto lock, format::load_lock(lock_path));
  if (auto drift = core::apply_lock(m, lock); !drift) return drift.error();
  SP_TRY_ASSIGN(auto py, core::load_python_lock(lock, lock_path));
  if (!py) return Found();
  return Found(std::make_pair(std::move(*py), lock.python_lock_sha256));
}

Outcome run_apply(const ApplyCli& c, Context& ctx) {
  core::ApplyOptions o;
  auto m = load_manifest_for(ctx, c.manifest);
  if (!m) return m.error();
  const bool system_half = m->cudnn || (m->cuda && !m->cuda->components.empty());
  auto target = model::parse_target(c.target.empty() && !system_half ? "linux" : c.target);
  if (c.target.empty() && system_half)
    return util::Error(util::ErrorCode::usage, "--target windows|linux is required: " + c.manifest + " pins a system half to provision");
  if (!target || (*target != model::Target::windows && *target != model::Target::linux))
    return util::Error(util::ErrorCode::usage, "--target must be windows or linux");
  o.target = *target;
  if (!c.venv.empty()) {
    o.venv = fs::path(c.venv);
  } else if (m->python_venv) {
    fs::path v = m->python_venv->value;
    o.venv = v.is_relative() ? fs::path(c.manifest).parent_path() / v : v;
  }
  std::optional<std::pair<model::PyLock, std::string>> pylock;
  if (o.venv) {
    SP_TRY_ASSIGN(pylock, python_lock_for(ctx, *m, c.manifest));
    if (pylock) {
      o.pylock = &pylock->first;
      o.pylock_sha256 = pylock->second;
    }
  }
  if (!c.platform.empty()) {
    auto p = parse_platform_option(c.platform);
    if (!p) return p.error();
    o.platform = *p;
  }
  auto fetch = fetch_options_for(ctx, c.fetch);
  if (!fetch) return fetch.error();
  o.fetch = std::move(*fetch);
  if (!c.dest.empty()) o.dest = c.dest;
  if (o.target == model::Target::windows && util::host_is_windows()) {
    // on the Windows machine itself: the tree goes where the manifest says it lives, and doctor and
    // the conv test judge it there
    if (!o.dest && !core::manifest_tree(model::Target::windows, *m).empty()) o.dest = core::manifest_tree(model::Target::windows, *m);
    auto live = live_windows_options(ctx, "", std::nullopt);
    if (!live) return live.error();
    o.windows_machine = std::move(live).value();
  }
  o.archives_dir = c.archives;
  o.deb_dir = c.out_dir;
  o.dry_run = c.dry_run;
  o.force = c.force;
  o.remove_stale = c.remove_stale;
  o.max_unpacked = c.max_unpacked;
  if (c.decoder_memory) o.decoder_memory = *c.decoder_memory << 20;
  o.doctor = !c.no_doctor;
  o.convtest = !c.no_convtest;
  o.manifest_path = c.manifest;
  o.manifest_sha256 = m->sha256;
  o.stackpin_version = STACKPIN_VERSION;
  o.env = &ctx.io.env;
  if (!ctx.json && ctx.io.err_is_tty) o.on_step = [&ctx](const std::string& step) { ctx.io.err << "==> " << step << "\n" << std::flush; };
  if (auto p = progress_printer(ctx, "staging"))
    o.progress = [p](const archive_io::Progress& pr) { p(pr.archive_bytes, pr.archive_total, pr.files); };

  auto r = core::apply(*m, knowledge::KnowledgeBase::embedded(), o);
  if (!r) return r.error();
  const auto& findings = r->findings;
  const model::ApplyStep* failed = r->failed_step();
  const util::Error* error = failed && failed->error ? &*failed->error : nullptr;
  // A failed step fails apply; the findings of its steps (doctor's, the conv test's) only under
  // --strict, where warnings count too.
  bool ok = !failed && !(c.strict && core::verdict(findings, true).failed);
  if (ctx.json) {
    ctx.io.out << format::envelope("apply", ok, findings, format::to_json(*r), error);
  } else {
    for (const auto& f : findings)
      if (f.severity == model::Severity::error || f.severity == model::Severity::warning) render_finding(ctx.io.out, f, ctx.out_style);
    print_apply(ctx.io.out, *r, ctx.out_style);
  }
  if (error) return exit_code_for(*error);
  return ok ? k_exit_ok : k_exit_failed;
}

}  // namespace

void add_apply(Command& app, Context& ctx) {
  auto c = std::make_shared<ApplyCli>();
  auto* cmd = app.add_subcommand("apply",
                                 "Provision this machine (or a Windows tree) from a manifest: fetch, verify, stage or install, "
                                 "activation scripts, doctor, conv test; idempotent");
  cmd->add_option("MANIFEST", c->manifest, "The manifest")->required();
  cmd->add_option("--target", c->target, "windows or linux (required unless the manifest pins the Python environment alone)");
  cmd->add_option("--venv", c->venv,
                  "The Python environment to provision from the Python lock (default: [python] venv, relative to the manifest)");
  cmd->add_option("--dest", c->dest,
                  "DEST: the local folder that becomes the prefix (linux default: [targets.linux] prefix; windows: required, "
                  "except on Windows, where it defaults to [targets.windows] prefix, or cuda_path for cuda-merge)");
  cmd->add_option("--archives", c->archives, "A folder holding the archive (searched before the cache and the network)");
  cmd->add_option("--platform", c->platform,
                  "The archive's platform (default: the manifest's Windows platform, windows-x86_64 or with arch = \"arm64\" "
                  "windows-arm64; or this machine's Linux platform)");
  cmd->add_option("--out-dir", c->out_dir, "layout = \"deb\": where the packages are written (default: the cache's debs/)");
  cmd->add_flag("--force", c->force, "As stage --force: replace a previous staging even where its files were modified");
  cmd->add_flag("--remove-stale", c->remove_stale, "As stage --remove-stale: move other cuDNN DLLs in the tree to .stackpin/backup/");
  cmd->add_option("--max-unpacked", c->max_unpacked, "Refuse archives that expand past BYTES (default 16x the archive)");
  cmd->add_option("--decoder-memory", c->decoder_memory, "As stage --decoder-memory (MiB)")->check_range(1, 1 << 20);
  cmd->add_flag("--dry-run", c->dry_run, "Print the plan; change nothing and download nothing");
  cmd->add_flag("--no-doctor", c->no_doctor, "Skip the doctor step");
  cmd->add_flag("--no-convtest", c->no_convtest, "Skip the convolution test");
  cmd->add_flag("--strict", c->strict, "Fail (exit 1) on any doctor or conv test error or warning, also about the rest of the machine");
  add_json_flag(cmd, ctx);
  add_fetch_options(cmd, c->fetch);
  add_lock_options(cmd, ctx);
  cmd->callback([c, &ctx] { ctx.action = [c, &ctx] { return run_apply(*c, ctx); }; });
}

}  // namespace cli
