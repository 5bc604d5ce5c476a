#pragma once
// Reading and safe extraction of archives (NVIDIA's .zip and .tar.xz; plain and gzip tars),
// only after the file has been proven to be the pinned one: the bytes hashed are the bytes decoded.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "archive/paths.hpp"
#include "crypto/chunk_seal.hpp"
#include "crypto/sha256.hpp"
#include "util/result.hpp"

namespace archive_io {

enum class EntryType { file, dir, symlink, hardlink };
const char* to_string(EntryType t);

struct Entry {
  std::string path;  // normalized, '/'-separated, relative to the archive root
  EntryType type = EntryType::file;
  std::uint64_t size = 0;   // files: bytes written
  unsigned mode = 0644;     // permission bits as written (setuid/setgid/sticky dropped)
  std::string link;         // symlink target as stored; hardlink: the entry path it links to
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
  std::uint64_t max_total_bytes = 0;  // bound on extracted bytes (0 = none): refuses archive bombs
  std::uint64_t max_entries = 100000;
  std::function<void(const Progress&)> progress;  // called on the extracting thread, at most ~every MiB
  // Threads an archive is decoded on: an xz stream's blocks, a zip's entries (0: one per core, at
  // most 8). Several archives extracted at once share the cores, and each decoding thread holds a
  // block (an xz block, or about 2 MiB for a zip): fewer threads, less memory.
  unsigned decode_threads = 0;
  // What liblzma may allocate to decode an xz stream's blocks on several threads (each holds a
  // block in and out: about 42 MiB for NVIDIA's 24 MiB blocks); a stream it does not fit is decoded
  // on one thread in about 10 MiB. The default lets two threads decode NVIDIA's archives and keeps
  // stage under 192 MiB; small machines cap it (stage --decoder-memory).
  std::uint64_t xz_memory = k_default_xz_memory;
  static constexpr std::uint64_t k_default_xz_memory = 128ull << 20;
};

struct Extracted {
  crypto::Digest archive_sha256{};
  std::uint64_t archive_size = 0;
  std::vector<Entry> entries;  // in archive order
  std::uint64_t bytes_written = 0;
};

// The formats stackpin decodes: NVIDIA's (.tar.xz for Linux, .zip for Windows) and the plain and
// gzip tars of repacks. Chosen by the file's first bytes, never by its name; only that one
// format (and no libarchive filter) is enabled when it is read.
enum class ArchiveKind { tar, tar_gz, tar_xz, zip };
const char* to_string(ArchiveKind k);
// The format a file's first bytes (at least 262 of them where the file has them) announce: a
// ustar header, the xz or gzip magic, a zip signature; nullopt for anything else (PinnedFile::open
// then tries a pre-ustar tar, unless the bytes are a known foreign format).
std::optional<ArchiveKind> archive_kind_of(std::string_view head);

// An archive file opened once and proven to be the pinned bytes (its size, then the SHA-256 of
// every byte) before any decoder sees a byte of it. Extraction reads through this same open
// descriptor, never the path again, so a file swapped in after the check is not used; the bytes
// decoded are checked chunk by chunk against keyed tags taken in the hash pass, and a file changed
// while it is read is refused.
class PinnedFile {
 public:
  // Errors: not_found / io (the file), mismatch (size or SHA-256 differs from the pin; the
  // message names both), unsupported (a format stackpin does not read: 7-Zip, RAR, bzip2, ...).
  static util::Result<PinnedFile> open(const std::filesystem::path& file, const crypto::Digest& sha256, std::optional<std::uint64_t> size);
  PinnedFile(PinnedFile&& other) noexcept;
  PinnedFile& operator=(PinnedFile&& other) noexcept;
  PinnedFile(const PinnedFile&) = delete;
  PinnedFile& operator=(const PinnedFile&) = delete;
  ~PinnedFile();

  const std::filesystem::path& path() const { return m_path; }
  std::uint64_t size() const { return m_size; }
  const crypto::Digest& sha256() const { return m_sha256; }
  ArchiveKind kind() const { return m_kind; }
  // For this layer's readers: the open descriptor (read with pread only).
  int fd() const { return m_fd; }
  // Errors: conflict when the file's size, inode or modification time differ from when it was
  // verified (a cheap early check; the chunks' tags, checked as they are decoded, are the proof).
  util::Status unchanged() const;

  // The hash pass also tags each chunk of k_seal_chunk bytes under a one-use secret key
  // (crypto/chunk_seal.hpp), and the readers get their bytes only through this call, which checks
  // the chunk against its tag: a tar in order (a second SHA-256 would prove the same at several
  // times the cost), a zip out of order (its directory first, then its entries on several
  // threads). sealed() says whether the file has tags (every file PinnedFile::open returns).
  // Errors: io, conflict (the chunk is not the one hashed).
  static constexpr std::size_t k_seal_chunk = 1 << 20;
  bool sealed() const { return m_seal != nullptr; }
  util::Result<std::size_t> read_sealed_chunk(std::uint64_t index, char* buf) const;

 private:
  PinnedFile() = default;
  std::filesystem::path m_path;
  int m_fd = -1;
  std::uint64_t m_size = 0;
  crypto::Digest m_sha256{};
  ArchiveKind m_kind = ArchiveKind::tar;
  std::shared_ptr<const crypto::ChunkSeal> m_seal;
  std::vector<crypto::ChunkSeal::Tag> m_tags;
  struct Identity {
    std::uint64_t dev = 0, ino = 0, size = 0;
    std::int64_t mtime_ns = 0;
    bool operator==(const Identity&) const = default;
  } m_identity;
};

// Extracts `archive` below `into`, which must be an existing empty directory that the caller
// owns (a temporary directory beside the destination). Regular files, directories, symlinks whose
// target stays inside the tree (POSIX rules only) and hardlinks to earlier files are written;
// everything else is refused. Every bound (entries, unpacked bytes, sparse holes included) is
// checked before the bytes are written. On error, `into` may hold partial output: the caller
// discards it. Errors: io (the destination), unsafe (hostile entry: escaping names or links,
// devices, FIFOs, duplicates, case collisions on Windows, names that are not valid UTF-8, too many
// bytes or entries), invalid (corrupt or truncated stream, an entry whose data disagree with its
// declared size), unsupported (encrypted zip entries, compression methods NVIDIA does not use),
// conflict (the file changed while it was read).
util::Result<Extracted> extract(const PinnedFile& archive, const std::filesystem::path& into, const ExtractOptions& options);

// Reads the whole archive the same way, applies the same rules, writes nothing.
util::Result<Extracted> list(const PinnedFile& archive, const ExtractOptions& options);

}  // namespace archive_io
