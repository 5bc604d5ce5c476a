// The machine's GPUs (nvidia-smi) against what is installed: each GPU's architecture, whether the
// manifest's [gpus] names it, whether each cuDNN copy's support matrix includes it, and whether
// each installed framework build carries kernels for it.
#include <algorithm>
#include <map>
#include <regex>

#include "core/gpu_code.hpp"
#include "doctor/linux/doctor_linux_rules.hpp"
#include "util/strings.hpp"

namespace core::doctor_rules {

using model::Severity;
using model::Version;

namespace {

// The CUDA major a cuDNN copy was built for: the manifest's pin, a wheel's name (nvidia-cudnn-cu12),
// else the default toolkit's major; 0 when nothing says.
int cuda_major_of(const Ctx& c, const model::CudnnCopy& copy) {
  if (c.m && c.m->cudnn && c.m->cudnn->cuda) return c.m->cudnn->cuda->value;
  static const std::regex k_wheel(R"(cudnn-cu([0-9]{2}))");
  std::smatch m;
  if (std::regex_search(copy.kind_detail, m, k_wheel)) return std::stoi(m[1].str());
  for (const auto& t : c.r.toolkits)
    if (t.is_default)
      if (auto v = Version::parse(t.version)) return static_cast<int>(v->major());
  return 0;
}

// One installed framework build's kernels, as the knowledge base lists them for that build.
struct InstalledBuild {
  std::string label;  // "torch 2.7.1+cu128 (/opt/venv/.../site-packages)"
  knowledge::KernelMatch k;
  const model::Sources* source = nullptr;
  bool inferred = false;
};

// The build of an installed framework, when the knowledge base has its architecture list: torch by
// its local version (+cu128), onnxruntime-gpu and tensorflow as the build PyPI serves for the
// release (their versions do not say the CUDA major). nullopt, with `why`, when it has none.
std::optional<InstalledBuild> installed_build(const Ctx& c, const model::PythonPackage& p, const Version& cc, std::string& why) {
  const auto platform = model::host_linux_platform();
  const auto plus = p.version.find('+');
  auto release = Version::parse(p.version.substr(0, plus));
  if (!release) return std::nullopt;
  InstalledBuild b;
  b.label = p.name + " " + p.version + " (" + p.location + ")";
  if (p.name == "torch") {
    const std::string variant = plus == std::string::npos ? "" : p.version.substr(plus + 1);
    if (variant.rfind("cu", 0) != 0) {
      if (variant.empty()) why = "its version names no CUDA variant (PyPI's build): the knowledge base cannot tell its architectures";
      return std::nullopt;
    }
    const auto* t = c.kb.torch_archs(*release, variant, platform);
    if (!t) {
      why = "the knowledge base has no TORCH_CUDA_ARCH_LIST for it";
      return std::nullopt;
    }
    b.k = knowledge::kernels_for(cc, t->sass, t->ptx);
    b.source = &t->source;
    return b;
  }
  const bool tf = p.name == "tensorflow" || p.name == "tensorflow-gpu";
  if (!tf && p.name != "onnxruntime-gpu") return std::nullopt;
  int major = 0;
  if (tf) {
    auto builds = c.kb.tensorflow_builds(*release, model::Os::linux);
    if (!builds.empty()) major = static_cast<int>(builds.front()->cuda.major());
  } else if (const auto* r = c.kb.onnxruntime_pypi_row(*release)) {
    major = r->cuda_major;
  }
  const auto* a = major ? c.kb.framework_archs(tf ? "tensorflow" : "onnxruntime-gpu", *release, major, platform) : nullptr;
  if (!a) {
    why = "the knowledge base has no list of the CUDA architectures of its PyPI build";
    return std::nullopt;
  }
  b.label += " (PyPI's build for CUDA " + std::to_string(major) + ")";
  b.k = knowledge::kernels_for(cc, *a);
  b.source = &a->source;
  b.inferred = a->inferred;
  return b;
}

// Whether each installed framework carries kernels for the GPU: its own SASS or binary-compatible
// SASS (ok), only PTX the driver JIT-compiles (warning), nothing (error), as check judges a pin.
void framework_kernels(Ctx& c, const Version& cc, const std::string& subject) {
  using knowledge::KernelFit;
  for (const auto& p : c.r.python.frameworks) {
    std::string why;
    auto b = installed_build(c, p, cc, why);
    if (!b) {
      if (!why.empty()) {
        auto& f = c.add("linux.gpu-framework-kernels", Severity::note, subject);
        f.seen = p.name + " " + p.version + ": " + why;
        const std::string fw = p.name == "onnxruntime-gpu" ? "onnxruntime" : p.name.rfind("tensorflow", 0) == 0 ? "tensorflow" : p.name;
        f.fix = "stackpin convtest --framework " + fw + " runs a convolution through it on this GPU";
      }
      continue;
    }
    const std::string digits = std::to_string(b->k.via.major()) + std::to_string(b->k.via.minor());
    const std::string sm = "sm_" + std::to_string(cc.major()) + std::to_string(cc.minor());
    const std::string hedge = b->inferred ? " (a list the knowledge base ties to this release by its build pipeline's history)" : "";
    Severity sev = b->k.fit == KernelFit::none ? Severity::error : b->k.fit == KernelFit::ptx ? Severity::warning : Severity::ok;
    auto& f = c.add("linux.gpu-framework-kernels", sev, subject);
    f.source = knowledge::first_source(*b->source);
    if (b->k.fit == KernelFit::native || b->k.fit == KernelFit::compatible) {
      f.seen = b->label + " carries " + (b->k.fit == KernelFit::native ? sm : "sm_" + digits + " (binary compatible)") + " kernels" + hedge;
    } else if (b->k.fit == KernelFit::ptx) {
      f.seen = b->label + " has no " + sm + " kernels, only compute_" + digits + " PTX" + hedge;
      f.fix = "the driver JIT-compiles every kernel at first use (minutes; cached in ~/.nv/ComputeCache); a build with " + sm +
              " kernels avoids it (stackpin check with [gpus] arch = [\"" + cc.text() + "\"] names one)";
    } else {
      f.seen = b->label + " carries no kernels for " + sm + hedge;
      f.fix = "it fails here with \"no kernel image is available for execution on the device\"; stackpin check with [gpus] arch = [\"" +
              cc.text() + "\"] names a build that has them";
    }
  }
}

// The cuDNN this machine would run, judged by the GPU code its libraries carry (read from their
// fatbin containers): the copy the loader resolves libcudnn.so.N to, and the copies frameworks
// load from their own wheels. Native SASS (ok), only PTX the driver compiles at first use
// (warning, with the cost; an error when the driver is older than that PTX needs), nothing that
// runs here (error).
void library_kernels(Ctx& c, const Version& cc, const std::string& subject) {
  std::vector<std::pair<const model::CudnnCopy*, std::string>> copies;  // the copy, why it is the one loaded
  for (const auto& l : c.r.loader)
    if (l.soname.rfind("libcudnn.so.", 0) == 0 && l.winner)
      if (const auto* cp = copy_of(c.r, l.winner->real_path)) copies.push_back({cp, "the loader resolves " + l.soname + " there"});
  for (const auto& cp : c.r.cudnn)
    if (cp.kind == model::CudnnKind::pip_wheel && std::none_of(copies.begin(), copies.end(), [&](const auto& x) { return x.first == &cp; }))
      copies.push_back({&cp, "a framework's own wheel"});
  const auto driver = Version::parse(c.r.driver.version);
  for (const auto& [cp, why] : copies) {
    const auto j = judge_library_set(cp->kernels, cc, driver, model::Os::linux, c.kb);
    if (j.with_code == 0) continue;
    auto& f = c.add("linux.gpu-kernels", j.severity, subject);
    f.seen = "cuDNN in " + cp->dir + " (" + why + "): " + j.seen;
    f.expected = j.expected;
    f.fix = j.fix;
    f.source = "the libraries' fatbin containers, read here; PTX ISA release history (NVIDIA)";
  }
}

}  // namespace

void gpus(Ctx& c) {
  const auto named = c.m ? c.kb.gpu_archs(*c.m) : std::map<Version, model::Pos>{};
  for (const auto& g : c.r.gpus) {
    auto cc = Version::parse(g.cc);
    if (!cc) continue;
    const auto* arch = c.kb.gpu_arch(*cc);
    const std::string subject = "GPU " + std::to_string(g.index) + " " + g.name;
    auto& f = c.add("linux.gpu", arch ? Severity::ok : Severity::warning, subject);
    f.seen = "compute capability " + cc->text() + (arch && !arch->name.empty() ? " (" + arch->name + ")" : "") + ", from nvidia-smi";
    if (!arch) f.fix = "an architecture the knowledge base does not know: check what this stack supports by hand";
    if (c.m && c.m->gpus && !named.count(*cc)) {
      auto& w = c.add("linux.gpu-pinned", Severity::warning, subject);
      w.seen = "compute capability " + cc->text() + " is not among the GPUs the manifest's [gpus] names";
      w.fix = "add \"" + cc->text() + "\" to [gpus] arch and run stackpin check, which judges cuDNN, nvcc and the frameworks for it";
      c.point_at(w, c.m->gpus->pos);
    }

    framework_kernels(c, *cc, subject);
    library_kernels(c, *cc, subject);
    for (const auto& copy : c.r.cudnn) {
      auto version = Version::parse(copy_version(copy));
      const int major = cuda_major_of(c, copy);
      if (!version || major == 0) continue;
      bool nearest = false;
      const auto* row = c.kb.cudnn_arch_support(*version, major, &nearest);
      if (!row) continue;
      const std::string who = "cuDNN " + version->text() + " in " + copy.dir + " (for CUDA " + std::to_string(major) + ")";
      const std::string matrix = nearest ? " (support matrix of " + row->from.text() + ", the nearest the knowledge base has)" : "";
      if (*cc < row->min_cc) {
        auto& e = c.add("linux.gpu-cudnn", Severity::error, subject);
        e.seen = who + " supports compute capability " + row->min_cc.text() + " and newer" + matrix;
        e.expected = "a cuDNN whose support matrix includes " + cc->text();
        e.fix =
            "cuDNN fails on this GPU (CUDNN_STATUS_ARCH_MISMATCH, or NOT_SUPPORTED for every engine); stackpin check with [gpus] arch = "
            "[\"" +
            cc->text() + "\"] names a cuDNN that supports it";
        e.source = knowledge::first_source(row->source);
      } else {
        auto& ok = c.add("linux.gpu-cudnn", Severity::ok, subject);
        ok.seen = who + ": its support matrix starts at " + row->min_cc.text() + matrix;
        ok.source = knowledge::first_source(row->source);
      }
    }
  }
}

}  // namespace core::doctor_rules
