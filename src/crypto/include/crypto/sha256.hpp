#pragma once
// Streaming SHA-256 (OpenSSL on Linux, CNG on Windows). Digests are 32 raw bytes; hex only at the edges.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace crypto {

namespace detail {
struct State;
}

using Digest = std::array<unsigned char, 32>;

// Lowercase hex, 64 characters.
std::string to_hex(const Digest& d);
// Parses 64 hex digits (either case); nullopt otherwise.
std::optional<Digest> from_hex(std::string_view hex);

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&& other) noexcept;
  Sha256& operator=(Sha256&& other) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, std::size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // Returns the digest; the object then starts over (ready for a new message).
  Digest finish();

 private:
  detail::State* m_state = nullptr;  // the backend's, opaque: OpenSSL and CNG stay inside this layer
};

struct FileHash {
  Digest digest{};
  std::uint64_t size = 0;
};

// Hashes a file in 1 MiB reads. Errors: not_found, io.
util::Result<FileHash> hash_file(const std::filesystem::path& path);

Digest sha256_of(std::string_view data);

}  // namespace crypto
