#pragma once
// Streaming MD5 (OpenSSL on Linux, CNG on Windows), for the one place a format demands it: a Debian package's
// md5sums control file. Never used to decide whether bytes are trusted (SHA-256 does that).
#include <cstddef>
#include <string>
#include <string_view>

namespace crypto {

namespace detail {
struct State;
}

class Md5 {
 public:
  Md5();
  ~Md5();
  Md5(const Md5&) = delete;
  Md5& operator=(const Md5&) = delete;

  void update(const void* data, std::size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // Lowercase hex (32 characters); the object then starts over.
  std::string finish_hex();

 private:
  detail::State* m_state = nullptr;
};

}  // namespace crypto
