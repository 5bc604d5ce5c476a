#pragma once
// The compatibility knowledge stackpin judges with: CUDA -> driver minimums, NVIDIA's cuDNN
// archives, archive layouts by version, framework matrices, Windows runtime needs, conda-forge
// and container facts. Loaded from the TOML files under data/knowledge/, which the build embeds;
// every fact carries its source. Adding knowledge means adding data, not code.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/check_report.hpp"
#include "model/facts.hpp"
#include "model/manifest.hpp"
#include "util/result.hpp"

namespace knowledge {

class KnowledgeBase {
 public:
  // The knowledge embedded at build time. Parsed once; the data is validated by the test suite,
  // so a failure here is a bug (assertion).
  static const KnowledgeBase& embedded();
  // Knowledge from data files (name -> text). Errors: those of format::parse_facts.
  static util::Result<KnowledgeBase> from_files(const std::vector<std::pair<std::string, std::string_view>>& files);
  // The embedded data files, name -> text.
  static std::vector<std::pair<std::string_view, std::string_view>> embedded_files();
  // Knowledge over data files that is read a file at a time, as questions need them (what
  // embedded() is, over embedded_files()). The texts must outlive it, and the data must be data the
  // test suite validated: a file that does not read is a bug (assertion).
  static KnowledgeBase read_as_needed(const std::vector<std::pair<std::string_view, std::string_view>>& files);

  // Every fact (reads whatever is still unread).
  const model::Facts& facts() const { return all(); }
  // What fetch and lock ask on every run, without reading the rest: NVIDIA's cuDNN redist base
  // URL and the toolkit's component sets.
  const std::string& cudnn_base_url() const;
  const std::vector<model::CudaComponentSet>& cuda_sets() const;

  KnowledgeBase(const KnowledgeBase& other);
  KnowledgeBase& operator=(const KnowledgeBase& other);
  KnowledgeBase(KnowledgeBase&& other) noexcept;
  KnowledgeBase& operator=(KnowledgeBase&& other) noexcept;
  ~KnowledgeBase();
  // This knowledge with NVIDIA's archives of a release read from its own manifest (a release or
  // sizes the embedded data lack): an archive the knowledge has (same version, CUDA major and
  // platform) must have its SHA-256, and only gains the size and MD5 it lacked; the others are
  // added. Errors: mismatch (a SHA-256 that disagrees: the knowledge is kept as it is).
  util::Result<KnowledgeBase> with_cudnn_archives(std::vector<model::CudnnArchiveFact> archives) const;

  // --- drivers ---------------------------------------------------------------------------
  const model::DriverFamily* driver_family(int cuda_major) const;
  // NVIDIA's row for a toolkit release: the exact release, else the newest row of the same
  // major.minor that is not newer (12.3.2 -> 12.3.1); nullptr when the table has none.
  const model::DriverRelease* driver_release(const model::Version& cuda) const;
  // The minimum driver for a CUDA release on an OS, as ARCHITECTURE's contract defines it: the
  // family floor (below: error), the release's own minimum (below: warning), unknown kept unknown.
  // `required` (and `effective`, its text) is the one rule every command applies: the `pin` when
  // there is one (a manifest's [driver] value), else the release's minimum, else the floor.
  model::DriverMinimum driver_minimum(const model::Version& cuda, model::Os os,
                                      const std::optional<model::Version>& pin = std::nullopt) const;
  // The same for a manifest: its [cuda] release and its [driver] pin for `os`. Without [cuda] only
  // a pin can be required; without either the requirement is unknown.
  model::DriverMinimum required_driver(const model::Manifest& m, model::Os os) const;

  // --- cuDNN archives --------------------------------------------------------------------
  const model::CudnnArchiveFact* cudnn_archive(const model::Version& version, int cuda_major, model::Platform platform) const;
  const model::CudnnArchiveFact* cudnn_archive_by_file(std::string_view file_name) const;
  const model::CudnnArchiveFact* cudnn_archive_by_sha256(std::string_view sha256_hex) const;
  // Every archive of one cuDNN version (all CUDA majors and platforms).
  std::vector<const model::CudnnArchiveFact*> cudnn_archives(const model::Version& version) const;
  // cuDNN versions NVIDIA published for a CUDA major (and platform, when given), ascending.
  std::vector<model::Version> cudnn_versions_for(int cuda_major, std::optional<model::Platform> platform) const;
  // NVIDIA's file name for an archive: cudnn-<platform>-<version>_cuda<M>-archive.<zip|tar.xz>.
  static std::string cudnn_archive_file_name(const model::Version& version, int cuda_major, model::Platform platform);
  std::string cudnn_archive_url(const model::Version& version, int cuda_major, model::Platform platform) const;

  // --- layouts ---------------------------------------------------------------------------
  // The rule covering a cuDNN version, nullptr when no rule does (an unknown layout is an error
  // for the caller, never a guess).
  // `platform`: windows-x86_64 or windows-arm64 (whose archives keep bin\arm64 and lib\arm64)
  const model::LayoutRule* windows_dll_dir(const model::Version& cudnn, model::Platform platform) const;
  const model::LayoutRule* windows_import_lib_dir(const model::Version& cudnn, model::Platform platform) const;
  const model::LayoutRule* linux_lib_dir(const model::Version& cudnn) const;
  const model::CudnnMajorContents* cudnn_contents(int major) const;
  bool zlibwapi_needed(const model::Version& cudnn) const;

