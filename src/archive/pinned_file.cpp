// PinnedFile: the one way to get at an archive's bytes for decoding. A downloaded or copied
// archive is hostile until its size and SHA-256 match the pin, so no decoder (libarchive, zlib,
// liblzma: each has had its share of memory-safety bugs and infinite loops on crafted input)
// sees a byte of it before that. The file is opened once; the hash pass and the decoding pass
// read the same descriptor, and the decoding pass proves it read the same bytes (see source.hpp
// and extract.cpp). The format is taken from the first bytes: the name says nothing about what a
// file holds (a RAR renamed .zip), and formats NVIDIA does not use get an error naming them.
#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "archive/extract.hpp"
#include "util/file_io.hpp"
#include "util/fs.hpp"

namespace archive_io {
namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

const char* to_string(ArchiveKind k) {
  switch (k) {
    case ArchiveKind::tar: return "tar";
    case ArchiveKind::tar_gz: return "tar.gz";
    case ArchiveKind::tar_xz: return "tar.xz";
    case ArchiveKind::zip: return "zip";
  }
  return "?";
}

namespace {

// A format stackpin recognises but does not read, by its magic bytes; nullptr when none matches.
const char* foreign_format(const unsigned char* m, std::size_t n) {
  auto starts = [&](const char* sig, std::size_t len) { return n >= len && std::memcmp(m, sig, len) == 0; };
  if (starts("7z\xBC\xAF\x27\x1C", 6)) return "a 7-Zip archive";
  if (starts("Rar!\x1A\x07", 6)) return "a RAR archive";
  if (starts("BZh", 3)) return "a bzip2 stream";
  if (starts("\x28\xB5\x2F\xFD", 4)) return "a Zstandard stream";
  if (starts("\x04\x22\x4D\x18", 4)) return "an LZ4 stream";
  if (starts("LZIP", 4)) return "an lzip stream";
  if (starts("\x1F\x9D", 2)) return "a compress (.Z) stream";
  if (starts("\x5D\x00\x00", 3)) return "a raw LZMA (.lzma) stream";
  if (starts("MSCF", 4)) return "a Microsoft cabinet";
  if (starts("!<arch>\n", 8)) return "an ar archive (a .deb?)";
  if (starts("070707", 6) || starts("070701", 6) || starts("070702", 6) || starts("\xC7\x71", 2) || starts("\x71\xC7", 2))
    return "a cpio archive";
  if (starts("xar!", 4)) return "a xar archive";
  if (starts("\xED\xAB\xEE\xDB", 4)) return "an RPM package";
  if (starts("MZ", 2)) return "a Windows executable (an installer, not the archive)";
  if (starts("\x7F"
             "ELF",
             4))
    return "an ELF executable (an installer, not the archive)";
  if (starts("<!DOCTYPE", 9) || starts("<!doctype", 9) || starts("<html", 5) || starts("<HTML", 5) || starts("<?xml", 5))
    return "an HTML or XML page (an error page saved instead of the download?)";
  if (n > 0x8005 && std::memcmp(m + 0x8001, "CD001", 5) == 0) return "an ISO 9660 image";
  return nullptr;
}

// Reads up to `len` bytes at `at`, as many as the file has (short only at its end); -1 on error
// (errno set).
std::int64_t pread_full(int fd, char* buf, std::size_t len, std::uint64_t at) {
  std::size_t got = 0;
  while (got < len) {
    std::int64_t n = util::io::read_at(fd, buf + got, len - got, at + got);
    if (n < 0) return -1;
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return static_cast<std::int64_t>(got);
}

}  // namespace

std::optional<ArchiveKind> archive_kind_of(std::string_view head) {
  const auto* m = reinterpret_cast<const unsigned char*>(head.data());
  const std::size_t n = head.size();
  auto starts = [&](const char* sig, std::size_t len) { return n >= len && std::memcmp(m, sig, len) == 0; };
  if (n >= 262 && std::memcmp(m + 257, "ustar", 5) == 0) return ArchiveKind::tar;
  if (starts("\xFD"
             "7zXZ\0",
             6))
    return ArchiveKind::tar_xz;
  if (starts("\x1F\x8B", 2)) return ArchiveKind::tar_gz;
  if (n >= 4 && m[0] == 'P' && m[1] == 'K' && ((m[2] == 3 && m[3] == 4) || (m[2] == 5 && m[3] == 6) || (m[2] == 7 && m[3] == 8)))
    return ArchiveKind::zip;
  return std::nullopt;
}

namespace {

// The hash pass's reads on a second thread: it reads each chunk (whole chunks, short only at the
// end of the file) and tags it, while the hashing thread hashes the chunk before it. SHA-256 is then the only work on the hashing thread,
// which is what bounds how fast an archive is verified. A few chunks are in flight at a time.
class ChunkReader {
 public:
  static constexpr std::size_t k_chunk = PinnedFile::k_seal_chunk;
  struct Chunk {
    std::unique_ptr<char[]> buf{new char[k_chunk]};
    const char* data = nullptr;
    std::size_t size = 0;
  };
  explicit ChunkReader(int fd) : m_fd(fd), m_thread([this] { run(); }) {}
  ~ChunkReader() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_quit = true;
    }
    m_cv.notify_all();
    m_thread.join();
  }
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // The next chunk in file order, nullptr at the end of the file or after a read error.
  const Chunk* next() {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_cv.wait(lock, [&] { return m_filled > m_taken || m_end; });
    if (m_filled == m_taken) return nullptr;
    return &m_slots[m_taken % k_slots];
  }
  // Done with the chunk next() gave.
  void release() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      ++m_taken;
    }
    m_cv.notify_all();
  }
  int error() const { return m_errno; }  // read after next() gave nullptr
  // The seal and its tags, one per chunk (after the end).
  std::unique_ptr<crypto::ChunkSeal> take_seal(std::vector<crypto::ChunkSeal::Tag>& tags) {
    tags = std::move(m_tags);
    return std::move(m_seal);
  }

 private:
  static constexpr std::uint64_t k_slots = 4;
  void run() {
    for (std::uint64_t i = 0;; ++i) {
      {
        std::unique_lock<std::mutex> lock(m_mutex);
        m_cv.wait(lock, [&] { return m_filled - m_taken < k_slots || m_quit; });
        if (m_quit) return;
      }
      Chunk& c = m_slots[i % k_slots];
      std::int64_t n = pread_full(m_fd, c.buf.get(), k_chunk, i * k_chunk);
      int err = n < 0 ? errno : 0;
      if (n > 0) {
        m_tags.push_back(m_seal->tag(i, c.buf.get(), static_cast<std::size_t>(n)));
        c.data = c.buf.get();
        c.size = static_cast<std::size_t>(n);
      }
      {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (n > 0) ++m_filled;
        m_errno = err;
        m_end = n <= 0;
      }
      m_cv.notify_all();
      if (n <= 0) return;
    }
  }

  int m_fd;
  std::array<Chunk, k_slots> m_slots;
  std::unique_ptr<crypto::ChunkSeal> m_seal = std::make_unique<crypto::ChunkSeal>();
  std::vector<crypto::ChunkSeal::Tag> m_tags;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::uint64_t m_filled = 0, m_taken = 0;
  bool m_end = false, m_quit = false;
  int m_errno = 0;
  std::thread m_thread;  // last: it starts once the rest is ready
};

}  // namespace

