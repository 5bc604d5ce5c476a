// stackpin capture [-o FILE] [--name NAME] [--site-packages DIR]... [--root DIR]
// stackpin capture --windows-root DIR [--path STR] [--user-path STR] [--python WINPATH] [--drive D=DIR]... [-o FILE]
#include <cctype>
#include <ostream>

#include "commands.hpp"
#include "core/archives/nvidia_manifests.hpp"
#include "core/capture/capture.hpp"
#include "core/doctor/doctor_linux.hpp"
#include "format/json.hpp"
#include "util/env.hpp"
#include "util/fs.hpp"

namespace cli {

namespace {

struct CaptureCli {
  std::string output, name;
  std::vector<std::string> site_packages;
  std::string windows_root, path, user_path, python;
  std::string linux_root;
  std::vector<std::string> drives;
  std::string cache_dir;
  bool online = false;
  Option* user_path_opt = nullptr;
};

Outcome run_capture(const CaptureCli& c, Context& ctx) {
  const auto& kb = knowledge::KnowledgeBase::embedded();
  core::CaptureOptions o;
  o.name = c.name;
  // a cuDNN release the knowledge base lacks: NVIDIA's manifest of it, from the download cache or,
  // with --online, from NVIDIA (STACKPIN_NVIDIA_BASE or [nvidia] base)
  o.read_release = [&c, &ctx, &kb](const model::Version& three) -> util::Result<std::vector<model::CudnnArchiveFact>> {
    SP_TRY_ASSIGN(auto n, nvidia_options(ctx, c.cache_dir, !c.online));
    auto got = core::nvidia_cudnn_manifest(three, n);
    if (!got) {
      if (!c.online && got.error().code == util::ErrorCode::not_found)
        return util::Error(util::ErrorCode::not_found, "the download cache has no NVIDIA manifest of cuDNN " + three.text())
            .with_hint("run `stackpin capture --online` to read it from NVIDIA");
      return std::move(got).error();
    }
    return core::cudnn_facts_of(*got, kb.cudnn_base_url());
  };
  util::Result<core::Capture> cap = util::Error(util::ErrorCode::internal, "not run");
  if (!c.windows_root.empty()) {
    core::WindowsDoctorOptions w;
    w.root = c.windows_root;
    w.path = c.path;
    if (c.user_path_opt && c.user_path_opt->count()) w.user_path = c.user_path;
    w.python = c.python;
    auto drives = parse_drives(c.drives);
    if (!drives) return drives.error();
    w.drives = std::move(drives).value();
    cap = core::capture_windows(w, kb, o);
  } else if (util::host_is_windows() && c.linux_root.empty()) {
    // this Windows machine, as doctor sees it: the registry's PATH values, its drives
    auto live = live_windows_options(ctx, "", std::nullopt);
    if (!live) return live.error();
    auto w = std::move(live).value();
    w.python = c.python;
    cap = core::capture_windows(w, kb, o);
  } else {
    if (!c.python.empty())
      return util::Error(util::ErrorCode::usage, "--python is for a Windows machine: with --windows-root, or on Windows itself")
          .with_hint("on Linux, --site-packages DIR says which Python environment's frameworks to pin");
    auto options = core::linux_machine_options(ctx.io.env, kb, nullptr);
    if (!c.site_packages.empty()) options.site_packages = c.site_packages;
    if (!c.linux_root.empty()) {
      // Another machine's files (an unpacked image, a mounted disk): this machine's environment,
      // programs and driver say nothing about it.
      std::error_code ec;
      if (!std::filesystem::is_directory(c.linux_root, ec))
        return util::Error(util::ErrorCode::usage, "--root " + c.linux_root + " is not a directory")
            .with_hint("give the folder that holds the machine's /usr and /etc (e.g. an unpacked `docker export`)");
      options.root = c.linux_root;
      options.env = nullptr;
      options.run_programs = false;
      options.use_nvml = false;
    }
    auto machine = probe::inspect_machine(options);
    cap = core::capture(machine, kb, o);
  }
  if (!cap) return cap.error();
  std::string text = gen::render_manifest(cap->spec);
  bool to_stdout = c.output.empty() || c.output == "-";
  if (!to_stdout) {
    if (auto s = util::write_file_atomic(c.output, text); !s) return s.error();
  }
  if (ctx.json) {
    std::vector<model::Finding> findings;
    for (const auto& n : cap->notes) {
      auto& f = model::add_finding(findings, "capture.note", model::Severity::note, "capture");
      f.seen = n;
    }
    ctx.io.out << format::envelope("capture", true, findings,
                                   format::captured_json(text, c.output, cap->spec.name, cap->spec.cuda, cap->spec.cudnn), nullptr);
    return k_exit_ok;
  }
  for (const auto& n : cap->notes) ctx.io.err << "note: " << n << "\n";
  if (to_stdout)
    ctx.io.out << text;
  else
    ctx.io.err << "wrote " << c.output << " (cuDNN " << cap->spec.cudnn << "); check it with `stackpin check " << c.output << "`\n";
  return k_exit_ok;
}

}  // namespace

void add_capture(Command& app, Context& ctx) {
  auto c = std::make_shared<CaptureCli>();
  auto* cmd = app.add_subcommand("capture", "Write this machine's GPU stack as a manifest a teammate can reproduce");
  cmd->add_option("-o", c->output, "Write to FILE instead of stdout");
  cmd->add_option("--name", c->name, "The manifest's name (default: derived from the OS and cuDNN)");
  cmd->add_option("--site-packages", c->site_packages, "Read installed frameworks from this site-packages (default: python3's)");
  auto* root = cmd->add_option("--windows-root", c->windows_root,
                               "Capture the Windows machine mounted at DIR (from WSL2: /mnt/c) instead of this one");
  cmd->add_option("--path", c->path, "With --windows-root: that machine's PATH (\"C:\\...;C:\\...\"), machine entries first")->needs(root);
  c->user_path_opt = cmd->add_option("--user-path", c->user_path, "With --windows-root: its User-scope PATH value")->needs(root);
  cmd->add_option("--python", c->python,
                  "Windows (--windows-root, or on Windows itself): python.exe of the environment whose frameworks to pin");
  cmd->add_option("--drive", c->drives, "With --windows-root: map another drive letter, D=DIR (repeatable)")->needs(root);
  cmd->add_flag("--online", c->online,
                "Read NVIDIA's manifest of a cuDNN release the knowledge base and the download cache lack (STACKPIN_NVIDIA_BASE or "
                "[nvidia] base)");
  cmd->add_option("--cache-dir", c->cache_dir, "The download cache NVIDIA's manifests are kept in (default: stackpin's)");
  cmd->add_option("--root", c->linux_root,
                  "Capture the Linux file system at DIR (an unpacked image, a mounted disk) instead of this machine; "
                  "nothing in it is run")
      ->excludes(root);
  add_json_flag(cmd, ctx);
  cmd->callback([c, &ctx] { ctx.action = [c, &ctx] { return run_capture(*c, ctx); }; });
}

}  // namespace cli
