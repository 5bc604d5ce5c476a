#pragma once
// NVIDIA's redistrib manifests of releases stackpin has no complete copy of (CUDA toolkits newer
// than its own files, cuDNN releases the knowledge base lists without sizes or not at all): read
// from NVIDIA, or from the copy of NVIDIA's tree that STACKPIN_NVIDIA_BASE or the settings file's
// [nvidia] base names, when a command needs one; parsed as untrusted input like any other, and kept
// in the download cache so that later runs read them without the network:
//   CACHE/nvidia/cuda/redistrib_<release>.json    a manifest that parsed and names its release
//   CACHE/nvidia/cudnn/redistrib_<release>.json   (each with a .url file: where it was read from)
#include <filesystem>
#include <string>
#include <vector>

#include "format/redistrib.hpp"
#include "model/facts.hpp"
#include "model/version.hpp"
#include "util/env.hpp"
#include "util/result.hpp"

namespace core {

// NVIDIA's download root the redistrib folders are under (cuda/redist/, cudnn/redist/).
inline constexpr const char* k_nvidia_base = "https://developer.download.nvidia.com/compute/";

struct NvidiaManifestOptions {
  const util::Env* env = nullptr;   // STACKPIN_NVIDIA_BASE and the proxy variables; nullptr: neither
  std::string base;                 // [nvidia] base of the settings file ("" = none)
  std::filesystem::path cache_dir;  // "" = no cache: read from the network every time
  bool offline = false;             // the cache only
};

// Where NVIDIA's tree is read from, ending in '/': STACKPIN_NVIDIA_BASE of `env`, else
// `configured` (the settings file's [nvidia] base), else NVIDIA's own root. The one rule for
// manifests and archives.
std::string nvidia_base(const util::Env* env, const std::string& configured);

template <typename Release>
struct Fetched {
  Release release;
  std::string url;     // where it was read from (the cached copy keeps the URL it came from)
  std::string sha256;  // of its bytes
};
using FetchedManifest = Fetched<format::CudaRedistribRelease>;
using FetchedCudnnManifest = Fetched<format::RedistribRelease>;

// NVIDIA's redistrib_<release>.json of CUDA `release` (BASE/cuda/redist/), or of cuDNN `release`
// (three parts, "9.23.0": BASE/cudnn/redist/): the cached copy, else downloaded (at most 16 MiB)
// and cached. Either must parse and be the manifest of `release`.
// Errors: not_found (HTTP 404, or offline without a cached copy), io (the network, the cache),
// invalid (not NVIDIA's manifest of that release, or larger than a manifest can be).
util::Result<FetchedManifest> nvidia_cuda_manifest(const model::Version& release, const NvidiaManifestOptions& o);
util::Result<FetchedCudnnManifest> nvidia_cudnn_manifest(const model::Version& release, const NvidiaManifestOptions& o);

// The releases NVIDIA lists in BASE/<product>/redist/ (product "cuda" or "cudnn"), read from the
// folder's listing (its redistrib_<X.Y.Z>.json names; at most 4 MiB), ascending. Nothing is cached:
// the listing is what grows. Errors: not_found (offline), io (the network), invalid (a listing
// that names no release).
util::Result<std::vector<model::Version>> nvidia_releases(const std::string& product, const NvidiaManifestOptions& o);

// The archives in a cuDNN manifest read from `got.url`, as knowledge: each at the build its file
// name gives (9.15.0's file holds .57 for CUDA 12 and .58 for CUDA 13), its URL resolved where the
// manifest lies (pool paths included), its source naming the manifest's URL and SHA-256.
// Errors: invalid (a path that leaves the host).
util::Result<std::vector<model::CudnnArchiveFact>> cudnn_facts_of(const FetchedCudnnManifest& got, const std::string& official_base);

}  // namespace core
