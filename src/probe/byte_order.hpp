#pragma once
// Little-endian fields of the binary formats the probes read: ELF and PE headers, fatbin
// containers.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace probe::detail {

// The `bytes`-byte little-endian value at `off` of `b`; the caller has checked that it lies inside.
inline std::uint64_t le(std::string_view b, std::size_t off, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[off + static_cast<std::size_t>(i)]);
  return v;
}

}  // namespace probe::detail
