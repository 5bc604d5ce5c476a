// A fatbin container: a 16-byte header (magic 0xBA55ED50, version 1, header size, payload size)
// followed by entries, each a header of at least 64 bytes and a payload. The entry header says
// what the payload is without opening it: its kind (1 PTX, 2 SASS in an ELF cubin, 8 LTO IR), the
// architecture as nvcc's number (86, 121), the PTX ISA version (minor at byte 24, major at 26),
// and flags: 0x2000 lz4- and 0x8000 zstd-compressed payload (with its uncompressed size at byte
// 56), 0x100000 an architecture-specific target (sm_90a), 0x200000 a family target (sm_100f).
// These meanings were established against nvcc 13.0's own output (every --compress-mode,
// -gencode with a/f targets, lto_), and the tests check them on binaries compiled at test time.
//
// Everything is checked before it is used: a container must fit its section, each entry its
// container, and headers have a minimum (so the walk always advances) and a maximum size.
#include "fatbin_container.hpp"

#include <algorithm>

namespace probe::detail {

std::string hex_offset(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 15]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

ContainerParse::ContainerParse(std::uint64_t start, std::uint64_t limit, const std::string& file, const std::string& section,
                               std::uint64_t section_start)
    : m_start(start), m_limit(limit), m_next(start), m_section_start(section_start), m_file(file), m_section(section) {
  if (limit < start || limit - start < k_container_header) fail("fatbin container header truncated", start);
}

void ContainerParse::fail(const std::string& why, std::uint64_t at) {
  if (!m_error)
    m_error = util::Error(util::ErrorCode::invalid, m_file + ": " + why + " at file offset " + hex_offset(at) + " (" + m_section + "+" +
                                                        hex_offset(at - m_section_start) + ")");
}

void ContainerParse::header(std::string_view c) {
  const std::uint64_t off = m_start;
  if (le(c, 0, 4) != k_container_magic) return fail("no fatbin container (unexpected bytes between containers)", off);
  auto version = le(c, 4, 2), header = le(c, 6, 2), size = le(c, 8, 8);
  if (version != 1) return fail("fatbin container version " + std::to_string(version) + " (stackpin reads version 1)", off);
  if (header < k_container_header || header > k_container_header_max)
    return fail("fatbin container header of " + std::to_string(header) + " bytes (oversized or malformed)", off);
  const std::uint64_t room = m_limit - off;
  if (header > room || size > room - header)
    return fail("fatbin container claims " + std::to_string(size) + " bytes but only " + std::to_string(room - std::min(header, room)) +
                    " remain (truncated, or oversized)",
                off);
  m_header_done = true;
  m_end = off + header + size;
  m_next = off + header;
}

void ContainerParse::entry(std::string_view h, std::uint64_t p) {
  auto entry_header = le(h, 4, 4);
  auto payload = le(h, 8, 8);
  if (entry_header < k_entry_min)
    return fail("fatbin entry has a header of " + std::to_string(entry_header) + " bytes (at least " + std::to_string(k_entry_min) +
                    "): reading on would loop or misframe",
                p);
  if (entry_header > k_entry_max)
    return fail(
        "fatbin entry has a header of " + std::to_string(entry_header) + " bytes (oversized; at most " + std::to_string(k_entry_max) + ")",
        p);
  if (entry_header > m_end - p || payload > m_end - p - entry_header)
    return fail(
        "fatbin entry of " + std::to_string(payload) + " bytes overlaps the end of its container (overlapping or truncated entries)", p);
  FatEntry e;
  e.kind = static_cast<std::uint16_t>(le(h, 0, 2));
  e.arch = static_cast<std::uint32_t>(le(h, 28, 4));
  e.flags = le(h, 40, 8);
  e.ptx_minor = static_cast<std::uint16_t>(le(h, 24, 2));
  e.ptx_major = static_cast<std::uint16_t>(le(h, 26, 2));
  e.stored = payload;
  if (le(h, 16, 4) > payload) return fail("fatbin entry says its compressed payload is larger than the space it has", p);
  // the stated uncompressed size is only reported: bounded so that sums of it cannot wrap
  e.uncompressed = (e.flags & (k_flag_lz4 | k_flag_zstd)) ? std::min<std::uint64_t>(le(h, 56, 8), std::uint64_t{1} << 40) : payload;
  if (e.arch == 0 || e.arch > 9999) return fail("fatbin entry names architecture " + std::to_string(e.arch), p);
  m_entries.push_back(e);
  m_next = p + entry_header + payload;
}

void ContainerParse::feed(const char* bytes, std::uint64_t at, std::size_t n) {
  while (!finished()) {
    const std::uint64_t p = m_next;
    if (p < at || p - at + need() > n) return;  // not in these bytes: the caller reads on
    const std::string_view h(bytes + (p - at), need());
    if (!m_header_done)
      header(h);
    else
      entry(h, p);
    if (finished()) return;
    if (m_next == m_end) {
      m_done = true;
    } else if (m_end - m_next < k_entry_min) {
      fail("fatbin entry header truncated (it runs past its container)", m_next);
    }
  }
}

}  // namespace probe::detail
