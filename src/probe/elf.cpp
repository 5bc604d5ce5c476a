// ELF dynamic-section reader. The loader-relevant facts (SONAME, NEEDED, RUNPATH, version needs)
// live in the dynamic segment, whose entries hold virtual addresses; those are turned back into
// file offsets through the PT_LOAD program headers, exactly as the loader maps them. Section
// headers are never used (they may be stripped). Only the ELF header, the program headers, the
// dynamic segment, the string table and the version-need chain are read, with bounds checked
// against the file size at every step, so a truncated or hostile file gives `invalid`, never a
// crash. Fields are decoded byte by byte (little-endian) so the code needs no <elf.h>.
#include "probe/elf.hpp"

#include <fstream>

#include "byte_order.hpp"
#include "util/strings.hpp"

namespace probe {
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t k_dt_needed = 1, k_dt_strtab = 5, k_dt_strsz = 10, k_dt_soname = 14, k_dt_rpath = 15, k_dt_runpath = 29,
                        k_dt_verneed = 0x6ffffffe, k_dt_verneednum = 0x6fffffff;
constexpr std::uint32_t k_pt_load = 1, k_pt_dynamic = 2;

class Reader {
 public:
  Reader(const fs::path& p, std::uint64_t size) : m_in(p, std::ios::binary), m_size(size), m_path(p.string()) {}
  bool ok() const { return static_cast<bool>(m_in); }
  // Reads n bytes at off; error `invalid` when the range lies outside the file.
  util::Result<std::string> at(std::uint64_t off, std::uint64_t n) {
    if (off > m_size || n > m_size - off)
      return util::Error(util::ErrorCode::invalid, m_path + " is not a valid ELF file: a table lies outside the file (truncated?)");
    std::string buf(n, '\0');
    m_in.clear();
    m_in.seekg(static_cast<std::streamoff>(off));
    if (!m_in.read(buf.data(), static_cast<std::streamsize>(n))) return util::Error(util::ErrorCode::io, "cannot read " + m_path);
    return buf;
  }
  std::uint64_t size() const { return m_size; }

 private:
  std::ifstream m_in;
  std::uint64_t m_size;
  std::string m_path;
};

using detail::le;

struct Load {
  std::uint64_t vaddr, offset, filesz;
};

}  // namespace

std::string machine_name(std::uint16_t machine) {
  switch (machine) {
    case 3: return "i386";
    case 40: return "arm";
    case 62: return "x86_64";
    case 183: return "aarch64";
    case 243: return "riscv";
    case 21: return "ppc64";
    default: return "machine-" + std::to_string(machine);
  }
}

