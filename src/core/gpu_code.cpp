// GPU code judged for GPUs (core/gpu_code.hpp): the driver a library's PTX needs, and one copy
// of a library set (a cuDNN directory, a wheel's lib folder) judged for one GPU by the code its
// libraries carry, as convtest and doctor report it on Linux and Windows alike.
#include "core/gpu_code.hpp"

#include <algorithm>

#include "util/strings.hpp"

namespace core {

using model::Version;

void add_jit_driver(model::GpuFit& f, model::Os driver_os, const knowledge::KnowledgeBase& kb) {
  if (!f.ptx_isa) return;
  const auto* x = kb.ptx_isa(*f.ptx_isa);
  if (!x) {
    const auto* newest = kb.newest_ptx_isa();
    if (!newest || *f.ptx_isa < newest->isa) return;
    x = newest;
    f.jit_cuda_at_least = true;
  }
  // the first toolkit release of that CUDA version or later (ISA 8.6 came with CUDA 12.7, which
  // NVIDIA never shipped as a toolkit: its driver is 12.8.0's; ISA 7.0's is 11.0.1's)
  const model::DriverRelease* first = nullptr;
  for (const auto& r : kb.facts().driver_releases)
    if (!(r.cuda < x->cuda) && (!first || r.cuda < first->cuda)) first = &r;
  f.jit_cuda = first && first->cuda.prefix(2) != x->cuda.prefix(2) ? first->cuda : x->cuda;
  if (first) f.jit_driver = driver_os == model::Os::windows ? first->windows : first->linux;
}

LibrarySetJudgement judge_library_set(const std::vector<model::LibraryKernels>& libraries, const Version& cc,
                                      const std::optional<Version>& driver, model::Os os, const knowledge::KnowledgeBase& kb,
                                      const std::optional<Version>& driver_cuda) {
  LibrarySetJudgement out;
  std::vector<std::string> none, jit, too_old;
  std::size_t native = 0, compatible = 0;
  std::uint64_t ptx_bytes = 0;
  std::optional<Version> needs;
  const std::string sm = "sm_" + std::to_string(cc.major()) + std::to_string(cc.minor());
  for (const auto& k : libraries) {
    const bool loadable = std::any_of(k.targets.begin(), k.targets.end(), [](const model::TargetImages& t) {
      return t.target.kind == model::CodeKind::sass || t.target.kind == model::CodeKind::ptx;
    });
    if (!loadable) continue;
    ++out.with_code;
    const auto slash = k.path.find_last_of("/\\");
    const std::string name = slash == std::string::npos ? k.path : k.path.substr(slash + 1);
    auto f = model::fit_for(cc, k.targets);
    if (f.fit == model::Fit::native || f.fit == model::Fit::compatible) {
      ++native;
      compatible += f.fit == model::Fit::compatible ? 1 : 0;
    } else if (f.fit == model::Fit::jit) {
      add_jit_driver(f, os, kb);
      ptx_bytes += f.ptx_bytes;
      std::string what = name + " (PTX " + f.via + (f.ptx_isa ? ", ISA " + f.ptx_isa->text() : "") + ")";
      const bool older = driver ? f.jit_driver && *driver < *f.jit_driver : driver_cuda && f.jit_cuda && *driver_cuda < *f.jit_cuda;
      if (older) {
        too_old.push_back(what + " needs " + (f.jit_driver ? "driver " + f.jit_driver->text() + " (CUDA " : "a driver for CUDA ") +
                          (f.jit_cuda ? f.jit_cuda->text() : "?") + (f.jit_driver ? ")" : ""));
        if (f.jit_driver && (!needs || *needs < *f.jit_driver)) needs = f.jit_driver;
      } else {
        jit.push_back(what);
      }
    } else {
      std::vector<std::string> targets;
      for (const auto& t : k.targets) targets.push_back(t.target.name());
      none.push_back(name + " (" + util::join(targets, " ") + ")");
    }
  }
  const bool windows = os == model::Os::windows;
  const std::string driver_text = driver ? driver->text() : driver_cuda ? "one for CUDA " + driver_cuda->text() : std::string("unknown");
  if (!none.empty()) {
    out.verdict = "none";
    out.severity = model::Severity::error;
    out.seen = util::join(none, ", ") + " carry nothing that runs on " + cc.text();
    out.expected = model::code_that_runs_on(cc);
    out.fix = "it fails here with \"no kernel image is available for execution on the device\"; stackpin check with [gpus] arch = [\"" +
              cc.text() + "\"] names a cuDNN built for it";
  } else if (!too_old.empty()) {
    out.verdict = "driver too old";
    out.severity = model::Severity::error;
    out.seen = "no " + sm + " SASS in " + util::join(too_old, ", ") + "; the driver is " + driver_text;
    out.expected = (needs ? "driver " + needs->text() + " or newer" : std::string("a newer driver")) + " to compile that PTX";
    out.fix =
        "update the driver" + (needs ? " to " + needs->text() + " or newer" : std::string()) + ", or use a cuDNN with " + sm + " SASS";
  } else if (!jit.empty()) {
    out.verdict = "jit";
    out.severity = model::Severity::warning;
    out.seen = "no " + sm + " SASS in " + util::join(jit, ", ") + (driver || driver_cuda ? "" : "; no driver found to judge it by");
    out.fix = "the driver compiles " + util::short_size(ptx_bytes) + " of PTX at first use (seconds to minutes; cached in " +
              (windows ? "%APPDATA%\\NVIDIA\\ComputeCache" : "~/.nv/ComputeCache") + ", CUDA_CACHE_MAXSIZE); a cuDNN with " + sm +
              " SASS avoids it";
  } else {
    out.verdict = compatible ? "compatible" : "native";
    out.severity = model::Severity::ok;
    out.seen = (native == 1 ? std::string("its one library with GPU code carries")
                            : "all " + std::to_string(native) + " libraries with GPU code carry") +
               " SASS that runs on " + cc.text();
  }
  return out;
}

}  // namespace core