PinnedFile::PinnedFile(PinnedFile&& o) noexcept
    : m_path(std::move(o.m_path)),
      m_fd(o.m_fd),
      m_size(o.m_size),
      m_sha256(o.m_sha256),
      m_kind(o.m_kind),
      m_seal(std::move(o.m_seal)),
      m_tags(std::move(o.m_tags)),
      m_identity(o.m_identity) {
  o.m_fd = -1;
}

PinnedFile& PinnedFile::operator=(PinnedFile&& o) noexcept {
  if (this != &o) {
    if (m_fd >= 0) util::io::close(m_fd);
    m_path = std::move(o.m_path);
    m_fd = o.m_fd;
    m_size = o.m_size;
    m_sha256 = o.m_sha256;
    m_kind = o.m_kind;
    m_seal = std::move(o.m_seal);
    m_tags = std::move(o.m_tags);
    m_identity = o.m_identity;
    o.m_fd = -1;
  }
  return *this;
}

PinnedFile::~PinnedFile() {
  if (m_fd >= 0) util::io::close(m_fd);
}

util::Status PinnedFile::unchanged() const {
  util::io::FileInfo st;
  if (util::io::stat_fd(m_fd, st) != 0) return Error(ErrorCode::io, "cannot stat " + m_path.string() + ": " + util::os_error_text(errno));
  Identity now{st.device, st.file, st.size, st.mtime_ns};
  if (!(now == m_identity))
    return Error(ErrorCode::conflict, m_path.string() + " changed while it was read (it was verified, then written to)")
        .with_hint("another program is writing the archive; wait for it to finish and run again; nothing was unpacked");
  return {};
}

