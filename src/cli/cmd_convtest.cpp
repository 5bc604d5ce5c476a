// stackpin convtest [--manifest M] [--cudnn PATH] [--cudart PATH] [--expect-cudnn V] [--expect-cuda N]
//                   [--expect-driver V] [--device N] [--quick] [--verbose] [--json]
#include "commands.hpp"
#include "convtest_render.hpp"
#include "format/manifest_reader.hpp"
#include "knowledge/knowledge_base.hpp"
#include "probe/convtest.hpp"

namespace cli {

namespace {

struct ConvCli {
  std::string manifest, cudnn, cudart, expect_cudnn, expect_driver, framework, python = "python3";
  std::optional<int> expect_cuda, device;
  bool quick = false, verbose = false, json = false;
};

int run_convtest_cmd(const ConvCli& c, Context& ctx) {
  probe::ConvExpectations e;
  if (!c.manifest.empty()) {
    auto m = format::load_manifest(c.manifest);
    if (!m) return fail(ctx, "convtest", c.json, m.error());
    if (m->cudnn) e.cudnn = m->cudnn->version.value.text();
    if (m->cuda) {
      e.cuda_major = static_cast<int>(m->cuda->version.value.major());
      const auto& kb = knowledge::KnowledgeBase::embedded();
      auto dm = kb.driver_minimum(m->cuda->version.value, model::Os::linux);
      if (m->driver && m->driver->linux) e.min_driver = m->driver->linux->value.text();
      else if (dm.release_min) e.min_driver = dm.release_min->text();
      else if (dm.family_floor) e.min_driver = dm.family_floor->text();
    }
  }
  if (!c.expect_cudnn.empty()) e.cudnn = c.expect_cudnn;
  if (c.expect_cuda) e.cuda_major = c.expect_cuda;
  if (!c.expect_driver.empty()) e.min_driver = c.expect_driver;
  probe::ConvOptions o;
  o.cudnn_path = c.cudnn;
  o.cudart_path = c.cudart;
  o.device = c.device;
  o.quick = c.quick;
  auto report = probe::run_convtest(o);
  if (!c.framework.empty()) report.framework = probe::run_framework(c.framework, c.python);
  return finish_convtest(ctx.io, report, probe::judge(report, e), c.json, c.verbose);
}

}  // namespace

void add_convtest(CLI::App& app, Context& ctx) {
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
      ->check(CLI::IsMember({"torch", "tensorflow", "onnxruntime"}));
  cmd->add_option("--python", c->python, "The Python interpreter of the framework's environment (default python3)");
  cmd->add_flag("--quick", c->quick, "One shape per operation and type");
  cmd->add_flag("--verbose", c->verbose, "One line per algorithm run");
  cmd->add_flag("--json", c->json, "Print one JSON document on stdout and nothing else there");
  cmd->callback([c, &ctx] { ctx.action = [c, &ctx] { return run_convtest_cmd(*c, ctx); }; });
}

}  // namespace cli
