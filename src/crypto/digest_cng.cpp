// The digest backend on Windows: CNG (bcrypt.dll), part of every Windows since Vista, so the
// Windows build carries no crypto library. One algorithm provider per algorithm is opened once
// and shared; each State owns a reusable hash object (BCRYPT_HASH_REUSABLE_FLAG, Windows 8+), so
// finishing a digest leaves the state ready for the next message without re-creating it.
#include <windows.h>
// windows.h first: bcrypt.h needs its types
#include <bcrypt.h>

#include <cassert>
#include <climits>

#include "digest_backend.hpp"

namespace crypto::detail {

struct State {
  BCRYPT_HASH_HANDLE hash = nullptr;
  std::size_t length = 0;
};

namespace {

BCRYPT_ALG_HANDLE provider(Algorithm a) {
  auto open = [](LPCWSTR id) {
    BCRYPT_ALG_HANDLE h = nullptr;
    NTSTATUS st = BCryptOpenAlgorithmProvider(&h, id, nullptr, BCRYPT_HASH_REUSABLE_FLAG);
    assert(BCRYPT_SUCCESS(st) && "BCryptOpenAlgorithmProvider failed");
    (void)st;
    return h;
  };
  // opened on first use and kept for the life of the process
  static BCRYPT_ALG_HANDLE sha256 = open(BCRYPT_SHA256_ALGORITHM);
  static BCRYPT_ALG_HANDLE sha1 = open(BCRYPT_SHA1_ALGORITHM);
  static BCRYPT_ALG_HANDLE md5 = open(BCRYPT_MD5_ALGORITHM);
  return a == Algorithm::sha256 ? sha256 : a == Algorithm::sha1 ? sha1 : md5;
}

}  // namespace

State* digest_new(Algorithm a) {
  auto* s = new State;
  s->length = a == Algorithm::sha256 ? 32 : a == Algorithm::sha1 ? 20 : 16;
  NTSTATUS st = BCryptCreateHash(provider(a), &s->hash, nullptr, 0, nullptr, 0, BCRYPT_HASH_REUSABLE_FLAG);
  assert(BCRYPT_SUCCESS(st) && "BCryptCreateHash failed");
  (void)st;
  return s;
}

void digest_free(State* s) {
  if (!s) return;
  BCryptDestroyHash(s->hash);
  delete s;
}

void digest_update(State* s, const void* data, std::size_t size) {
  auto* p = static_cast<PUCHAR>(const_cast<void*>(data));
  while (size > 0) {  // BCryptHashData takes a ULONG length
    ULONG n = size > ULONG_MAX ? ULONG_MAX : static_cast<ULONG>(size);
    NTSTATUS st = BCryptHashData(s->hash, p, n, 0);
    assert(BCRYPT_SUCCESS(st));
    (void)st;
    p += n;
    size -= n;
  }
}

std::size_t digest_finish(State* s, unsigned char* out) {
  NTSTATUS st = BCryptFinishHash(s->hash, out, static_cast<ULONG>(s->length), 0);
  assert(BCRYPT_SUCCESS(st));
  (void)st;
  return s->length;
}

}  // namespace crypto::detail
