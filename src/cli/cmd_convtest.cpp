// stackpin convtest [--manifest M] [--cudnn PATH] [--cudart PATH] [--expect-cudnn V] [--expect-cuda N]
//                   [--expect-driver V] [--device N] [--quick] [--verbose] [--json]
#include "commands.hpp"
#include "convtest_render.hpp"
#include "core/convtest/convtest.hpp"
#include "format/manifest_reader.hpp"
#include "knowledge/knowledge_base.hpp"
#include "probe/machine.hpp"

namespace cli {

namespace {

struct ConvCli {
  std::string manifest, cudnn, cudart, expect_cudnn, expect_driver, framework, python = "python3";
  std::optional<int> expect_cuda, device;
  bool quick = false, verbose = false;
};

Outcome run_convtest_cmd(const ConvCli& c, Context& ctx) {
  core::ConvtestOptions o;
  std::optional<model::Manifest> m;
  if (!c.manifest.empty()) {
    auto loaded = format::load_manifest(c.manifest);
    if (!loaded) return loaded.error();
    m = std::move(loaded).value();
    o.manifest = &*m;
  }
  if (!c.expect_cudnn.empty()) o.expect_cudnn = c.expect_cudnn;
  o.expect_cuda = c.expect_cuda;
  if (!c.expect_driver.empty()) o.expect_driver = c.expect_driver;
  probe::MachineOptions here;
  here.env = &ctx.io.env;
  o.driver_os = probe::inspect_wsl(here).wsl ? model::Os::windows : model::Os::linux;
  o.run.cudnn_path = c.cudnn;
  o.run.cudart_path = c.cudart;
  o.run.device = c.device;
  o.run.quick = c.quick;
  o.framework = c.framework;
  o.python = c.python;
  auto r = core::convtest(o, knowledge::KnowledgeBase::embedded());
  return finish_convtest(ctx.io, r.report, r.findings, ctx.json, c.verbose);
}

}  // namespace

void add_convtest(Command& app, Context& ctx) {
  auto c = std::make_shared<ConvCli>();
  auto* cmd = app.add_subcommand("convtest", "Load CUDA and cuDNN as an application would and run real convolutions on every GPU");
  cmd->add_option("--manifest", c->manifest, "Compare what is loaded with this manifest's pins (cuDNN, CUDA major, driver minimum)");
  cmd->add_option("--cudnn", c->cudnn, "Load this libcudnn file instead of searching");
  cmd->add_option("--cudart", c->cudart, "Load this libcudart file instead of searching");
  cmd->add_option("--expect-cudnn", c->expect_cudnn, "Fail unless this cuDNN version is loaded (compared at three parts)");
  cmd->add_option("--expect-cuda", c->expect_cuda, "Fail unless the runtime and cuDNN's build are of this CUDA major");
  cmd->add_option("--expect-driver", c->expect_driver, "Fail when the NVIDIA driver is older than this");
  cmd->add_option("--device", c->device, "Only this GPU");
  cmd->add_option("--framework", c->framework, "Also run a convolution through torch, tensorflow or onnxruntime in --python")
      ->check_member({"torch", "tensorflow", "onnxruntime"});
  cmd->add_option("--python", c->python, "The Python interpreter of the framework's environment (default python3)");
  cmd->add_flag("--quick", c->quick, "One shape per operation and type");
  cmd->add_flag("--verbose", c->verbose, "One line per algorithm run");
  add_json_flag(cmd, ctx);
  cmd->callback([c, &ctx] { ctx.action = [c, &ctx] { return run_convtest_cmd(*c, ctx); }; });
}

}  // namespace cli
