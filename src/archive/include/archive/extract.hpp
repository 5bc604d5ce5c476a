#pragma once
// Reading and safe extraction of archives (NVIDIA's .zip and .tar.xz, and any format libarchive
// reads), reading the archive file exactly once: the bytes hashed are the bytes extracted.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "archive/paths.hpp"
#include "crypto/sha256.hpp"
#include "util/result.hpp"

namespace archive_io {

enum class EntryType { file, dir, symlink, hardlink };
const char* to_string(EntryType t);

struct Entry {
  std::string path;       // normalized, '/'-separated, relative to the archive root
  EntryType type = EntryType::file;
  std::uint64_t size = 0;  // files: bytes written
  unsigned mode = 0644;    // permission bits as written (setuid/setgid/sticky dropped)
  std::string link;        // symlink target as stored; hardlink: the entry path it links to
  crypto::Digest sha256{};  // files (and hardlinks): content hash; zero when listing
  std::int64_t mtime = 0;   // modification time stored in the archive (seconds since the epoch; 0 = none)
};

struct Progress {
  std::uint64_t archive_bytes = 0;  // bytes of the archive file read so far
  std::uint64_t archive_total = 0;  // its size
  std::uint64_t files = 0;          // entries written
  std::uint64_t bytes_written = 0;  // extracted bytes
};

struct ExtractOptions {
  NameRules rules = NameRules::posix;
  std::uint64_t max_total_bytes = 0;   // bound on extracted bytes (0 = none): refuses archive bombs
  std::uint64_t max_entries = 100000;
  std::optional<std::uint64_t> expected_size;  // refuse before reading when the file's size differs
  std::function<void(const Progress&)> progress;  // called on the extracting thread, at most ~every MiB
};

struct Extracted {
  crypto::Digest archive_sha256{};
  std::uint64_t archive_size = 0;
  std::vector<Entry> entries;  // in archive order
  std::uint64_t bytes_written = 0;
};

// Extracts `archive_file` below `into`, which must be an existing empty directory that the caller
// owns (a temporary directory beside the destination). Regular files, directories, symlinks whose
// target stays inside the tree (POSIX rules only) and hardlinks to earlier files are written;
// everything else is refused. On error, `into` may hold partial output: the caller discards it.
// Errors: not_found / io (the archive or the destination), mismatch (size differs from
// expected_size), unsafe (hostile entry: escaping names or links, devices, FIFOs, duplicates,
// case collisions on Windows, too many bytes or entries), invalid (corrupt or truncated stream,
// an entry whose data disagree with its declared size).
util::Result<Extracted> extract(const std::filesystem::path& archive_file, const std::filesystem::path& into,
                                const ExtractOptions& options);

// Reads the whole archive the same way, applies the same rules, writes nothing.
util::Result<Extracted> list(const std::filesystem::path& archive_file, const ExtractOptions& options);

}  // namespace archive_io
