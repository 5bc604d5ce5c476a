// The Python half against the system half. On Linux, torch's CUDA wheels do not carry cuDNN,
// cuBLAS or the CUDA runtime: they depend on NVIDIA's wheels (nvidia-cudnn-cu13, ...), installed
// under site-packages/nvidia/<lib>/lib, and torch's libraries find them through their RPATH
// ($ORIGIN/../../nvidia/cudnn/lib), before anything on the system. The Python lock says exactly
// which of those wheels the environment gets, so the library a framework will load is known before
// anything is installed, and can be held against what the manifest pins for everything else.
#include <algorithm>
#include <cctype>
#include <regex>

#include "core/check/python_rules.hpp"
#include "util/strings.hpp"

namespace core {
namespace {

using model::Severity;
using model::Version;

struct Ctx {
  const model::Manifest& m;
  const model::PyLock& py;
  const knowledge::KnowledgeBase& kb;
  const knowledge::CudaCatalog& catalog;
  model::CheckReport& report;
  model::Platform platform;

  model::Finding& add(const char* rule, Severity s, const model::PyPackage& pkg) {
    report.examined.insert(rule);
    auto& f = model::add_finding(report.findings, rule, s, pkg.name + " " + pkg.version + " (" + model::to_string(platform) + ")");
    if (pkg.pos.line > 0) f.where = py.locate(pkg.pos);
    f.source = py.path + " (the Python lock)";
    return f;
  }
};

// The package of the lock on this platform whose name matches `re`; the first group, when any, in `suffix`.
const model::PyPackage* find(const Ctx& c, const std::regex& re, std::string* suffix = nullptr) {
  for (const auto& p : c.py.packages) {
    std::smatch m;
    if (!std::regex_match(p.name, m, re)) continue;
    if (!p.marker.empty() && p.marker.find(model::python_marker(c.platform)) == std::string::npos) continue;
    if (suffix) *suffix = m.size() > 1 ? m[1].str() : std::string();
    return &p;
  }
  return nullptr;
}

// The version of a wheel as a Version ("9.13.0.50"; a local label or post release cut off).
std::optional<Version> wheel_version(const std::string& v) {
  std::size_t n = 0;
  while (n < v.size() && (std::isdigit(static_cast<unsigned char>(v[n])) || v[n] == '.')) ++n;
  return Version::parse(v.substr(0, n));
}

void cudnn(Ctx& c) {
  static const std::regex re("nvidia-cudnn-cu([0-9]+)");
  std::string cuda_suffix;
  const auto* pkg = find(c, re, &cuda_suffix);
  if (!pkg || !c.m.cudnn) return;
  auto v = wheel_version(pkg->version);
  if (!v) return;
  const Version& want = c.m.cudnn->version.value;
  auto& f = c.add("python.cudnn", Severity::ok, *pkg);
  f.seen = "the frameworks load cuDNN " + pkg->version +
           " from this wheel (site-packages/nvidia/cudnn/lib, through torch's RPATH), before the system's";
  f.expected = "cuDNN " + want.text() + " ([cudnn] version)";
  const int wheel_cuda = std::atoi(cuda_suffix.c_str());
  const int pinned_cuda = c.m.cudnn->cuda ? c.m.cudnn->cuda->value : (c.m.cuda ? static_cast<int>(c.m.cuda->version.value.major()) : 0);
  if (v->major() != want.major()) {
    f.severity = Severity::error;
    f.fix = "the Python environment runs cuDNN " + std::to_string(v->major()) + " while the system's is cuDNN " +
            std::to_string(want.major()) + ": pin [cudnn] version = \"" + pkg->version +
            "\" or a framework release whose wheels use cuDNN " + std::to_string(want.major());
  } else if (pinned_cuda && wheel_cuda && wheel_cuda != pinned_cuda) {
    f.severity = Severity::error;
    f.expected += ", a build for CUDA " + std::to_string(pinned_cuda);
    f.fix = "the wheel is cuDNN's build for CUDA " + std::to_string(wheel_cuda) + ": lock a framework variant for CUDA " +
            std::to_string(pinned_cuda) + ", or change [cuda] and [cudnn] to CUDA " + std::to_string(wheel_cuda);
  } else if (model::compare_prefix(*v, want, 3) != 0) {
    f.severity = Severity::warning;
    f.fix = "two cuDNN releases in one stack: the frameworks use " + pkg->version + ", programs linked against the system's use " +
            want.text() + "; pin [cudnn] version = \"" + pkg->version + "\" so that both halves run the same cuDNN";
  }
}

void cuda_runtime(Ctx& c, const model::PyPackage*& runtime) {
  static const std::regex re("nvidia-cuda-runtime(?:-cu([0-9]+))?");
  runtime = find(c, re);
  if (!runtime || !c.m.cuda) return;
  auto v = wheel_version(runtime->version);
  if (!v) return;
  const Version& want = c.m.cuda->version.value;
  auto& f = c.add("python.cuda-runtime", Severity::ok, *runtime);
  f.seen = "the frameworks load the CUDA " + v->prefix(2) + " runtime (cudart " + runtime->version + ") from this wheel";
  f.expected = "CUDA " + want.prefix(2) + " ([cuda] version " + want.text() + ")";
  if (v->major() != want.major()) {
    f.severity = Severity::error;
    f.fix = "the environment runs CUDA " + std::to_string(v->major()) + " and the system CUDA " + std::to_string(want.major()) +
            ": lock the framework's CUDA " + std::to_string(want.major()) + " variant, or change [cuda]";
  } else if (model::compare_prefix(*v, want, 2) != 0) {
    f.severity = Severity::warning;
    f.fix = "programs in the environment use CUDA " + v->prefix(2) + "'s runtime, the others " + want.prefix(2) +
            "'s: pin [cuda] version to " + v->prefix(2) + ".x so that the driver floor and the toolkit match what runs";
  }
}

void cublas(Ctx& c) {
  static const std::regex re("nvidia-cublas(?:-cu([0-9]+))?");
  const auto* pkg = find(c, re);
  if (!pkg || !c.m.cuda) return;
  auto v = wheel_version(pkg->version);
  if (!v) return;
  const Version& want = c.m.cuda->version.value;
  auto& f = c.add("python.cublas", Severity::ok, *pkg);
  f.seen = "the frameworks load cuBLAS " + pkg->version + " (CUDA " + std::to_string(v->major()) + ") from this wheel";
  f.expected = "CUDA " + std::to_string(want.major()) + " ([cuda] version " + want.text() + ")";
  if (v->major() != want.major()) {
    f.severity = Severity::error;
    f.fix = "cuBLAS " + std::to_string(v->major()) + " belongs to CUDA " + std::to_string(v->major()) + ": lock the framework's CUDA " +
            std::to_string(want.major()) + " variant, or change [cuda]";
  }
}

void cuda_toolkit(Ctx& c) {
  static const std::regex re("cuda-toolkit");
  const auto* pkg = find(c, re);
  if (!pkg || !c.m.cuda) return;
  auto v = wheel_version(pkg->version);
  if (!v) return;
  const Version& want = c.m.cuda->version.value;
  auto& f = c.add("python.cuda-toolkit", Severity::ok, *pkg);
  f.seen = "the wheels pin the CUDA toolkit release " + pkg->version;
  f.expected = "CUDA " + want.text() + " ([cuda] version)";
  const std::size_t parts = std::min(want.size(), v->size());
  if (v->major() != want.major()) {
    f.severity = Severity::error;
    f.fix = "lock the framework's CUDA " + std::to_string(want.major()) + " variant, or change [cuda] version to \"" + pkg->version + "\"";
  } else if (model::compare_prefix(*v, want, parts) != 0) {
    f.severity = Severity::warning;
    f.fix = "pin [cuda] version = \"" + pkg->version + "\": the framework's wheels were built against that release";
  }
}

// The CUDA release whose cudart component is exactly the wheel's version (NVIDIA publishes the
// wheels from the same builds as the redist archives).
std::optional<Version> release_of_cudart(const knowledge::CudaCatalog& catalog, const Version& cudart) {
  for (const auto& r : catalog.releases()) {
    if (r.major() != cudart.major() || model::compare_prefix(r, cudart, 2) != 0) continue;
    auto rel = catalog.release(r);
    if (!rel || !*rel) continue;
    for (const auto& comp : (*rel)->components)
      if (comp.id == "cuda_cudart" && comp.version == cudart) return r;
  }
  return std::nullopt;
}

void driver(Ctx& c, const model::PyPackage* runtime) {
  if (!runtime) return;
  auto v = wheel_version(runtime->version);
  if (!v) return;
  auto release = release_of_cudart(c.catalog, *v);
  auto& f = c.add("python.driver", Severity::ok, *runtime);
  const auto manifest_needs = c.kb.required_driver(c.m, model::Os::linux);
  if (!release) {
    f.severity = Severity::note;
    f.seen = "cudart " + runtime->version + " is in no CUDA release stackpin has NVIDIA's manifest of: the driver it needs is unknown";
    f.fix = "`stackpin check --online` reads NVIDIA's newer manifests";
    return;
  }
  const auto wheel_needs = c.kb.driver_minimum(*release, model::Os::linux);
  f.seen = "cudart " + runtime->version + " is CUDA " + release->text() + "'s: it needs a driver >= " + wheel_needs.effective;
  f.source = wheel_needs.source;
  f.expected = "the manifest's driver floor (" + manifest_needs.effective + ") at least that";
  if (!manifest_needs.required) return;
  if (wheel_needs.family_floor && *manifest_needs.required < *wheel_needs.family_floor) {
    f.severity = Severity::error;
    f.fix = "the frameworks cannot start on a driver the manifest allows: raise [driver] linux to >= " + wheel_needs.family_floor->text();
  } else if (wheel_needs.release_min && *manifest_needs.required < *wheel_needs.release_min) {
    f.severity = Severity::warning;
    f.fix = "CUDA " + release->text() +
            " runs on the manifest's driver through minor-version compatibility only (no PTX of its ISA): raise [driver] linux to >= " +
            wheel_needs.release_min->text();
  }
}

}  // namespace

void check_python_lock(const model::Manifest& m, const model::PyLock& py, const knowledge::KnowledgeBase& kb,
                       const knowledge::CudaCatalog& catalog, model::CheckReport& report) {
  std::vector<model::Platform> linux_targets;
  for (auto p : {model::Platform::linux_x86_64, model::Platform::linux_sbsa}) {
    const std::string marker = model::python_marker(p);
    if (std::find(py.environments.begin(), py.environments.end(), marker) != py.environments.end()) linux_targets.push_back(p);
  }
  for (auto p : linux_targets) {
    Ctx c{m, py, kb, catalog, report, p};
    cudnn(c);
    const model::PyPackage* runtime = nullptr;
    cuda_runtime(c, runtime);
    cublas(c);
    cuda_toolkit(c);
    driver(c, runtime);
  }
}

}  // namespace core
