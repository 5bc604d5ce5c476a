// Every way the convolution test can fail is named here with its usual cause and the fix, so
// that "CUDNN_STATUS_NOT_INITIALIZED" never again arrives without a hint.
#include <algorithm>
#include <map>

#include "core/convtest/convtest.hpp"
#include "model/version.hpp"

namespace core {

namespace {

int major_of(const std::string& v) {
  auto parsed = model::Version::parse(v.substr(0, v.find(' ')));
  return parsed ? static_cast<int>(parsed->major()) : 0;
}

std::string library_fix(const model::LoadedLibrary& lib, bool cudnn) {
  const std::string& e = lib.error;
  auto dep = e.find(": cannot open shared object file");
  if (!e.empty() && dep != std::string::npos) {
    std::string first = e.substr(0, dep);
    auto colon = first.rfind(": ");
    std::string missing = colon == std::string::npos ? first : first.substr(colon + 2);
    bool is_itself = std::find(lib.tried.begin(), lib.tried.end(), missing) != lib.tried.end();
    if (!is_itself)
      return "the library was found but needs " + missing + ", which the loader cannot find: " +
             (cudnn ? "cuDNN for CUDA N needs the CUDA N runtime libraries (libcublas, libcublasLt) on the search path"
                    : "install the missing library or add its directory to LD_LIBRARY_PATH");
  }
  if (e.find("wrong ELF class") != std::string::npos) return "a 32-bit or other-architecture library was found first on the search path";
  if (cudnn)
    return "stage cuDNN (`stackpin stage`) and put its lib64 on the loader path (LD_LIBRARY_PATH or an /etc/ld.so.conf.d entry + "
           "ldconfig), or pass --cudnn PATH";
  return "install the CUDA runtime of the pinned CUDA version (an nvidia/cuda:*-runtime base image has it), or pass --cudart PATH";
}

std::string setup_cause(const std::string& status, const model::ConvReport& r) {
  if (status.find("NOT_INITIALIZED") != std::string::npos) {
    std::string cause = "cuDNN could not initialise CUDA.";
    int built = major_of(r.cudnn_built_with_cuda), runtime = major_of(r.runtime_version);
    if (built && runtime && built != runtime)
      cause += " This cuDNN was built for CUDA " + r.cudnn_built_with_cuda + " but the CUDA " + r.runtime_version +
               " runtime was loaded: use the cuDNN build for CUDA " + std::to_string(runtime) + " (archive suffix _cuda" +
               std::to_string(runtime) + ").";
    else
      cause +=
          " Usual causes: a driver too old for this CUDA runtime, no GPU memory left (another process holds it), or "
          "a cuDNN built for another CUDA major than the runtime found first on the search path.";
    return cause;
  }
  if (status.find("SUBLIBRARY") != std::string::npos)
    return "a cuDNN sub-library (libcudnn_cnn, libcudnn_ops, libcudnn_engines_*) is missing or of another version next to "
           "libcudnn: a half-copied or mixed install; restage the whole archive";
  if (status.find("ARCH_MISMATCH") != std::string::npos)
    return "this cuDNN has no kernels for this GPU's compute capability: use a cuDNN release that supports it";
  if (status.find("RUNTIME_PREREQUISITE_MISSING") != std::string::npos || status.find("INCOMPATIBLE") != std::string::npos)
    return "a library cuDNN needs at run time (libcublasLt, NVRTC) is missing or of another CUDA version";
  return "see NVIDIA's description of " + status;
}

// Which CUDA runtime and cuDNN the loader gave, or why it gave none.
void judge_libraries(const model::ConvReport& r, std::vector<model::Finding>& out) {
  for (const auto* lib : {&r.cudart, &r.cudnn}) {
    bool cudnn = lib == &r.cudnn;
    if (!lib->path.empty() && lib->error.empty()) {
      auto& f = model::add_finding(out, cudnn ? "convtest.cudnn-loaded" : "convtest.cudart-loaded", model::Severity::ok, lib->what);
      f.seen = lib->path + " (asked for " + lib->requested + ")";
      continue;
    }
    if (!cudnn && lib->tried.empty()) continue;
    if (cudnn && r.cudart.path.empty()) continue;  // never tried
    auto& f = model::add_finding(out, cudnn ? "convtest.cudnn-missing" : "convtest.cudart-missing", model::Severity::error, lib->what);
    f.seen = lib->error.empty() ? "not found" : lib->error;
    std::string tried;
    for (const auto& t : lib->tried) tried += (tried.empty() ? "" : ", ") + t;
    f.expected = "a loadable " + lib->what + " (tried " + tried + ")";
    f.fix = library_fix(*lib, cudnn);
  }
}

// The loaded cuDNN against the pinned version and CUDA major.
void judge_cudnn(const model::ConvReport& r, const model::ConvExpectations& expect, std::vector<model::Finding>& out) {
  if (!r.cudnn_version.empty()) {
    auto got = model::Version::parse(r.cudnn_version);
    if (expect.cudnn) {
      auto want = model::Version::parse(*expect.cudnn);
      auto& f =
          model::add_finding(out, "convtest.cudnn-version", model::Severity::ok, "cuDNN " + r.cudnn_version + " from " + r.cudnn.path);
      f.seen = r.cudnn_version + " (cudnnGetVersion() = " + std::to_string(r.cudnn_version_raw) + ")";
      f.expected = want ? want->prefix(3) : *expect.cudnn;
      if (got && want && model::compare_prefix(*got, *want, 3) != 0) {
        f.severity = model::Severity::error;
        f.fix = got->major() != want->major()
                    ? "a cuDNN of another major is found first on the loader path: put the pinned cuDNN's lib64 first "
                      "(LD_LIBRARY_PATH) or remove the other copy"
                    : "another cuDNN build is found first on the loader path (a framework's bundled copy, a conda env, "
                      "/usr/lib): put the pinned cuDNN's directory first or remove the other copy";
      }
    }
    if (expect.cuda_major && !r.cudnn_built_with_cuda.empty() && major_of(r.cudnn_built_with_cuda) != *expect.cuda_major) {
      auto& f = model::add_finding(out, "convtest.cudnn-cuda-major", model::Severity::error, "cuDNN " + r.cudnn_version);
      f.seen = "built for CUDA " + r.cudnn_built_with_cuda;
      f.expected = "built for CUDA " + std::to_string(*expect.cuda_major);
      f.fix = "load the _cuda" + std::to_string(*expect.cuda_major) + " build of cuDNN";
    }
  }
}

// The runtime's CUDA major, and the driver against the runtime and the required minimum.
void judge_runtime_and_driver(const model::ConvReport& r, const model::ConvExpectations& expect, std::vector<model::Finding>& out) {
  if (r.runtime_version.empty()) return;
  if (expect.cuda_major && major_of(r.runtime_version) != *expect.cuda_major) {
    auto& f = model::add_finding(out, "convtest.cuda-runtime", model::Severity::error,
                                 "CUDA runtime " + r.runtime_version + " from " + r.cudart.path);
    f.seen = "CUDA " + r.runtime_version;
    f.expected = "CUDA " + std::to_string(*expect.cuda_major) + ".x";
    f.fix = "the runtime of another CUDA major is found first: put the pinned toolkit's lib64 first on the loader path";
  }
  int drv = major_of(r.driver_version), run = major_of(r.runtime_version);
  if (!r.driver_version.empty() && drv && run && drv < run) {
    auto& f = model::add_finding(out, "convtest.driver", model::Severity::error, "NVIDIA driver");
    f.seen = "the driver supports CUDA " + r.driver_version;
    f.expected = "a driver for CUDA " + r.runtime_version + " or newer";
    f.fix = "upgrade the NVIDIA driver (in WSL2: on Windows, never inside WSL); a CUDA " + std::to_string(run) +
            " runtime cannot run on a driver for CUDA " + std::to_string(drv);
  }
  if (expect.min_driver) {
    auto pos = r.driver_version.find("driver ");
    if (pos != std::string::npos) {
      auto have = model::Version::parse(r.driver_version.substr(pos + 7));
      auto want = model::Version::parse(*expect.min_driver);
      if (have && want && *have < *want) {
        auto& f = model::add_finding(out, "convtest.driver", model::Severity::error, "NVIDIA driver " + have->text());
        f.seen = have->text();
        f.expected = ">= " + want->text();
        f.fix = "upgrade the NVIDIA driver to " + want->text() + " or newer";
      }
    }
  }
}

// Each GPU, and why none could run when none could.
void judge_gpus(const model::ConvReport& r, const model::ConvExpectations& expect, std::vector<model::Finding>& out) {
  for (const auto& g : r.gpus) {
    auto& f = model::add_finding(out, "convtest.gpu", model::Severity::ok, "GPU " + std::to_string(g.index));
    f.seen = g.name + ", compute capability " + std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor) + ", " +
             std::to_string(g.memory / (1024 * 1024)) + " MiB";
    if (expect.min_cc && g.cc_major * 10 + g.cc_minor < *expect.min_cc) {
      f.severity = model::Severity::error;
      f.expected = "compute capability >= " + std::to_string(*expect.min_cc / 10) + "." + std::to_string(*expect.min_cc % 10);
      f.fix = "this GPU is no longer supported by the pinned cuDNN or framework";
    }
  }
  if (!r.nothing_to_run.empty()) {
    auto& f = model::add_finding(out, "convtest.no-gpu", model::Severity::note, "GPU");
    f.seen = r.nothing_to_run;
    f.fix =
        "run on a machine with an NVIDIA GPU and driver (containers: docker run --gpus all; WSL2: the Windows driver maps "
        "into /usr/lib/wsl/lib)";
  }
}

// The framework's own convolution and the cuDNN it really loaded.
void judge_framework(const model::ConvReport& r, std::vector<model::Finding>& out) {
  if (!r.framework) return;
  const auto& fw = *r.framework;
  std::string subject = fw.framework + (fw.version.empty() ? "" : " " + fw.version) + " (" + fw.python + ")";
  if (!fw.installed) {
    auto& f = model::add_finding(out, "convtest.framework-missing", model::Severity::note, subject);
    f.seen = fw.error.empty() ? "not installed" : fw.error;
    f.fix = "install " + fw.framework + " in this Python, or pass --python PATH of the environment that has it";
  } else {
    if (!fw.error.empty()) {
      auto& f = model::add_finding(out, "convtest.framework", model::Severity::error, subject);
      f.seen = fw.error;
      f.fix = "the framework failed running a convolution on the GPU; the message above is its own";
    }
    if (!fw.gpu) {
      auto& f = model::add_finding(out, "convtest.framework-gpu", model::Severity::warning, subject);
      f.seen = fw.framework + " sees no GPU";
      f.fix =
          "a CPU-only build is installed (for torch: install the +cuXYZ wheel from PyTorch's index), or the driver is "
          "missing; `stackpin check --explain` names the matching wheel";
    }
    if (fw.ran) {
      bool bad = fw.non_finite || fw.max_abs_err > 2e-2;
      auto& f = model::add_finding(out, "convtest.framework-conv", bad ? model::Severity::error : model::Severity::ok, subject);
      f.seen = fw.non_finite ? "the GPU convolution produced NaN/Inf"
                             : "GPU convolution vs the framework's CPU result: max error " + std::to_string(fw.max_abs_err);
      if (bad) f.fix = "the cuDNN the framework loaded computes wrong results for this shape: update it, or the framework";
    }
    if (!fw.cudnn_version.empty()) {
      auto have = model::Version::parse(fw.cudnn_version), system = model::Version::parse(r.cudnn_version);
      std::string loaded;
      for (const auto& p : fw.loaded_cudnn) loaded += (loaded.empty() ? "" : ", ") + p;
      bool differs = have && system && model::compare_prefix(*have, *system, 3) != 0;
      auto& f = model::add_finding(out, "convtest.framework-cudnn", differs ? model::Severity::warning : model::Severity::ok, subject);
      f.seen = fw.framework + " uses cuDNN " + fw.cudnn_version + (loaded.empty() ? "" : " (loaded: " + loaded + ")");
      if (differs) {
        f.expected = "the cuDNN the system test loaded, " + r.cudnn_version + " from " + r.cudnn.path;
        f.fix = fw.framework +
                " brings its own cuDNN (bundled in its wheel or package) and loads it before the system "
                "one; the system cuDNN serves other programs. Pin the framework's cuDNN to have a single one";
      }
    }
  }
}

// Every failed case with its cause, and one line per operation that passed.
void judge_cases(const model::ConvReport& r, std::vector<model::Finding>& out) {
  std::map<std::string, int> ok_count;
  for (const auto& c : r.cases) {
    if (c.ok) {
      ++ok_count[c.op];
      continue;
    }
    std::string subject = c.op == "setup"
                              ? "GPU " + std::to_string(c.device)
                              : c.op + " " + c.dtype + " [" + c.shape + "]" + (c.algo >= 0 ? " algo " + std::to_string(c.algo) : "") +
                                    " on GPU " + std::to_string(c.device);
    auto& f = model::add_finding(out,
                                 c.non_finite      ? "convtest.nan"
                                 : c.op == "setup" ? "convtest.setup"
                                                   : "convtest.case",
                                 model::Severity::error, subject);
    f.seen = c.detail;
    if (!c.status.empty() && c.status != "CUDNN_STATUS_SUCCESS")
      f.fix = setup_cause(c.status, r);
    else if (c.non_finite)
      f.fix =
          "this algorithm produces NaN/Inf for this shape: avoid it (torch.backends.cudnn.benchmark = False picks by "
          "heuristic instead of trying all) and update cuDNN to a release where it is fixed";
    else if (c.algo >= 0)
      f.fix = "this algorithm computes wrong results for this shape: update cuDNN, or keep frameworks from selecting it";
    else
      f.fix = "see the message above";
  }
  for (const auto& [op, n] : ok_count) {
    auto& f = model::add_finding(out, "convtest.passed", model::Severity::ok, op);
    f.seen = std::to_string(n) + " algorithm runs match the CPU reference";
  }
}

}  // namespace

std::vector<model::Finding> judge_convtest(const model::ConvReport& r, const model::ConvExpectations& expect) {
  std::vector<model::Finding> out;
  judge_libraries(r, out);
  judge_cudnn(r, expect, out);
  judge_runtime_and_driver(r, expect, out);
  judge_gpus(r, expect, out);
  judge_framework(r, out);
  judge_cases(r, out);
  return out;
}

}  // namespace core
