#pragma once
// `stackpin mirror push` and `stackpin mirror pull`: a stack's archives in an OCI registry.
//
// Push: every archive the stack pins (cuDNN and the [cuda] components, for the platforms fetch
// would take or those asked for, and the wheels of its Python lock) becomes a blob whose digest is its SHA-256, the digest NVIDIA
// and the index published, described by an OCI image manifest in ORAS's layout (artifactType
// application/vnd.stackpin.archive.v1, the empty config, one layer whose title annotation is the
// file name, annotations for the source URL, product, component, version, platform and CUDA
// variant); one OCI index per lock lists them and is tagged last, so that a push cut anywhere
// leaves no tag naming something the registry lacks. The manifests carry no time: pushing one lock
// twice gives the same digests, and the second push sends no blob.
//
// Pull: the index of a tag, its manifests and their blobs, each blob through fetch's transfer
// (the cache, verified by the digest and size the manifest gives, resumed), then written into a
// plain copy of NVIDIA's tree: DIR/cudnn/redist/..., DIR/cuda/redist/... (usable as
// `[nvidia] base` or STACKPIN_NVIDIA_BASE = file://DIR) and DIR/python/ (the wheels: usable as
// `[python] index = "DIR/python"`).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/archives/fetch.hpp"
#include "core/archives/registry.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/lock.hpp"
#include "model/manifest.hpp"
#include "model/oci.hpp"
#include "model/pylock.hpp"
#include "util/result.hpp"

namespace core {

using model::MirrorItem;
using model::MirrorPullReport;
using model::MirrorPushReport;

struct MirrorPushOptions {
  FetchOptions fetch;                  // the cache (read, and filled with what is missing unless fetch.offline), retries, env
  std::filesystem::path archives_dir;  // searched before the cache (as stage's --archives)
  std::uint64_t chunk_size = 512u << 20;
  std::string tag;  // "" = made from the stack's name and its lock's SHA-256
  // Only these platforms' archives; empty: those the manifest writes, and of those its lock or the
  // knowledge base imply, its targets' platforms (as fetch chooses)
  std::vector<model::Platform> platforms;
  std::function<void(const std::string& file, std::uint64_t done, std::uint64_t total)> progress;
};

// The archives the stack pins for `platforms` (see MirrorPushOptions::platforms), and the Python
// lock's wheels when given. Errors: invalid (a pin without hash or size, located; nothing to mirror).
util::Result<std::vector<MirrorItem>> mirror_items(const model::Manifest& m, const model::PyLock* pylock,
                                                   const knowledge::KnowledgeBase& kb, const std::vector<model::Platform>& platforms);

// Pushes them to `repository` (its tag, if it has one, is the index's tag). `lock` is the lock the
// manifest was taken with (its SHA-256 names the tag), nullptr when none (the manifest's then).
// Errors: not_found (an archive neither found nor downloadable: nothing tagged), mismatch (a file
// that is not its pin), io (the registry), usage (a reference with a digest).
util::Result<MirrorPushReport> mirror_push(const model::Manifest& m, const model::Lock* lock, const model::PyLock* pylock,
                                           const knowledge::KnowledgeBase& kb, const OciReference& repository, const MirrorPushOptions& o);

// Pulls the index `reference` names (a tag, or @sha256:), every archive it lists, into `dir` as a
// plain copy of NVIDIA's tree. The registry's answers are checked: an index or manifest of another
// type, a manifest that is not stackpin's one-archive artifact, a file name that is not a plain
// name, a blob that is not its digest or size: refused, and nothing of it is written to `dir`.
// Errors: usage (no tag or digest), not_found, invalid, mismatch, io.
util::Result<MirrorPullReport> mirror_pull(const OciReference& reference, const std::filesystem::path& dir, const FetchOptions& o);

}  // namespace core
