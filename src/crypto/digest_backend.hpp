#pragma once
// The one seam between this layer's hashers and the library that computes digests: OpenSSL's EVP
// on Linux (digest_openssl.cpp), Windows CNG on Windows (digest_cng.cpp). The hashers (Sha256,
// Md5, the SHA-1 of sha1.cpp) hold a State and never see which one it is.
#include <cstddef>

namespace crypto::detail {

enum class Algorithm { sha256, sha1, md5 };

struct State;

// A fresh digest state. Never null: a backend that cannot create one is broken (assertion).
State* digest_new(Algorithm a);
void digest_free(State* s);
void digest_update(State* s, const void* data, std::size_t size);
// Writes the digest (32, 20 or 16 bytes) to `out`, returns its length and starts the state over.
std::size_t digest_finish(State* s, unsigned char* out);

}  // namespace crypto::detail
