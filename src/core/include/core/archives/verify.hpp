#pragma once
// `stackpin verify`: proves archives are the pinned ones (size and SHA-256), touching nothing.
#include <filesystem>
#include <optional>
#include <string>

#include "archive/extract.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/manifest.hpp"
#include "model/staging.hpp"
#include "util/result.hpp"

namespace core {

// What an archive must be: its file name, SHA-256 and size. For origin = "nvidia" archives the
// knowledge base fills a hash or size the manifest leaves out.
struct ArchiveExpectation {
  model::Platform platform = model::Platform::linux_x86_64;
  std::string file;
  std::string sha256;
  std::optional<std::uint64_t> size;
};

// Errors: invalid (with the manifest location) when neither the manifest nor the knowledge base
// gives the archive's SHA-256.
util::Result<ArchiveExpectation> expectation_for(const model::Manifest& m, const model::ArchivePin& pin,
                                                 const knowledge::KnowledgeBase& kb);

// Finds the archive in `dir`: by its pinned file name, else (users rename downloads) the one
// regular file of the pinned size whose SHA-256 matches. Returns the path, or nullopt.
// `found_by_content` is set when it was found under another name. Errors: io (unreadable dir).
util::Result<std::optional<std::filesystem::path>> locate_archive(const ArchiveExpectation& e, const std::filesystem::path& dir,
                                                                  bool& found_by_content);

// The archive a manifest pins for one platform, with its SHA-256 and size known.
struct PinnedArchive {
  const model::ArchivePin* pin = nullptr;
  ArchiveExpectation expect;  // size always set
};

// The pin for `platform` and what the file must be (the knowledge base fills an origin = "nvidia"
// archive's hash or size). Errors: invalid (nothing pinned for the platform, the hint naming the
// pinned ones; no hash; no size, located at the [[cudnn.archives]] entry).
util::Result<PinnedArchive> pinned_archive(const model::Manifest& m, model::Platform platform, const knowledge::KnowledgeBase& kb);

// The [[cuda.archives]] pins for `platform` (those the manifest writes and those its lock or
// stackpin's NVIDIA manifests imply), each with what the file must be. Errors: invalid (a pin
// without a SHA-256, a size or a file name, located at its entry).
util::Result<std::vector<PinnedArchive>> pinned_cuda_archives(const model::Manifest& m, model::Platform platform);
// One of them: a [[cuda.archives]] pin (its component set) with what its file must be.
util::Result<PinnedArchive> pinned_cuda_archive(const model::Manifest& m, const model::ArchivePin& pin);

// The pinned archive's file: in `dir` first (found as locate_archive() finds it), then in the
// download cache `cache_dir` (CACHE/sha256/<hex>/, see core/cache.hpp). Either may be empty (not
// searched). Errors: not_found (naming every place searched; the hints say where to download it
// from and suggest `stackpin fetch MANIFEST`), io, usage (neither a folder nor a cache given).
// Opens `file` and proves it is the expected archive (size, then SHA-256) before any decoder may
// read it: the one way stage and deb get at an archive's contents. Errors: those of
// archive_io::PinnedFile::open (mismatch naming expected and actual values, not_found, io,
// unsupported), internal (a malformed expected hash, which pinned_archive never gives).
util::Result<archive_io::PinnedFile> open_pinned(const std::filesystem::path& file, const ArchiveExpectation& e);

// The archive `e` describes, searched as find_pinned_archive() searches; nullopt when it is in
// neither place. Errors: usage (neither given), io.
util::Result<std::optional<std::filesystem::path>> find_expected_archive(const ArchiveExpectation& e, const std::filesystem::path& dir,
                                                                         const std::filesystem::path& cache_dir, bool& found_by_content);

util::Result<std::filesystem::path> find_pinned_archive(const PinnedArchive& p, const std::filesystem::path& dir, bool& found_by_content,
                                                        const std::filesystem::path& cache_dir = {});

// Verifies every pinned archive (or only `platform`'s) found in `dir`, else in the download cache
// `cache_dir` (either may be empty: not searched). The report lists each with expected and actual
// values; findings say what failed. Errors: invalid (nothing pinned for the platform, no hash to
// compare with), io, usage (neither given).
util::Result<model::VerifyReport> verify_manifest(const model::Manifest& m, const std::filesystem::path& dir,
                                                  std::optional<model::Platform> platform, const knowledge::KnowledgeBase& kb,
                                                  const std::filesystem::path& cache_dir = {});

// Verifies one file against a SHA-256 (and size). Errors: not_found, io, usage (malformed hash).
util::Result<model::VerifyReport> verify_file(const std::filesystem::path& file, const std::string& sha256_hex,
                                              std::optional<std::uint64_t> size);

}  // namespace core
