// The ld.so cache is what `ldconfig` writes and the dynamic loader consults after LD_LIBRARY_PATH
// and before the default directories. Since glibc 2.32 ldconfig writes only the "new" format:
//
//   header (48 bytes)  "glibc-ld.so.cache" "1.1", nlibs, len_strings, flags (byte order),
//                      3 bytes padding, extension_offset, 3 unused words
//   nlibs entries      {int32 flags, uint32 key, uint32 value, uint32 osversion, uint64 hwcap} (24 bytes)
//   string table       NUL-terminated strings; key and value are offsets from the header's start
//   extensions         {uint32 magic 0xeaa42174, uint32 count, count x {tag, flags, offset, size}}:
//                      tag 0 = the generator's name, tag 1 = the glibc-hwcaps subdirectory names
//                      (an array of string offsets that entries with hwcap bit 62 index).
//
// Older caches put the libc5-era table ("ld.so-1.7.0", nlibs, 12-byte entries) first and the new
// format after it, 8-byte aligned; its offsets are then relative to the new header. The file is
// untrusted input (a container image's cache, a truncated write), so every count and offset is
// checked against the size before it is used, in 64-bit arithmetic, and strings must end inside
// the file.
#include "probe/ld_cache.hpp"

#include <cstring>

namespace probe {

namespace {

constexpr std::string_view k_magic_new = "glibc-ld.so.cache";
constexpr std::string_view k_version = "1.1";
constexpr std::string_view k_magic_old = "ld.so-1.7.0";
constexpr std::size_t k_header_new = 48;
constexpr std::size_t k_entry_new = 24;
constexpr std::size_t k_header_old = 16;  // magic (11) + padding (1) + nlibs (4)
constexpr std::size_t k_entry_old = 12;
constexpr std::uint32_t k_extension_magic = 0xeaa42174u;
constexpr std::uint64_t k_hwcap_extension = 1ull << 62;
constexpr std::uint32_t k_tag_generator = 0, k_tag_hwcaps = 1;
constexpr std::uint8_t k_endian_big = 3, k_endian_invalid = 1;

template <class T>
T read_le(std::string_view b, std::size_t at) {
  // callers have checked at + sizeof(T) <= b.size()
  T v{};
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;  // the cache is in the writer's byte order; big-endian caches are refused below
}

util::Error bad(std::string msg) { return util::Error(util::ErrorCode::parse, std::move(msg)); }

// The NUL-terminated string at `off` of `base` (a view of the new-format part of the file).
util::Result<std::string> string_at(std::string_view base, std::uint64_t off, const char* what, std::size_t index) {
  if (off >= base.size())
    return bad(std::string(what) + " of entry " + std::to_string(index) + " points at offset " + std::to_string(off) +
               ", outside the file (" + std::to_string(base.size()) + " bytes)");
  auto end = base.find('\0', off);
  if (end == std::string_view::npos)
    return bad(std::string(what) + " of entry " + std::to_string(index) + " runs past the end of the file (no NUL)");
  return std::string(base.substr(off, end - off));
}

struct Extensions {
  std::vector<std::string> hwcaps;
  std::string generator;
};

util::Result<Extensions> read_extensions(std::string_view base, std::uint64_t offset) {
  Extensions ext;
  if (offset == 0) return ext;
  if (offset + 8 > base.size())
    return bad("truncated: the extension directory at offset " + std::to_string(offset) + " lies past the end (" +
               std::to_string(base.size()) + " bytes)");
  if (read_le<std::uint32_t>(base, offset) != k_extension_magic) return ext;  // not ours: glibc ignores it too
  std::uint64_t count = read_le<std::uint32_t>(base, offset + 4);
  if (offset + 8 + count * 16 > base.size())
    return bad("truncated: " + std::to_string(count) + " extension sections announced, the file ends first");
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t at = offset + 8 + i * 16;
    auto tag = read_le<std::uint32_t>(base, at);
    std::uint64_t off = read_le<std::uint32_t>(base, at + 8), size = read_le<std::uint32_t>(base, at + 12);
    if (off + size > base.size())
      return bad("extension section " + std::to_string(i) + " (" + std::to_string(off) + " + " + std::to_string(size) +
                 " bytes) lies outside the file");
    if (tag == k_tag_generator) {
      ext.generator.assign(base.substr(off, size));
      while (!ext.generator.empty() && ext.generator.back() == '\0') ext.generator.pop_back();
    } else if (tag == k_tag_hwcaps) {
      if (size % 4 != 0) return bad("the glibc-hwcaps section's size " + std::to_string(size) + " is not a multiple of 4");
      for (std::uint64_t j = 0; j < size / 4; ++j) {
        SP_TRY_ASSIGN(auto s, string_at(base, read_le<std::uint32_t>(base, off + j * 4), "glibc-hwcaps name", j));
        ext.hwcaps.push_back(std::move(s));
      }
    }
  }
  return ext;
}

util::Result<LdCache> parse_new(std::string_view base) {
  if (base.size() < k_header_new) return bad("truncated: " + std::to_string(base.size()) + " bytes, shorter than the 48-byte header");
  if (base.substr(0, k_magic_new.size()) != k_magic_new) return bad("not an ld.so cache (no \"glibc-ld.so.cache\" magic)");
  if (base.substr(k_magic_new.size(), k_version.size()) != k_version)
    return bad("unsupported ld.so cache version \"" + std::string(base.substr(k_magic_new.size(), k_version.size())) +
               "\" (this reader knows 1.1)");
  std::uint64_t nlibs = read_le<std::uint32_t>(base, 20);
  std::uint64_t len_strings = read_le<std::uint32_t>(base, 24);
  auto endian = static_cast<std::uint8_t>(base[28]);
  std::uint64_t ext_offset = read_le<std::uint32_t>(base, 32);
  if (endian == k_endian_big) return bad("the cache was written for big-endian machines");
  if (endian == k_endian_invalid) return bad("the cache's byte-order flag says it is invalid");
  std::uint64_t entries_end = k_header_new + nlibs * k_entry_new;
  if (entries_end > base.size())
    return bad("truncated: the header announces " + std::to_string(nlibs) + " entries (" + std::to_string(nlibs * k_entry_new) +
               " bytes), only " + std::to_string(base.size() - k_header_new) + " bytes follow the header");
  if (entries_end + len_strings > base.size())
    return bad("truncated: the string table (" + std::to_string(len_strings) + " bytes) runs past the end of the file");
  SP_TRY_ASSIGN(auto ext, read_extensions(base, ext_offset));

  LdCache cache;
  cache.generator = ext.generator;
  cache.entries.reserve(nlibs);
  for (std::uint64_t i = 0; i < nlibs; ++i) {
    std::size_t at = k_header_new + i * k_entry_new;
    LdCacheEntry e;
    e.flags = read_le<std::int32_t>(base, at);
    SP_TRY_ASSIGN(auto key, string_at(base, read_le<std::uint32_t>(base, at + 4), "the name", i));
    SP_TRY_ASSIGN(auto value, string_at(base, read_le<std::uint32_t>(base, at + 8), "the path", i));
    e.key = std::move(key);
    e.value = std::move(value);
    e.osversion = read_le<std::uint32_t>(base, at + 12);
    e.hwcap = read_le<std::uint64_t>(base, at + 16);
    if (e.hwcap & k_hwcap_extension) {
      std::uint64_t index = e.hwcap & 0xffffffffu;
      if (index >= ext.hwcaps.size())
        return bad("entry " + std::to_string(i) + " (" + e.key + ") refers to glibc-hwcaps name " + std::to_string(index) + " of " +
                   std::to_string(ext.hwcaps.size()));
      e.hwcaps_subdir = ext.hwcaps[index];
    }
    cache.entries.push_back(std::move(e));
  }
  return cache;
}

}  // namespace

