#pragma once
// The lock file (schema 1): everything a manifest leaves open, pinned, so that a teammate gets the
// exact same stack. `inputs` records what the manifest said when the lock was made; commands run
// with --locked compare it with the manifest of the day and refuse on any difference.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/kernels.hpp"
#include "model/manifest.hpp"
#include "model/platform.hpp"

namespace model {

// The GPU code one library of a locked archive carries, as `lock` read it from the archive's
// bytes (stackpin inspect's reader): its SASS targets, and its PTX targets with their ISA versions.
struct LockedLibrary {
  std::string path;                   // inside the archive: "lib/libcudnn_cnn.so.9.19.0.56"
  std::vector<TargetImages> targets;  // target and PTX ISA only; image counts and sizes are not kept
  Pos pos;
};

struct LockedArchive {
  std::string component;  // CUDA toolkit archives: NVIDIA's component name ("cuda_cudart"); "" for cuDNN
  std::string version;    // CUDA toolkit archives: the component's own version ("12.4.127")
  Platform platform = Platform::linux_x86_64;
  Origin origin = Origin::nvidia;
  std::string url, file, sha256, md5;
  std::uint64_t size = 0;
  std::string source;  // where the pin came from: the manifest, the knowledge base, a redistrib file
  // Whether `lock` read the archive's libraries (it had the archive at hand); `libraries` then
  // lists those that carry SASS or PTX, and may be empty (a component of tools or headers).
  bool kernels_read = false;
  std::vector<LockedLibrary> libraries;
  Pos pos;
};

struct LockedDriver {
  Os os = Os::linux;
  std::string floor;     // the CUDA major's floor (below: error); "" when unknown
  std::string minimum;   // the toolkit release's own minimum (below: warning); "" when unknown
  std::string required;  // what stackpin requires: the manifest's pin when stricter, else the minimum
  std::string source;
};

struct LockedFramework {
  std::string name, version;
  std::string requirement;  // pip requirement of the exact build: torch==2.1.0+cu121
  std::string index_url;    // the index that serves it ("https://pypi.org/simple" for PyPI)
  std::string bundled_cudnn;
  Pos pos;
};

// A GPU architecture the stack was checked against ([gpus]), with check's verdicts (GpuCheck).
struct LockedGpu {
  std::string cc;  // "8.9"
  std::string arch;
  std::vector<std::string> models;
  std::string cudnn, nvcc, torch, onnxruntime, tensorflow;
  Pos pos;
};

// One thing the manifest said, in canonical text, with where it said it.
struct LockInput {
  std::string value;
  Pos pos;
};

struct Lock {
  std::string path;
  std::vector<std::string> lines;
  int schema = 1;
  std::string generated_by;  // "stackpin 0.1.0"
  std::string manifest;      // the manifest's file name, relative to the lock
  std::string name;          // the manifest's name
  std::map<std::string, LockInput> inputs;
  std::string cuda;   // toolkit release ("" when the manifest pins none)
  std::string cudnn;  // four parts ("" when none)
  int cudnn_cuda = 0;
  std::vector<LockedArchive> archives;       // cuDNN's, one per platform
  std::vector<LockedArchive> cuda_archives;  // CUDA toolkit components', one per component and platform
  std::vector<LockedDriver> drivers;
  std::vector<LockedFramework> frameworks;
  std::vector<LockedGpu> gpus;
  std::string base_image, base_digest;
  // The Python lock (PEP 751) written beside this one, and its SHA-256: --locked refuses a Python
  // lock that is not the one `lock` wrote. Both "" when the stack has none.
  std::string python_lock, python_lock_sha256;
  Pos python_lock_pos;

  util::SourceLocation locate(Pos pos) const;
  const LockedArchive* archive_for(Platform p) const;
  const LockedArchive* cuda_archive_for(const std::string& component, Platform p) const;
};

// One difference between a manifest and its lock.
struct LockDrift {
  std::string key;
  std::optional<std::string> manifest, lock;  // nullopt = absent on that side
  Pos manifest_pos;
};

}  // namespace model
