#pragma once
// The manifest a user writes: one pinned GPU stack (schema 1). Plain values with the position of
// every key, so that any later judgement can point at the exact line.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/platform.hpp"
#include "model/version.hpp"
#include "util/result.hpp"

namespace model {

struct Pos {
  int line = 0;
  int column = 0;
};

// file:line:col of `pos` in a file read as `lines`, with that line's text (for errors and findings).
util::SourceLocation locate_in(const std::string& path, const std::vector<std::string>& lines, Pos pos);

template <class T>
struct Located {
  T value{};
  Pos pos;
};

enum class Origin { nvidia, local };
const char* to_string(Origin o);

struct ArchivePin {
  std::optional<Located<std::string>> component;  // [[cuda.archives]]: NVIDIA's component name ("cuda_cudart")
  Located<Platform> platform;
  Located<Origin> origin;  // default nvidia (pos = the table's)
  std::optional<Located<std::string>> url;
  std::optional<Located<std::string>> file;    // file name to look for; default: the URL's basename
  std::optional<Located<std::string>> sha256;  // 64 lowercase hex digits
  std::optional<Located<std::uint64_t>> size;  // bytes
  Pos pos;                                     // the [[cudnn.archives]] / [[cuda.archives]] header
  // Not written in the manifest: added from its lock or from the knowledge base for a manifest
  // that names only the version (pos is then the [cudnn] table's).
  bool implied = false;
  // [[cuda.archives]]: the component's own version ("12.4.127") as NVIDIA's manifest or the lock
  // gives it; never written in the manifest ("" when unknown).
  std::string component_version;
  // The archive's file name: `file` when given, else the last component of `url`; "" if neither.
  std::string file_name() const;
};

struct CudaPin {
  Located<Version> version;  // toolkit release, X.Y or X.Y.Z
  // Toolkit components to provision from NVIDIA's redist archives, as written: named sets
  // ("runtime"), NVIDIA's names ("cuda_cudart") or short aliases ("cudart"). Empty: the toolkit is
  // only checked, not provisioned.
  std::vector<Located<std::string>> components;
  Pos components_pos;                // the `components` key
  std::vector<ArchivePin> archives;  // [[cuda.archives]], each with its component
  Pos pos;                           // the [cuda] table
};

struct DriverPin {
  std::optional<Located<Version>> linux;
  std::optional<Located<Version>> windows;
  Pos pos;
};

struct CudnnPin {
  Located<Version> version;          // four parts, 8.9.5.30
  std::optional<Located<int>> cuda;  // CUDA major the build targets
  std::vector<ArchivePin> archives;
  Pos pos;
};

enum class WindowsLayout { isolated, cuda_merge };
enum class LinuxLayout { lib64, deb };
enum class DockerCudnn { archive, apt };
// Where an image's CUDA toolkit comes from: the base image (NVIDIA's CUDA images), or the pinned
// [cuda] components' verified archives on a plain distribution base (hermetic).
enum class DockerCuda { base, archive };
const char* to_string(WindowsLayout l);
const char* to_string(LinuxLayout l);
const char* to_string(DockerCudnn m);
const char* to_string(DockerCuda m);

struct WindowsTarget {
  Located<WindowsLayout> layout;
  // `arch`: "x64" (windows-x86_64, the default) or "arm64" (windows-arm64, Windows on Arm)
  Located<Platform> platform{Platform::windows_x86_64, {}};
  std::optional<Located<std::string>> prefix;     // where the isolated tree lives on the Windows machine
  std::optional<Located<std::string>> cuda_path;  // the CUDA toolkit root on the Windows machine
  Pos pos;
};

struct LinuxTarget {
  Located<LinuxLayout> layout;
  std::optional<Located<std::string>> prefix;
  Pos pos;
};

struct DockerTarget {
  std::optional<Located<std::string>> base_image;
  std::optional<Located<std::string>> base_digest;  // sha256:<64 hex>
  Located<DockerCudnn> cudnn;
  Located<DockerCuda> cuda;  // default base
  Pos pos;
};

struct CondaTarget {
  std::vector<Located<std::string>> channels;
  std::optional<Located<Version>> cudnn;  // the cuDNN conda really publishes, when it differs
  Pos pos;
};

// [gpus]: the GPUs the stack must run on, as compute capabilities ("8.6") and/or models ("RTX 4090",
// resolved against the knowledge base by `check`).
struct GpuPins {
  std::vector<Located<Version>> arch;  // two parts: 8.6, 12.0
  std::vector<Located<std::string>> models;
  Pos pos;
};

struct Manifest {
  std::string path;                // the file it was read from ("<stdin>" or a test name otherwise)
  std::vector<std::string> lines;  // the file's lines, for excerpts in findings and errors
  std::string sha256;              // of the bytes it was parsed from (core::load_manifest); "" when not known
  Located<int> schema;
  Located<std::string> name;
  std::optional<Located<std::string>> description;
  std::optional<CudaPin> cuda;
  std::optional<DriverPin> driver;
  std::optional<CudnnPin> cudnn;
  std::map<std::string, Located<Version>> frameworks;  // torch, torchvision, torchaudio, tensorflow, onnxruntime-gpu
  Pos frameworks_pos;
  std::optional<Located<Version>> python;
  // [python] index: the PEP 503 index (a URL, or a local directory of wheels) the Python lock is
  // resolved against instead of the CUDA variant's index and PyPI; venv: the environment `apply`
  // provisions from the Python lock.
  std::optional<Located<std::string>> python_index, python_venv;
  // [python] packages: exact pins of other packages of the environment ("nvidia-cudnn-cu13==9.13.0.50"),
  // normalized name == version; `capture` writes the NVIDIA wheels and frameworks it finds, and the
  // Python lock resolves them with the frameworks.
  std::vector<Located<std::string>> python_packages;
  Pos python_pos;
  std::optional<WindowsTarget> windows;
  std::optional<LinuxTarget> linux;
  std::optional<DockerTarget> docker;
  std::optional<CondaTarget> conda;
  std::optional<GpuPins> gpus;

  // file:line:col with the line's text, for errors and findings.
  util::SourceLocation locate(Pos pos) const;
  // The archive pinned for a platform, if any.
  const ArchivePin* archive_for(Platform p) const;
  // The Windows platform the stack targets: [targets.windows] arch, else windows-arm64 when only
  // that Windows platform has a pinned cuDNN archive, else windows-x86_64.
  Platform windows_platform() const;
  // The [[cuda.archives]] pin of a component for a platform, if any.
  const ArchivePin* cuda_archive_for(const std::string& component, Platform p) const;
  ArchivePin* cuda_archive_for(const std::string& component, Platform p);
};

// The framework keys a manifest accepts in [frameworks].
const std::vector<std::string>& framework_names();

}  // namespace model
