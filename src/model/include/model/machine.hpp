#pragma once
// What is on a Linux (or WSL2) machine, as plain values: the OS, the NVIDIA driver, the CUDA
// toolkits, every cuDNN copy, what the dynamic loader would really load for each CUDA/cuDNN
// soname, the active conda environment and the frameworks of the current Python. `probe` fills it
// (probe/machine.hpp), `core::doctor_linux` judges it, `format::to_json` writes it.
//
// Every path is a path as seen on the inspected machine ("/usr/local/cuda-13.0/lib"), also when
// the inspection ran over a copy of a file system under another root (tests).
#include <optional>
#include <string>
#include <vector>

#include "model/kernels.hpp"
#include "model/version.hpp"

namespace model {

struct OsInfo {
  std::string id;          // os-release ID ("debian", "ubuntu"); "" when unknown
  std::string version_id;  // os-release VERSION_ID ("12", "22.04")
  std::string pretty_name;
  std::string source;  // the file read ("/etc/os-release"); "" when none was found
};

struct WslInfo {
  bool wsl = false;
  int version = 0;                     // 1 or 2 when wsl; 0 when not known
  std::string evidence;                // "/proc/sys/kernel/osrelease: 5.15.153.1-microsoft-standard-WSL2"
  bool windows_driver_mapped = false;  // /usr/lib/wsl/lib/libcuda.so.1 exists
  std::string windows_driver_path;     // that path, when mapped
};

enum class DriverSource { none, proc, nvml, nvidia_smi };
const char* to_string(DriverSource s);

struct DriverInfo {
  std::string version;  // "535.104.05"; "" when no source answered
  DriverSource source = DriverSource::none;
  std::string detail;              // the line it came from, or why nothing answered
  std::vector<std::string> tried;  // sources asked, in order ("/proc/driver/nvidia/version: absent")
};

enum class ToolkitVersionSource { unknown, version_json, version_txt, pip_wheel, cuda_h };
const char* to_string(ToolkitVersionSource s);

// One component a toolkit's version.json lists ("cuda_cudart", "CUDA Runtime (cudart)", "12.4.127").
struct ToolkitComponent {
  std::string id, name, version;
};

// One of NVIDIA's pip wheels a toolkit is assembled from.
struct ToolkitWheel {
  std::string distribution;  // "nvidia-cuda-nvcc"
  std::string dist_info;     // its dist-info folder
  std::string version;       // METADATA's Version, else the folder name's
};

struct ToolkitInfo {
  std::string root;                  // the toolkit directory, symlinks resolved
  std::vector<std::string> aliases;  // how it was found: "/usr/local/cuda", "CUDA_HOME", "nvcc on PATH"
  std::string version;               // "12.4.1" (version.json), "13.0" (cuda.h or the runtime wheel); "" unknown
  ToolkitVersionSource version_source = ToolkitVersionSource::unknown;
  std::string version_detail;                // "CUDA_VERSION 13000", "nvidia-cuda-runtime 13.0.96 (dist-info/...)"
  std::string cuda_h_version;                // from include/cuda.h when present, to cross-check the version files
  bool is_default = false;                   // /usr/local/cuda points here
  std::vector<ToolkitComponent> components;  // from version.json (NVIDIA's installers, stackpin stage); empty without one
  // a toolkit assembled from NVIDIA's pip wheels (version from the runtime wheel): its nvidia-*
  // wheels, by distribution
  std::vector<ToolkitWheel> wheels;
};

struct NvccInfo {
  std::string path;            // the first nvcc on PATH, as PATH names it
  std::string real_path;       // symlinks resolved
  std::string toolkit_root;    // the toolkit it belongs to (real_path/../..)
  std::string version;         // "13.0.88" (nvcc --version) or the toolkit's version
  std::string version_source;  // "nvcc --version" | "toolkit" | ""
};

enum class CudnnKind { system, toolkit, cudnn_path, staged, conda, pip_wheel, torch_lib, other };
const char* to_string(CudnnKind k);

// One cuDNN in one directory judged whole by its files' own bytes (probe/cudnn_whole.hpp): every
// sub-library the knowledge base lists for the major, or that another needs, present by soname,
// and all of one release.
struct CudnnWhole {
  std::string dir;  // as shown
  int major = 0;
  std::optional<Version> release;     // as the bytes name it (else the file names)
  std::string release_source;         // "libcudnn_graph.so.9 9.19.0.56 (the string cudnn_version_9_19_0_56_)"
  std::vector<std::string> present;   // sonames, in name order
  std::vector<std::string> missing;   // sonames the list or another sub-library needs
  std::vector<std::string> problems;  // mixed releases, renamed files, unreadable files
  bool whole() const { return missing.empty() && problems.empty(); }
  // "cuDNN 9.19.0: all 8 sub-libraries of one release" / "cuDNN 9: missing libcudnn_ops.so.9"
  std::string text() const;
};

// One cuDNN major found in one directory.
struct CudnnCopy {
  std::string dir;                   // the library directory, symlinks resolved
  std::vector<std::string> aliases;  // other names of the directory (/usr/local/cuda/lib64, an LD_LIBRARY_PATH entry)
  CudnnKind kind = CudnnKind::other;
  std::string kind_detail;  // "nvidia-cudnn-cu12 wheel", "staged by stackpin (/opt/cudnn/.stackpin/receipt.json)"
  int major = 0;
  std::string header_version;  // "9.1.0" from cudnn_version.h; "" when no header was found
  std::string header_path;
  std::string library_version;         // "9.1.0"; "" when unknown
  std::string library_version_source;  // "file name libcudnn.so.9.1.0" | "<...>.dist-info/METADATA" | ""
  std::string package_version;         // four parts when a wheel, receipt, dpkg or conda says ("9.1.0.70")
  std::string package_source;
  std::vector<std::string> files;          // cuDNN library and header files present (names, sorted)
  std::vector<std::string> missing;        // required by the knowledge base for this major and absent
  bool contents_known = false;             // the knowledge base lists the files of this major
  bool headers_expected = false;           // this kind of copy ships headers (or some are present)
  bool half_copied = false;                // something required is missing
  bool mixed = false;                      // files of more than one version
  std::vector<std::string> versions_seen;  // distinct versions in file names / metadata
  std::vector<std::string> problems;       // one line each: dangling links, RECORD size disagreements, ...
  std::vector<CudnnWhole> whole;           // the same files read for what they are (one per major found)
  // the GPU code of its libraries (each sonamed libcudnn*.so.N file's fatbin containers), in name
  // order; a library that cannot be read is left out and named in `problems`
  std::vector<LibraryKernels> kernels;
};

struct LoaderCandidate {
  std::string path;       // the file as the loader opens it ("/usr/local/cuda/lib64/libcudnn.so.9")
  std::string real_path;  // symlinks resolved
  std::string via;        // "LD_LIBRARY_PATH entry 1 (/opt/cudnn/lib)", "ld.so cache", "default directory /usr/lib"
};

// One soname, resolved as ld.so does: LD_LIBRARY_PATH, then the ld.so cache, then the default
// directories (the DT_RPATH/DT_RUNPATH of a particular program are not part of this view).
struct LoaderResolution {
  std::string soname;                     // "libcudnn.so.9"
  std::optional<LoaderCandidate> winner;  // nullopt: the loader finds none
  std::vector<LoaderCandidate> shadowed;  // other copies on the search path, in search order
  std::vector<std::string> notes;         // skipped candidates (stale cache entry, wrong ELF class)
};

struct LdLibraryPathEntry {
  std::string text;       // as written ("" for an empty entry, which means the current directory)
  bool exists = false;    // an existing directory (relative entries: not judged, see `relative`)
  bool relative = false;  // empty or relative: searched from each program's working directory
};

struct CondaPackage {
  std::string name, version, build;
};

struct CondaEnv {
  std::string prefix;        // CONDA_PREFIX
  std::string cudatoolkit;   // package versions; "" when not installed
  std::string cuda_version;  // the cuda-version metapackage (CUDA 12+ on conda-forge)
  std::string cudnn;
  std::vector<CondaPackage> packages;  // the CUDA/cuDNN-related ones from conda-meta/*.json
  std::vector<std::string> problems;   // unreadable conda-meta files
};

struct PythonPackage {
  std::string name;      // normalized: lower case, '-' separated ("onnxruntime-gpu")
  std::string version;   // "2.1.0+cu121"
  std::string location;  // the site-packages directory
  // Where it came from and what was installed: the URL of its direct_url.json (PEP 610: installed
  // from a URL, as stackpin apply installs), with the archive's SHA-256 when pip recorded it; the
  // path of its RECORD on this machine (every installed file with its hash: capture takes its SHA-256,
  // so that equal digests are equal installs).
  std::string url, wheel_sha256, record_path;
};

struct PythonEnv {
  std::string python;                      // the interpreter asked ("" when site-packages were given)
  std::vector<std::string> site_packages;  // directories read
  std::vector<PythonPackage> frameworks;   // torch, tensorflow, onnxruntime, jax, and NVIDIA's CUDA/cuDNN wheels
  std::string error;                       // why site-packages could not be found
};

// A GPU as nvidia-smi lists it (--query-gpu=index,name,compute_cap).
struct GpuDevice {
  int index = 0;
  std::string name;  // "NVIDIA H200"
  std::string cc;    // "9.0"
};

struct MachineReport {
  std::string root = "/";  // the file system inspected
  OsInfo os;
  std::string arch;  // "x86_64", "aarch64"
  WslInfo wsl;
  DriverInfo driver;
  std::vector<GpuDevice> gpus;  // from nvidia-smi, when programs run on the live machine
  std::vector<ToolkitInfo> toolkits;
  std::optional<NvccInfo> nvcc;
  std::vector<CudnnCopy> cudnn;
  // loader view
  std::vector<LoaderResolution> loader;
  std::vector<LdLibraryPathEntry> ld_library_path;
  std::string ld_cache;        // "/etc/ld.so.cache (668 entries)", "" when absent
  std::string ld_cache_error;  // why the cache could not be read (truncated, another format)
  std::vector<std::string> default_dirs;
  std::optional<CondaEnv> conda;
  PythonEnv python;
  std::vector<std::string> skipped;  // parts not inspected and why ("nvidia-smi: programs not run")
};

// The sonames the loader view resolves.
const std::vector<std::string>& loader_sonames();

}  // namespace model
