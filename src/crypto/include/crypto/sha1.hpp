#pragma once
// SHA-1 (OpenSSL EVP), for the one place a format requires it: SPDX 2.3 files carry a SHA1
// checksum and packages a verification code made of them. stackpin proves nothing with SHA-1;
// every check of an archive or a staged file is SHA-256.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace crypto {

// Lowercase hex, 40 characters.
std::string sha1_hex(std::string_view data);

struct FileDigests {
  std::string sha1, sha256;  // lowercase hex
  std::uint64_t size = 0;
};
// Both digests of a file in one read. Errors: not_found, io.
util::Result<FileDigests> sha1_and_sha256_of_file(const std::filesystem::path& path);

}  // namespace crypto
