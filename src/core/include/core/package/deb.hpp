#pragma once
// Area core/package: a stack shipped in another form: Debian packages (deb.hpp), a Dockerfile and
// its build context (docker.hpp), a conda environment (conda.hpp). Each plans from the manifest
// and the knowledge base, then the renderers in gen/ write the text.
//
// `stackpin deb`: Debian binary packages (runtime and development) built from the verified
// cuDNN archive, for WSL2/Ubuntu/Debian machines that manage libraries with dpkg.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "archive/deb.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/manifest.hpp"
#include "model/staging.hpp"
#include "util/result.hpp"

namespace core {

struct DebOptions {
  std::filesystem::path archives_dir;  // searched first (may be empty)
  std::filesystem::path cache_dir;     // the download cache, searched next (may be empty)
  std::filesystem::path out_dir;
  std::optional<model::Platform> platform;  // default: the host's Linux platform
  std::string maintainer;                   // "Name <email>"; "" = the default
  archive_io::Compression compression = archive_io::Compression::xz;
  std::optional<std::int64_t> source_date_epoch;  // member timestamps; default: the newest in the archive
  std::optional<std::uint64_t> max_unpacked;
  std::string manifest_sha256;
  std::string stackpin_version;
  std::function<void(const archive_io::Progress&)> progress;
  // Plan only: the archive is verified and unpacked into the system's temporary folder, the
  // packages are planned (names, fields, every file) and nothing is written into out_dir.
  bool dry_run = false;
};

// The Debian architecture ("amd64", "arm64") and multiarch triplet of a Linux platform.
std::string debian_architecture(model::Platform p);
std::string multiarch_triplet(model::Platform p);

// The package names stackpin gives cuDNN <major> built for CUDA <cuda_major>.
std::string deb_runtime_name(int cudnn_major, int cuda_major);
std::string deb_dev_name(int cudnn_major, int cuda_major);

// Extracts the pinned archive for the platform into a temporary directory under out_dir (checking
// size, SHA-256 and layout exactly as stage does), then writes
// <out_dir>/<name>_<version>_<arch>.deb for the runtime and the development package, each
// replaced atomically. Depends are derived from the libraries' ELF dynamic sections.
// Errors: usage (not a Linux platform), invalid (no archive or CUDA major pinned, bad
// maintainer), not_found (archive), mismatch (size/hash/header version, a library built for
// another architecture), unsafe (hostile archive), io.
util::Result<model::DebReport> build_debs(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const DebOptions& o);

}  // namespace core
