// What a library's GPU code means for one GPU. NVIDIA's compatibility rules (CUDA C++
// Programming Guide, "Binary Compatibility" and "Feature Set Compiler Targets"): SASS for X.y
// runs on X.z with z >= y; an architecture-specific target (sm_90a) only on exactly X.y; a family
// target (sm_100f) on the later members of its family, which stackpin takes as the same major.
// PTX is compiled by the driver for any GPU of an equal or newer architecture (compute_90a only
// for 9.0, compute_100f for its family), and only by a driver at least as new as the CUDA release
// of its ISA version: minor-version compatibility does not cover PTX.
#include <algorithm>

#include "model/kernels.hpp"

namespace model {

namespace {

// Whether code for `t` runs on `gpu`, and how near it is (a larger rank is nearer).
bool runs_on(const GpuTarget& t, const Version& gpu) {
  switch (t.variant) {
    case ArchVariant::specific: return t.arch == gpu;
    case ArchVariant::family: return t.arch.major() == gpu.major() && !(gpu < t.arch);
    case ArchVariant::plain:
      if (t.kind == CodeKind::sass) return t.arch.major() == gpu.major() && !(gpu < t.arch);
      return !(gpu < t.arch);
  }
  return false;
}

}  // namespace

GpuFit fit_for(const Version& gpu, const std::vector<TargetImages>& targets) {
  GpuFit best;
  best.gpu = gpu;
  const TargetImages* chosen = nullptr;
  auto better = [&](Fit f, const TargetImages& t) {
    if (!chosen || f < best.fit) return true;
    return f == best.fit && chosen->target.arch < t.target.arch;
  };
  for (const auto& t : targets) {
    if (t.target.kind != CodeKind::sass && t.target.kind != CodeKind::ptx) continue;  // LTO IR needs nvJitLink, not the driver
    if (!runs_on(t.target, gpu)) continue;
    Fit f = t.target.kind == CodeKind::ptx ? Fit::jit : t.target.arch == gpu ? Fit::native : Fit::compatible;
    if (better(f, t)) {
      best.fit = f;
      chosen = &t;
    }
  }
  if (!chosen) return best;
  best.via = chosen->target.name();
  if (best.fit == Fit::jit) {
    best.ptx_isa = chosen->ptx_isa;
    best.ptx_bytes = chosen->uncompressed_bytes;
  }
  return best;
}

std::string code_that_runs_on(const Version& gpu) {
  const std::string number = std::to_string(gpu.major() * 10 + gpu.minor());
  return "SASS for sm_" + number + " (or an older " + std::to_string(gpu.major()) + ".x), or PTX for compute_" + number + " or older";
}

}  // namespace model