  // --- frameworks ------------------------------------------------------------------------
  // The torch release row covering a version ("2.1.0" -> release "2.1").
  const model::TorchRelease* torch_release(const model::Version& version) const;
  std::string torch_index_url(const std::string& variant) const;
  // TensorFlow's tested configurations for a version (matched on major.minor) on an OS.
  std::vector<const model::TensorflowBuild*> tensorflow_builds(const model::Version& version, model::Os os) const;
  // ONNX Runtime rows whose version range covers `version`.
  std::vector<const model::OnnxRuntimeRow*> onnxruntime_rows(const model::Version& version) const;

  // --- GPU architectures (gpu_knowledge.cpp) ---------------------------------------------
  const model::GpuArch* gpu_arch(const model::Version& cc) const;
  // "compute capability 8.6 (Ampere)", or without the name for an architecture it does not know.
  std::string gpu_label(const model::Version& cc) const;
  // The models a name denotes: the driver's name or an alias, whatever the case, spacing or a
  // leading "NVIDIA " ("rtx 4090", "NVIDIA H100 80GB HBM3"). A short name ("H100") may denote
  // several rows; they share one compute capability. Empty when unknown.
  std::vector<const model::GpuModel*> gpu_models(std::string_view name) const;
  // When no name matches exactly: the models whose name or alias appears, as whole words, in it
  // ("Tesla V100-SXM2-16GB" contains "V100"), the longest such match only.
  std::vector<const model::GpuModel*> gpu_models_within(std::string_view name) const;
  // The compute capabilities a manifest's [gpus] names: its arch entries and its models (exact
  // names, else the model a name contains), each with where the manifest names it first.
  std::map<model::Version, model::Pos> gpu_archs(const model::Manifest& m) const;
  // Up to `n` known names closest to an unknown one, for a hint.
  std::vector<std::string> similar_gpu_names(std::string_view name, std::size_t n = 3) const;
  // NVIDIA's support matrix for a cuDNN release and CUDA major: the row covering it, else the
  // newest row below it (`*nearest` then true); nullptr when none is at or below it.
  const model::CudnnArchSupport* cudnn_arch_support(const model::Version& cudnn, int cuda_major, bool* nearest = nullptr) const;
  // What nvcc of a CUDA release compiles for (matched on major.minor); nullptr when unknown.
  const model::NvccArchs* nvcc_archs(const model::Version& cuda) const;
  // TORCH_CUDA_ARCH_LIST of torch's wheels for a release (matched on major.minor), variant, platform.
  const model::TorchArchs* torch_archs(const model::Version& release, const std::string& variant, model::Platform p) const;
  // The CUDA architectures of an onnxruntime-gpu or tensorflow release built for a CUDA major on a
  // platform (the row whose [from, until) holds the release, compared part by part); nullptr when unknown.
  // The onnxruntime-gpu build `pip install onnxruntime-gpu==<release>` gets from PyPI; nullptr when
  // no row says PyPI carries one.
  const model::OnnxRuntimeRow* onnxruntime_pypi_row(const model::Version& release) const;
  const model::FrameworkArchs* framework_archs(const std::string& framework, const model::Version& release, int cuda_major,
                                               model::Platform p) const;

  // The first CUDA release whose driver loads PTX of ISA `isa`; nullptr when the table does not
  // know it (newer than its newest row: see newest_ptx_isa).
  const model::PtxIsaRelease* ptx_isa(const model::Version& isa) const;
  const model::PtxIsaRelease* newest_ptx_isa() const;

  // --- conda and containers --------------------------------------------------------------
  const model::CondaCudnn* conda_forge_cudnn(const model::Version& version) const;
  const model::DockerTag* docker_tag(std::string_view tag) const;
  std::vector<const model::AptPin*> apt_pins(const model::Version& cuda) const;

 private:
  explicit KnowledgeBase(model::Facts facts);
  // The embedded data is read a file at a time, the first time a question needs that file: a
  // command pays for the TOML it asks about (reading all 650 KB of it was half of what a fetch of
  // cached archives took). Unread is what is left, null once everything is read.
  struct Unread;
  explicit KnowledgeBase(std::unique_ptr<Unread> unread);
  const model::Facts& all() const;                   // every file read
  const model::Facts& with(const char* file) const;  // that file read
  const model::Facts& archives() const { return with("cudnn-archives.toml"); }
  mutable model::Facts m_facts;  // filled under Unread's mutex, each file's fields by that file alone
  std::unique_ptr<Unread> m_unread;
};

// Whether code built for some architectures runs on a GPU of compute capability `gpu`: its own
// SASS (native), SASS of the same major and a lower minor (binary compatible), PTX of an equal or
// lower architecture that the driver compiles at first use (ptx), or nothing (none). `via` is the
// architecture used.
enum class KernelFit { native, compatible, ptx, none };
struct KernelMatch {
  KernelFit fit = KernelFit::none;
  model::Version via;
};
KernelMatch kernels_for(const model::Version& gpu, const std::vector<model::Version>& sass, const std::vector<model::Version>& ptx);
// The same for a build that also has architecture-specific targets (sm_90a): those run natively,
// or from their PTX, on exactly that architecture and on no other.
KernelMatch kernels_for(const model::Version& gpu, const model::FrameworkArchs& build);

// "https://docs... ; github:..." -> the first source, for one-line display.
std::string first_source(const model::Sources& sources);

}  // namespace knowledge
