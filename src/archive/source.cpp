// Byte sources under libarchive (source.hpp says why they exist).
#include "source.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/file_io.hpp"
#include "util/fs.hpp"

namespace archive_io::detail {

SealedStream::SealedStream(const PinnedFile& file) : m_file(file), m_storage(k_chunks) {
  for (auto& c : m_storage) m_free.push_back(&c);
  m_thread = std::thread([this] { run(); });
}

SealedStream::~SealedStream() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_cv.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void SealedStream::run() {
  const std::uint64_t chunks = (m_file.size() + k_chunk - 1) / k_chunk;
  for (std::uint64_t index = 0;; ++index) {
    Chunk* c = nullptr;
    {
      std::unique_lock lock(m_mutex);
      m_cv.wait(lock, [&] { return m_stop || !m_free.empty(); });
      if (m_stop) return;
      c = m_free.back();
      m_free.pop_back();
    }
    std::optional<util::Error> error;
    c->len = 0;
    if (index < chunks) {
      auto got = m_file.read_sealed_chunk(index, c->data.get());
      if (got)
        c->len = *got;
      else
        error = std::move(got).error();
    } else {
      // one byte past the size PinnedFile verified: a file that grew since is refused
      char extra = 0;
      std::int64_t n = util::io::read_at(m_file.fd(), &extra, 1, m_file.size());
      if (n < 0)
        error = util::Error(util::ErrorCode::io, "cannot read " + m_file.path().string() + ": " + util::os_error_text(errno));
      else if (n > 0)
        error =
            util::Error(util::ErrorCode::conflict, m_file.path().string() + " grew while it was read (it was verified, then written to)")
                .with_hint("another program is writing the archive; nothing was staged");
    }
    std::lock_guard lock(m_mutex);
    if (c->len)
      m_full.push_back(c);
    else
      m_free.push_back(c);
    if (error || index >= chunks) {
      m_error = std::move(error);
      m_eof = true;
      m_cv.notify_all();
      return;
    }
    m_cv.notify_all();
  }
}

std::pair<const char*, std::size_t> SealedStream::next() {
  std::unique_lock lock(m_mutex);
  if (m_current) {
    m_free.push_back(m_current);
    m_current = nullptr;
    m_cv.notify_all();
  }
  m_cv.wait(lock, [&] { return !m_full.empty() || m_eof; });
  if (m_full.empty()) return {nullptr, 0};
  m_current = m_full.front();
  m_full.pop_front();
  m_consumed += m_current->len;
  return {m_current->data.get(), m_current->len};
}

std::optional<util::Error> SealedStream::failure() {
  std::lock_guard lock(m_mutex);
  return m_error;
}

util::Status SealedStream::finish() {
  while (next().first) {
  }
  if (m_thread.joinable()) m_thread.join();
  std::lock_guard lock(m_mutex);
  if (m_error) return *m_error;
  return {};
}

// ---- Decoder ------------------------------------------------------------------------------------

Decoder::~Decoder() { stop(); }

void Decoder::start() {
  for (auto& b : m_storage) m_free.push_back(&b);
  m_thread = std::thread([this] { run(); });
}

void Decoder::stop() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_cv.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void Decoder::run() {
  while (true) {
    Buffer* b = nullptr;
    {
      std::unique_lock lock(m_mutex);
      m_cv.wait(lock, [&] { return m_stop || !m_free.empty(); });
      if (m_stop) return;
      b = m_free.back();
      m_free.pop_back();
    }
    bool end = false;
    std::string error;
    long n = decode(b->data.get(), k_out, end, error);
    b->len = n > 0 ? static_cast<std::size_t>(n) : 0;
    std::lock_guard lock(m_mutex);
    if (b->len)
      m_full.push_back(b);
    else
      m_free.push_back(b);
    if (end || n < 0) {
      m_error = n < 0 ? error : std::string();
      m_done = true;
      m_cv.notify_all();
      return;
    }
    m_cv.notify_all();
  }
}

long Decoder::read(const void** out) {
  if (!ok()) {
    m_error_seen = m_start_error;
    return -1;
  }
  std::unique_lock lock(m_mutex);
  if (m_current) {
    m_free.push_back(m_current);
    m_current = nullptr;
    m_cv.notify_all();
  }
  m_cv.wait(lock, [&] { return !m_full.empty() || m_done; });
  if (m_full.empty()) {
    if (!m_error.empty()) {
      m_error_seen = m_error;
      return -1;
    }
    return 0;
  }
  m_current = m_full.front();
  m_full.pop_front();
  *out = m_current->data.get();
  return static_cast<long>(m_current->len);
}

// ---- xz -----------------------------------------------------------------------------------------

XzDecoder::XzDecoder(SealedStream& in, unsigned threads, std::uint64_t memory) : Decoder(in) {
  lzma_mt mt{};
  mt.flags = LZMA_CONCATENATED;
  unsigned hw = std::thread::hardware_concurrency();
  mt.threads = threads != 0 ? threads : (hw == 0 ? 1 : (hw > 8 ? 8 : hw));
  mt.timeout = 0;
  // Above this the decoder runs single-threaded instead of using more memory (it never refuses).
  // One thread gains nothing from the threaded decoder's buffers: it keeps to the small bound.
  mt.memlimit_threading = mt.threads > 1 ? memory : std::min<std::uint64_t>(memory, 24ull << 20);
  mt.memlimit_stop = UINT64_MAX;
  lzma_ret r = lzma_stream_decoder_mt(&m_strm, &mt);
  if (r != LZMA_OK) {
    m_start_error = "cannot start the xz decoder (liblzma error " + std::to_string(static_cast<int>(r)) + ")";
    return;
  }
  start();
}

XzDecoder::~XzDecoder() {
  stop();
  lzma_end(&m_strm);
}

long XzDecoder::decode(unsigned char* out, std::size_t cap, bool& end, std::string& error) {
  m_strm.next_out = out;
  m_strm.avail_out = cap;
  while (m_strm.avail_out > 0) {
    if (m_strm.avail_in == 0 && !m_in_eof) {
      auto [data, len] = m_in.next();
      if (!data) {
        m_in_eof = true;
      } else {
        m_strm.next_in = reinterpret_cast<const uint8_t*>(data);
        m_strm.avail_in = len;
      }
    }
    lzma_ret r = lzma_code(&m_strm, m_in_eof ? LZMA_FINISH : LZMA_RUN);
    if (r == LZMA_STREAM_END) {
      end = true;
      break;
    }
    if (r != LZMA_OK) {
      switch (r) {
        case LZMA_DATA_ERROR: error = "corrupt xz data"; break;
        case LZMA_BUF_ERROR: error = "truncated xz stream (it ends before its end marker)"; break;
        case LZMA_FORMAT_ERROR: error = "not an xz stream"; break;
        case LZMA_OPTIONS_ERROR: error = "the xz stream uses options liblzma does not support"; break;
        case LZMA_MEM_ERROR: error = "out of memory decoding xz"; break;
        default: error = "xz decoder error " + std::to_string(static_cast<int>(r));
      }
      return -1;
    }
  }
  return static_cast<long>(cap - m_strm.avail_out);
}

// ---- gzip ---------------------------------------------------------------------------------------

struct GzipDecoder::State {
  z_stream z{};
  bool in_eof = false;
  bool member_done = false;  // between two members (or at the end)
  bool started = false;
};

GzipDecoder::GzipDecoder(SealedStream& in) : Decoder(in), m_state(std::make_unique<State>()) {
  // 15 + 16: a gzip wrapper (and only that: no zlib or raw deflate guessed at)
  if (inflateInit2(&m_state->z, 15 + 16) != Z_OK) {
    m_start_error = "cannot start the gzip decoder";
    return;
  }
  start();
}

GzipDecoder::~GzipDecoder() {
  stop();
  inflateEnd(&m_state->z);
}

long GzipDecoder::decode(unsigned char* out, std::size_t cap, bool& end, std::string& error) {
  z_stream& z = m_state->z;
  z.next_out = out;
  z.avail_out = static_cast<uInt>(cap);
  while (z.avail_out > 0) {
    if (z.avail_in == 0 && !m_state->in_eof) {
      auto [data, len] = m_in.next();
      if (!data) {
        m_state->in_eof = true;
      } else {
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
        z.avail_in = static_cast<uInt>(len);
      }
    }
    if (m_state->member_done) {
      // another member follows only if bytes follow; trailing zeros (tape padding) end the stream
      if (z.avail_in == 0 && m_state->in_eof) {
        end = true;
        break;
      }
      if (z.avail_in == 0) continue;
      bool zeros = true;
      for (uInt i = 0; i < z.avail_in && zeros; ++i) zeros = z.next_in[i] == 0;
      if (zeros) {
        z.avail_in = 0;
        continue;
      }
      inflateReset(&z);
      m_state->member_done = false;
    }
    if (z.avail_in == 0 && m_state->in_eof) {
      if (!m_state->started)
        error = "empty gzip stream";
      else
        error = "truncated gzip stream (it ends inside a member)";
      return -1;
    }
    int r = inflate(&z, Z_NO_FLUSH);
    m_state->started = true;
    if (r == Z_STREAM_END) {
      m_state->member_done = true;
      continue;
    }
    if (r == Z_BUF_ERROR && z.avail_in == 0) continue;  // needs more input
    if (r != Z_OK) {
      error = std::string("corrupt gzip data") + (z.msg ? std::string(" (") + z.msg + ")" : std::string());
      return -1;
    }
  }
  return static_cast<long>(cap - z.avail_out);
}

}  // namespace archive_io::detail
