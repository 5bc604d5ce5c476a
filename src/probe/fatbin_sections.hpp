#pragma once
// Where a binary keeps its GPU code (fatbin_sections.cpp): the sections of an ELF or PE file that
// hold fatbin containers, those worth searching for more, and the wrapper table that lists the
// containers of a shared object.
#include <cstdint>
#include <string>
#include <vector>

#include "fatbin_source.hpp"
#include "util/result.hpp"

namespace probe::detail {

enum class Role { fatbin, search, wrappers };

struct CodeSection {
  std::string name;
  std::uint64_t offset = 0, size = 0;
  std::uint64_t addr = 0;  // ELF: where it is loaded (the fatbin wrappers point there)
  Role role = Role::search;
  bool wide = true;  // wrappers: ELF64's 24-byte records (ELF32's are 16)
  std::uint64_t end() const { return offset + size; }
};

// The sections of an ELF file that matter (fatbin sections, data sections to search, the wrapper
// table), with bounds checked against the file. Errors: invalid (truncated or inconsistent
// tables), unsupported (big-endian, no section headers).
util::Result<std::vector<CodeSection>> elf_sections(const ByteReader& r, const std::string& name);
// The same for a PE file. Errors: invalid.
util::Result<std::vector<CodeSection>> pe_sections(const ByteReader& r);
// The containers the wrapper tables list inside fatbin section `s`, as sorted file offsets.
std::vector<std::uint64_t> listed_starts(const ByteReader& r, const std::vector<CodeSection>& sections, const CodeSection& s);

}  // namespace probe::detail
