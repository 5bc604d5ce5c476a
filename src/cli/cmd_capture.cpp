// stackpin capture [-o FILE] [--name NAME] [--site-packages DIR]...
#include <ostream>

#include "commands.hpp"
#include "core/capture.hpp"
#include "core/doctor_linux.hpp"
#include "util/fs.hpp"

namespace cli {

namespace {

struct CaptureCli {
  std::string output, name;
  std::vector<std::string> site_packages;
};

int run_capture(const CaptureCli& c, Context& ctx) {
  const auto& kb = knowledge::KnowledgeBase::embedded();
  auto options = core::linux_machine_options(ctx.io.env, kb, nullptr);
  if (!c.site_packages.empty()) options.site_packages = c.site_packages;
  auto machine = probe::inspect_machine(options);
  core::CaptureOptions o;
  o.name = c.name;
  auto cap = core::capture(machine, kb, o);
  if (!cap) return fail(ctx, "capture", false, cap.error());
  std::string text = gen::render_manifest(cap->spec);
  for (const auto& n : cap->notes) ctx.io.err << "note: " << n << "\n";
  if (c.output.empty() || c.output == "-") {
    ctx.io.out << text;
    return k_exit_ok;
  }
  if (auto s = util::write_file_atomic(c.output, text); !s) return fail(ctx, "capture", false, s.error());
  ctx.io.err << "wrote " << c.output << " (cuDNN " << cap->spec.cudnn << "); check it with `stackpin check " << c.output << "`\n";
  return k_exit_ok;
}

}  // namespace

void add_capture(CLI::App& app, Context& ctx) {
  auto c = std::make_shared<CaptureCli>();
  auto* cmd = app.add_subcommand("capture", "Write this machine's GPU stack as a manifest a teammate can reproduce");
  cmd->add_option("-o", c->output, "Write to FILE instead of stdout");
  cmd->add_option("--name", c->name, "The manifest's name (default: derived from the OS and cuDNN)");
  cmd->add_option("--site-packages", c->site_packages, "Read installed frameworks from this site-packages (default: python3's)");
  cmd->callback([c, &ctx] { ctx.action = [c, &ctx] { return run_capture(*c, ctx); }; });
}

}  // namespace cli
