#pragma once
// Reading a file in 1 MiB chunks for the hashers of this layer (sha256.cpp, sha1.cpp).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>

#include "util/result.hpp"

namespace crypto::detail {

// Calls `chunk` with each piece of the file in order and returns its size. Errors: not_found, io.
util::Result<std::uint64_t> read_in_chunks(const std::filesystem::path& path, const std::function<void(const char*, std::size_t)>& chunk);

}  // namespace crypto::detail
