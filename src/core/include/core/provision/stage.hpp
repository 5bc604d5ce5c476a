#pragma once
// Area core/provision: putting a verified stack onto a machine or a tree, above core/archives and
// core/layout (docs/architecture.md gives the order of the areas). state.cpp keeps DEST/.stackpin
// (lock, journal, receipt); stage.cpp, unstage.cpp and status.cpp are the three commands, sharing
// staging.cpp; build_files.cpp writes the CMake and pkg-config files; activate.hpp makes a staged
// tree the one programs use.
//
// `stackpin stage`, `unstage` and `status`: put the verified archives' files (cuDNN's and the
// `[cuda] components`') where a target needs them, all or nothing, and take exactly those files
// away again.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "archive/extract.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/contracts.hpp"
#include "model/manifest.hpp"
#include "model/staging.hpp"
#include "util/result.hpp"

namespace core {

struct StageOptions {
  std::filesystem::path archives_dir;  // searched first (may be empty)
  std::filesystem::path cache_dir;     // the download cache, searched next (may be empty)
  model::Target target = model::Target::linux;
  std::optional<std::filesystem::path> dest;
  std::optional<model::Platform> platform;
  bool dry_run = false;
  bool remove_stale = false;                    // cuda-merge: remove other-version cuDNN DLLs found in the tree
  bool force = false;                           // replace a previous staging even where its files were modified
  std::optional<std::uint64_t> max_unpacked;    // bound on extracted bytes (default: 16x the archive, at least 256 MiB)
  std::optional<std::uint64_t> decoder_memory;  // bytes the xz decoder may use for threads (archive_io::ExtractOptions::xz_memory)
  std::string manifest_sha256;                  // recorded in the receipt
  std::string stackpin_version;
  std::function<void(const archive_io::Progress&)> progress;
  std::function<void()> on_lock_wait;
  std::function<void(int)> fault;  // tests: called before every journal record with its number
};

// Stages the manifest's archives (cuDNN's and the toolkit components') for the target into DEST (see model/contracts.hpp). Reads the
// archive once, extracts it into DEST/.stackpin/tmp-*, checks size and SHA-256 against the pin
// and the files against the knowledge base's layout for this cuDNN version, then moves the files
// into place under a journal, keeps what they replace in DEST/.stackpin/backup/ and writes the
// receipt, then stackpin's own files: the activation scripts and the CMake / pkg-config files. On
// an intact DEST that holds this exact staging it does nothing (fast, from the receipt's file
// metadata) but rewrite those own files where missing or stale, without reading the archive.
// Errors: usage (no DEST for a windows target), invalid (no archive
// for the platform, layout unknown for the version), not_found (archive), mismatch (size/hash,
// header version), unsafe (hostile archive), io, conflict (previous staging modified).
util::Result<model::StageReport> stage(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const StageOptions& o);

// What to do when DEST cannot be written for lack of rights: on Windows an elevated prompt (a
// cuda-merge into C:\Program Files\... needs one), elsewhere root or a DEST one owns.
std::string write_access_hint(const std::filesystem::path& dest, bool windows);

// The receipt of what is staged in `dest`, validated like every state file (every path inside
// DEST). Errors: not_found (nothing staged there), parse, invalid, unsafe, io.
util::Result<model::Receipt> staged_receipt(const std::filesystem::path& dest);

struct UnstageOptions {
  std::filesystem::path dest;
  bool force = false;
  std::function<void()> on_lock_wait;
  std::function<void(int)> fault;
};

// Removes exactly what the receipt lists, restoring what cuda-merge replaced. Refuses (conflict,
// report.modified filled) when staged files changed since, unless force. Errors: not_found (no
// receipt), conflict, io.
util::Result<model::UnstageReport> unstage(const UnstageOptions& o, model::UnstageReport& report);

// Re-hashes every staged file against the receipt; findings report drift (modified, missing,
// replaced by another type), and whether the staged cuDNN is whole by its files' own bytes
// (cudnn.whole, judged against `kb`'s list of sub-libraries). Errors: not_found (no receipt), parse.
util::Result<model::StatusReport> status(const std::filesystem::path& dest, const knowledge::KnowledgeBase& kb);

}  // namespace core
