#pragma once
// The byte source under libarchive: one thread reads the archive file in 1 MiB chunks and hashes
// them while the extracting thread decompresses the same chunks, so hashing costs no wall time
// and the file is read once. .xz streams are decoded here with liblzma's multi-threaded decoder
// (NVIDIA's tar.xz archives hold several xz blocks, which decode in parallel); everything else
// goes to libarchive's own filters untouched.
#include <lzma.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "crypto/sha256.hpp"

namespace archive_io::detail {

class HashedReader {
 public:
  static constexpr std::size_t k_chunk = 1 << 20;
  static constexpr std::size_t k_chunks = 6;

  explicit HashedReader(int fd);
  ~HashedReader();
  HashedReader(const HashedReader&) = delete;
  HashedReader& operator=(const HashedReader&) = delete;

  // Next chunk of the file (releasing the previous one); {nullptr, 0} at end of file or on error.
  std::pair<const char*, std::size_t> next();
  // Reads to the end (still hashing), stops the thread. Returns false on a read error.
  bool finish(crypto::Digest& digest, std::uint64_t& bytes, std::string& error);
  std::uint64_t bytes_consumed() const { return m_consumed; }

 private:
  struct Chunk {
    std::unique_ptr<char[]> data{new char[k_chunk]};
    std::size_t len = 0;
  };
  void run();

  int m_fd;
  std::vector<Chunk> m_storage;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<Chunk*> m_full;
  std::vector<Chunk*> m_free;
  Chunk* m_current = nullptr;
  bool m_eof = false, m_stop = false;
  int m_errno = 0;
  std::uint64_t m_read = 0, m_consumed = 0;
  crypto::Sha256 m_hash;
  crypto::Digest m_digest{};
  std::thread m_thread;
};

// Decompresses an .xz stream from a HashedReader on a thread of its own, so that decoding (the
// bulk of the work) overlaps with parsing and writing the tar stream on the extracting thread,
// the way `tar -xJf` runs xz as a second process. liblzma's threaded decoder additionally
// decodes several blocks in parallel where they fit the memory budget.
class XzDecoder {
 public:
  static constexpr std::size_t k_out = 1 << 20;
  static constexpr std::size_t k_buffers = 4;
  explicit XzDecoder(HashedReader& in);
  ~XzDecoder();
  XzDecoder(const XzDecoder&) = delete;
  XzDecoder& operator=(const XzDecoder&) = delete;
  bool ok() const { return m_start_error.empty(); }
  const std::string& error() const { return m_error_seen; }
  // Next block of decoded bytes (releasing the previous one): bytes produced, 0 at the end of the
  // stream, -1 on error (error() says which).
  long read(const void** out);

 private:
  struct Buffer {
    std::unique_ptr<unsigned char[]> data{new unsigned char[k_out]};
    std::size_t len = 0;
  };
  void run();

  HashedReader& m_in;
  lzma_stream m_strm = LZMA_STREAM_INIT;
  std::vector<Buffer> m_storage;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<Buffer*> m_full;
  std::vector<Buffer*> m_free;
  Buffer* m_current = nullptr;
  bool m_done = false, m_stop = false;
  std::string m_error, m_error_seen, m_start_error;
  std::thread m_thread;
};

}  // namespace archive_io::detail
