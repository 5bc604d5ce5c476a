#pragma once
// The byte sources under libarchive. Every one of them reads an archive that PinnedFile has
// already proven to be the pinned bytes, through the same open descriptor (pread, never the path
// again).
//   - HashedReader: one thread reads the file in 1 MiB chunks and hashes them a second time while
//     the extracting thread decodes the same chunks, so that the bytes decoded are provably the
//     bytes hashed (compared with the pin at the end) at no wall-time cost.
//   - XzDecoder / GzipDecoder: .xz and .gz streams are decoded here, on a thread of their own,
//     and libarchive only ever sees a plain tar stream: its own filters (and their recursive
//     bidding, which a crafted gzip quine sends into a loop) are never enabled. liblzma's
//     threaded decoder decodes the several blocks of NVIDIA's tar.xz archives in parallel.
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

  // Reads `fd` from offset 0 to `size` (the size PinnedFile saw) with pread.
  HashedReader(int fd, std::uint64_t size);
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
  std::uint64_t m_size;
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

// A decompressor running on a thread of its own over a HashedReader, so that decoding (the bulk
// of the work) overlaps with parsing and writing the tar stream on the extracting thread, the way
// `tar -xJf` runs xz as a second process.
class Decoder {
 public:
  static constexpr std::size_t k_out = 1 << 20;
  static constexpr std::size_t k_buffers = 4;
  virtual ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  bool ok() const { return m_start_error.empty(); }
  const std::string& error() const { return m_error_seen; }
  // Next block of decoded bytes (releasing the previous one): bytes produced, 0 at the end of the
  // stream, -1 on error (error() says which).
  long read(const void** out);

 protected:
  explicit Decoder(HashedReader& in) : m_in(in), m_storage(k_buffers) {}
  // Starts the thread; call at the end of the derived constructor.
  void start();
  // Stops and joins the thread; call first in the derived destructor.
  void stop();
  // Fills out[0..cap) with decoded bytes; sets `end` at the end of the stream. Returns the bytes
  // produced, or -1 with `error` set.
  virtual long decode(unsigned char* out, std::size_t cap, bool& end, std::string& error) = 0;

  HashedReader& m_in;
  std::string m_start_error;

 private:
  struct Buffer {
    std::unique_ptr<unsigned char[]> data{new unsigned char[k_out]};
    std::size_t len = 0;
  };
  void run();

  std::vector<Buffer> m_storage;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<Buffer*> m_full;
  std::vector<Buffer*> m_free;
  Buffer* m_current = nullptr;
  bool m_done = false, m_stop = false;
  std::string m_error, m_error_seen;
  std::thread m_thread;
};

// .xz (concatenated streams allowed), liblzma's multi-threaded decoder within a memory bound.
class XzDecoder final : public Decoder {
 public:
  // threads: 0 for one per core (at most 8)
  XzDecoder(HashedReader& in, unsigned threads, std::uint64_t memory);
  ~XzDecoder() override;

 private:
  long decode(unsigned char* out, std::size_t cap, bool& end, std::string& error) override;
  lzma_stream m_strm = LZMA_STREAM_INIT;
  bool m_in_eof = false;
};

// .gz (one or more members), zlib. One level only: a gzip inside the gzip is data, not a filter.
class GzipDecoder final : public Decoder {
 public:
  explicit GzipDecoder(HashedReader& in);
  ~GzipDecoder() override;

 private:
  long decode(unsigned char* out, std::size_t cap, bool& end, std::string& error) override;
  struct State;
  std::unique_ptr<State> m_state;
};

}  // namespace archive_io::detail
