// Names of where a machine's facts came from (driver, toolkit version, cuDNN kind) and the loader's sonames.
#include "model/machine.hpp"

namespace model {

const char* to_string(DriverSource s) {
  switch (s) {
    case DriverSource::none: return "none";
    case DriverSource::proc: return "/proc/driver/nvidia/version";
    case DriverSource::nvml: return "NVML";
    case DriverSource::nvidia_smi: return "nvidia-smi";
  }
  return "?";
}

const char* to_string(ToolkitVersionSource s) {
  switch (s) {
    case ToolkitVersionSource::unknown: return "unknown";
    case ToolkitVersionSource::version_json: return "version.json";
    case ToolkitVersionSource::version_txt: return "version.txt";
    case ToolkitVersionSource::pip_wheel: return "pip wheel metadata";
    case ToolkitVersionSource::cuda_h: return "cuda.h CUDA_VERSION";
  }
  return "?";
}

const char* to_string(CudnnKind k) {
  switch (k) {
    case CudnnKind::system: return "system";
    case CudnnKind::toolkit: return "toolkit";
    case CudnnKind::cudnn_path: return "CUDNN_PATH";
    case CudnnKind::staged: return "staged-by-stackpin";
    case CudnnKind::conda: return "conda";
    case CudnnKind::pip_wheel: return "pip-wheel";
    case CudnnKind::torch_lib: return "torch/lib";
    case CudnnKind::other: return "other";
  }
  return "?";
}

const std::vector<std::string>& loader_sonames() {
  static const std::vector<std::string> k_names = {"libcudnn.so.8",   "libcudnn.so.9",   "libcudart.so.11",
                                                   "libcudart.so.12", "libcudart.so.13", "libcuda.so.1"};
  return k_names;
}

std::string CudnnWhole::text() const {
  std::string name = "cuDNN " + (release ? release->text() : std::to_string(major));
  if (whole()) return name + ": all " + std::to_string(present.size()) + " sub-libraries" + (release ? " of one release" : "");
  std::string s;
  if (!missing.empty()) {
    s = "missing ";
    for (std::size_t i = 0; i < missing.size(); ++i) s += (i ? ", " : "") + missing[i];
  }
  for (const auto& p : problems) s += (s.empty() ? "" : "; ") + p;
  return name + ": " + s;
}

}  // namespace model
