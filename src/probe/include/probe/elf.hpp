#pragma once
// What an ELF shared object asks of the dynamic loader (elf.cpp): its SONAME, the libraries it
// needs, the symbol versions it needs from each (GLIBC_2.14, GLIBCXX_3.4.21) and its RUNPATH.
// Used to derive a package's Depends and to report the loader's view of a library.
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace probe {

struct ElfInfo {
  bool is64 = true;
  std::uint16_t machine = 0;                                   // e_machine: 62 x86-64, 183 AArch64, 3 i386, 40 ARM
  bool shared_object = false;                                  // ET_DYN
  std::string soname;                                          // DT_SONAME ("" when absent)
  std::vector<std::string> needed;                             // DT_NEEDED in order
  std::vector<std::string> runpath;                            // DT_RUNPATH (or DT_RPATH), split at ':'
  std::map<std::string, std::set<std::string>> version_needs;  // needed file -> version names
};

// "x86_64", "aarch64", ... for e_machine; "machine-<n>" otherwise.
std::string machine_name(std::uint16_t machine);

// True when the file starts with the ELF magic (false on any read error).
bool is_elf(const std::filesystem::path& path);

// Reads the dynamic section of a little-endian ELF32/ELF64 file, reading only the headers and
// the tables it needs (a 250 MB library costs a few reads). An object without a dynamic section
// (static executable, relocatable object) gives empty lists. Errors: not_found, io, invalid (not
// ELF, truncated, tables pointing outside the file), unsupported (big-endian).
util::Result<ElfInfo> read_elf(const std::filesystem::path& path);

}  // namespace probe
