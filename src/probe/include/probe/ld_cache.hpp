#pragma once
// glibc's /etc/ld.so.cache ("glibc-ld.so.cache1.1"), read without glibc's help so that the cache
// of another root (a container image, a test fixture) can be read too (ld_cache.cpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace probe {

struct LdCacheEntry {
  std::int32_t flags = 0;       // type (low byte: 3 = libc6) | ABI (0x0300 = x86-64, 0x0a00 = AArch64, ...)
  std::string key;              // the soname ("libcudnn.so.9")
  std::string value;            // the file ("/usr/lib/x86_64-linux-gnu/libcudnn.so.9")
  std::uint32_t osversion = 0;  // minimum kernel (0 = any)
  std::uint64_t hwcap = 0;      // legacy hwcap bits, or a glibc-hwcaps reference (bit 62)
  std::string hwcaps_subdir;    // "x86-64-v3" for an entry of a glibc-hwcaps subdirectory, else ""
};

struct LdCache {
  std::vector<LdCacheEntry> entries;  // in file order (ldconfig's order: by soname, best first)
  std::string generator;              // "ldconfig (GNU libc) ... 2.36" when the cache records it
};

// Parses the bytes of an ld.so cache: the new format alone (glibc >= 2.32's default) or behind the
// old libc5-era table (the "compat" format). Every offset and count is checked against the size
// first, so a truncated or hostile file is an error, never a read out of bounds.
// Errors: parse ("not an ld.so cache", "truncated: ...", "string offset ... outside the file",
// "written for big-endian machines", "old libc5-only format").
util::Result<LdCache> parse_ld_cache(std::string_view bytes);

// The flags as `ldconfig -p` shows them: "libc6,x86-64", "libc6", "libc6,AArch64", "ELF".
std::string describe_ld_cache_flags(std::int32_t flags);

// The entry flags the dynamic loader of a machine accepts for its native ABI: x86_64 0x0303,
// aarch64 0x0a03; other architectures: FLAG_ELF_LIBC6 (3) and FLAG_ELF (1).
std::vector<std::int32_t> native_ld_cache_flags(std::string_view arch);

}  // namespace probe
