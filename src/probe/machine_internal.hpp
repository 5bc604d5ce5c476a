#pragma once
// The parts of the machine inspection (machine*.cpp) and what they share.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "probe/ld_cache.hpp"
#include "probe/machine.hpp"
#include "rootfs.hpp"

namespace probe::detail {

struct MachineCtx {
  const MachineOptions& o;
  RootFs fs;
  model::MachineReport& r;
  std::optional<LdCache> cache;        // this machine's ld.so cache, when readable
  std::vector<std::string> site_dirs;  // site-packages directories (machine paths, resolved)

  MachineCtx(const MachineOptions& opts, model::MachineReport& report) : o(opts), fs(opts.root), r(report) {}
  std::string env(const char* name) const;
  // A ':'-separated variable's entries, in order, empty entries kept.
  std::vector<std::string> env_list(const char* name) const;
  bool real_root() const;  // the root is this machine's "/": programs and NVML may be used
  // The first executable `name` on PATH (a machine path as PATH names it), "" when none.
  std::string find_on_path(const std::string& name) const;
};

// machine.cpp
void inspect_os(MachineCtx& c);
void inspect_wsl(MachineCtx& c);
void inspect_driver(MachineCtx& c);
// machine_toolkits.cpp
void inspect_toolkits(MachineCtx& c);
void inspect_nvcc(MachineCtx& c);
// machine_python.cpp
void inspect_conda(MachineCtx& c);
void inspect_python(MachineCtx& c);
// machine_loader.cpp
void inspect_loader(MachineCtx& c);
// machine_cudnn.cpp
void inspect_cudnn(MachineCtx& c);

// Key: Value headers of a METADATA / PKG-INFO file (up to the first blank line); keys as written.
std::map<std::string, std::string> read_metadata_headers(const std::string& text);
// Python's package-name normalization: lower case, runs of "-_." become "-".
std::string normalize_package_name(const std::string& name);
// "nvidia_cudnn_cu12-9.1.0.70.dist-info" -> {"nvidia-cudnn-cu12", "9.1.0.70"}; nullopt otherwise.
std::optional<std::pair<std::string, std::string>> split_dist_info_name(const std::string& dir_name);

// Debian's multiarch triplet for a uname machine name ("x86_64" -> "x86_64-linux-gnu"); "" if unknown.
std::string multiarch_triplet(const std::string& arch);

}  // namespace probe::detail
