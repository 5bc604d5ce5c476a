#pragma once
// Activation files for a staged Linux/WSL2 tree: a POSIX sh script, an /etc/profile.d snippet and
// an /etc/ld.so.conf.d entry (activate_sh.cpp).
#include <string>

#include "util/result.hpp"

namespace gen {

struct LinuxActivation {
  std::string name;           // manifest name
  std::string cudnn_version;  // 8.9.5.30
  std::string prefix;         // where the tree lives: <prefix>/lib64, <prefix>/include
  std::string cuda_version;   // a CUDA toolkit staged in the same tree ("" for none)
  bool cuda_bin = false;      // ... with programs in <prefix>/bin (nvcc)
};

// A script to source (`. activate.sh`): exports CUDNN_PATH, moves <prefix>/lib64 to the front of
// LD_LIBRARY_PATH (removing other occurrences, never duplicating), and under WSL2 (detected when
// sourced) adds /usr/lib/wsl/lib, where the Windows driver's libcuda is mapped. Sourcing it twice
// changes nothing. With a CUDA toolkit in the tree it also exports CUDA_HOME and CUDA_PATH (what
// nvcc wrappers, CMake's FindCUDAToolkit and PyTorch's extension builds look at) and, when the tree
// has bin/, moves <prefix>/bin to the front of PATH the same way.
std::string render_activate_sh(const LinuxActivation& a);

// The same loader-path edit as an /etc/profile.d/ snippet, which every login shell sources: it
// acts only while <prefix>/lib64 exists, prints nothing, never exits or returns, and works under
// `set -u` and `set -e`. Sourcing it twice changes nothing.
std::string render_profile_d(const LinuxActivation& a);

// The /etc/ld.so.conf.d/ entry: ldconfig then finds the tree system-wide, without LD_LIBRARY_PATH.
// Errors (unsupported): a prefix with whitespace, '#' or a line break, which ld.so.conf cannot hold.
util::Result<std::string> render_ld_so_conf(const LinuxActivation& a);

}  // namespace gen
