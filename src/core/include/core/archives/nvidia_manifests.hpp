#pragma once
// NVIDIA's redistrib manifests of CUDA releases newer than stackpin's own copies: read from NVIDIA
// (or the mirror STACKPIN_NVIDIA_BASE names) when a command needs one, parsed as untrusted input
// like any other, and kept in the download cache so that later runs read them without the network:
//   CACHE/nvidia/cuda/redistrib_<release>.json   a manifest that parsed and names its release
#include <filesystem>
#include <string>

#include "format/redistrib.hpp"
#include "model/version.hpp"
#include "util/env.hpp"
#include "util/result.hpp"

namespace core {

// NVIDIA's download root the redistrib folders are under; STACKPIN_NVIDIA_BASE replaces it (a
// mirror of the same tree: cuda/redist/, cudnn/redist/).
inline constexpr const char* k_nvidia_base = "https://developer.download.nvidia.com/compute/";

struct NvidiaManifestOptions {
  const util::Env* env = nullptr;   // STACKPIN_NVIDIA_BASE and the proxy variables; nullptr: neither
  std::filesystem::path cache_dir;  // "" = no cache: read from the network every time
  bool offline = false;             // the cache only
};

// The folder NVIDIA's CUDA manifests are in: STACKPIN_NVIDIA_BASE (a '/' added when it lacks one)
// or NVIDIA's root, then "cuda/redist/".
std::string nvidia_cuda_redist_url(const util::Env* env);

struct FetchedManifest {
  format::CudaRedistribRelease release;
  std::string url;     // where it was read from (the cached copy keeps the URL it came from)
  std::string sha256;  // of its bytes
};

// NVIDIA's redistrib_<release>.json of CUDA `release`: the cached copy, else downloaded (at most
// 16 MiB) and cached. Either must parse and be the manifest of `release`.
// Errors: not_found (HTTP 404, or offline without a cached copy), io (the network, the cache),
// invalid (not NVIDIA's manifest of that release, or larger than a manifest can be).
util::Result<FetchedManifest> nvidia_cuda_manifest(const model::Version& release, const NvidiaManifestOptions& o);

}  // namespace core
