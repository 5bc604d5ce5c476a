#pragma once
// The byte sources under libarchive. Every one of them reads an archive that PinnedFile has
// already proven to be the pinned bytes, through the same open descriptor (pread, never the path
// again).
//   - SealedStream: one thread reads the file in order, one sealed chunk at a time, each checked
//     against the tag PinnedFile took of it in the hash pass, while the extracting thread decodes
//     the chunks before it: the bytes decoded are provably the bytes hashed, and the check costs
//     an AES-GMAC (several GB/s) where a second SHA-256 took a core's time.
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
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "archive/extract.hpp"
#include "util/result.hpp"

namespace archive_io::detail {

class SealedStream {
 public:
  static constexpr std::size_t k_chunk = PinnedFile::k_seal_chunk;
  static constexpr std::size_t k_chunks = 6;

  // Reads `file` (sealed) from its first chunk to its last.
  explicit SealedStream(const PinnedFile& file);
  ~SealedStream();
  SealedStream(const SealedStream&) = delete;
  SealedStream& operator=(const SealedStream&) = delete;

  // Next chunk of the file (releasing the previous one); {nullptr, 0} at end of file or on error.
  std::pair<const char*, std::size_t> next();
  // Reads and checks to the end, stops the thread, and makes sure the file has not grown. Errors:
  // io, conflict (a chunk is not the one hashed, or the file changed size).
  util::Status finish();
  // Why the stream ended early (a chunk that is not the one hashed, a read error), if it did. The
  // decoder and libarchive see only the end of their input then: this is the error to report.
  std::optional<util::Error> failure();
  std::uint64_t bytes_consumed() const { return m_consumed; }

 private:
  struct Chunk {
    std::unique_ptr<char[]> data{new char[k_chunk]};
    std::size_t len = 0;
  };
  void run();

  const PinnedFile& m_file;
  std::vector<Chunk> m_storage;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<Chunk*> m_full;
  std::vector<Chunk*> m_free;
  Chunk* m_current = nullptr;
  bool m_eof = false, m_stop = false;
  std::optional<util::Error> m_error;
  std::uint64_t m_consumed = 0;
  std::thread m_thread;
};

// A decompressor running on a thread of its own over a SealedStream, so that decoding (the bulk
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
  explicit Decoder(SealedStream& in) : m_in(in), m_storage(k_buffers) {}
  // Starts the thread; call at the end of the derived constructor.
  void start();
  // Stops and joins the thread; call first in the derived destructor.
  void stop();
  // Fills out[0..cap) with decoded bytes; sets `end` at the end of the stream. Returns the bytes
  // produced, or -1 with `error` set.
  virtual long decode(unsigned char* out, std::size_t cap, bool& end, std::string& error) = 0;

  SealedStream& m_in;
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
  XzDecoder(SealedStream& in, unsigned threads, std::uint64_t memory);
  ~XzDecoder() override;

 private:
  long decode(unsigned char* out, std::size_t cap, bool& end, std::string& error) override;
  lzma_stream m_strm = LZMA_STREAM_INIT;
  bool m_in_eof = false;
};

// .gz (one or more members), zlib. One level only: a gzip inside the gzip is data, not a filter.
class GzipDecoder final : public Decoder {
 public:
  explicit GzipDecoder(SealedStream& in);
  ~GzipDecoder() override;

 private:
  long decode(unsigned char* out, std::size_t cap, bool& end, std::string& error) override;
  struct State;
  std::unique_ptr<State> m_state;
};

}  // namespace archive_io::detail
