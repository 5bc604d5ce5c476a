#pragma once
// Values of verify / stage / unstage / status: what was found, what was (or would be) staged,
// and the receipt kept in DEST/.stackpin/receipt.json.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/finding.hpp"
#include "model/platform.hpp"

namespace model {

struct StagedFile {
  std::string path;    // relative to DEST, '/'-separated
  std::string type;    // file | symlink | dir
  std::string sha256;  // files
  std::uint64_t size = 0;
  unsigned mode = 0;
  std::string link;           // symlinks: target as stored
  std::int64_t mtime_ns = 0;  // as left by stage, for the fast no-op check
  std::string backup;         // relative to DEST: where the file this one replaced was kept
  std::string from;           // path inside the archive (without its top directory)
  // The archive it came from: "cudnn", a CUDA component's id ("cuda_cudart"), or "" for what stackpin
  // wrote itself (version.json) and for receipts older than this field.
  std::string archive;
};

// One CUDA toolkit component's archive a staging took its files from.
struct ReceiptArchive {
  std::string component, version;  // "cuda_cudart", "12.4.127"
  std::string file, sha256;
  std::uint64_t size = 0;
};

struct Receipt {
  int schema = 1;
  std::string stackpin_version;
  std::string manifest_path, manifest_name, manifest_sha256;
  std::string cudnn_version;  // "" when only a toolkit is staged
  int cudnn_cuda_major = 0;
  std::string cuda_version;                   // the toolkit release whose components are staged ("" for none)
  std::vector<ReceiptArchive> cuda_archives;  // in staging order
  std::string platform, target, layout;
  std::string dest;                          // the local directory staged into
  std::string prefix;                        // where the tree lives on the target machine (manifest prefix / cuda_path)
  std::string archive_file, archive_sha256;  // cuDNN's archive ("" when only a toolkit is staged)
  std::uint64_t archive_size = 0;
  std::vector<StagedFile> files;          // in staging order (directories before their contents)
  std::vector<std::string> created_dirs;  // directories stage created (removed by unstage when empty)
};

struct VerifiedArchive {
  Platform platform = Platform::linux_x86_64;
  std::string expected_file;      // the pinned file name
  std::string path;               // what was checked ("" when not found)
  bool found_by_content = false;  // found by size and hash under another name
  std::string expected_sha256, actual_sha256;
  std::optional<std::uint64_t> expected_size, actual_size;
  bool ok = false;
};

struct VerifyReport {
  std::vector<VerifiedArchive> archives;
  std::vector<Finding> findings;  // what failed (and what passed), one per archive
};

struct PlannedFile {
  std::string from;  // archive path without the top directory
  std::string to;    // DEST-relative
  std::string type;  // file | symlink | dir
  std::string link;  // symlinks: the target as stored (judged where it will live, see plan_layout)
  std::uint64_t size = 0;
  bool replaces = false;  // an existing file is replaced (kept in .stackpin/backup)
};

struct StageReport {
  std::string dest, prefix, target, layout, platform;
  std::string archive_path, archive_sha256;  // cuDNN's
  std::uint64_t archive_size = 0;
  std::string cudnn_whole;  // its sub-libraries as read from the files ("cuDNN 9.19.0: all 8 sub-libraries of one release")
  std::string cuda_version;
  std::vector<ReceiptArchive> cuda_archives;  // the toolkit components staged (file = the path read)
  bool dry_run = false;
  bool no_op = false;              // DEST already held exactly this stage
  bool replaced_previous = false;  // another staging was unstaged first
  std::vector<PlannedFile> plan;
  std::vector<std::string> stale;  // other-version cuDNN DLLs found in the tree
  std::vector<std::string> removed_stale;
  std::uint64_t files = 0, bytes = 0;
  std::string recovered;                 // what an interrupted earlier run left, and what was done
  std::vector<std::string> activation;   // scripts written next to the tree (DEST/.stackpin/...)
  std::string activation_note;           // why some were not written
  std::vector<std::string> build_files;  // CMake package configuration and pkg-config file written into DEST
  std::string build_files_note;          // why some were not written
  std::vector<std::string> next_steps;   // what to do with the tree where it will be used (a Windows tree: copy, activate, check)
};

// One Debian package written by `stackpin deb`.
struct DebPackage {
  std::string name, version, architecture;
  std::string role;  // runtime | dev
  std::string path;  // the .deb written
  std::string sha256;
  std::uint64_t size = 0;
  bool unchanged = false;  // the same bytes were already there
  std::uint64_t files = 0, installed_size_kib = 0;
  std::vector<std::string> depends, recommends, conflicts, provides;
  std::vector<std::string> sonames;   // runtime: the shared libraries' SONAMEs
  std::vector<std::string> contents;  // a dry run's plan: every file and link it would install, by path
};

struct DebReport {
  std::string archive_path, archive_sha256, platform;
  std::string cudnn_whole;         // its sub-libraries as read from the files
  std::string libdir, includedir;  // where the files install (/usr/lib/<triplet>, /usr/include)
  std::int64_t mtime = 0;          // every member's timestamp
  std::string mtime_source;        // SOURCE_DATE_EPOCH | archive ("" without cuDNN)
  // the CUDA toolkit's packages ([cuda] components): its release, the archives verified ("file
  // sha256"), where the -dev package's CUDA_HOME is
  std::string cuda_version;
  std::vector<std::string> cuda_archives;
  std::string cuda_home;
  std::int64_t cuda_mtime = 0;    // their members' timestamp
  std::string cuda_mtime_source;  // SOURCE_DATE_EPOCH | release date (NVIDIA's, in the release's redistrib manifest)
  std::vector<DebPackage> packages;
  std::vector<std::string> notes;  // what the user should know (undeclared needs, non-ELF libraries)
  bool dry_run = false;            // the packages are planned, not written (no path holds them yet)
};

struct UnstageReport {
  std::string dest;
  std::uint64_t removed = 0, restored = 0;
  std::vector<std::string> modified;  // files changed since staging (refused without --force)
  std::string recovered;
};

struct StatusReport {
  std::vector<Finding> findings;  // drift, a pending operation, and the summary
  std::string dest;
  std::string cudnn_version, archive_file, target, layout;
  std::string cuda_version;
  std::vector<std::string> cuda_components;  // "cuda_cudart 12.4.127"
  std::uint64_t files = 0;
  std::string pending;  // an interrupted operation's journal is present
};

}  // namespace model
