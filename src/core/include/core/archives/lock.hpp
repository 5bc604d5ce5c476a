#pragma once
// `stackpin lock` and `--locked`: resolving what a manifest leaves open into a lock file, and
// holding later runs to it.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "format/redistrib.hpp"
#include "knowledge/cuda_catalog.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/check_report.hpp"
#include "model/finding.hpp"
#include "model/lock.hpp"
#include "model/manifest.hpp"
#include "model/pylock.hpp"
#include "util/result.hpp"

namespace core {

// The lock file that belongs to a manifest: beside it, "<stem>.lock" (cu121.toml -> cu121.lock).
std::filesystem::path default_lock_path(const std::filesystem::path& manifest);

// What a manifest says that a lock depends on, keyed "cudnn.version", "frameworks.torch",
// "cudnn.archives.linux-x86_64.sha256", ..., with the position of each value.
std::map<std::string, model::LockInput> lock_inputs(const model::Manifest& m);

// The manifest with an [[cudnn.archives]] entry (origin nvidia, NVIDIA's URL, SHA-256 and size)
// for every platform the knowledge base knows for its cuDNN version and CUDA major but the
// manifest does not pin, so that `version = "9.1.0.70"` alone is enough to verify, fetch and
// stage. The entries point at the [cudnn] table. Likewise an implied [[cuda.archives]] entry for
// every component [cuda] components resolve to on each platform that resolves completely (pointing
// at the [cuda] table). Unchanged when nothing is known.
model::Manifest resolve_archives(const model::Manifest& m, const knowledge::KnowledgeBase& kb,
                                 const knowledge::CudaCatalog& cuda = knowledge::CudaCatalog::embedded());

struct KernelReadOptions;

struct LockOptions {
  std::string generated_by;   // "stackpin 0.1.0"
  std::string manifest_file;  // the manifest's name as the lock refers to it (relative to the lock)
  std::vector<format::RedistribRelease> redistribs;
  // NVIDIA's CUDA manifests given with --redistrib: for a release stackpin has none of, or to
  // cross-check the one it has.
  std::vector<format::CudaRedistribRelease> cuda_redistribs;
  // How the lock names the source of a manifest in cuda_redistribs or redistribs, by its path, when
  // it is not a local file: "NVIDIA redistrib_13.5.0.json, read from URL (sha256 HEX)".
  std::map<std::string, std::string> redistrib_sources;
  const knowledge::CudaCatalog* cuda_catalog = &knowledge::CudaCatalog::embedded();
  // The lock being replaced: its archive pins (with their recorded source) are kept for platforms
  // no other source knows, so that re-locking without the --redistrib file that pinned a release
  // newer than the knowledge base gives the same lock.
  const model::Lock* previous = nullptr;
  // Where to read the GPU code of the pinned archives (read_lock_kernels below), before the lock
  // is judged: a [gpus] verdict of NVIDIA's matrices that the libraries overturn does not refuse it.
  const KernelReadOptions* kernels = nullptr;
};

struct LockOutcome {
  model::Lock lock;
  std::vector<model::Finding> findings;  // notes: where each archive pin came from, what is not pinned
};

// Resolves the manifest into a lock: archives from the manifest, then NVIDIA's redistrib files,
// then the knowledge base (each pin says which); driver minimums; the exact framework builds and
// their index; the base image and its digest; the GPU code of the archives at hand (o.kernels).
// Errors: invalid (the manifest has `check` errors, judged with that GPU code, with the first one; an archive whose SHA-256 or size nothing
// gives, located at its entry; a redistrib file for another cuDNN version), mismatch (a redistrib file and the knowledge base, or the
// manifest, give different hashes or sizes for one archive).
util::Result<LockOutcome> make_lock(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const LockOptions& o);

// What the lock's archives carry for GPUs (core/archives/lock_kernels.cpp), read from the archives
// themselves where they are at hand: in `archives_dir`, then in the download cache `cache_dir`,
// each proven by its pinned size and SHA-256 before it is unpacked (into `temp_parent`, "" = the
// system's temporary directory). An archive the previous lock already read (the same SHA-256 and
// size) keeps what was read then, without unpacking it again. With `read` false only that is kept
// (lock --check). `check` judges [gpus] by these libraries before NVIDIA's documents.
struct KernelReadOptions {
  std::filesystem::path archives_dir, cache_dir, temp_parent;
  const model::Lock* previous = nullptr;
  bool read = true;
};
// Fills each archive's kernels_read and libraries, and adds to `findings` a note of what was read
// and a warning for an archive found but not the pinned bytes, or that cannot be unpacked (it is
// then not read; the lock's pins stand). Errors: io (a folder that cannot be searched).
util::Status read_lock_kernels(model::Lock& lock, const KernelReadOptions& o, std::vector<model::Finding>& findings);

// The cuDNN release ("9.23.0") whose NVIDIA manifest the lock of `m` needs: the knowledge base
// lists no archive of the pinned build for its CUDA major, or one without a size, and `o` has no
// cuDNN redistrib file nor a previous lock pinning that build. nullopt when nothing is missing.
std::optional<model::Version> cudnn_manifest_needed(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const LockOptions& o);

// Every key on which the manifest and the lock disagree (empty = in agreement).
std::vector<model::LockDrift> lock_drift(const model::Manifest& m, const model::Lock& lock);
// --locked for generators: the framework builds the lock pins (requirement, index, bundled cuDNN)
// replace those `check` derives today, so that a newer knowledge base cannot change them.
void use_locked_builds(model::CheckReport& report, const model::Lock& lock);

// One line for a difference: `key: the manifest says "A", the lock "B"`.
std::string describe(const model::LockDrift& d);

// What differs between two locks in what they pin (inputs, archives, drivers, framework builds,
// base image), one line each; who generated them and the recorded sources do not count.
std::vector<std::string> lock_differences(const model::Lock& before, const model::Lock& now);

// The manifest as the lock pins it: drift is refused, then every locked archive the manifest does
// not pin is added and every hash, size, URL and file name it leaves out is filled in. Errors:
// mismatch (drift: the message counts the differences, the location is the manifest's first
// differing key, one hint per difference and one saying how to update the lock).
util::Result<model::Manifest> apply_lock(const model::Manifest& m, const model::Lock& lock);

// How a command takes a manifest: as written with NVIDIA's archives from the knowledge base
// (resolve_archives), or as its lock pins it (--locked: the lock beside it; --lock FILE: that one).
struct LockChoice {
  bool locked = false;
  std::string file;  // implies locked
};
struct LoadedManifest {
  model::Manifest manifest;
  std::optional<model::Lock> lock;      // the lock it was taken with
  std::optional<model::PyLock> pylock;  // the Python lock the lock records, read and verified
};
// Reads the manifest (its sha256 taken of the bytes parsed) and applies the choice. Errors: those of format::load_manifest,
// format::load_lock and apply_lock; with a lock that records a Python lock, those of load_python_lock.
// The Python lock `lock` (read from `lock_path`) records, beside it: read, its SHA-256 compared with
// the recorded one, then parsed. nullopt when the lock records none. Errors: not_found (missing),
// mismatch (another SHA-256: edited by hand, or written by another lock run), those of parse_pylock.
util::Result<std::optional<model::PyLock>> load_python_lock(const model::Lock& lock, const std::filesystem::path& lock_path);

util::Result<LoadedManifest> load_manifest(const std::string& path, const LockChoice& choice, const knowledge::KnowledgeBase& kb);

}  // namespace core
