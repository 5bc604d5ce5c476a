// stackpin activate MANIFEST [--dest DIR] [--scope user|machine] [--dry-run] [--undo]
//
// On Windows: the staged tree first on the User or Machine PATH, CUDNN_PATH, CUDA_PATH and
// CUDA_PATH_VX_Y, through the registry (core/provision/activate.hpp); --undo restores what the
// record in DEST\.stackpin says stackpin changed. On Linux/WSL2: the profile.d snippet and the
// ld.so.conf.d entry of the staged tree installed (machine), or sourced from ~/.profile (user).
#include <memory>

#include "commands.hpp"
#include "core/layout/dest.hpp"
#include "core/provision/activate.hpp"
#include "format/activation.hpp"
#include "util/env.hpp"

namespace cli {

namespace {

struct ActivateCli {
  std::string manifest, dest, scope = "user", root = "/";
  bool dry_run = false, undo = false;
};

std::string shown(const std::optional<std::string>& v) { return v ? *v : "(absent)"; }

void print_report(Context& ctx, const model::ActivationReport& r) {
  auto& out = ctx.io.out;
  const std::string verb = r.dry_run ? "would set" : "set";
  for (const auto& c : r.changes) {
    if (r.files) {
      const char* what = !c.changed() ? "unchanged"
                         : !c.after   ? (r.dry_run ? "would remove" : "removed")
                                      : (r.dry_run ? "would write" : "wrote");
      out << "  " << what << "  " << c.name << "\n";
      continue;
    }
    if (!c.changed()) {
      out << "  unchanged  " << c.name << " = " << shown(c.after) << "\n";
      continue;
    }
    out << "  " << (r.dry_run ? "would set" : "set      ") << "  " << c.name << "\n";
    out << "    before: " << shown(c.before) << "\n";
    out << "    after:  " << shown(c.after) << "\n";
  }
  for (const auto& e : r.path_removed)
    out << (r.undo ? "  put back on PATH: " : "  taken out of PATH (another cuDNN tree, or named twice): ") << e << "\n";
  for (const auto& s : r.stale)
    out << "  " << ctx.out_style.yellow("note") << ": a stale cuDNN DLL stays on PATH inside a CUDA directory: " << s << "\n";
  for (const auto& s : r.left_alone) out << "  " << ctx.out_style.yellow("left alone") << ": " << s << "\n";
  for (const auto& n : r.notes) out << "  " << ctx.out_style.yellow("note") << ": " << n << "\n";
  if (!r.changed()) {
    out << ctx.out_style.green(r.undo ? "nothing to restore" : "already active") << " in " << r.where << "\n";
    return;
  }
  if (r.dry_run) {
    out << "dry run: nothing was changed in " << r.where << "\n";
    return;
  }
  out << ctx.out_style.green(r.undo ? "restored" : "activated") << " in " << r.where << " (" << verb << " " << r.changes.size()
      << " value(s); " << (r.undo ? "record removed: " : "record: ") << r.record << ")\n";
  out << (r.files ? "Shells that are already open keep their old environment: open a new login shell.\n"
                  : "Terminals and programs that are already open keep their old environment: open a new terminal.\n");
}

void emit(Context& ctx, const model::ActivationReport& r) {
  if (ctx.json)
    ctx.io.out << format::envelope("activate", true, {}, format::to_json(r), nullptr);
  else
    print_report(ctx, r);
}

// Linux and WSL2: the profile.d snippet and the ld.so.conf.d entry (machine), or a snippet sourced
// from ~/.profile (user).
Outcome run_linux(const ActivateCli& c, const model::Manifest& m, util::EnvScope scope, Context& ctx) {
  core::LinuxActivateOptions o;
  o.scope = scope;
  o.dry_run = c.dry_run;
  o.undo = c.undo;
  o.root = c.root;
  o.env = &ctx.io.env;
  if (auto h = ctx.io.env.get("HOME")) o.home = *h;
  std::string dest = c.dest;
  if (dest.empty() && m.linux && m.linux->prefix) dest = m.linux->prefix->value;
  if (dest.empty())
    return util::Error(util::ErrorCode::usage, "no tree to activate: give --dest DIR, or a [targets.linux] prefix in the manifest");
  o.state = dest;
  auto r = core::activate_linux(m, o);
  if (!r) return r.error();
  emit(ctx, *r);
  return k_exit_ok;
}

Outcome run_activate(const ActivateCli& c, Context& ctx) {
  util::EnvScope scope = c.scope == "machine" ? util::EnvScope::machine : util::EnvScope::user;
  if (c.scope != "user" && c.scope != "machine")
    return util::Error(util::ErrorCode::usage, "--scope must be user or machine, not \"" + c.scope + "\"");
  auto loaded = load_manifest_for(ctx, c.manifest);
  if (!loaded) return loaded.error();
  const model::Manifest& m = *loaded;
  if (!util::host_is_windows()) return run_linux(c, m, scope, ctx);
  core::ActivateOptions o;
  o.scope = scope;
  o.dry_run = c.dry_run;
  o.undo = c.undo;
  std::string dest = c.dest.empty() ? core::manifest_tree(model::Target::windows, m) : c.dest;
  if (dest.empty())
    return util::Error(util::ErrorCode::usage, "no tree to activate: give --dest DIR, or a [targets.windows] prefix in the manifest");
  o.root = c.dest.empty() ? std::string() : dest;
  o.state = std::filesystem::path(dest);
  auto store = util::system_persistent_env();
  if (!store) return store.error();
  auto env = util::SystemEnv();
  auto current = (*store)->get(scope, "Path");
  core::WindowsTree tree = core::live_windows_tree(env, current && *current ? (*current)->value : "");
  auto r = core::activate_windows(m, knowledge::KnowledgeBase::embedded(), tree, **store, o);
  if (!r) return r.error();
  emit(ctx, *r);
  return k_exit_ok;
}

}  // namespace

void add_activate(Command& app, Context& ctx) {
  auto c = std::make_shared<ActivateCli>();
  auto* cmd =
      app.add_subcommand("activate",
                         "Make a staged tree the one new programs use: Windows PATH and CUDNN_PATH/CUDA_PATH in the registry, Linux "
                         "profile.d and ld.so.conf.d; --undo restores what it changed");
  cmd->add_option("MANIFEST", c->manifest, "The manifest")->required();
  cmd->add_option("--dest", c->dest,
                  "The staged tree (default: the manifest's prefix of this OS's target; cuda_path for a Windows cuda-merge)");
  cmd->add_option("--scope", c->scope,
                  "user (Windows: HKCU\\Environment; Linux: ~/.profile) or machine (Windows: HKLM, elevated; Linux: /etc/profile.d and "
                  "/etc/ld.so.conf.d, as root)")
      ->capture_default_str();
  cmd->add_option("--root", c->root, "Linux, machine scope: the file system to install into (an image or chroot; ldconfig runs only for /)")
      ->capture_default_str();
  cmd->add_flag("--dry-run", c->dry_run, "Show the exact new values; change nothing");
  cmd->add_flag("--undo", c->undo, "Restore the values from before activation that stackpin recorded in DEST\\.stackpin");
  add_json_flag(cmd, ctx);
  add_lock_options(cmd, ctx);
  cmd->callback([c, &ctx] { ctx.action = [c, &ctx] { return run_activate(*c, ctx); }; });
}

}  // namespace cli
