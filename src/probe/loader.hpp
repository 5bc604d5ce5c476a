#pragma once
// dlopen of the CUDA runtime and cuDNN, the way an application loads them (loader.cpp).
#include <string>
#include <vector>

#include "cuda_api.hpp"
#include "model/convtest.hpp"

namespace probe::detail {

struct Loaded {
  void* handle = nullptr;
  model::LoadedLibrary info;
};

// Opens `path` when given, else each soname in order through the system loader.
Loaded open_library(const std::string& what, const std::string& path, const std::vector<std::string>& sonames);
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

}  // namespace probe::detail