util::Result<LdCache> parse_ld_cache(std::string_view bytes) {
  if (bytes.substr(0, k_magic_old.size()) == k_magic_old) {
    if (bytes.size() < k_header_old) return bad("truncated: the old-format header is incomplete");
    std::uint64_t nlibs = read_le<std::uint32_t>(bytes, 12);
    std::uint64_t end = k_header_old + nlibs * k_entry_old;
    if (end > bytes.size()) return bad("truncated: the old-format table announces " + std::to_string(nlibs) + " entries");
    std::uint64_t aligned = (end + 7) & ~std::uint64_t{7};
    if (aligned + k_magic_new.size() > bytes.size() || bytes.substr(aligned, k_magic_new.size()) != k_magic_new)
      return bad("old libc5-only format (no \"glibc-ld.so.cache\" part): regenerate it with a current ldconfig");
    return parse_new(bytes.substr(aligned));
  }
  return parse_new(bytes);
}

std::string describe_ld_cache_flags(std::int32_t flags) {
  std::string s;
  switch (flags & 0xff) {
    case 0: s = "libc4"; break;
    case 1: s = "ELF"; break;
    case 2: s = "libc5"; break;
    case 3: s = "libc6"; break;
    default: s = "unknown"; break;
  }
  switch (flags & 0xff00) {
    case 0: break;
    case 0x0100: s += ",64bit"; break;  // SPARC
    case 0x0200: s += ",IA-64"; break;
    case 0x0300: s += ",x86-64"; break;
    case 0x0400: s += ",64bit"; break;  // s390
    case 0x0500: s += ",64bit"; break;  // POWER
    case 0x0600: s += ",N32"; break;    // MIPS
    case 0x0700: s += ",64bit"; break;  // MIPS
    case 0x0800: s += ",x32"; break;
    case 0x0900: s += ",hard-float"; break;  // ARM
    case 0x0a00: s += ",AArch64"; break;
    case 0x0b00: s += ",soft-float"; break;  // ARM
    case 0x0c00: s += ",nan2008"; break;
    case 0x0d00: s += ",N32,nan2008"; break;
    case 0x0e00: s += ",64bit,nan2008"; break;
    case 0x0f00: s += ",soft-float"; break;  // RISC-V
    case 0x1000: s += ",double-float"; break;
    case 0x1100: s += ",soft-float"; break;  // LoongArch
    case 0x1200: s += ",double-float"; break;
    default: s += "," + std::to_string(flags & 0xff00); break;
  }
  return s;
}

std::vector<std::int32_t> native_ld_cache_flags(std::string_view arch) {
  if (arch == "x86_64") return {0x0303};
  if (arch == "aarch64" || arch == "arm64") return {0x0a03};
  if (arch == "ppc64le" || arch == "ppc64") return {0x0503};
  if (arch == "s390x") return {0x0403};
  return {3, 1};
}

}  // namespace probe
