// Libraries are opened with RTLD_NOW | RTLD_LOCAL exactly as named (a soname, so that
// LD_LIBRARY_PATH, the ld.so cache and the default directories decide, as they do for the
// application being debugged), and the file the loader really mapped is read back from the link
// map, because "which libcudnn did it load?" is the question the seeds could not answer.
#include "loader.hpp"
#include "model/contracts.hpp"
#include "probe/windows_loader.hpp"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace probe::detail {

namespace {
std::string resolved_path(void* handle) {
  struct link_map* lm = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name) return {};
  char buf[PATH_MAX];
  if (realpath(lm->l_name, buf)) return buf;
  return lm->l_name;
}
}  // namespace

Loaded open_library(const std::string& what, const std::string& path, const std::vector<std::string>& sonames) {
  Loaded out;
  out.info.what = what;
  std::vector<std::string> names = path.empty() ? sonames : std::vector<std::string>{path};
  for (const auto& n : names) {
    out.info.tried.push_back(n);
    dlerror();
    void* h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) {
      out.handle = h;
      out.info.requested = n;
      out.info.path = resolved_path(h);
      out.info.error.clear();
      return out;
    }
    const char* e = dlerror();
    // keep the most telling message: a library that exists but cannot load beats "not found"
    std::string msg = e ? e : "unknown dlopen error";
    if (out.info.error.empty() || msg.find("No such file") == std::string::npos) out.info.error = msg;
    if (!path.empty()) out.info.requested = n;
  }
  return out;
}

std::vector<std::string> cudnn_library_names() { return {model::cudnn_library_name(9, false), model::cudnn_library_name(8, false)}; }

std::vector<std::string> cudart_library_names(int preferred_major) {
  std::vector<std::string> runtimes{"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"};
  std::string preferred = preferred_major == 11 ? "libcudart.so.11.0" : "libcudart.so." + std::to_string(preferred_major);
  auto it = std::find(runtimes.begin(), runtimes.end(), preferred);
  if (it != runtimes.end()) std::rotate(runtimes.begin(), it, it + 1);
  return runtimes;
}

void* find_symbol(void* handle, const char* name) { return dlsym(handle, name); }

std::string kernel_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  if (in) {
    std::stringstream ss;
    ss << in.rdbuf();
    std::string v = driver_version_from_proc(ss.str());
    if (!v.empty()) return v;
  }
  // WSL2 and machines without the proc file: NVML from the driver package
  return nvml_driver_version();
}

std::string nvml_driver_version() {
  void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return {};
  std::string out = nvml_driver_version_of(h);
  dlclose(h);
  return out;
}

}  // namespace probe::detail

namespace probe {

// Only the Windows loader is asked: Linux's is judged from the ld.so cache and the trees.
LoaderAnswer load_as_application(const std::string&, const std::vector<std::string>&) { return {}; }
LoaderAnswer load_as_python_extension(const std::string&, const std::vector<std::string>&) { return {}; }
std::string windows_driver_version() { return {}; }
std::vector<model::GpuDevice> windows_gpus() { return {}; }

}  // namespace probe
