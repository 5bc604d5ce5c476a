#include "source.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/fs.hpp"

namespace archive_io::detail {

HashedReader::HashedReader(int fd) : m_fd(fd), m_storage(k_chunks) {
  for (auto& c : m_storage) m_free.push_back(&c);
  m_thread = std::thread([this] { run(); });
}

HashedReader::~HashedReader() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_cv.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void HashedReader::run() {
  while (true) {
    Chunk* c = nullptr;
    {
      std::unique_lock lock(m_mutex);
      m_cv.wait(lock, [&] { return m_stop || !m_free.empty(); });
      if (m_stop) return;
      c = m_free.back();
      m_free.pop_back();
    }
    std::size_t got = 0;
    int err = 0;
    while (got < k_chunk) {
      ssize_t n = ::read(m_fd, c->data.get() + got, k_chunk - got);
      if (n < 0) {
        if (errno == EINTR) continue;
        err = errno;
        break;
      }
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    c->len = got;
    if (got) m_hash.update(c->data.get(), got);
    std::lock_guard lock(m_mutex);
    m_read += got;
    if (got) m_full.push_back(c);
    else m_free.push_back(c);
    if (err) m_errno = err;
    if (err || got < k_chunk) {
      m_eof = true;
      m_digest = m_hash.finish();
      m_cv.notify_all();
      return;
    }
    m_cv.notify_all();
  }
}

std::pair<const char*, std::size_t> HashedReader::next() {
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

bool HashedReader::finish(crypto::Digest& digest, std::uint64_t& bytes, std::string& error) {
  while (next().first) {
  }
  if (m_thread.joinable()) m_thread.join();
  std::lock_guard lock(m_mutex);
  digest = m_digest;
  bytes = m_read;
  if (m_errno) {
    error = util::os_error_text(m_errno);
    return false;
  }
  return true;
}

XzDecoder::XzDecoder(HashedReader& in) : m_in(in), m_storage(k_buffers) {
  lzma_mt mt{};
  mt.flags = LZMA_CONCATENATED;
  unsigned hw = std::thread::hardware_concurrency();
  mt.threads = hw == 0 ? 1 : (hw > 8 ? 8 : hw);
  mt.timeout = 0;
  // Above this the decoder runs single-threaded instead of using more memory (it never refuses):
  // stackpin stays under 64 MiB whatever the archive; blocks small enough decode in parallel.
  mt.memlimit_threading = 24ull << 20;
  mt.memlimit_stop = UINT64_MAX;
  lzma_ret r = lzma_stream_decoder_mt(&m_strm, &mt);
  if (r != LZMA_OK) {
    m_start_error = "cannot start the xz decoder (liblzma error " + std::to_string(static_cast<int>(r)) + ")";
    m_error_seen = m_start_error;
    return;
  }
  for (auto& b : m_storage) m_free.push_back(&b);
  m_thread = std::thread([this] { run(); });
}

XzDecoder::~XzDecoder() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_cv.notify_all();
  if (m_thread.joinable()) m_thread.join();
  lzma_end(&m_strm);
}

void XzDecoder::run() {
  bool in_eof = false;
  std::string error;
  while (true) {
    Buffer* b = nullptr;
    {
      std::unique_lock lock(m_mutex);
      m_cv.wait(lock, [&] { return m_stop || !m_free.empty(); });
      if (m_stop) return;
      b = m_free.back();
      m_free.pop_back();
    }
    m_strm.next_out = b->data.get();
    m_strm.avail_out = k_out;
    bool end = false;
    while (m_strm.avail_out > 0) {
      if (m_strm.avail_in == 0 && !in_eof) {
        auto [data, len] = m_in.next();
        if (!data) {
          in_eof = true;
        } else {
          m_strm.next_in = reinterpret_cast<const uint8_t*>(data);
          m_strm.avail_in = len;
        }
      }
      lzma_ret r = lzma_code(&m_strm, in_eof ? LZMA_FINISH : LZMA_RUN);
      if (r == LZMA_STREAM_END) {
        end = true;
        break;
      }
      if (r != LZMA_OK) {
        switch (r) {
          case LZMA_DATA_ERROR: error = "corrupt xz data"; break;
          case LZMA_BUF_ERROR: error = "truncated xz stream"; break;
          case LZMA_FORMAT_ERROR: error = "not an xz stream"; break;
          case LZMA_MEM_ERROR: error = "out of memory decoding xz"; break;
          default: error = "xz decoder error " + std::to_string(static_cast<int>(r));
        }
        break;
      }
    }
    b->len = k_out - m_strm.avail_out;
    std::lock_guard lock(m_mutex);
    if (b->len) m_full.push_back(b);
    else m_free.push_back(b);
    if (end || !error.empty()) {
      m_error = error;
      m_done = true;
      m_cv.notify_all();
      return;
    }
    m_cv.notify_all();
  }
}

long XzDecoder::read(const void** out) {
  if (!ok()) return -1;
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

}  // namespace archive_io::detail
