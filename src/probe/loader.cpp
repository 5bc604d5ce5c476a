// Libraries are opened with RTLD_NOW | RTLD_LOCAL exactly as named (a soname, so that
// LD_LIBRARY_PATH, the ld.so cache and the default directories decide, as they do for the
// application being debugged), and the file the loader really mapped is read back from the link
// map, because "which libcudnn did it load?" is the question the seeds could not answer.
#include "loader.hpp"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>

#include <fstream>
#include <regex>
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

template <class F>
void sym(void* h, const char* name, F& fn, std::vector<std::string>& missing) {
  void* p = dlsym(h, name);
  if (!p) missing.push_back(name);
  fn = reinterpret_cast<F>(p);
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

std::vector<std::string> bind(void* h, CudaRuntime& rt) {
  std::vector<std::string> missing;
  sym(h, "cudaGetDeviceCount", rt.GetDeviceCount, missing);
  sym(h, "cudaSetDevice", rt.SetDevice, missing);
  sym(h, "cudaRuntimeGetVersion", rt.RuntimeGetVersion, missing);
  sym(h, "cudaDriverGetVersion", rt.DriverGetVersion, missing);
  sym(h, "cudaDeviceGetAttribute", rt.DeviceGetAttribute, missing);
  // CUDA 12 headers map cudaGetDeviceProperties to the _v2 symbol; CUDA 11 and 13 export the plain one
  std::vector<std::string> ignore;
  sym(h, "cudaGetDeviceProperties_v2", rt.GetDeviceProperties, ignore);
  if (!rt.GetDeviceProperties) sym(h, "cudaGetDeviceProperties", rt.GetDeviceProperties, missing);
  sym(h, "cudaMalloc", rt.Malloc, missing);
  sym(h, "cudaFree", rt.Free, missing);
  sym(h, "cudaMemcpy", rt.Memcpy, missing);
  sym(h, "cudaMemset", rt.Memset, missing);
  sym(h, "cudaDeviceSynchronize", rt.DeviceSynchronize, missing);
  sym(h, "cudaGetErrorString", rt.GetErrorString, missing);
  return missing;
}

std::vector<std::string> bind(void* h, Cudnn& d) {
  std::vector<std::string> m;
  sym(h, "cudnnGetVersion", d.GetVersion, m);
  sym(h, "cudnnGetCudartVersion", d.GetCudartVersion, m);
  sym(h, "cudnnGetErrorString", d.GetErrorString, m);
  sym(h, "cudnnCreate", d.Create, m);
  sym(h, "cudnnDestroy", d.Destroy, m);
  sym(h, "cudnnCreateTensorDescriptor", d.CreateTensorDescriptor, m);
  sym(h, "cudnnSetTensor4dDescriptor", d.SetTensor4dDescriptor, m);
  sym(h, "cudnnDestroyTensorDescriptor", d.DestroyTensorDescriptor, m);
  sym(h, "cudnnCreateFilterDescriptor", d.CreateFilterDescriptor, m);
  sym(h, "cudnnSetFilter4dDescriptor", d.SetFilter4dDescriptor, m);
  sym(h, "cudnnDestroyFilterDescriptor", d.DestroyFilterDescriptor, m);
  sym(h, "cudnnCreateConvolutionDescriptor", d.CreateConvolutionDescriptor, m);
  sym(h, "cudnnSetConvolution2dDescriptor", d.SetConvolution2dDescriptor, m);
  sym(h, "cudnnSetConvolutionMathType", d.SetConvolutionMathType, m);
  sym(h, "cudnnDestroyConvolutionDescriptor", d.DestroyConvolutionDescriptor, m);
  sym(h, "cudnnGetConvolution2dForwardOutputDim", d.GetConvolution2dForwardOutputDim, m);
  sym(h, "cudnnGetConvolutionForwardAlgorithmMaxCount", d.GetFwdMaxCount, m);
  sym(h, "cudnnGetConvolutionBackwardDataAlgorithmMaxCount", d.GetBwdDataMaxCount, m);
  sym(h, "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount", d.GetBwdFilterMaxCount, m);
  sym(h, "cudnnFindConvolutionForwardAlgorithm", d.FindFwd, m);
  sym(h, "cudnnFindConvolutionBackwardDataAlgorithm", d.FindBwdData, m);
  sym(h, "cudnnFindConvolutionBackwardFilterAlgorithm", d.FindBwdFilter, m);
  sym(h, "cudnnGetConvolutionForwardWorkspaceSize", d.FwdWorkspace, m);
  sym(h, "cudnnGetConvolutionBackwardDataWorkspaceSize", d.BwdDataWorkspace, m);
  sym(h, "cudnnGetConvolutionBackwardFilterWorkspaceSize", d.BwdFilterWorkspace, m);
  sym(h, "cudnnConvolutionForward", d.Forward, m);
  sym(h, "cudnnConvolutionBackwardData", d.BackwardData, m);
  sym(h, "cudnnConvolutionBackwardFilter", d.BackwardFilter, m);
  return m;
}

std::string driver_version_from_proc(const std::string& text) {
  std::smatch mm;
  if (std::regex_search(text, mm, std::regex(R"(Kernel Module(?: for [a-z0-9_]+)?\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?))"))) return mm[1];
  return {};
}

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
  using InitFn = int (*)();
  using VerFn = int (*)(char*, unsigned);
  auto init = reinterpret_cast<InitFn>(dlsym(h, "nvmlInit_v2"));
  auto ver = reinterpret_cast<VerFn>(dlsym(h, "nvmlSystemGetDriverVersion"));
  auto shutdown = reinterpret_cast<InitFn>(dlsym(h, "nvmlShutdown"));
  std::string out;
  char buf[96] = {};
  if (init && ver && init() == 0) {
    if (ver(buf, sizeof buf) == 0) out = buf;
    if (shutdown) shutdown();
  }
  dlclose(h);
  return out;
}

std::string cuda_error_name(const CudaRuntime& rt, cudaError e) {
  const char* s = rt.GetErrorString ? rt.GetErrorString(e) : nullptr;
  return (s ? std::string(s) : std::string("CUDA error")) + " (" + std::to_string(e) + ")";
}

std::string cudnn_status_name(const Cudnn& dnn, cudnnStatus s) {
  const char* n = dnn.GetErrorString ? dnn.GetErrorString(s) : nullptr;
  return n ? std::string(n) : "cuDNN status " + std::to_string(s);
}

}  // namespace probe::detail
