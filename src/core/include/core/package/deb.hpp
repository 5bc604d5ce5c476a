#pragma once
// Area core/package: a stack shipped in another form: Debian packages (deb.hpp), a Dockerfile and
// its build context (docker.hpp), a conda environment (conda.hpp). Each plans from the manifest
// and the knowledge base, then the renderers in gen/ write the text.
//
// `stackpin deb`: Debian binary packages (runtime and development) built from the verified
// cuDNN archive and the manifest's [cuda] components' archives, for WSL2/Ubuntu/Debian machines
// that manage libraries with dpkg.
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
  // member timestamps; default: the newest entry time in cuDNN's archive, NVIDIA's release date for the toolkit
  std::optional<std::int64_t> source_date_epoch;
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
// The package names of the CUDA toolkit's components of a release (stackpin-cuda-runtime-12-4).
std::string deb_cuda_runtime_name(const model::Version& cuda);
std::string deb_cuda_dev_name(const model::Version& cuda);

// Extracts the pinned cuDNN archive for the platform into a temporary directory under out_dir
// (checking size, SHA-256 and layout exactly as stage does), stages the [cuda] components' archives
// there too when the manifest lists any, then writes <out_dir>/<name>_<version>_<arch>.deb for each
// runtime and development package; all are complete before any replaces an older file. Depends
// are derived from the ELF dynamic sections. Errors: usage (not a Linux platform, bad maintainer),
// invalid (neither [cudnn] nor [cuda] components, no CUDA major for cuDNN, no release date for the
// toolkit's timestamps without SOURCE_DATE_EPOCH), not_found (archive), mismatch (size/hash/header
// version, a library built for another architecture), unsafe (hostile archive), io.
util::Result<model::DebReport> build_debs(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const DebOptions& o);

}  // namespace core
