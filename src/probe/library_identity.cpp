// A library's identity from its bytes. ELF: the soname and needs come from the dynamic segment
// (elf.cpp, which needs no section headers); the cuDNN release from the section headers' .dynsym
// (an exported 4-byte cudnn_<part>_version) and .rodata (the "cudnn_version_M_m_p_b_" string).
// PE: the export and import directories and .rdata, through the section table. Every offset,
// size and count is checked against the file before it is read, reads are bounded (names 4 KiB,
// symbol tables 16 MiB, read-only data 64 MiB), and nothing is mapped.
#include "probe/library_identity.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "byte_order.hpp"
#include "probe/elf.hpp"
#include "util/file_io.hpp"
#include "util/strings.hpp"

namespace probe {
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t k_max_table = 16u << 20, k_max_rodata = 64u << 20;

class File {
 public:
  File(int fd, std::uint64_t size, std::string name) : m_fd(fd), m_size(size), m_name(std::move(name)) {}
  ~File() { util::io::close(m_fd); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  std::uint64_t size() const { return m_size; }
  const std::string& name() const { return m_name; }
  util::Error bad(const std::string& kind, const std::string& why) const {
    return util::Error(util::ErrorCode::invalid, m_name + " is not a valid " + kind + " file: " + why);
  }
  bool fits(std::uint64_t off, std::uint64_t n) const { return off <= m_size && n <= m_size - off; }
  // n bytes at off, which must lie inside the file.
  util::Result<std::string> at(std::uint64_t off, std::uint64_t n, const std::string& kind) const {
    if (!fits(off, n)) return bad(kind, "a table lies outside the file (truncated?)");
    std::string b(static_cast<std::size_t>(n), '\0');
    auto got = util::io::read_full_at(m_fd, b.data(), b.size(), off);
    if (got < 0) return util::Error(util::ErrorCode::io, "cannot read " + m_name + ": " + std::generic_category().message(errno));
    if (static_cast<std::uint64_t>(got) != n)
      return util::Error(util::ErrorCode::io, "cannot read " + m_name + " (it changed or shrank while it was read)");
    return b;
  }
  // A NUL-terminated name at off, of at most 4 KiB; invalid when it does not end inside that.
  util::Result<std::string> name_at(std::uint64_t off, const std::string& kind) const {
    if (off >= m_size) return bad(kind, "a name lies outside the file");
    SP_TRY_ASSIGN(auto b, at(off, std::min<std::uint64_t>(4096, m_size - off), kind));
    auto end = b.find('\0');
    if (end == std::string::npos) return bad(kind, "a name does not end within 4 KiB");
    b.resize(end);
    return b;
  }

 private:
  int m_fd;
  std::uint64_t m_size;
  std::string m_name;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

using detail::le;

// The major a soname or DLL name carries: libcudnn_ops.so.9 -> 9, cudnn_ops64_9.dll -> 9.
std::optional<unsigned> name_major(const std::string& soname) {
  std::string digits;
  if (auto so = soname.find(".so."); so != std::string::npos) {
    for (std::size_t i = so + 4; i < soname.size() && is_digit(soname[i]); ++i) digits += soname[i];
  } else if (util::to_lower(soname).ends_with(".dll")) {
    std::size_t i = soname.size() - 4;
    while (i > 0 && is_digit(soname[i - 1])) --i;
    if (i > 0 && soname[i - 1] == '_') digits = soname.substr(i, soname.size() - 4 - i);
  }
  if (digits.empty() || digits.size() > 3) return std::nullopt;
  return static_cast<unsigned>(std::stoul(digits));
}

// "cudnn_version_9_19_0_56_" in `data`: the release it names (three or four numbers).
std::optional<model::Version> version_string(const std::string& data, std::string& evidence) {
  static constexpr std::string_view k_marker = "cudnn_version_";
  for (auto at = data.find(k_marker); at != std::string::npos; at = data.find(k_marker, at + 1)) {
    std::size_t i = at + k_marker.size();
    std::vector<std::string> parts;
    while (i < data.size() && is_digit(data[i])) {
      std::size_t start = i;
      while (i < data.size() && is_digit(data[i]) && i - start < 6) ++i;
      if (i >= data.size() || data[i] != '_') break;
      parts.push_back(data.substr(start, i - start));
      ++i;
    }
    if (parts.size() != 3 && parts.size() != 4) continue;
    auto v = model::Version::parse(util::join(parts, "."));
    if (!v) continue;
    evidence = "the string " + data.substr(at, i - at);
    return v;
  }
  return std::nullopt;
}

bool is_version_symbol(const std::string& s) {
  if (!s.starts_with("cudnn_") || !s.ends_with("_version") || s.size() <= 14) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
}

// An exported cudnn_<part>_version holds major << 16 | minor << 8 | patch; taken only when the
// major is the soname's, so an encoding stackpin has not seen is not misread.
std::optional<model::Version> version_value(std::uint64_t v, std::optional<unsigned> major) {
  if (!major || v > 0xffffff || ((v >> 16) & 0xff) != *major) return std::nullopt;
  return model::Version::parse(std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff) + "." + std::to_string(v & 0xff));
}

struct Section {
  std::string name;
  std::uint64_t type = 0, addr = 0, offset = 0, size = 0, link = 0, entsize = 0;
};

util::Status read_elf_version(const File& f, LibraryIdentity& id) {
  const std::string kind = "ELF";
  SP_TRY_ASSIGN(auto ident, f.at(0, 16, kind));
  const bool is64 = ident[4] == 2;
  SP_TRY_ASSIGN(auto h, f.at(0, is64 ? 64 : 52, kind));
  const std::uint64_t shoff = is64 ? le(h, 40, 8) : le(h, 32, 4);
  const std::uint64_t shentsize = le(h, is64 ? 58 : 46, 2), shnum = le(h, is64 ? 60 : 48, 2), shstrndx = le(h, is64 ? 62 : 50, 2);
  if (shoff == 0 || shnum == 0) return {};  // stripped of section headers: the soname and needs are all there is
  if (shentsize < (is64 ? 64u : 40u)) return f.bad(kind, "section header entries too small");
  if (shstrndx >= shnum) return f.bad(kind, "the section-name table's index is out of range");
  if (shentsize * shnum > k_max_table) return f.bad(kind, "the section header table is larger than 16 MiB");
  SP_TRY_ASSIGN(auto table, f.at(shoff, shentsize * shnum, kind));
  std::vector<Section> sections(static_cast<std::size_t>(shnum));
  for (std::size_t i = 0; i < sections.size(); ++i) {
    std::size_t b = static_cast<std::size_t>(i * shentsize);
    auto& s = sections[i];
    s.name = std::to_string(le(table, b, 4));  // an offset into the names, resolved below
    s.type = le(table, b + 4, 4);
    s.addr = is64 ? le(table, b + 16, 8) : le(table, b + 12, 4);
    s.offset = is64 ? le(table, b + 24, 8) : le(table, b + 16, 4);
    s.size = is64 ? le(table, b + 32, 8) : le(table, b + 20, 4);
    s.link = le(table, b + (is64 ? 40 : 24), 4);
    s.entsize = is64 ? le(table, b + 56, 8) : le(table, b + 36, 4);
    constexpr std::uint64_t k_nobits = 8;
    if (s.type != k_nobits && s.type != 0 && !f.fits(s.offset, s.size)) return f.bad(kind, "a section lies outside the file (truncated?)");
  }
  const auto& names = sections[static_cast<std::size_t>(shstrndx)];
  if (names.size > k_max_table) return f.bad(kind, "the section-name table is larger than 16 MiB");
  SP_TRY_ASSIGN(auto name_bytes, f.at(names.offset, names.size, kind));
  for (auto& s : sections) {
    auto off = static_cast<std::size_t>(std::stoull(s.name));
    auto end = off < name_bytes.size() ? name_bytes.find('\0', off) : std::string::npos;
    s.name = end == std::string::npos ? std::string() : name_bytes.substr(off, end - off);
  }
  const std::optional<unsigned> major = name_major(id.soname);

  // the string, in the read-only data (the first .rodata only: each section is read once)
  for (const auto& s : sections) {
    if (s.name != ".rodata" || s.type == 8 || s.type == 0) continue;
    if (s.size <= k_max_rodata) {  // larger than any cuDNN library's: not read
      SP_TRY_ASSIGN(auto data, f.at(s.offset, s.size, kind));
      std::string evidence;
      if (auto v = version_string(data, evidence); v && (!major || v->major() == *major)) {
        id.cudnn_version = v;
        id.version_evidence = evidence;
        return {};
      }
    }
    break;
  }
  // an exported cudnn_<part>_version
  constexpr std::uint64_t k_dynsym = 11;
  for (const auto& sym : sections) {
    if (sym.type != k_dynsym) continue;
    const std::uint64_t ent = is64 ? 24 : 16;
    if (sym.entsize != ent || sym.size > k_max_table || sym.link >= sections.size()) return f.bad(kind, "implausible dynamic symbol table");
    const auto& strs = sections[static_cast<std::size_t>(sym.link)];
    if (strs.size > k_max_table) return f.bad(kind, "the dynamic string table is larger than 16 MiB");
    SP_TRY_ASSIGN(auto syms, f.at(sym.offset, sym.size, kind));
    SP_TRY_ASSIGN(auto str, f.at(strs.offset, strs.size, kind));
    for (std::size_t b = 0; b + ent <= syms.size(); b += static_cast<std::size_t>(ent)) {
      const std::uint64_t name = le(syms, b, 4);
      const std::uint64_t info = is64 ? le(syms, b + 4, 1) : le(syms, b + 12, 1);
      const std::uint64_t shndx = is64 ? le(syms, b + 6, 2) : le(syms, b + 14, 2);
      const std::uint64_t value = is64 ? le(syms, b + 8, 8) : le(syms, b + 4, 4);
      const std::uint64_t size = is64 ? le(syms, b + 16, 8) : le(syms, b + 8, 4);
      constexpr std::uint64_t k_object = 1;
      if ((info & 0xf) != k_object || size != 4 || shndx == 0 || shndx >= sections.size() || name >= str.size()) continue;
      auto end = str.find('\0', static_cast<std::size_t>(name));
      if (end == std::string::npos) continue;
      std::string sname = str.substr(static_cast<std::size_t>(name), end - static_cast<std::size_t>(name));
      if (!is_version_symbol(sname)) continue;
      const auto& home = sections[static_cast<std::size_t>(shndx)];
      if (home.type == 0 || home.type == 8 || value < home.addr || value - home.addr > home.size || home.size - (value - home.addr) < 4)
        continue;
      SP_TRY_ASSIGN(auto word, f.at(home.offset + (value - home.addr), 4, kind));
      if (auto v = version_value(le(word, 0, 4), major)) {
        id.cudnn_version = v;
        id.version_evidence = sname + " = " + v->text();
        return {};
      }
    }
    break;  // the first dynamic symbol table only
  }
  return {};
}

util::Status read_pe(const File& f, LibraryIdentity& id) {
  const std::string kind = "PE";
  id.format = "PE";
  SP_TRY_ASSIGN(auto dos, f.at(0, 64, kind));
  const std::uint64_t pe = le(dos, 0x3c, 4);
  SP_TRY_ASSIGN(auto coff, f.at(pe, 24, kind));
  if (coff.compare(0, 4, std::string("PE\0\0", 4)) != 0)
    return f.bad(kind, "an MZ file without a PE header (not a Windows DLL or program)");
  const std::uint64_t count = le(coff, 6, 2), optional_size = le(coff, 20, 2);
  if (optional_size < 96) return f.bad(kind, "the optional header is too small for a DLL");
  SP_TRY_ASSIGN(auto opt, f.at(pe + 24, optional_size, kind));
  const std::uint64_t magic = le(opt, 0, 2);
  if (magic != 0x10b && magic != 0x20b) return f.bad(kind, "unknown optional header magic");
  const std::size_t dirs_at = magic == 0x20b ? 112 : 96;
  if (opt.size() < dirs_at) return f.bad(kind, "the optional header is too small for its data directories");
  const std::uint64_t dir_count = le(opt, dirs_at - 4, 4);
  auto directory = [&](std::uint64_t i) -> std::pair<std::uint64_t, std::uint64_t> {
    if (i >= dir_count || dirs_at + (i + 1) * 8 > opt.size()) return {0, 0};
    return {le(opt, dirs_at + static_cast<std::size_t>(i) * 8, 4), le(opt, dirs_at + static_cast<std::size_t>(i) * 8 + 4, 4)};
  };
  SP_TRY_ASSIGN(auto table, f.at(pe + 24 + optional_size, count * 40, kind));
  struct PeSection {
    std::string name;
    std::uint64_t rva, vsize, raw, offset;
  };
  std::vector<PeSection> sections;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::size_t h = static_cast<std::size_t>(i * 40);
    std::string n = table.substr(h, 8);
    n = n.substr(0, n.find('\0'));
    sections.push_back({n, le(table, h + 12, 4), le(table, h + 8, 4), le(table, h + 16, 4), le(table, h + 20, 4)});
    if (!f.fits(sections.back().offset, sections.back().raw)) return f.bad(kind, "section " + n + " lies outside the file (truncated?)");
  }
  auto offset_of = [&](std::uint64_t rva, std::uint64_t n) -> std::optional<std::uint64_t> {
    for (const auto& s : sections)
      if (rva >= s.rva && rva - s.rva < s.raw && s.raw - (rva - s.rva) >= n) return s.offset + (rva - s.rva);
    return std::nullopt;
  };
  auto name_at = [&](std::uint64_t rva) -> util::Result<std::string> {
    auto off = offset_of(rva, 1);
    if (!off) return f.bad(kind, "a name's address is in no section");
    return f.name_at(*off, kind);
  };
  std::optional<unsigned> major;
  // exports: the DLL's own name, and an exported cudnn_<part>_version
  if (auto [rva, size] = directory(0); rva != 0 && size != 0) {
    auto off = offset_of(rva, 40);
    if (!off) return f.bad(kind, "the export directory is in no section");
    SP_TRY_ASSIGN(auto ex, f.at(*off, 40, kind));
    SP_TRY_ASSIGN(id.soname, name_at(le(ex, 12, 4)));
    major = name_major(id.soname);
    const std::uint64_t functions = le(ex, 20, 4), names = le(ex, 24, 4);
    if (functions > 65536 || names > 65536) return f.bad(kind, "more than 65536 exports");
    auto names_off = offset_of(le(ex, 32, 4), names * 4), ordinals_off = offset_of(le(ex, 36, 4), names * 2),
         addresses_off = offset_of(le(ex, 28, 4), functions * 4);
    if (names && (!names_off || !ordinals_off || !addresses_off)) return f.bad(kind, "the export tables are in no section");
    if (names) {
      SP_TRY_ASSIGN(auto name_rvas, f.at(*names_off, names * 4, kind));
      SP_TRY_ASSIGN(auto ordinals, f.at(*ordinals_off, names * 2, kind));
      SP_TRY_ASSIGN(auto addresses, f.at(*addresses_off, functions * 4, kind));
      for (std::uint64_t i = 0; i < names && !id.cudnn_version; ++i) {
        SP_TRY_ASSIGN(auto n, name_at(le(name_rvas, static_cast<std::size_t>(i * 4), 4)));
        if (!is_version_symbol(n)) continue;
        const std::uint64_t ordinal = le(ordinals, static_cast<std::size_t>(i * 2), 2);
        if (ordinal >= functions) return f.bad(kind, "an export's ordinal is out of range");
        const std::uint64_t at = le(addresses, static_cast<std::size_t>(ordinal * 4), 4);
        if (at >= rva && at - rva < size) continue;  // forwarded to another DLL
        auto word_off = offset_of(at, 4);
        if (!word_off) continue;
        SP_TRY_ASSIGN(auto word, f.at(*word_off, 4, kind));
        if (auto v = version_value(le(word, 0, 4), major)) {
          id.cudnn_version = v;
          id.version_evidence = n + " = " + v->text();
        }
      }
    }
  }
  // imports
  if (auto [rva, size] = directory(1); rva != 0 && size != 0) {
    for (std::uint64_t i = 0;; ++i) {
      if (i >= 4096) return f.bad(kind, "the import directory has no end");
      auto off = offset_of(rva + i * 20, 20);
      if (!off) return f.bad(kind, "the import directory runs out of its section");
      SP_TRY_ASSIGN(auto d, f.at(*off, 20, kind));
      if (d.find_first_not_of('\0') == std::string::npos) break;
      SP_TRY_ASSIGN(auto n, name_at(le(d, 12, 4)));
      id.needed.push_back(std::move(n));
    }
  }
  // the string, in the read-only data
  // the string, in the read-only data (the first .rdata only: each section is read once)
  if (!id.cudnn_version)
    for (const auto& s : sections) {
      if (s.name != ".rdata") continue;
      if (s.raw <= k_max_rodata) {
        SP_TRY_ASSIGN(auto data, f.at(s.offset, std::min(s.raw, s.vsize ? s.vsize : s.raw), kind));
        std::string evidence;
        if (auto v = version_string(data, evidence); v && (!major || v->major() == *major)) {
          id.cudnn_version = v;
          id.version_evidence = evidence;
        }
      }
      break;
    }
  return {};
}

}  // namespace

