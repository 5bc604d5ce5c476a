#pragma once
// The compatibility facts stackpin judges with, as plain values. The `knowledge` layer owns the
// queries; `format` reads these from the TOML files under data/knowledge/.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/platform.hpp"
#include "model/version.hpp"

namespace model {

using Sources = std::vector<std::string>;

struct DriverFamily {  // minor-version compatibility floor of a CUDA major
  int cuda_major = 0;
  Version linux, windows;
  std::optional<Version> below;  // next family's floor
  Sources source;
  std::string note;
};

struct DriverRelease {  // NVIDIA's minimum driver for one toolkit release
  Version cuda;
  std::string label;
  std::optional<Version> linux, windows;  // absent = unknown
  bool windows_na = false;                // NVIDIA says N/A (no Windows driver bundled)
  Sources source;
  std::string note;
};

struct CudnnArchiveFact {
  Version version;  // 4 parts
  int cuda = 0;     // CUDA major of the build
  Platform platform = Platform::linux_x86_64;
  std::string file, url, sha256, md5, released, caveat;
  std::optional<std::uint64_t> size;
  bool cross_checked = false;
  Sources source;
};

struct LayoutRule {  // directory of a file kind inside the archive, by cuDNN version range
  // The archive platform the rule is for; Windows rules without `platform` are windows-x86_64's,
  // Linux rules without it hold for every Linux platform.
  std::optional<Platform> platform;
  Version from;
  std::optional<Version> until;
  std::vector<std::string> dirs;  // forward slashes, first = preferred
  bool verified = true;
  Sources source;
  std::string note;
};

struct CudnnMajorContents {
  int major = 0;
  std::vector<std::string> linux_libraries, linux_optional_libraries;
  std::vector<std::string> headers;
  std::vector<std::string> windows_dlls, windows_optional_dlls, windows_import_libs;
  std::string main_dll, soname;
  Sources source;
  std::string note;
};

struct TorchRelease {
  Version release;  // "2.1"
  std::string python;
  std::vector<std::string> variants;  // cu118, cu121 (RELEASE.md's)
  std::vector<std::string> stable_cuda, experimental_cuda;
  std::map<std::string, Version> cudnn;  // bundled cuDNN per variant
  Sources source;
  std::string note;
  // From torch-wheels.toml: variants published beside RELEASE.md's, those with Linux wheels only,
  // and the first patch release a variant was published for ("cu129" -> 2.12.1).
  std::vector<std::string> extra_variants;  // published, not in RELEASE.md (cu129 of 2.12.1)
  std::vector<std::string> linux_only;
  std::map<std::string, Version> first_patch;
  std::string wheels_note;
  Sources wheels_source;
  // What the published wheels' METADATA pins, per variant, where it is known: nvidia-cudnn-cuNN's
  // version (it wins over RELEASE.md's `cudnn`, which lagged behind 2.11's wheels) and, from
  // 2.11, the cuda-toolkit metapackage's release the CUDA libraries come from.
  std::map<std::string, Version> wheel_cudnn, wheel_cuda;
  std::string wheel_pins_note;
  Sources wheel_pins_source;
};

struct TensorflowBuild {
  Version version;
  Os os = Os::linux;
  std::string package;  // tensorflow | tensorflow_gpu
  Version cuda, cudnn;  // X.Y
  std::string python;
  Sources source;
};

struct OnnxRuntimeRow {
  Version first, last;  // inclusive version-prefix bounds
  int cuda_major = 0;
  std::string cuda;  // verbatim ("12.x", "11.8")
  int cudnn_major = 0;
  std::optional<Version> cudnn_linux, cudnn_windows;
  std::optional<bool> pypi;  // whether PyPI's onnxruntime-gpu is this build; nullopt when the source does not say
  std::string note;
  Sources source;
};

struct ZlibwapiFact {
  Version from, until;
  std::string dll;
  std::string note;
  Sources source;
};

struct CondaCudnn {
  Version version;
  std::vector<int> cuda_majors;
  std::string note;
  Sources source;
};

struct AptPin {
  Version cuda;
  std::string os, package, package_dev;
  Version cudnn;
  std::string note;
  Sources source;
};

struct DockerTag {
  std::string tag;
  Version cuda;
  std::string flavor, os;
  Version cudnn;
  std::string apt_package;
  std::string note;
  Sources source;
};

// A named set of CUDA toolkit components ([cuda] components = ["runtime"]) for some CUDA majors.
struct CudaComponentSet {
  std::string name;  // "runtime", "devel", "torch"
  std::vector<int> cuda_majors;
  std::vector<std::string> components;  // NVIDIA's component names, each required
  std::vector<std::string> optional;    // included where the release ships them for the platform
  std::string note;
  Sources source;
};

// --- GPU architectures (gpus.toml, gpu-support.toml) -----------------------------------------
// Compute capabilities are two-part versions ("8.6", "12.0").
struct GpuArch {
  Version cc;
  std::string name;                  // "Ampere"; "" when no source names it
  std::vector<std::string> targets;  // nvcc targets: sm_86, or sm_100a / sm_100f
  std::string note;
  Sources source;
};

// A PTX ISA version and the first CUDA release whose driver loads it (NVIDIA's PTX release history).
struct PtxIsaRelease {
  Version isa;   // "9.1"
  Version cuda;  // "13.1"
  Sources source;
};

struct GpuModel {
  std::string name;                  // as the driver reports it, where a source shows that
  std::vector<std::string> aliases;  // short names users write ("RTX 4090", "H100")
  std::string listed_as;             // the compute-capability table's name it was matched by, if another
  Version cc;
  std::string segment;  // geforce | workstation | datacenter | jetson
  std::string note;
  Sources source;
};

// The compute capabilities a cuDNN build supports (NVIDIA's support matrix for the releases
// [from, until) and one CUDA major).
struct CudnnArchSupport {
  Version from;
  std::optional<Version> until;
  int cuda_major = 0;
  Version min_cc;
  std::optional<Version> max_cc;
  std::vector<Version> ccs;  // when the matrix lists them
  std::string note;
  Sources source;
};

// What nvcc of a CUDA release (major.minor) compiles for.
struct NvccArchs {
  Version cuda;
  std::vector<Version> sass, ptx, deprecated, removed_since;
  std::vector<std::string> family;  // arch- and family-specific targets ("100a", "100f")
  std::string note;
  Sources source;
};

// TORCH_CUDA_ARCH_LIST of NVIDIA-built torch wheels: one release, CUDA variant and platform.
struct TorchArchs {
  Version release;  // "2.7"
  std::string variant;
  Platform platform = Platform::linux_x86_64;
  std::vector<Version> sass, ptx;
  std::string note;
  Sources source;
};

// The CUDA architectures of another framework's GPU builds (onnxruntime-gpu, tensorflow): the
// releases [from, until) built for one CUDA major on one platform.
struct FrameworkArchs {
  std::string framework;  // "onnxruntime-gpu" | "tensorflow"
  Version from;
  std::optional<Version> until;
  int cuda_major = 0;
  Platform platform = Platform::linux_x86_64;
  std::vector<Version> sass, ptx;
  // the architecture-specific targets (sm_90a, compute_90a): they run on that architecture only
  std::vector<Version> sass_a, ptx_a;
  bool inferred = false;  // tied to these releases by the build pipeline's history, not by a release
  // GPUs on which the PTX is known not to JIT (a bug report's failure, with its source): no kernel
  // runs there although the PTX is older than the GPU
  std::vector<Version> jit_fails;
  std::string jit_fails_note;
  Sources jit_fails_source;
  std::string note;
  Sources source;
};

struct Facts {
  std::vector<DriverFamily> driver_families;
  std::vector<DriverRelease> driver_releases;
  std::string cudnn_base_url;
  std::vector<CudnnArchiveFact> cudnn_archives;
  std::vector<LayoutRule> windows_import_lib_dir, windows_dll_dir, linux_lib_dir;
  std::vector<CudnnMajorContents> cudnn_majors;
  std::string torch_index_pattern, torch_install_flag;
  Sources torch_index_source;
  std::vector<TorchRelease> torch;
  std::vector<TensorflowBuild> tensorflow;
  std::optional<Version> tensorflow_windows_native_gpu_last;
  std::string tensorflow_notes;
  Sources tensorflow_notes_source;
  std::vector<OnnxRuntimeRow> onnxruntime;
  std::string onnxruntime_notes;
  Sources onnxruntime_notes_source;
  std::optional<ZlibwapiFact> zlibwapi;
  std::string vc_runtime_note;
  Sources vc_runtime_source;
  std::vector<CondaCudnn> conda_forge_cudnn;
  std::vector<std::string> conda_cuda_versions;
  Sources conda_source;
  std::string apt_naming_v8, apt_naming_v9;
  Sources apt_naming_source;
  std::vector<AptPin> apt_pins;
  std::vector<DockerTag> docker_tags;
  std::string docker_suffix_history;
  Sources docker_source;
  std::vector<CudaComponentSet> cuda_sets;
  std::vector<GpuArch> gpu_archs;
  std::vector<GpuModel> gpu_models;
  std::vector<PtxIsaRelease> ptx_isa;
  std::vector<CudnnArchSupport> cudnn_arch;
  std::vector<NvccArchs> nvcc_archs;
  std::vector<TorchArchs> torch_archs;
  std::vector<FrameworkArchs> framework_archs;
};

}  // namespace model
