// stackpin generate activate --shell sh MANIFEST [--prefix DIR] [-o FILE]
// stackpin generate ldconfig MANIFEST [--prefix DIR] [-o FILE]
// stackpin generate profile-d MANIFEST [--prefix DIR] [-o FILE]
#include <ostream>

#include "commands.hpp"
#include "core/activation.hpp"
#include "gen/activate_windows.hpp"
#include "knowledge/knowledge_base.hpp"
#include "format/manifest_reader.hpp"
#include "gen/activate.hpp"
#include "util/fs.hpp"

namespace cli {

namespace {

struct GenCli {
  std::string manifest, shell = "sh", prefix, output;
};

util::Result<gen::LinuxActivation> activation_for(const GenCli& c) {
  auto m = format::load_manifest(c.manifest);
  if (!m) return std::move(m).error();
  gen::LinuxActivation a;
  a.name = m->name.value;
  if (m->cudnn) a.cudnn_version = m->cudnn->version.value.text();
  if (!c.prefix.empty()) a.prefix = c.prefix;
  else if (m->linux && m->linux->prefix) a.prefix = m->linux->prefix->value;
  else
    return util::Error(util::ErrorCode::invalid, m->path + " has no [targets.linux] prefix")
        .with_hint("set prefix in [targets.linux], or pass --prefix DIR (where the staged tree lives)");
  if (a.prefix.empty() || a.prefix.front() != '/')
    return util::Error(util::ErrorCode::usage, "--prefix must be an absolute path, got \"" + a.prefix + "\"");
  return a;
}

int emit(Context& ctx, const std::string& output, const std::string& text) {
  if (output.empty() || output == "-") {
    ctx.io.out << text;
    return k_exit_ok;
  }
  if (auto s = util::write_file_atomic(output, text); !s) return fail(ctx, "generate", false, s.error());
  return k_exit_ok;
}

}  // namespace

void add_generate(CLI::App& app, Context& ctx) {
  auto* gen_cmd = app.add_subcommand("generate", "Generate files from a manifest");
  gen_cmd->require_subcommand(1);

  auto a = std::make_shared<GenCli>();
  auto* act = gen_cmd->add_subcommand("activate", "An activation script that puts the staged cuDNN first on the loader path");
  act->add_option("MANIFEST", a->manifest, "The manifest")->required();
  act->add_option("--shell", a->shell, "sh (Linux/WSL2), powershell or cmd (Windows)")
      ->check(CLI::IsMember({"sh", "powershell", "cmd"}));
  act->add_option("--prefix", a->prefix, "Where the staged tree lives (default: [targets.linux] prefix)");
  act->add_option("-o", a->output, "Write to FILE instead of stdout");
  act->callback([a, &ctx] {
    ctx.action = [a, &ctx] {
      if (a->shell != "sh") {
        auto m = format::load_manifest(a->manifest);
        if (!m) return fail(ctx, "generate", false, m.error());
        auto w = core::windows_activation(*m, knowledge::KnowledgeBase::embedded());
        if (!w) return fail(ctx, "generate", false, w.error());
        if (a->shell == "powershell") return emit(ctx, a->output, gen::render_activate_ps1(*w));
        auto text = gen::render_activate_cmd(*w);
        if (!text) return fail(ctx, "generate", false, text.error());
        return emit(ctx, a->output, *text);
      }
      auto act_for = activation_for(*a);
      if (!act_for) return fail(ctx, "generate", false, act_for.error());
      return emit(ctx, a->output, gen::render_activate_sh(*act_for));
    };
  });

  auto w = std::make_shared<GenCli>();
  auto* chk = gen_cmd->add_subcommand("windows-check", "check-cudnn.ps1: verifies a Windows machine against the manifest (files, PATH order, DLL search order, zlibwapi, VC++ runtime, driver)");
  chk->add_option("MANIFEST", w->manifest, "The manifest")->required();
  chk->add_option("-o", w->output, "Write to FILE instead of stdout");
  chk->callback([w, &ctx] {
    ctx.action = [w, &ctx] {
      auto m = format::load_manifest(w->manifest);
      if (!m) return fail(ctx, "generate", false, m.error());
      auto a = core::windows_activation(*m, knowledge::KnowledgeBase::embedded());
      if (!a) return fail(ctx, "generate", false, a.error());
      return emit(ctx, w->output, gen::render_check_ps1(*a));
    };
  });

  auto p = std::make_shared<GenCli>();
  auto* pd = gen_cmd->add_subcommand("profile-d", "An /etc/profile.d/ snippet: every login shell puts the staged cuDNN first on the loader path");
  pd->add_option("MANIFEST", p->manifest, "The manifest")->required();
  pd->add_option("--prefix", p->prefix, "Where the staged tree lives (default: [targets.linux] prefix)");
  pd->add_option("-o", p->output, "Write to FILE instead of stdout");
  pd->callback([p, &ctx] {
    ctx.action = [p, &ctx] {
      auto act_for = activation_for(*p);
      if (!act_for) return fail(ctx, "generate", false, act_for.error());
      return emit(ctx, p->output, gen::render_profile_d(*act_for));
    };
  });

  auto l = std::make_shared<GenCli>();
  auto* ld = gen_cmd->add_subcommand("ldconfig", "An /etc/ld.so.conf.d/ entry for the staged tree (system-wide, instead of LD_LIBRARY_PATH)");
  ld->add_option("MANIFEST", l->manifest, "The manifest")->required();
  ld->add_option("--prefix", l->prefix, "Where the staged tree lives (default: [targets.linux] prefix)");
  ld->add_option("-o", l->output, "Write to FILE instead of stdout");
  ld->callback([l, &ctx] {
    ctx.action = [l, &ctx] {
      auto act_for = activation_for(*l);
      if (!act_for) return fail(ctx, "generate", false, act_for.error());
      auto text = gen::render_ld_so_conf(*act_for);
      if (!text) return fail(ctx, "generate", false, text.error());
      return emit(ctx, l->output, *text);
    };
  });
}

}  // namespace cli
