#pragma once
// What `stackpin check` resolves for one manifest: the findings and, for --explain, the facts it
// derived (driver minimums, Windows directories, matching framework wheels).
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/finding.hpp"
#include "model/platform.hpp"
#include "model/version.hpp"

namespace model {

struct DriverMinimum {
  Os os = Os::linux;
  std::optional<Version> family_floor;  // error below this (minor-version compatibility)
  std::optional<Version> release_min;   // warning below this (NVIDIA's table for the release)
  bool release_na = false;              // NVIDIA lists N/A for this OS (CUDA 13 on Windows)
  std::optional<Version> pinned;        // [driver] value
  std::optional<Version> required;      // pinned, else release_min, else family_floor
  std::string effective;                // `required` as text ("530.30.02", or "unknown")
  std::string source;
};

struct WindowsDirs {
  std::string dll_dir;         // relative to the prefix, backslashes ("bin", "bin\\x64")
  std::string import_lib_dir;  // "lib\\x64", "lib"
  std::string include_dir = "include";
  std::string main_dll;  // cudnn64_8.dll
  bool verified = true;
  bool zlibwapi_needed = false;
  std::string source;
};

struct WheelMatch {
  std::string framework;      // torch
  std::string version;        // 2.1.0
  std::string variant;        // cu121 ("" when pip's default build)
  std::string requirement;    // torch==2.1.0+cu121
  std::string index_url;      // https://download.pytorch.org/whl/cu121
  std::string bundled_cudnn;  // cuDNN the wheel brings ("" when unknown / none)
  std::string source;
};

struct ArchiveMatch {
  Platform platform = Platform::linux_x86_64;
  std::string file;
  bool known = false;  // the knowledge base has NVIDIA's entry for it
  bool cross_checked = false;
  std::string sha256;
  std::optional<unsigned long long> size;
  std::string url;
};

// One CUDA toolkit component's archive that a manifest's [cuda] components resolve to on one platform.
struct CudaComponentPick {
  Platform platform = Platform::linux_x86_64;
  std::string component;  // NVIDIA's name: "cuda_cudart"
  std::string name;       // "CUDA Runtime (cudart)"
  std::string version;    // the component's own version: "12.4.127"
  std::string via;        // the [cuda] components entry that brought it in: "runtime"
  std::string url, sha256, md5;
  std::uint64_t size = 0;
  std::string source;  // NVIDIA's manifest it was read from
};

// How one GPU architecture of [gpus] fares with the stack: each part "supported", "compatible",
// "deprecated", "ptx 9.0", "unsupported", "none", "unknown", or "" where it was not judged.
struct GpuCheck {
  std::string cc;                                           // "8.9"
  std::string arch;                                         // "Ada"
  std::vector<std::string> names;                           // the models the manifest named for it
  std::string cudnn, nvcc, torch, onnxruntime, tensorflow;  // check's verdicts
};

struct CheckReport {
  std::string manifest_path;
  std::string name;
  std::vector<Finding> findings;
  // The rules that applied to this manifest and examined it, with or without a finding: a rule
  // that found nothing wrong is here, one that did not apply (no such section) is not.
  std::set<std::string> examined;
  // resolved facts
  std::string cuda_version;
  std::string cudnn_version;
  std::optional<int> cudnn_cuda_major;
  std::vector<DriverMinimum> drivers;
  std::optional<WindowsDirs> windows;
  std::vector<WheelMatch> wheels;
  std::vector<ArchiveMatch> archives;
  std::vector<CudaComponentPick> cuda_components;  // per platform, in the manifest's order
  std::vector<GpuCheck> gpus;                      // [gpus], one per distinct compute capability
};

}  // namespace model
