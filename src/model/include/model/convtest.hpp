#pragma once
// What `stackpin convtest` found: the libraries really loaded, versions, GPUs, and every
// convolution case run (per algorithm) against the CPU reference.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace model {

struct LoadedLibrary {
  std::string what;       // "CUDA runtime" | "cuDNN"
  std::string requested;  // the path or soname asked for
  std::string path;       // the file really loaded (resolved), "" when not loaded
  std::string error;      // the loader's message when it failed
  std::vector<std::string> tried;
};

struct GpuInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  std::uint64_t memory = 0;
  // Judged against the knowledge base (core::convtest): the architecture's name, and whether the
  // loaded cuDNN carries kernels built for it ("native", "compatible 8.0" (binary-compatible SASS
  // of a lower minor), "below 7.5" (dropped), "not listed", "unknown").
  std::string architecture;
  std::string cudnn_kernels;
};

struct ConvCase {
  int device = 0;
  std::string op;     // fwd | bwd_data | bwd_filter
  std::string dtype;  // float32 | float16
  std::string shape;  // "n1 c3 7x9 k4 3x3 pad1 stride1 dil1"
  int algo = -1;
  std::string status;  // cuDNN status name or "ok"
  double ms = 0, gflops = 0;
  double max_abs_err = 0, tolerance = 0;
  bool non_finite = false;
  bool ok = false;
  std::string detail;
};

// The same convolution run through a framework in the current Python.
struct FrameworkRun {
  std::string framework;  // torch | tensorflow | onnxruntime
  std::string python;     // the interpreter used
  bool installed = false;
  std::string version;
  bool gpu = false;                       // the framework sees a GPU
  std::string cudnn_version;              // what the framework reports it uses ("8.9.2"), "" if unknown
  std::vector<std::string> loaded_cudnn;  // libcudnn files mapped into the framework's process
  bool ran = false;                       // the GPU convolution ran
  double max_abs_err = 0;
  bool non_finite = false;
  std::string error;
};

// What the conv test must find (from a manifest, the knowledge base or flags: core::convtest_expectations).
struct ConvExpectations {
  std::optional<std::string> cudnn;  // "9.1.0" or "9.1.0.70": compared at three parts
  std::optional<int> cuda_major;
  std::optional<std::string> min_driver;  // "530.30.02"; compared with the driver's CUDA version when only that is known
  std::optional<int> min_cc;              // e.g. 50 for sm_50
};

struct ConvReport {
  LoadedLibrary cudart, cudnn;
  std::string cudnn_version;  // "9.19.0" from cudnnGetVersion
  std::uint64_t cudnn_version_raw = 0;
  std::string cudnn_built_with_cuda;  // cudnnGetCudartVersion, "12.8"
  std::string runtime_version;        // cudaRuntimeGetVersion
  std::string driver_version;         // cudaDriverGetVersion ("" = no driver)
  std::vector<GpuInfo> gpus;
  std::vector<ConvCase> cases;
  std::string nothing_to_run;  // why no convolution could run (no driver / no GPU)
  std::optional<FrameworkRun> framework;
};

}  // namespace model
