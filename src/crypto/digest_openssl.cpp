// The digest backend on Linux: OpenSSL's EVP interface (the only file that includes OpenSSL).
#include <openssl/evp.h>

#include <cassert>

#include "digest_backend.hpp"

namespace crypto::detail {

struct State {
  EVP_MD_CTX* ctx = nullptr;
  const EVP_MD* md = nullptr;
};

namespace {
void start(State* s) {
  int ok = EVP_DigestInit_ex(s->ctx, s->md, nullptr);
  assert(ok == 1 && "EVP_DigestInit_ex failed");
  (void)ok;
}
}  // namespace

State* digest_new(Algorithm a) {
  auto* s = new State;
  s->ctx = EVP_MD_CTX_new();
  assert(s->ctx && "EVP_MD_CTX_new failed");
  s->md = a == Algorithm::sha256 ? EVP_sha256() : a == Algorithm::sha1 ? EVP_sha1() : EVP_md5();
  start(s);
  return s;
}

void digest_free(State* s) {
  if (!s) return;
  EVP_MD_CTX_free(s->ctx);
  delete s;
}

void digest_update(State* s, const void* data, std::size_t size) {
  if (size == 0) return;
  int ok = EVP_DigestUpdate(s->ctx, data, size);
  assert(ok == 1);
  (void)ok;
}

std::size_t digest_finish(State* s, unsigned char* out) {
  unsigned int n = 0;
  int ok = EVP_DigestFinal_ex(s->ctx, out, &n);
  assert(ok == 1 && n > 0);
  (void)ok;
  start(s);
  return n;
}

}  // namespace crypto::detail