util::Result<std::size_t> PinnedFile::read_sealed_chunk(std::uint64_t index, char* buf) const {
  if (!m_seal || index >= m_tags.size())
    return Error(ErrorCode::internal, "read_sealed_chunk(" + std::to_string(index) + ") of " + m_path.string());
  const std::uint64_t at = index * k_seal_chunk;
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(k_seal_chunk, m_size - at));
  std::int64_t n = pread_full(m_fd, buf, want, at);
  if (n < 0) return Error(ErrorCode::io, "cannot read " + m_path.string() + ": " + util::os_error_text(errno));
  const auto got = static_cast<std::size_t>(n);
  if (got != want || m_seal->tag(index, buf, got) != m_tags[index])
    return Error(ErrorCode::conflict, m_path.string() + " changed while it was read (the bytes decoded are not the bytes verified)")
        .with_hint("another program is writing the archive; nothing was staged");
  return got;
}

util::Result<PinnedFile> PinnedFile::open(const fs::path& file, const crypto::Digest& sha256, std::optional<std::uint64_t> size) {
  PinnedFile p;
  p.m_path = file;
  p.m_sha256 = sha256;
  p.m_fd = util::io::open_read(file);
  if (p.m_fd < 0) {
    int e = errno;
    return Error(e == ENOENT ? ErrorCode::not_found : ErrorCode::io,
                 "cannot open archive " + file.string() + ": " + util::os_error_text(e));
  }
  util::io::FileInfo st;
  if (util::io::stat_fd(p.m_fd, st) != 0 || !st.regular) return Error(ErrorCode::io, file.string() + " is not a regular file");
  // O_NONBLOCK only kept a FIFO from blocking the open; regular files ignore it
  p.m_size = st.size;
  // not the change time: renaming another file over the path changes this inode's link count
  // (and so its ctime) without touching the verified bytes
  p.m_identity = Identity{st.device, st.file, p.m_size, st.mtime_ns};
  if (size && *size != p.m_size) {
    Error e(ErrorCode::mismatch, "size mismatch for " + file.string() + ": expected " + std::to_string(*size) + " bytes, the file has " +
                                     std::to_string(p.m_size));
    e.hints.push_back(p.m_size < *size ? "the download is incomplete; nothing was unpacked"
                                       : "this is another file than the pinned archive; nothing was unpacked");
    return e;
  }
#ifdef POSIX_FADV_SEQUENTIAL
  (void)::posix_fadvise(p.m_fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  // the hash pass, which also keeps the first bytes for the format (and tags each chunk)
  ChunkReader reader(p.m_fd);
  std::string head;
  crypto::Sha256 h;
  std::uint64_t at = 0;
  while (const ChunkReader::Chunk* c = reader.next()) {
    if (head.size() < 0x8006) head.append(c->data, std::min<std::size_t>(c->size, 0x8006 - head.size()));
    h.update(c->data, c->size);
    at += c->size;
    reader.release();
  }
  if (reader.error()) return Error(ErrorCode::io, "cannot read " + file.string() + ": " + util::os_error_text(reader.error()));
  auto seal = reader.take_seal(p.m_tags);
  crypto::Digest got = h.finish();
  if (at != p.m_size) return Error(ErrorCode::conflict, file.string() + " changed size while it was verified");
  if (got != sha256) {
    Error e(ErrorCode::mismatch,
            "SHA-256 mismatch for " + file.string() + ": expected " + crypto::to_hex(sha256) + ", got " + crypto::to_hex(got));
    e.hints.push_back("the file is not the pinned archive (corrupt, tampered with, or another build); nothing was unpacked");
    return e;
  }
  SP_TRY(p.unchanged());
  p.m_seal = std::move(seal);

  const auto* m = reinterpret_cast<const unsigned char*>(head.data());
  std::size_t n = head.size();
  if (auto kind = archive_kind_of(head))
    p.m_kind = *kind;
  else if (const char* f = foreign_format(m, n)) {
    return Error(ErrorCode::unsupported, file.string() + " is " + f + ", not an archive format stackpin unpacks")
        .with_hint(
            "stackpin reads NVIDIA's formats (.tar.xz for Linux, .zip for Windows) and plain or gzip tars; "
            "repack the tree in one of them");
  } else {
    p.m_kind = ArchiveKind::tar;  // the tar reader decides (ustar, pax, GNU and v7 headers)
  }
  return p;
}

}  // namespace archive_io
