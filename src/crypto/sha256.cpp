// SHA-256 through the platform's digest backend (digest_backend.hpp): a streaming hasher and hex text.
#include "crypto/sha256.hpp"

#include "digest_backend.hpp"
#include "file_chunks.hpp"

#include <cassert>
#include <cerrno>
#include <cstdio>
#include <memory>

#include "util/fs.hpp"
#include "util/strings.hpp"

namespace crypto {

std::string to_hex(const Digest& d) {
  static const char k_hex[] = "0123456789abcdef";
  std::string out(64, '0');
  for (std::size_t i = 0; i < d.size(); ++i) {
    out[2 * i] = k_hex[d[i] >> 4];
    out[2 * i + 1] = k_hex[d[i] & 15];
  }
  return out;
}

std::optional<Digest> from_hex(std::string_view hex) {
  if (hex.size() != 64 || !util::is_hex(hex)) return std::nullopt;
  auto val = [](char c) -> unsigned {
    if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
    return static_cast<unsigned>(c - 'A' + 10);
  };
  Digest d{};
  for (std::size_t i = 0; i < 32; ++i) d[i] = static_cast<unsigned char>(val(hex[2 * i]) << 4 | val(hex[2 * i + 1]));
  return d;
}

Sha256::Sha256() : m_state(detail::digest_new(detail::Algorithm::sha256)) {}
Sha256::~Sha256() { detail::digest_free(m_state); }
Sha256::Sha256(Sha256&& other) noexcept : m_state(other.m_state) { other.m_state = nullptr; }
Sha256& Sha256::operator=(Sha256&& other) noexcept {
  if (this != &other) {
    detail::digest_free(m_state);
    m_state = other.m_state;
    other.m_state = nullptr;
  }
  return *this;
}

void Sha256::update(const void* data, std::size_t size) { detail::digest_update(m_state, data, size); }

Digest Sha256::finish() {
  Digest d{};
  std::size_t n = detail::digest_finish(m_state, d.data());
  assert(n == d.size());
  (void)n;
  return d;
}

Digest sha256_of(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.finish();
}

util::Result<std::uint64_t> detail::read_in_chunks(const std::filesystem::path& path,
                                                   const std::function<void(const char*, std::size_t)>& chunk) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(util::open_file(path, "rb"), &std::fclose);
  if (!f) {
    int e = errno;
    return util::Error(e == ENOENT ? util::ErrorCode::not_found : util::ErrorCode::io,
                       "cannot open " + path.string() + ": " + util::os_error_text(e));
  }
  std::unique_ptr<char[]> buf(new char[1 << 20]);
  std::uint64_t size = 0;
  while (true) {
    std::size_t n = std::fread(buf.get(), 1, 1 << 20, f.get());
    if (n > 0) {
      chunk(buf.get(), n);
      size += n;
    }
    if (n < (1u << 20)) {
      if (std::ferror(f.get())) return util::Error(util::ErrorCode::io, "cannot read " + path.string() + ": " + util::os_error_text(errno));
      break;
    }
  }
  return size;
}

util::Result<FileHash> hash_file(const std::filesystem::path& path) {
  Sha256 h;
  FileHash out;
  SP_TRY_ASSIGN(out.size, detail::read_in_chunks(path, [&h](const char* data, std::size_t n) { h.update(data, n); }));
  out.digest = h.finish();
  return out;
}

}  // namespace crypto