util::Result<LibraryIdentity> read_library_identity(const fs::path& path) {
  int fd = util::io::open_read(path);
  if (fd < 0) {
    if (errno == ENOENT) return util::Error(util::ErrorCode::not_found, path.string() + " does not exist");
    return util::Error(util::ErrorCode::io, "cannot read " + path.string() + ": " + std::generic_category().message(errno));
  }
  util::io::FileInfo info;
  if (util::io::stat_fd(fd, info) != 0 || !info.regular) {
    util::io::close(fd);
    return util::Error(util::ErrorCode::io, path.string() + " is not a regular file");
  }
  File f(fd, info.size, path.string());
  char head[4] = {};
  if (info.size < 64 || util::io::read_full_at(fd, head, 4, 0) != 4)
    return util::Error(util::ErrorCode::invalid, path.string() + " is too short for a library");
  LibraryIdentity id;
  if (std::memcmp(head,
                  "\x7f"
                  "ELF",
                  4) == 0) {
    SP_TRY_ASSIGN(auto elf, read_elf(path));
    id.format = "ELF";
    id.soname = elf.soname;
    id.needed = elf.needed;
    SP_TRY(read_elf_version(f, id));
    return id;
  }
  if (head[0] == 'M' && head[1] == 'Z') {
    SP_TRY(read_pe(f, id));
    return id;
  }
  return util::Error(util::ErrorCode::invalid, path.string() + " is neither an ELF nor a PE file");
}

}  // namespace probe
