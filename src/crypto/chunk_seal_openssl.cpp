// AES-128-GMAC of a chunk: AES-GCM over no plaintext, the chunk as additional data, its index as
// the 96-bit nonce (unique per chunk under one key). OpenSSL runs it with AES-NI and carry-less
// multiplication where the CPU has them, at several GB/s, a tenth of the cost of SHA-256.
#include "crypto/chunk_seal.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace crypto {

namespace {
[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "stackpin: internal error: %s failed (OpenSSL)\n", what);
  std::abort();
}
struct CtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
}  // namespace

ChunkSeal::ChunkSeal() {
  if (RAND_bytes(m_key.data(), static_cast<int>(m_key.size())) != 1) fail("RAND_bytes");
}

ChunkSeal::~ChunkSeal() {
  volatile unsigned char* k = m_key.data();
  for (std::size_t i = 0; i < m_key.size(); ++i) k[i] = 0;
}

ChunkSeal::Tag ChunkSeal::tag(std::uint64_t index, const void* data, std::size_t len) const {
  std::unique_ptr<EVP_CIPHER_CTX, CtxFree> ctx(EVP_CIPHER_CTX_new());
  if (!ctx) fail("EVP_CIPHER_CTX_new");
  unsigned char iv[12] = {};
  for (int i = 0; i < 8; ++i) iv[i] = static_cast<unsigned char>(index >> (8 * i));
  if (EVP_EncryptInit_ex(ctx.get(), EVP_aes_128_gcm(), nullptr, m_key.data(), iv) != 1) fail("EVP_EncryptInit_ex(aes-128-gcm)");
  const auto* p = static_cast<const unsigned char*>(data);
  while (len > 0) {  // EVP takes int lengths
    int n = len > (1u << 30) ? (1 << 30) : static_cast<int>(len);
    int out = 0;
    if (EVP_EncryptUpdate(ctx.get(), nullptr, &out, p, n) != 1) fail("EVP_EncryptUpdate");
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  int out = 0;
  unsigned char none[1];
  if (EVP_EncryptFinal_ex(ctx.get(), none, &out) != 1) fail("EVP_EncryptFinal_ex");
  Tag t{};
  if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(t.size()), t.data()) != 1) fail("EVP_CTRL_GCM_GET_TAG");
  return t;
}

}  // namespace crypto
