#pragma once
// Where the fatbin reader's bytes come from: memory (a fuzz input, a test) or a file. A file is
// read by pread through a small window, and in batches (batch_read.hpp), never mapped: each header
// sits on its own page, and on the CI machine a page fault costs several times a small read
// (60 ms against 7 ms for the 5,400 headers of cuDNN's largest library). The window serves the
// headers that lie close together (small kernels) from one read.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "batch_read.hpp"
#include "fatbin_container.hpp"
#include "util/file_io.hpp"
#include "util/result.hpp"

namespace probe::detail {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual std::uint64_t size() const = 0;
  // [off, off + n), which the caller has checked lies inside the file; valid until the next call.
  // nullptr when the read fails (the file changed or an I/O error): error() says why.
  virtual const char* at(std::uint64_t off, std::size_t n) = 0;
  // Every request read (results as ReadRequest says).
  virtual void read_many(std::vector<ReadRequest>& requests) = 0;
  // A second source over the same bytes, for another thread; nullptr where one thread is enough.
  virtual std::unique_ptr<ByteSource> another() const = 0;
  virtual const std::optional<util::Error>& error() const = 0;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view b) : m_b(b) {}
  std::uint64_t size() const override { return m_b.size(); }
  const char* at(std::uint64_t off, std::size_t) override { return m_b.data() + off; }
  void read_many(std::vector<ReadRequest>& requests) override {
    for (auto& r : requests) {
      std::size_t n = r.offset < m_b.size() ? std::min<std::size_t>(r.length, static_cast<std::size_t>(m_b.size() - r.offset)) : 0;
      if (n) std::memcpy(r.into, m_b.data() + r.offset, n);
      r.result = static_cast<std::int64_t>(n);
    }
  }
  std::unique_ptr<ByteSource> another() const override { return nullptr; }
  const std::optional<util::Error>& error() const override { return m_error; }

 private:
  std::string_view m_b;
  std::optional<util::Error> m_error;
};

// Reads `fd`, which the caller keeps open for as long as the source is used.
class FileSource final : public ByteSource {
 public:
  static constexpr std::size_t k_window = 1024;
  FileSource(int fd, std::uint64_t size, std::string name) : m_fd(fd), m_size(size), m_name(std::move(name)), m_batch(fd) {}
  std::uint64_t size() const override { return m_size; }
  const char* at(std::uint64_t off, std::size_t n) override {
    if (off >= m_lo && off - m_lo + n <= m_len) return m_buf.get() + (off - m_lo);
    std::size_t want = std::max<std::size_t>(n, k_window);
    want = static_cast<std::size_t>(std::min<std::uint64_t>(want, m_size - off));
    if (m_cap < want) {  // not zero-filled: every byte handed out was just read
      m_buf = std::make_unique_for_overwrite<char[]>(want);
      m_cap = want;
    }
    std::size_t got = 0;
    while (got < want) {
      auto r = util::io::read_at(m_fd, m_buf.get() + got, want - got, off + got);
      if (r <= 0) break;
      got += static_cast<std::size_t>(r);
    }
    if (got < n) {
      if (!m_error) m_error = util::Error(util::ErrorCode::io, "cannot read " + m_name + " (it changed or shrank while it was read)");
      m_len = 0;
      return nullptr;
    }
    m_lo = off;
    m_len = got;
    return m_buf.get();
  }
  void read_many(std::vector<ReadRequest>& requests) override { m_batch.read(requests); }
  std::unique_ptr<ByteSource> another() const override { return std::make_unique<FileSource>(m_fd, m_size, m_name); }
  const std::optional<util::Error>& error() const override { return m_error; }

 private:
  int m_fd;
  std::uint64_t m_size;
  std::string m_name;
  BatchReader m_batch;
  std::unique_ptr<char[]> m_buf;
  std::size_t m_cap = 0;
  std::uint64_t m_lo = 0, m_len = 0;
  std::optional<util::Error> m_error;
};

// Bounds-checked numbers and text from a source, for the readers of section tables and
// containers; errors name the file.
class ByteReader {
 public:
  ByteReader(ByteSource& src, const std::string& name) : m_src(src), m_name(name) {}

  util::Error bad(const std::string& why) const { return util::Error(util::ErrorCode::invalid, m_name + ": " + why); }
  bool fits(std::uint64_t off, std::uint64_t n) const { return off <= m_src.size() && n <= m_src.size() - off; }
  std::uint64_t size() const { return m_src.size(); }
  // A little-endian number at `off` (inside the file); 0 when it cannot be read (the source
  // remembers why, and read_gpu_code reports that instead of the result).
  std::uint64_t u(std::uint64_t off, int bytes) const {
    const char* p = m_src.at(off, static_cast<std::size_t>(bytes));
    return p ? le(std::string_view(p, static_cast<std::size_t>(bytes)), 0, bytes) : 0;
  }
  // `n` bytes at `off` as text ("" when they cannot be read).
  std::string text(std::uint64_t off, std::size_t n) const {
    const char* p = m_src.at(off, n);
    return p ? std::string(p, n) : std::string();
  }

 protected:
  ByteSource& m_src;
  const std::string& m_name;
};

}  // namespace probe::detail
