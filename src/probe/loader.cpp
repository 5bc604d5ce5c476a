// Binding the CUDA runtime's and cuDNN's entry points once a library is open, and the texts that
// name their errors. Opening libraries and finding symbols are the platform files' part
// (loader_posix.cpp: dlopen; loader_windows.cpp: LoadLibraryExW).
#include "loader.hpp"

#include <cstring>
#include <regex>

namespace probe::detail {

namespace {
template <class F>
void sym(void* h, const char* name, F& fn, std::vector<std::string>& missing) {
  void* p = find_symbol(h, name);
  if (!p) missing.push_back(name);
  fn = reinterpret_cast<F>(p);
}
}  // namespace

std::string nvml_driver_version_of(void* h) {
  using InitFn = int (*)();
  using VerFn = int (*)(char*, unsigned);
  auto init = reinterpret_cast<InitFn>(find_symbol(h, "nvmlInit_v2"));
  auto ver = reinterpret_cast<VerFn>(find_symbol(h, "nvmlSystemGetDriverVersion"));
  auto shutdown = reinterpret_cast<InitFn>(find_symbol(h, "nvmlShutdown"));
  std::string out;
  char buf[96] = {};
  if (init && ver && init() == 0) {
    if (ver(buf, sizeof buf) == 0) out = buf;
    if (shutdown) shutdown();
  }
  return out;
}

std::vector<model::GpuDevice> nvml_gpus_of(void* h) {
  using InitFn = int (*)();
  using CountFn = int (*)(unsigned*);
  using HandleFn = int (*)(unsigned, void**);
  using NameFn = int (*)(void*, char*, unsigned);
  using CcFn = int (*)(void*, int*, int*);
  auto init = reinterpret_cast<InitFn>(find_symbol(h, "nvmlInit_v2"));
  auto count = reinterpret_cast<CountFn>(find_symbol(h, "nvmlDeviceGetCount_v2"));
  auto handle = reinterpret_cast<HandleFn>(find_symbol(h, "nvmlDeviceGetHandleByIndex_v2"));
  auto name = reinterpret_cast<NameFn>(find_symbol(h, "nvmlDeviceGetName"));
  auto cc = reinterpret_cast<CcFn>(find_symbol(h, "nvmlDeviceGetCudaComputeCapability"));
  auto shutdown = reinterpret_cast<InitFn>(find_symbol(h, "nvmlShutdown"));
  std::vector<model::GpuDevice> out;
  if (!init || !count || !handle || !name || !cc || init() != 0) return out;
  unsigned n = 0;
  if (count(&n) == 0)
    for (unsigned i = 0; i < n && i < 64; ++i) {
      void* device = nullptr;
      char text[96] = {};
      int major = 0, minor = 0;
      if (handle(i, &device) != 0 || name(device, text, sizeof text - 1) != 0 || cc(device, &major, &minor) != 0) continue;
      if (major < 1 || major > 99 || minor < 0 || minor > 9) continue;  // not a compute capability
      model::GpuDevice g;
      g.index = static_cast<int>(i);
      g.name = std::string(text, strnlen(text, sizeof text));
      g.cc = std::to_string(major) + "." + std::to_string(minor);
      out.push_back(std::move(g));
    }
  if (shutdown) shutdown();
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

std::string cuda_error_name(const CudaRuntime& rt, cudaError e) {
  const char* s = rt.GetErrorString ? rt.GetErrorString(e) : nullptr;
  return (s ? std::string(s) : std::string("CUDA error")) + " (" + std::to_string(e) + ")";
}

std::string cudnn_status_name(const Cudnn& dnn, cudnnStatus s) {
  const char* n = dnn.GetErrorString ? dnn.GetErrorString(s) : nullptr;
  return n ? std::string(n) : "cuDNN status " + std::to_string(s);
}

}  // namespace probe::detail
