// MD5 through the platform's digest backend (NVIDIA's redistrib manifests also list MD5; stackpin
// trusts only SHA-256).
#include "crypto/md5.hpp"

#include "digest_backend.hpp"

namespace crypto {

Md5::Md5() : m_state(detail::digest_new(detail::Algorithm::md5)) {}
Md5::~Md5() { detail::digest_free(m_state); }

void Md5::update(const void* data, std::size_t size) { detail::digest_update(m_state, data, size); }

std::string Md5::finish_hex() {
  unsigned char d[16];
  std::size_t n = detail::digest_finish(m_state, d);
  static const char k_hex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += k_hex[d[i] >> 4];
    out += k_hex[d[i] & 15];
  }
  return out;
}

}  // namespace crypto