bool is_elf(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

util::Result<ElfInfo> read_elf(const fs::path& path) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) {
    std::error_code ec2;
    if (!fs::exists(path, ec2) && !ec2) return util::Error(util::ErrorCode::not_found, path.string() + " does not exist");
    return util::Error(util::ErrorCode::io, "cannot read " + path.string() + ": " + ec.message());
  }
  Reader r(path, size);
  if (!r.ok()) return util::Error(util::ErrorCode::io, "cannot open " + path.string());
  auto bad = [&](const std::string& why) {
    return util::Error(util::ErrorCode::invalid, path.string() + " is not a valid ELF file: " + why);
  };
  if (size < 52) return bad("too short for an ELF header");
  SP_TRY_ASSIGN(auto ident, r.at(0, 16));
  const std::string& id = ident;
  if (id.compare(0, 4,
                 "\x7f"
                 "ELF") != 0)
    return bad("no ELF magic");
  if (id[5] != 1) return util::Error(util::ErrorCode::unsupported, path.string() + " is a big-endian ELF file");
  ElfInfo info;
  info.is64 = id[4] == 2;
  if (id[4] != 1 && id[4] != 2) return bad("unknown ELF class");
  SP_TRY_ASSIGN(auto hdr, r.at(0, info.is64 ? 64 : 52));
  const std::string& h = hdr;
  info.shared_object = le(h, 16, 2) == 3;
  info.machine = static_cast<std::uint16_t>(le(h, 18, 2));
  std::uint64_t phoff = info.is64 ? le(h, 32, 8) : le(h, 28, 4);
  std::uint64_t phentsize = le(h, info.is64 ? 54 : 42, 2);
  std::uint64_t phnum = le(h, info.is64 ? 56 : 44, 2);
  if (phnum == 0) return info;
  if (phentsize < (info.is64 ? 56u : 32u)) return bad("program header entries too small");
  SP_TRY_ASSIGN(auto ph, r.at(phoff, phentsize * phnum));

  std::vector<Load> loads;
  std::uint64_t dyn_off = 0, dyn_size = 0;
  bool has_dynamic = false;
  for (std::uint64_t i = 0; i < phnum; ++i) {
    std::size_t b = static_cast<std::size_t>(i * phentsize);
    auto type = static_cast<std::uint32_t>(le(ph, b, 4));
    std::uint64_t offset = info.is64 ? le(ph, b + 8, 8) : le(ph, b + 4, 4);
    std::uint64_t vaddr = info.is64 ? le(ph, b + 16, 8) : le(ph, b + 8, 4);
    std::uint64_t filesz = info.is64 ? le(ph, b + 32, 8) : le(ph, b + 16, 4);
    if (type == k_pt_load) loads.push_back({vaddr, offset, filesz});
    if (type == k_pt_dynamic) {
      has_dynamic = true;
      dyn_off = offset;
      dyn_size = filesz;
    }
  }
  if (!has_dynamic) return info;

  auto to_offset = [&](std::uint64_t addr) -> std::optional<std::uint64_t> {
    for (const auto& l : loads)
      if (addr >= l.vaddr && addr - l.vaddr < l.filesz) return addr - l.vaddr + l.offset;
    return std::nullopt;
  };

  const std::size_t entsize = info.is64 ? 16 : 8;
  if (dyn_size > (1u << 20)) return bad("dynamic segment larger than 1 MiB");
  SP_TRY_ASSIGN(auto dyn, r.at(dyn_off, dyn_size));
  std::uint64_t strtab = 0, strsz = 0, verneed = 0, verneednum = 0;
  bool have_strtab = false, have_verneed = false;
  std::vector<std::uint64_t> needed_offsets;
  std::optional<std::uint64_t> soname_off, runpath_off, rpath_off;
  for (std::size_t b = 0; b + entsize <= dyn.size(); b += entsize) {
    std::uint64_t tag = le(dyn, b, info.is64 ? 8 : 4);
    std::uint64_t val = le(dyn, b + entsize / 2, info.is64 ? 8 : 4);
    if (tag == 0) break;
    if (tag == k_dt_needed)
      needed_offsets.push_back(val);
    else if (tag == k_dt_strtab) {
      strtab = val;
      have_strtab = true;
    } else if (tag == k_dt_strsz)
      strsz = val;
    else if (tag == k_dt_soname)
      soname_off = val;
    else if (tag == k_dt_runpath)
      runpath_off = val;
    else if (tag == k_dt_rpath)
      rpath_off = val;
    else if (tag == k_dt_verneed) {
      verneed = val;
      have_verneed = true;
    } else if (tag == k_dt_verneednum)
      verneednum = val;
  }
  if (!have_strtab) return info;
  auto strtab_off = to_offset(strtab);
  if (!strtab_off) return bad("the string table's address is not in a loaded segment");
  if (strsz == 0 || strsz > (64u << 20)) return bad("implausible string table size");
  SP_TRY_ASSIGN(auto strings, r.at(*strtab_off, strsz));
  auto str = [&](std::uint64_t off) -> util::Result<std::string> {
    if (off >= strings.size()) return bad("a name lies outside the string table");
    auto end = strings.find('\0', static_cast<std::size_t>(off));
    if (end == std::string::npos) return bad("unterminated name in the string table");
    return strings.substr(static_cast<std::size_t>(off), end - static_cast<std::size_t>(off));
  };

  for (auto off : needed_offsets) {
    SP_TRY_ASSIGN(auto s, str(off));
    info.needed.push_back(s);
  }
  if (soname_off) {
    SP_TRY_ASSIGN(auto s, str(*soname_off));
    info.soname = s;
  }
  if (auto p = runpath_off ? runpath_off : rpath_off) {
    SP_TRY_ASSIGN(auto s, str(*p));
    for (auto& part : util::split(s, ':'))
      if (!part.empty()) info.runpath.push_back(part);
  }

  if (have_verneed && verneednum > 0) {
    auto vn = to_offset(verneed);
    if (!vn) return bad("the version-need table's address is not in a loaded segment");
    std::uint64_t pos = *vn;
    for (std::uint64_t i = 0; i < verneednum && i < 4096; ++i) {
      SP_TRY_ASSIGN(auto rec, r.at(pos, 16));
      std::uint64_t cnt = le(rec, 2, 2), file = le(rec, 4, 4), aux = le(rec, 8, 4), next = le(rec, 12, 4);
      SP_TRY_ASSIGN(auto file_name, str(file));
      auto& versions = info.version_needs[file_name];
      std::uint64_t apos = pos + aux;
      for (std::uint64_t j = 0; j < cnt && j < 4096; ++j) {
        SP_TRY_ASSIGN(auto a, r.at(apos, 16));
        SP_TRY_ASSIGN(auto name, str(le(a, 8, 4)));
        versions.insert(name);
        std::uint64_t anext = le(a, 12, 4);
        if (anext == 0) break;
        apos += anext;
      }
      if (next == 0) break;
      pos += next;
    }
  }
  return info;
}

}  // namespace probe
