// The section tables of ELF and PE files, read only as far as the fatbin reader needs them:
// names, file ranges, load addresses (ELF, for the wrapper table's pointers), every range checked
// against the file before it is used.
#include "fatbin_sections.hpp"

#include <algorithm>
#include <string_view>

#include "fatbin_container.hpp"

namespace probe::detail {

namespace {

// Sections the toolchain fills with its own tables (unwind data, relocated pointers, the fatbin
// wrappers), never with constant data such as a fatbin container.
bool may_hold_containers(std::string_view name) {
  for (std::string_view own : {".eh_frame", ".gcc_except_table", ".got", ".data.rel.ro", ".nvFatBinSegment", ".tdata", ".init_array",
                               ".fini_array", ".ctors", ".dtors", ".dynamic", ".note", ".gnu"})
    if (name.substr(0, own.size()) == own) return false;
  return true;
}

}  // namespace

util::Result<std::vector<CodeSection>> elf_sections(const ByteReader& r, const std::string& name) {
  if (r.size() < 52) return r.bad("too short for an ELF header");
  if (r.u(5, 1) != 1) return util::Error(util::ErrorCode::unsupported, name + " is a big-endian ELF file");
  const bool is64 = r.u(4, 1) == 2;
  if (r.u(4, 1) != 1 && !is64) return r.bad("unknown ELF class");
  if (is64 && r.size() < 64) return r.bad("too short for an ELF header");
  std::uint64_t shoff = is64 ? r.u(40, 8) : r.u(32, 4);
  std::uint64_t shentsize = r.u(is64 ? 58 : 46, 2), shnum = r.u(is64 ? 60 : 48, 2), shstrndx = r.u(is64 ? 62 : 50, 2);
  if (shoff == 0) return util::Error(util::ErrorCode::unsupported, name + " has no section headers, so its GPU code cannot be located");
  if (shentsize < (is64 ? 64u : 40u)) return r.bad("ELF section header entries too small");
  if (!r.fits(shoff, shentsize)) return r.bad("the ELF section header table lies outside the file (truncated?)");
  if (shnum == 0) shnum = is64 ? r.u(shoff + 32, 8) : r.u(shoff + 20, 4);  // extended numbering: sh_size of entry 0
  if (shstrndx == 0xffff) shstrndx = r.u(shoff + (is64 ? 40 : 24), 4);     // extended: sh_link of entry 0
  if (shnum > r.size() / shentsize || !r.fits(shoff, shnum * shentsize))
    return r.bad("the ELF section header table lies outside the file (truncated?)");
  if (shstrndx >= shnum) return r.bad("the section name table index is out of range");
  struct Raw {
    std::uint64_t name, type, flags, addr, offset, size;
  };
  auto raw = [&](std::uint64_t i) {
    std::uint64_t h = shoff + i * shentsize;
    if (is64) return Raw{r.u(h, 4), r.u(h + 4, 4), r.u(h + 8, 8), r.u(h + 16, 8), r.u(h + 24, 8), r.u(h + 32, 8)};
    return Raw{r.u(h, 4), r.u(h + 4, 4), r.u(h + 8, 4), r.u(h + 12, 4), r.u(h + 16, 4), r.u(h + 20, 4)};
  };
  const Raw names = raw(shstrndx);
  if (!r.fits(names.offset, names.size)) return r.bad("the section name table lies outside the file (truncated?)");
  if (names.size > (16u << 20)) return r.bad("the section name table is implausibly large");
  const std::string names_text = r.text(names.offset, static_cast<std::size_t>(names.size));
  if (names_text.size() != names.size) return r.bad("the section name table cannot be read");
  std::vector<CodeSection> out;
  constexpr std::uint64_t k_progbits = 1, k_alloc = 2, k_exec = 4;
  for (std::uint64_t i = 1; i < shnum; ++i) {
    Raw s = raw(i);
    if (s.type != k_progbits || s.size == 0) continue;
    if (s.name >= names.size) return r.bad("section " + std::to_string(i) + " has a name outside the name table");
    std::string_view all = std::string_view(names_text).substr(static_cast<std::size_t>(s.name));
    std::string sname(all.substr(0, all.find('\0')));
    Role role = sname == ".nv_fatbin" || sname == "__nv_relfatbin" ? Role::fatbin
                : sname == ".nvFatBinSegment"                      ? Role::wrappers
                                                                   : Role::search;
    if (role == Role::search && (!(s.flags & k_alloc) || (s.flags & k_exec) || !may_hold_containers(sname))) continue;
    if (!r.fits(s.offset, s.size)) return r.bad("section " + sname + " lies outside the file (truncated?)");
    out.push_back({sname, s.offset, s.size, s.addr, role, is64});
  }
  return out;
}

util::Result<std::vector<CodeSection>> pe_sections(const ByteReader& r) {
  if (!r.fits(0x3c, 4)) return r.bad("too short for a PE file");
  std::uint64_t pe = r.u(0x3c, 4);
  if (!r.fits(pe, 24) || r.text(pe, 4) != std::string_view("PE\0\0", 4))
    return r.bad("an MZ file without a PE header (not a Windows DLL or program)");
  std::uint64_t count = r.u(pe + 6, 2), optional_size = r.u(pe + 20, 2);
  std::uint64_t table = pe + 24 + optional_size;
  if (!r.fits(table, count * 40)) return r.bad("the PE section table lies outside the file (truncated?)");
  constexpr std::uint64_t k_code = 0x20, k_data = 0x40, k_execute = 0x20000000;
  std::vector<CodeSection> out;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t h = table + i * 40;
    std::string sname = r.text(h, 8);
    sname = sname.substr(0, sname.find('\0'));
    std::uint64_t virtual_size = r.u(h + 8, 4), raw_size = r.u(h + 16, 4), offset = r.u(h + 20, 4), flags = r.u(h + 36, 4);
    std::uint64_t size = virtual_size ? std::min(virtual_size, raw_size) : raw_size;
    if (size == 0) continue;
    const bool fatbin = sname == ".nv_fatb";
    if (!fatbin && (!(flags & k_data) || (flags & (k_code | k_execute)))) continue;
    if (!r.fits(offset, size)) return r.bad("section " + sname + " lies outside the file (truncated?)");
    out.push_back({sname, offset, size, 0, fatbin ? Role::fatbin : Role::search, true});
  }
  return out;
}

std::vector<std::uint64_t> listed_starts(const ByteReader& r, const std::vector<CodeSection>& sections, const CodeSection& s) {
  constexpr std::uint64_t k_wrapper_magic = 0x466243B1;
  std::vector<std::uint64_t> out;
  if (s.addr == 0) return out;
  for (const auto& w : sections) {
    if (w.role != Role::wrappers || w.size > (64u << 20)) continue;
    const std::size_t record = w.wide ? 24 : 16, pointer = w.wide ? 8 : 4;
    const std::string t = r.text(w.offset, static_cast<std::size_t>(w.size));
    for (std::size_t i = 0; i + record <= t.size(); i += record) {
      if (le(t, i, 4) != k_wrapper_magic) continue;
      const std::uint64_t addr = le(t, i + 8, static_cast<int>(pointer));
      if (addr >= s.addr && addr - s.addr < s.size) out.push_back(s.offset + (addr - s.addr));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace probe::detail
