// MD5 through OpenSSL's EVP interface (NVIDIA's redistrib manifests also list MD5; stackpin trusts only SHA-256).
#include "crypto/md5.hpp"

#include <openssl/evp.h>

#include <cassert>

namespace crypto {

namespace {
EVP_MD_CTX* ctx_of(void* p) { return static_cast<EVP_MD_CTX*>(p); }
void init(EVP_MD_CTX* c) {
  int ok = EVP_DigestInit_ex(c, EVP_md5(), nullptr);
  assert(ok == 1 && "EVP_DigestInit_ex(md5) failed");
  (void)ok;
}
}  // namespace

Md5::Md5() : m_ctx(EVP_MD_CTX_new()) {
  assert(m_ctx && "EVP_MD_CTX_new failed");
  init(ctx_of(m_ctx));
}
Md5::~Md5() { EVP_MD_CTX_free(ctx_of(m_ctx)); }

void Md5::update(const void* data, std::size_t size) { EVP_DigestUpdate(ctx_of(m_ctx), data, size); }

std::string Md5::finish_hex() {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx_of(m_ctx), d, &n);
  init(ctx_of(m_ctx));
  static const char k_hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < n; ++i) {
    out += k_hex[d[i] >> 4];
    out += k_hex[d[i] & 15];
  }
  return out;
}

}  // namespace crypto
