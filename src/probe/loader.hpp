#pragma once
// Loading the CUDA runtime and cuDNN the way an application does: dlopen on Linux
// (loader_posix.cpp), LoadLibraryExW on Windows (loader_windows.cpp); binding in loader.cpp.
#include <string>
#include <string_view>
#include <vector>

#include "cuda_api.hpp"
#include "model/convtest.hpp"
#include "model/machine.hpp"

namespace probe::detail {

struct Loaded {
  void* handle = nullptr;
  model::LoadedLibrary info;
};

// Opens `path` when given, else each soname in order through the system loader.
Loaded open_library(const std::string& what, const std::string& path, const std::vector<std::string>& sonames);
// The names an application loads cuDNN by, newest major first (libcudnn.so.9, cudnn64_9.dll, ...).
std::vector<std::string> cudnn_library_names();
// The CUDA runtime's names, newest first, except that the one of `preferred_major` (the CUDA major
// cuDNN was built with; 0 when unknown) comes first.
std::vector<std::string> cudart_library_names(int preferred_major);
#ifdef _WIN32
// loader_windows.cpp's helpers, shared with load_as_application: UTF-16 names, the text of a
// loader error, the file of a loaded module.
std::wstring wide_name(std::string_view s);
std::string load_error_text(unsigned long code);
std::string module_file(void* module);
#endif
// The address of `name` in an open library; null when it does not export it.
void* find_symbol(void* handle, const char* name);
// The driver version NVML reports through an open NVML library (libnvidia-ml.so.1, nvml.dll);
// "" when it cannot tell.
std::string nvml_driver_version_of(void* nvml);
// The GPUs NVML lists through an open NVML library: index, name and compute capability
// (nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetName,
// nvmlDeviceGetCudaComputeCapability); empty when it cannot tell. At most 64.
std::vector<model::GpuDevice> nvml_gpus_of(void* nvml);
// Resolves every entry point; returns the names that are missing.
std::vector<std::string> bind(void* handle, CudaRuntime& rt);
std::vector<std::string> bind(void* handle, Cudnn& dnn);
// The NVIDIA kernel driver's version ("535.104.05"), from /proc/driver/nvidia/version or NVML;
// "" when neither answers.
std::string kernel_driver_version();
// The version in the text of /proc/driver/nvidia/version ("... Kernel Module  535.104.05 ...",
// "... Open Kernel Module for x86_64  570.86.15 ..."); "" when there is none.
std::string driver_version_from_proc(const std::string& text);
// The driver version NVML reports (nvmlInit_v2, nvmlSystemGetDriverVersion, nvmlShutdown through
// a dlopen of libnvidia-ml.so.1); "" when the library is absent or does not answer.
std::string nvml_driver_version();
#ifdef _WIN32
// The GPUs nvml.dll lists (nvml_gpus_of); empty when it is absent (loader_windows.cpp).
std::vector<model::GpuDevice> nvml_gpus();
#endif

}  // namespace probe::detail
