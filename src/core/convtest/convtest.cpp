// `stackpin convtest` and apply's conv test step: expectations from a manifest or flags, the run,
// the judgement (convtest_judge.cpp).
#include "core/convtest/convtest.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/gpu_code.hpp"
#include "probe/cudnn_whole.hpp"

namespace core {

model::ConvExpectations convtest_expectations(const ConvtestOptions& o, const knowledge::KnowledgeBase& kb) {
  model::ConvExpectations e;
  if (const auto* m = o.manifest) {
    if (m->cudnn) {
      e.cudnn = m->cudnn->version.value.text();
      if (m->cudnn->cuda) e.cuda_major = m->cudnn->cuda->value;
    }
    if (!e.cuda_major && m->cuda) e.cuda_major = static_cast<int>(m->cuda->version.value.major());
    if (auto need = kb.required_driver(*m, o.driver_os); need.required) e.min_driver = need.required->text();
  }
  if (o.expect_cudnn) e.cudnn = o.expect_cudnn;
  if (o.expect_cuda) e.cuda_major = o.expect_cuda;
  if (o.expect_driver) e.min_driver = o.expect_driver;
  return e;
}

namespace {

// convtest runs where the libraries are: the JIT cache it names is this system's
#ifdef _WIN32
constexpr model::Os k_here = model::Os::windows;
#else
constexpr model::Os k_here = model::Os::linux;
#endif

}  // namespace

void judge_gpu_architectures(model::ConvReport& r, const knowledge::KnowledgeBase& kb, const model::Manifest* m,
                             std::vector<model::Finding>& out) {
  auto cudnn = model::Version::parse(r.cudnn_version);
  auto built = model::Version::parse(r.cudnn_built_with_cuda);
  const auto named = m ? kb.gpu_archs(*m) : std::map<model::Version, model::Pos>{};
  // what the loaded cuDNN's libraries carry decides, where they carry any; NVIDIA's support matrix
  // where they carry none (test doubles, a build without GPU code)
  const std::string dir = std::filesystem::path(r.cudnn.path).parent_path().string();
  probe::CudnnKernels loaded;
  if (!r.gpus.empty() && cudnn && !r.cudnn.path.empty()) {
    auto read = probe::read_cudnn_kernels(dir, static_cast<int>(cudnn->major()));
    if (read)
      loaded = std::move(*read);
    else
      loaded.unreadable.emplace_back(dir, read.error().message);
  }
  for (const auto& [file, why] : loaded.unreadable) {
    auto& f = model::add_finding(out, "convtest.gpu-kernels", model::Severity::warning, "cuDNN");
    f.seen = "the GPU code of the loaded cuDNN's libraries cannot be read: " + why;
  }
  const auto& kernels = loaded.libraries;
  // "12.4 / driver 550.54.14": the CUDA release the driver supports, and its version when known
  const auto slash = r.driver_version.find(" / ");
  const auto driver_cuda = model::Version::parse(r.driver_version.substr(0, slash));
  const auto at = r.driver_version.find("driver ");
  const auto driver = at == std::string::npos ? std::nullopt : model::Version::parse(r.driver_version.substr(at + 7));
  for (auto& g : r.gpus) {
    auto cc = model::Version::parse(std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor));
    if (!cc) continue;
    if (const auto* a = kb.gpu_arch(*cc)) g.architecture = a->name;
    const std::string subject =
        "GPU " + std::to_string(g.index) + " (" + cc->text() + (g.architecture.empty() ? "" : ", " + g.architecture) + ")";
    if (m && m->gpus && !named.count(*cc)) {
      auto& f = model::add_finding(out, "convtest.gpu-pinned", model::Severity::warning, subject);
      f.seen = g.name + " is not among the GPUs the manifest's [gpus] names";
      f.fix = "add \"" + cc->text() + "\" to [gpus] arch and run stackpin check, which judges cuDNN, nvcc and the frameworks for it";
      if (m->gpus->pos.line > 0) f.where = m->locate(m->gpus->pos);
    }
    if (!cudnn || !built) continue;  // no cuDNN loaded: judge_cudnn says why
    if (const auto j = judge_library_set(kernels, *cc, driver, k_here, kb, driver_cuda); j.with_code > 0) {
      // a library with nothing for this GPU did not stop the convolutions that ran on it: what
      // they needed was elsewhere, and that library fails only the operations it serves
      const bool ran = std::any_of(r.cases.begin(), r.cases.end(), [&](const model::ConvCase& k) { return k.device == g.index; }) &&
                       std::all_of(r.cases.begin(), r.cases.end(), [&](const model::ConvCase& k) { return k.device != g.index || k.ok; });
      const bool downgrade = ran && j.severity == model::Severity::error;
      auto& f = model::add_finding(out, "convtest.gpu-kernels", downgrade ? model::Severity::warning : j.severity, subject);
      f.seen = "cuDNN " + cudnn->text() + " in " + dir + " (the one loaded): " + j.seen +
               (downgrade ? "; the convolutions above ran on it, so only what those libraries serve fails" : "");
      f.expected = j.expected;
      f.fix = j.fix;
      f.source = "the loaded cuDNN's libraries' fatbin containers, read here; PTX ISA release history (NVIDIA)";
      g.cudnn_kernels = j.verdict + " (read from the libraries)";
      continue;
    }
    bool nearest = false;
    const auto* row = kb.cudnn_arch_support(*cudnn, static_cast<int>(built->major()), &nearest);
    auto& f = model::add_finding(out, "convtest.gpu-arch", model::Severity::ok, subject);
    const std::string who = "cuDNN " + cudnn->text() + " for CUDA " + std::to_string(built->major());
    if (!row) {
      f.severity = model::Severity::note;
      f.seen = "the knowledge base has no support matrix for " + who;
      g.cudnn_kernels = "unknown";
      continue;
    }
    const std::string matrix = nearest ? " (support matrix of " + row->from.text() + ", the nearest the knowledge base has)" : "";
    f.source = knowledge::first_source(row->source);
    if (*cc < row->min_cc) {
      f.severity = model::Severity::error;
      f.seen = who + " supports compute capability " + row->min_cc.text() + " and newer" + matrix;
      f.fix = "pin a cuDNN whose support matrix includes " + cc->text() + " (stackpin check with [gpus] arch = [\"" + cc->text() +
              "\"] names one), or run on a newer GPU";
      g.cudnn_kernels = "below " + row->min_cc.text();
      continue;
    }
    auto k = knowledge::kernels_for(*cc, row->ccs, {});
    if (row->ccs.empty() || k.fit == knowledge::KernelFit::native) {
      g.cudnn_kernels = "native";
      f.seen = who + " lists " + cc->text() + matrix + ": the convolutions above ran kernels built for it";
    } else if (k.fit == knowledge::KernelFit::compatible) {
      g.cudnn_kernels = "compatible " + k.via.text();
      f.seen = who + " lists " + k.via.text() + ", binary compatible with " + cc->text() + matrix +
               ": its kernels ran, not ones built for " + cc->text();
    } else {
      f.severity = model::Severity::warning;
      g.cudnn_kernels = "not listed";
      f.seen = cc->text() + " is not in the support matrix of " + who + matrix + ": what ran was JIT-compiled from PTX, if anything";
      f.fix = "pin a newer cuDNN that lists it";
    }
  }
}

ConvtestReport convtest(const ConvtestOptions& o, const knowledge::KnowledgeBase& kb) {
  ConvtestReport r;
  r.expected = convtest_expectations(o, kb);
  r.report = probe::run_convtest(o.run);
  if (!o.framework.empty()) r.report.framework = probe::run_framework(o.framework, o.python);
  r.findings = judge_convtest(r.report, r.expected);
  judge_gpu_architectures(r.report, kb, o.manifest, r.findings);
  return r;
}

}  // namespace core
