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

// Decompresses an .xz stream from a HashedReader (multi-threaded where blocks allow).
class XzDecoder {
 public:
  static constexpr std::size_t k_out = 1 << 20;
  explicit XzDecoder(HashedReader& in);
  ~XzDecoder();
  bool ok() const { return m_error.empty(); }
  const std::string& error() const { return m_error; }
  // Decodes into the internal buffer; returns bytes produced (0 at end), -1 on error.
  long read(const void** out);
  bool at_end() const { return m_end; }

 private:
  HashedReader& m_in;
  lzma_stream m_strm = LZMA_STREAM_INIT;
  std::unique_ptr<unsigned char[]> m_out{new unsigned char[k_out]};
  bool m_in_eof = false, m_end = false;
  std::string m_error;
};

}  // namespace archive_io::detail
