#pragma once
// Inspection of a Linux or WSL2 machine for `stackpin doctor`: what driver, toolkits and cuDNN
// copies are there, and which file the dynamic loader would really load for each CUDA/cuDNN
// soname. Nothing is judged here (core::doctor_linux does that).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "model/facts.hpp"
#include "model/machine.hpp"
#include "util/env.hpp"

namespace probe {

struct MachineOptions {
  // The file system to inspect: "/" for this machine, or a copy of one (tests, an unpacked image).
  // Paths in the environment and the report are paths inside it.
  std::filesystem::path root = "/";
  // PATH, LD_LIBRARY_PATH, CUDNN_PATH, CONDA_PREFIX, CUDA_HOME, CUDA_PATH and WSL_DISTRO_NAME are
  // read from here; nullptr = an empty environment.
  const util::Env* env = nullptr;
  // Run nvidia-smi, python3 (to find site-packages) and nvcc --version. Off in tests.
  bool run_programs = true;
  // dlopen libnvidia-ml.so.1 for the driver version when /proc/driver/nvidia/version is absent
  // (WSL2). Only ever done when root is "/". Off in tests.
  bool use_nvml = true;
  int program_timeout_ms = 5000;
  // site-packages directories to read instead of asking python3 (--site-packages).
  std::vector<std::string> site_packages;
  // The knowledge base's file lists per cuDNN major (Facts::cudnn_majors); without them a copy's
  // missing files cannot be named.
  std::vector<model::CudnnMajorContents> cudnn_contents;
  // More directories that may hold cuDNN (a manifest's [targets.linux] prefix + /lib64).
  std::vector<std::string> extra_cudnn_dirs;
  // This machine's architecture ("x86_64", "aarch64"); "" = uname's.
  std::string arch;
  // The loader's default directories; empty = derived from the architecture (multiarch
  // directories, then /lib and /usr/lib; /lib64 and /usr/lib64 where the distribution uses them).
  std::vector<std::string> default_dirs;
};

// Inspects the machine. Never fails as a whole: what cannot be read is recorded in the report
// (ld_cache_error, python.error, driver.tried, skipped).
model::MachineReport inspect_machine(const MachineOptions& options);

// nvidia-smi --query-gpu=index,name,compute_cap --format=csv,noheader output ("0, NVIDIA H200, 9.0"
// per line), untrusted: at most 64 GPUs; a line without an index, a name of printable characters
// (at most 100) and a compute capability X.Y is skipped and named in `skipped`.
std::vector<model::GpuDevice> parse_nvidia_smi_gpus(const std::string& text, std::vector<std::string>* skipped = nullptr);
// Only whether the machine is WSL (and whether the Windows driver is mapped in): what commands
// that do not inspect the whole machine need to pick the driver table's column.
model::WslInfo inspect_wsl(const MachineOptions& options);

}  // namespace probe
