// AES-128-GMAC of a chunk on Windows, through CNG (bcrypt.dll): AES-GCM over no plaintext, the
// chunk as additional data, its index as the 96-bit nonce, as chunk_seal_openssl.cpp computes it.
// CNG uses AES-NI and carry-less multiplication where the CPU has them. Each call makes its own
// key object from the key bytes, so concurrent calls share nothing.
#include <windows.h>
// windows.h first: bcrypt.h needs its types
#include <bcrypt.h>

#include <cstdio>
#include <cstdlib>

#include "crypto/chunk_seal.hpp"

namespace crypto {

namespace {
[[noreturn]] void fail(const char* what, NTSTATUS st) {
  std::fprintf(stderr, "stackpin: internal error: %s failed (CNG status 0x%08lx)\n", what, static_cast<unsigned long>(st));
  std::abort();
}

BCRYPT_ALG_HANDLE aes_gcm() {
  static BCRYPT_ALG_HANDLE h = [] {
    BCRYPT_ALG_HANDLE a = nullptr;
    NTSTATUS st = BCryptOpenAlgorithmProvider(&a, BCRYPT_AES_ALGORITHM, nullptr, 0);
    if (!BCRYPT_SUCCESS(st)) fail("BCryptOpenAlgorithmProvider(AES)", st);
    st = BCryptSetProperty(a, BCRYPT_CHAINING_MODE, reinterpret_cast<PUCHAR>(const_cast<wchar_t*>(BCRYPT_CHAIN_MODE_GCM)),
                           sizeof(BCRYPT_CHAIN_MODE_GCM), 0);
    if (!BCRYPT_SUCCESS(st)) fail("BCryptSetProperty(GCM)", st);
    return a;
  }();
  return h;
}
}  // namespace

ChunkSeal::ChunkSeal() {
  NTSTATUS st = BCryptGenRandom(nullptr, m_key.data(), static_cast<ULONG>(m_key.size()), BCRYPT_USE_SYSTEM_PREFERRED_RNG);
  if (!BCRYPT_SUCCESS(st)) fail("BCryptGenRandom", st);
}

ChunkSeal::~ChunkSeal() {
  volatile unsigned char* k = m_key.data();
  for (std::size_t i = 0; i < m_key.size(); ++i) k[i] = 0;
}

ChunkSeal::Tag ChunkSeal::tag(std::uint64_t index, const void* data, std::size_t len) const {
  if (len > 0xffffffffu) {  // CNG takes ULONG lengths; chunks are a few MiB
    std::fprintf(stderr, "stackpin: internal error: a sealed chunk of %zu bytes\n", len);
    std::abort();
  }
  BCRYPT_KEY_HANDLE key = nullptr;
  NTSTATUS st =
      BCryptGenerateSymmetricKey(aes_gcm(), &key, nullptr, 0, const_cast<PUCHAR>(m_key.data()), static_cast<ULONG>(m_key.size()), 0);
  if (!BCRYPT_SUCCESS(st)) fail("BCryptGenerateSymmetricKey", st);
  unsigned char iv[12] = {};
  for (int i = 0; i < 8; ++i) iv[i] = static_cast<unsigned char>(index >> (8 * i));
  Tag t{};
  BCRYPT_AUTHENTICATED_CIPHER_MODE_INFO info;
  BCRYPT_INIT_AUTH_MODE_INFO(info);
  info.pbNonce = iv;
  info.cbNonce = sizeof iv;
  info.pbAuthData = static_cast<PUCHAR>(const_cast<void*>(data));
  info.cbAuthData = static_cast<ULONG>(len);
  info.pbTag = t.data();
  info.cbTag = static_cast<ULONG>(t.size());
  ULONG out = 0;
  st = BCryptEncrypt(key, nullptr, 0, &info, nullptr, 0, nullptr, 0, &out, 0);
  BCryptDestroyKey(key);
  if (!BCRYPT_SUCCESS(st)) fail("BCryptEncrypt(AES-GCM)", st);
  return t;
}

}  // namespace crypto
