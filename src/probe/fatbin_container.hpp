#pragma once
// One fatbin container, parsed header by header from whatever bytes it is handed
// (fatbin_container.cpp). The sequential walk feeds it one read at a time; the batched walk of a
// large library feeds every container one read per round, many reads in one system call.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "byte_order.hpp"
#include "util/result.hpp"

namespace probe::detail {

inline constexpr std::uint32_t k_container_magic = 0xBA55ED50;
inline constexpr std::uint64_t k_container_header = 16, k_entry_min = 64, k_entry_max = 4096, k_container_header_max = 256;
inline constexpr std::uint64_t k_flag_lz4 = 0x2000, k_flag_zstd = 0x8000, k_flag_specific = 0x100000, k_flag_family = 0x200000;

// "0x1a2b"
std::string hex_offset(std::uint64_t v);

struct FatEntry {
  std::uint16_t kind = 0;
  std::uint32_t arch = 0;
  std::uint64_t flags = 0, stored = 0, uncompressed = 0;
  std::uint16_t ptx_major = 0, ptx_minor = 0;
};

class ContainerParse {
 public:
  // The container that starts at `start` and must end by `limit` (its section's end, or the next
  // listed container). `file` and `section` (which starts at `section_start`) name it in errors.
  ContainerParse(std::uint64_t start, std::uint64_t limit, const std::string& file, const std::string& section,
                 std::uint64_t section_start);
  bool finished() const { return m_done || m_error.has_value(); }
  // The offset of the next header and its size, while not finished.
  std::uint64_t next() const { return m_next; }
  std::size_t need() const { return m_header_done ? static_cast<std::size_t>(k_entry_min) : static_cast<std::size_t>(k_container_header); }
  // Parses every header that lies inside the bytes [at, at + n) from next() on.
  void feed(const char* bytes, std::uint64_t at, std::size_t n);

  std::uint64_t start() const { return m_start; }
  std::uint64_t end() const { return m_end; }  // once its header is read
  const std::optional<util::Error>& error() const { return m_error; }
  std::vector<FatEntry>& entries() { return m_entries; }

 private:
  void fail(const std::string& why, std::uint64_t at);
  void header(std::string_view h);
  void entry(std::string_view h, std::uint64_t p);
  std::uint64_t m_start, m_limit, m_end = 0, m_next, m_section_start;
  bool m_header_done = false, m_done = false;
  const std::string& m_file;
  const std::string& m_section;
  std::optional<util::Error> m_error;
  std::vector<FatEntry> m_entries;
};

}  // namespace probe::detail
