#pragma once
// Keyed tags of a file's chunks (AES-128-GMAC through OpenSSL, or CNG on Windows), under a key drawn at random for
// one use and never stored. A reader that tags every chunk while it hashes a file, and checks
// each chunk it reads again later against its tag, knows that the later bytes are the bytes it
// hashed, without hashing the file a second time in order: the chunks can then be read in any
// order, by several threads. A tag cannot be forged without the key (GMAC's bound: about
// chunk-length / 2^128 per attempt), so a file rewritten in between, even by someone who knows
// its SHA-256 and this scheme, is found.
#include <array>
#include <cstddef>
#include <cstdint>

namespace crypto {

class ChunkSeal {
 public:
  using Tag = std::array<unsigned char, 16>;
  // Draws the key (the OS's CSPRNG through OpenSSL or CNG; aborts if it cannot: nothing would be proven without it).
  ChunkSeal();
  ~ChunkSeal();
  ChunkSeal(const ChunkSeal&) = delete;
  ChunkSeal& operator=(const ChunkSeal&) = delete;

  // The tag of chunk `index` holding `data[0..len)`; the index is the nonce, so a chunk moved to
  // another place gets another tag. Thread-safe (each call has its own cipher context).
  Tag tag(std::uint64_t index, const void* data, std::size_t len) const;

 private:
  std::array<unsigned char, 16> m_key{};
};

}  // namespace crypto
