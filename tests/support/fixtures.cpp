// Builds test archives (tar.xz, tar.gz, zip, hostile forms) and knowledge bases in memory with libarchive.
#include "fixtures.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <locale.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>

#include "tree.hpp"

namespace fixtures {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("fixtures: " + what); }

// ---- libarchive writing -----------------------------------------------------------------------

struct WriteDeleter {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct EntryDeleter {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};
using WritePtr = std::unique_ptr<archive, WriteDeleter>;
using EntryPtr = std::unique_ptr<archive_entry, EntryDeleter>;

[[noreturn]] void fail_archive(archive* a, const fs::path& out, const std::string& step) {
  const char* msg = archive_error_string(a);
  fail("writing " + out.string() + ": " + step + ": " + (msg ? msg : "unknown libarchive error"));
}

void check(archive* a, int rc, const fs::path& out, const std::string& step) {
  if (rc != ARCHIVE_OK) fail_archive(a, out, step);
}

// libarchive translates names between the locale's charset and UTF-8 (pax "path" records, the zip
// UTF-8 flag). Under the "C" locale of a test program a non-ASCII name cannot be translated (and
// libarchive 3.6 crashes on a name given only as UTF-8), so archives are written under a UTF-8
// LC_CTYPE for this thread only. Names are passed as the raw bytes given: UTF-8 ones are stored as
// UTF-8, others (deliberately broken bytes) verbatim with hdrcharset=BINARY.
#ifdef _WIN32
// On Windows libarchive converts through the C runtime's code page, which this thread sets to UTF-8.
class Utf8Ctype {
 public:
  Utf8Ctype() : m_old(_configthreadlocale(_ENABLE_PER_THREAD_LOCALE)) {
    m_locale = setlocale(LC_CTYPE, nullptr);
    setlocale(LC_CTYPE, ".65001");
  }
  ~Utf8Ctype() {
    setlocale(LC_CTYPE, m_locale.c_str());
    _configthreadlocale(m_old);
  }
  Utf8Ctype(const Utf8Ctype&) = delete;
  Utf8Ctype& operator=(const Utf8Ctype&) = delete;

 private:
  int m_old;
  std::string m_locale;
};
#else
class Utf8Ctype {
 public:
  Utf8Ctype() {
    for (const char* name : {"C.UTF-8", "C.utf8", "en_US.UTF-8"}) {
      m_loc = newlocale(LC_CTYPE_MASK, name, static_cast<locale_t>(0));
      if (m_loc) break;
    }
    if (m_loc) m_old = uselocale(m_loc);
  }
  ~Utf8Ctype() {
    if (m_loc) {
      uselocale(m_old);
      freelocale(m_loc);
    }
  }
  Utf8Ctype(const Utf8Ctype&) = delete;
  Utf8Ctype& operator=(const Utf8Ctype&) = delete;

 private:
  locale_t m_loc = static_cast<locale_t>(0);
  locale_t m_old = static_cast<locale_t>(0);
};
#endif

void write_entry(archive* a, const fs::path& out, const Entry& in, bool zip) {
  if (zip && in.kind == Kind::hardlink) fail("writing " + out.string() + ": zip cannot store hardlink \"" + in.path + "\"");
  EntryPtr e{archive_entry_new()};
  if (!e) fail("archive_entry_new failed");
  archive_entry_set_pathname(e.get(), in.path.c_str());
  archive_entry_set_mtime(e.get(), static_cast<time_t>(fixed_mtime), 0);
  archive_entry_set_uid(e.get(), 0);
  archive_entry_set_gid(e.get(), 0);
  archive_entry_set_uname(e.get(), "root");
  archive_entry_set_gname(e.get(), "root");
  unsigned perm = in.mode & 07777;
  bool has_data = false;
  switch (in.kind) {
    case Kind::file:
      archive_entry_set_filetype(e.get(), AE_IFREG);
      archive_entry_set_size(e.get(), static_cast<la_int64_t>(in.data.size()));
      has_data = true;
      break;
    case Kind::dir:
      archive_entry_set_filetype(e.get(), AE_IFDIR);
      archive_entry_set_size(e.get(), 0);
      if (in.mode == 0644) perm = 0755;
      break;
    case Kind::symlink:
      archive_entry_set_filetype(e.get(), AE_IFLNK);
      archive_entry_set_size(e.get(), 0);
      archive_entry_set_symlink(e.get(), in.link.c_str());
      if (in.mode == 0644) perm = 0777;
      break;
    case Kind::hardlink:
      archive_entry_set_filetype(e.get(), AE_IFREG);
      archive_entry_set_size(e.get(), 0);
      archive_entry_set_hardlink(e.get(), in.link.c_str());
      break;
    case Kind::fifo:
      archive_entry_set_filetype(e.get(), AE_IFIFO);
      archive_entry_set_size(e.get(), 0);
      break;
    case Kind::chardev:
      archive_entry_set_filetype(e.get(), AE_IFCHR);
      archive_entry_set_size(e.get(), 0);
      archive_entry_set_rdevmajor(e.get(), 1);
      archive_entry_set_rdevminor(e.get(), 3);
      break;
  }
  archive_entry_set_perm(e.get(), static_cast<mode_t>(perm));
  int rc = archive_write_header(a, e.get());
  // ARCHIVE_WARN: written, with a remark (e.g. a name libarchive could not translate); keep it.
  if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) fail_archive(a, out, "header of \"" + in.path + "\"");
  if (has_data && !in.data.empty()) {
    la_ssize_t n = archive_write_data(a, in.data.data(), in.data.size());
    if (n < 0 || static_cast<std::size_t>(n) != in.data.size()) fail_archive(a, out, "data of \"" + in.path + "\"");
  }
  rc = archive_write_finish_entry(a);
  if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) fail_archive(a, out, "end of \"" + in.path + "\"");
}

// ---- small helpers ------------------------------------------------------------------------------

struct Version4 {
  int major = 0, minor = 0, patch = 0, build = 0;
};

Version4 parse_version(const std::string& v) {
  std::array<int, 4> parts{};
  std::size_t pos = 0;
  for (int i = 0; i < 4; ++i) {
    std::size_t end = v.find('.', pos);
    std::string part = v.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 6)
      fail("cuDNN version \"" + v + "\" is not four dot-separated numbers");
    parts[static_cast<std::size_t>(i)] = std::stoi(part);
    if ((i < 3) != (end != std::string::npos)) fail("cuDNN version \"" + v + "\" must have exactly four parts");
    pos = end + 1;
  }
  return {parts[0], parts[1], parts[2], parts[3]};
}

bool at_least(const Version4& v, int major, int minor) { return v.major > major || (v.major == major && v.minor >= minor); }

void require_major(int major) {
  if (major != 8 && major != 9) fail("cuDNN major " + std::to_string(major) + " has no fixture layout (8 or 9)");
}

// Deterministic pseudo-random bytes (splitmix64 seeded by FNV-1a of the name), after a magic prefix
// so that a library at least starts like one.
std::string pseudo_random(const std::string& name, std::size_t n, const std::string& magic) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  std::string s = magic.substr(0, n);
  s.reserve(n);
  std::uint64_t x = h;
  while (s.size() < n) {
    x += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    for (int k = 0; k < 8 && s.size() < n; ++k) s.push_back(static_cast<char>((z >> (8 * k)) & 0xFF));
  }
  return s;
}

std::string read_prefix(const fs::path& p, std::size_t cap) {
  std::ifstream in(p, std::ios::binary);
  if (!in) fail("cannot read " + p.string());
  std::string s;
  if (cap > 0) {
    s.resize(cap);
    in.read(s.data(), static_cast<std::streamsize>(cap));
    s.resize(static_cast<std::size_t>(in.gcount()));
  } else {
    s.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return s;
}

std::string top_dir(const std::string& platform, const std::string& version, int cuda_major) {
  return "cudnn-" + platform + "-" + version + "_cuda" + std::to_string(cuda_major) + "-archive";
}

Entry dir_entry(const std::string& p) { return Entry{p + "/", Kind::dir, {}, {}, 0755}; }
Entry file_entry(const std::string& p, std::string data, unsigned mode = 0644) { return Entry{p, Kind::file, std::move(data), {}, mode}; }
Entry symlink_entry(const std::string& p, const std::string& target) { return Entry{p, Kind::symlink, {}, target, 0777}; }

std::string license_text(const std::string& version) {
  return "NVIDIA cuDNN SOFTWARE LICENSE AGREEMENT\n\n"
         "Stand-in text of a stackpin test fixture for cuDNN " +
         version +
         ".\n"
         "This archive contains no NVIDIA software.\n";
}

std::string header_guard(const std::string& name) {
  std::string g;
  for (char c : name) g.push_back(c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return g + "_";
}

std::string header_text(const std::string& name, const std::string& version, int major) {
  if (name == "cudnn_version.h") return cudnn_version_header(version);
  std::string guard = header_guard(name);
  std::string s = "/*\n * " + name + ": stand-in for NVIDIA's header in a stackpin test fixture (cuDNN " + version + ").\n */\n\n#ifndef " +
                  guard + "\n#define " + guard + "\n\n";
  if (name == "cudnn.h") {
    for (const auto& h : cudnn_headers(major))
      if (h != "cudnn.h" && h != "cudnn_backend.h") s += "#include \"" + h + "\"\n";
  } else {
    s += "#include \"cudnn_version.h\"\n";
  }
  s += "\n#endif /* " + guard + " */\n";
  return s;
}

std::string toml_string(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    switch (c) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\t': r += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          r += buf;
        } else {
          r.push_back(c);
        }
    }
  }
  return r + "\"";
}

void write_bytes(const fs::path& out, const std::string& bytes) {
  if (out.has_parent_path()) fs::create_directories(out.parent_path());
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  if (!f) fail("cannot create " + out.string());
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) fail("cannot write " + out.string());
}

std::string read_all(const fs::path& in) {
  std::ifstream f(in, std::ios::binary);
  if (!f) fail("cannot read " + in.string());
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace

// ---- write_archive -------------------------------------------------------------------------------

bool writes_name_verbatim(const std::string& name) {
#ifdef _WIN32
  return std::all_of(name.begin(), name.end(), [](char c) { return c != '\\' && static_cast<unsigned char>(c) < 0x80; });
#else
  (void)name;
  return true;
#endif
}

void write_archive(const fs::path& out, Format fmt, const std::vector<Entry>& entries, int xz_threads) {
  Utf8Ctype utf8;  // before archive_write_new: libarchive caches the charset per archive
  WritePtr a{archive_write_new()};
  if (!a) fail("archive_write_new failed");
  archive* w = a.get();
  if (fmt == Format::zip) {
    check(w, archive_write_set_format_zip(w), out, "zip format");
    check(w, archive_write_zip_set_compression_deflate(w), out, "zip deflate");
  } else {
    check(w, archive_write_set_format_pax_restricted(w), out, "pax format");
    if (fmt == Format::tar_gz) {
      check(w, archive_write_add_filter_gzip(w), out, "gzip filter");
      // No time stamp in the gzip header: the same entries give the same bytes.
      check(w, archive_write_set_filter_option(w, "gzip", "timestamp", nullptr), out, "gzip:!timestamp");
    } else if (fmt == Format::tar_xz) {
      check(w, archive_write_add_filter_xz(w), out, "xz filter");
      if (xz_threads > 1) {
        check(w, archive_write_set_filter_option(w, "xz", "compression-level", "0"), out, "xz:compression-level");
        check(w, archive_write_set_filter_option(w, "xz", "threads", std::to_string(xz_threads).c_str()), out, "xz:threads");
      }
    }
  }
  if (out.has_parent_path()) fs::create_directories(out.parent_path());
#ifdef _WIN32
  check(w, archive_write_open_filename_w(w, out.c_str()), out, "open");
#else
  check(w, archive_write_open_filename(w, out.c_str()), out, "open");
#endif
  for (const auto& e : entries) write_entry(w, out, e, fmt == Format::zip);
  check(w, archive_write_close(w), out, "close");
}

// ---- info ----------------------------------------------------------------------------------------

Info info(const fs::path& p) {
  std::error_code ec;
  auto size = fs::file_size(p, ec);
  if (ec) fail("cannot read " + p.string() + ": " + ec.message());
  return Info{p, testing_support::sha256_file(p), size};
}

// ---- libraries the readers take for real ----------------------------------------------------------

namespace {
void put(std::string& b, std::size_t off, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b[off + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}
std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }
}  // namespace

std::string elf_library(const std::string& soname, const std::vector<std::string>& needed, const std::string& rodata, std::size_t size) {
  std::string dynstr(1, '\0');
  auto add_str = [&](const std::string& t) {
    std::size_t off = dynstr.size();
    dynstr += t;
    dynstr.push_back('\0');
    return off;
  };
  std::vector<std::pair<std::uint64_t, std::uint64_t>> dyn;  // tag, value
  for (const auto& n : needed) dyn.push_back({1, add_str(n)});
  dyn.push_back({14, add_str(soname)});
  // one null symbol and a one-bucket hash table: what the dynamic loader needs to load it
  const std::size_t dynsym_off = 64 + 2 * 56, hash_off = dynsym_off + 24, dynstr_off = hash_off + 16;
  const std::size_t dyn_off = align_up(dynstr_off + dynstr.size(), 8);
  dyn.push_back({4, hash_off});
  dyn.push_back({5, dynstr_off});
  dyn.push_back({6, dynsym_off});
  dyn.push_back({10, dynstr.size()});
  dyn.push_back({11, 24});
  dyn.push_back({0, 0});
  const std::size_t dyn_size = dyn.size() * 16;
  const std::string shstr = std::string("\0.dynstr\0.dynamic\0.rodata\0.shstrtab\0.text\0", 42);
  const std::size_t shstr_off = dyn_off + dyn_size;
  const std::size_t sh_off = align_up(shstr_off + shstr.size(), 8);
  const std::size_t rodata_off = sh_off + 6 * 64, rodata_size = rodata.size() + 1;
  // the rest of `size` as .text, last, as a library's code takes most of its bytes (what reads
  // .rodata reads only the little that is there)
  const std::size_t text_off = rodata_off + rodata_size;
  const std::size_t text_size = size > text_off ? size - text_off : 0;
  const std::size_t total = text_off + text_size;
  std::string b(total, '\0');
  b.replace(0, 4,
            "\x7f"
            "ELF");
  b[4] = 2, b[5] = 1, b[6] = 1;
  put(b, 16, 3, 2);   // ET_DYN
  put(b, 18, 62, 2);  // x86-64
  put(b, 20, 1, 4);
  put(b, 32, 64, 8);      // e_phoff
  put(b, 40, sh_off, 8);  // e_shoff
  put(b, 52, 64, 2);      // e_ehsize
  put(b, 54, 56, 2), put(b, 56, 2, 2);
  put(b, 58, 64, 2), put(b, 60, 6, 2), put(b, 62, 4, 2);
  auto phdr = [&](std::size_t at, std::uint32_t type, std::uint64_t off, std::uint64_t n) {
    put(b, at, type, 4), put(b, at + 4, 4, 4), put(b, at + 8, off, 8), put(b, at + 16, off, 8), put(b, at + 24, off, 8);
    put(b, at + 32, n, 8), put(b, at + 40, n, 8), put(b, at + 48, 8, 8);
  };
  phdr(64, 1, 0, total);                               // PT_LOAD: the whole file, at address = offset
  phdr(64 + 56, 2, dyn_off, dyn_size);                 // PT_DYNAMIC
  put(b, hash_off, 1, 4), put(b, hash_off + 4, 1, 4);  // nbucket, nchain; bucket[0] = chain[0] = 0
  b.replace(dynstr_off, dynstr.size(), dynstr);
  for (std::size_t i = 0; i < dyn.size(); ++i) put(b, dyn_off + i * 16, dyn[i].first, 8), put(b, dyn_off + i * 16 + 8, dyn[i].second, 8);
  b.replace(rodata_off, rodata.size(), rodata);
  const std::string fill = pseudo_random(soname, text_size, "");
  b.replace(text_off, fill.size(), fill);
  b.replace(shstr_off, shstr.size(), shstr);
  auto shdr = [&](int i, std::uint32_t name, std::uint32_t type, std::uint64_t off, std::uint64_t n, std::uint32_t link,
                  std::uint64_t entsize) {
    std::size_t at = sh_off + static_cast<std::size_t>(i) * 64;
    put(b, at, name, 4), put(b, at + 4, type, 4), put(b, at + 8, type == 3 && i == 4 ? 0 : 2, 8);
    put(b, at + 16, i == 4 ? 0 : off, 8), put(b, at + 24, off, 8), put(b, at + 32, n, 8), put(b, at + 40, link, 4);
    put(b, at + 48, 1, 8), put(b, at + 56, entsize, 8);
  };
  shdr(1, 1, 3, dynstr_off, dynstr.size(), 0, 0);  // .dynstr
  shdr(2, 9, 6, dyn_off, dyn_size, 1, 16);         // .dynamic
  shdr(3, 18, 1, rodata_off, rodata_size, 0, 0);   // .rodata
  shdr(4, 26, 3, shstr_off, shstr.size(), 0, 0);   // .shstrtab
  shdr(5, 36, 1, text_off, text_size, 0, 0);       // .text
  return b;
}

std::string pe_library(const std::string& dll_name, const std::vector<std::string>& needed, const std::string& rodata, std::size_t size,
                       std::uint16_t machine) {
  // one section, .rdata at RVA 0x1000 and file offset 0x200: the export directory, the import
  // descriptors, the names, then `rodata` and the filling
  const std::size_t raw = 0x200, rva = 0x1000;
  std::string sec(40 + (needed.size() + 1) * 20, '\0');
  auto add = [&](const std::string& t) {
    std::size_t off = sec.size();
    sec += t;
    sec.push_back('\0');
    return rva + off;
  };
  put(sec, 12, add(dll_name), 4);  // the export directory's Name
  for (std::size_t i = 0; i < needed.size(); ++i) put(sec, 40 + i * 20 + 12, add(needed[i]), 4);
  sec.resize(align_up(sec.size(), 16), '\0');
  sec += rodata;
  sec.push_back('\0');
  if (raw + sec.size() < size) sec += pseudo_random(dll_name, size - raw - sec.size(), "");
  const std::size_t virtual_size = sec.size();
  sec.resize(align_up(sec.size(), 0x200), '\0');
  std::string b(raw, '\0');
  b[0] = 'M', b[1] = 'Z';
  put(b, 0x3c, 0x40, 4);
  b.replace(0x40, 4, std::string("PE\0\0", 4));
  put(b, 0x44, machine, 2), put(b, 0x46, 1, 2), put(b, 0x54, 240, 2), put(b, 0x56, 0x2022, 2);
  const std::size_t opt = 0x58;
  put(b, opt, 0x20b, 2);
  put(b, opt + 24, 0x180000000ull, 8);  // ImageBase
  put(b, opt + 32, 0x1000, 4), put(b, opt + 36, 0x200, 4);
  put(b, opt + 40, 6, 2), put(b, opt + 48, 6, 2);  // OS and subsystem versions
  put(b, opt + 56, rva + align_up(virtual_size, 0x1000), 4), put(b, opt + 60, raw, 4);
  put(b, opt + 68, 3, 2);  // console subsystem
  put(b, opt + 108, 16, 4);
  put(b, opt + 112, rva, 4), put(b, opt + 116, 40, 4);  // export directory
  if (!needed.empty()) put(b, opt + 120, rva + 40, 4), put(b, opt + 124, (needed.size() + 1) * 20, 4);
  const std::size_t sh = opt + 240;
  b.replace(sh, 6, ".rdata");
  put(b, sh + 8, virtual_size, 4), put(b, sh + 12, rva, 4), put(b, sh + 16, sec.size(), 4), put(b, sh + 20, raw, 4);
  put(b, sh + 36, 0x40000040, 4);  // initialised data, readable
  return b + sec;
}

std::string fatbin_container(const std::vector<FatbinImage>& images, std::uint64_t claimed_extra) {
  std::string body;
  for (const auto& i : images) {
    std::string e(std::max<std::size_t>(i.header, 64), '\0');
    put(e, 0, i.kind, 2);
    put(e, 2, 0x0101, 2);
    put(e, 4, i.header, 4);
    put(e, 8, i.payload, 8);
    put(e, 16, (i.flags & 0xa000) ? i.payload : 0, 4);
    put(e, 24, i.isa_minor, 2);
    put(e, 26, i.isa_major, 2);
    put(e, 28, i.arch, 4);
    put(e, 40, i.flags, 8);
    put(e, 56, i.uncompressed, 8);
    e.append(i.payload, '\x5a');
    body += e;
  }
  std::string c(16, '\0');
  put(c, 0, 0xBA55ED50, 4);
  put(c, 4, 1, 2);
  put(c, 6, 16, 2);
  put(c, 8, body.size() + claimed_extra, 8);
  return c + body;
}

std::vector<std::string> cudnn_library_needs(const std::string& stem, int major, bool windows) {
  const std::string m = std::to_string(major);
  auto named = [&](const std::string& s) { return windows ? s.substr(3) + "64_" + m + ".dll" : s + ".so." + m; };
  if (major < 9 || stem == "libcudnn" || stem == "libcudnn_graph") return {};
  if (stem == "libcudnn_cnn" || stem == "libcudnn_adv") return {named("libcudnn_ops"), named("libcudnn_graph")};
  return {named("libcudnn_graph")};
}

std::string cudnn_library_rodata(const std::string& stem, const std::string& version) {
  if (stem != "libcudnn_graph") return "";
  Version4 v = parse_version(version);
  return "cudnn_version_" + std::to_string(v.major) + "_" + std::to_string(v.minor) + "_" + std::to_string(v.patch) + "_" +
         std::to_string(v.build) + "_";
}

// ---- cuDNN layouts -------------------------------------------------------------------------------

std::vector<std::string> cudnn_linux_stems(int major) {
  require_major(major);
  if (major == 8)
    return {"libcudnn",           "libcudnn_adv_infer", "libcudnn_adv_train", "libcudnn_cnn_infer",
            "libcudnn_cnn_train", "libcudnn_ops_infer", "libcudnn_ops_train"};
  return {"libcudnn",       "libcudnn_adv",       "libcudnn_cnn", "libcudnn_engines_precompiled", "libcudnn_engines_runtime_compiled",
          "libcudnn_graph", "libcudnn_heuristic", "libcudnn_ops"};
}

std::vector<std::string> cudnn_headers(int major) {
  require_major(major);
  if (major == 8)
    return {"cudnn.h",           "cudnn_adv_infer.h", "cudnn_adv_train.h", "cudnn_backend.h", "cudnn_cnn_infer.h",
            "cudnn_cnn_train.h", "cudnn_ops_infer.h", "cudnn_ops_train.h", "cudnn_version.h"};
  return {"cudnn.h", "cudnn_adv.h", "cudnn_backend.h", "cudnn_cnn.h", "cudnn_graph.h", "cudnn_ops.h", "cudnn_version.h"};
}

namespace {
std::vector<std::string> dll_bases(int major) {
  std::vector<std::string> bases;
  for (const auto& stem : cudnn_linux_stems(major)) bases.push_back(stem.substr(3));  // drop "lib"
  return bases;
}
}  // namespace

std::vector<std::string> cudnn_dlls(int major) {
  std::vector<std::string> dlls;
  for (const auto& b : dll_bases(major)) dlls.push_back(b + "64_" + std::to_string(major) + ".dll");
  return dlls;
}

std::string cudnn_version_header(const std::string& version) {
  Version4 v = parse_version(version);
  const char* factor = v.major >= 9 ? "10000" : "1000";
  return "/*\n"
         " * Stand-in for NVIDIA's cudnn_version.h in a stackpin test fixture.\n"
         " */\n"
         "\n"
         "/**\n"
         " * \\file: The master cuDNN version file.\n"
         " */\n"
         "\n"
         "#ifndef CUDNN_VERSION_H_\n"
         "#define CUDNN_VERSION_H_\n"
         "\n"
         "#define CUDNN_MAJOR " +
         std::to_string(v.major) + "\n" + "#define CUDNN_MINOR " + std::to_string(v.minor) + "\n" + "#define CUDNN_PATCHLEVEL " +
         std::to_string(v.patch) + "\n" +
         "\n"
         "#define CUDNN_VERSION (CUDNN_MAJOR * " +
         factor + " + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n" +
         "\n"
         "#endif /* CUDNN_VERSION_H */\n";
}

std::string cudnn_archive_name(const std::string& platform, const std::string& version, int cuda_major) {
  bool windows = platform.rfind("windows", 0) == 0;
  return top_dir(platform, version, cuda_major) + (windows ? ".zip" : ".tar.xz");
}

std::vector<Entry> cudnn_linux_entries(const std::string& version, int cuda_major, const CudnnOptions& o, const std::string& platform) {
  Version4 v = parse_version(version);
  require_major(v.major);
  const std::string top = top_dir(platform, version, cuda_major);
  const std::string maj = std::to_string(v.major);
  const std::string full = maj + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
  const fs::path real_dir = "/usr/local/cuda/lib64";

  std::vector<Entry> es;
  es.push_back(dir_entry(top));
  es.push_back(dir_entry(top + "/include"));
  es.push_back(dir_entry(top + "/lib"));
  es.push_back(file_entry(top + "/LICENSE", license_text(version)));
  for (const auto& h : cudnn_headers(v.major)) es.push_back(file_entry(top + "/include/" + h, header_text(h, version, v.major)));
  for (const auto& stem : cudnn_linux_stems(v.major)) {
    const std::string real_name = stem + ".so." + full;
    std::string bytes;
    fs::path real = real_dir / (stem + ".so.9");
    std::error_code ec;
    if (o.real_libraries && v.major == 9 && fs::is_regular_file(real, ec))
      bytes = read_prefix(real, o.library_bytes);
    else
      bytes =
          elf_library(stem + ".so." + maj, cudnn_library_needs(stem, v.major, false), cudnn_library_rodata(stem, version), o.library_bytes);
    es.push_back(file_entry(top + "/lib/" + real_name, std::move(bytes), 0755));
    es.push_back(symlink_entry(top + "/lib/" + stem + ".so." + maj, real_name));
    es.push_back(symlink_entry(top + "/lib/" + stem + ".so", stem + ".so." + maj));
    if (v.major >= 9 || stem != "libcudnn") {
      const std::string static_name = stem + "_static.a";
      es.push_back(file_entry(top + "/lib/" + static_name, pseudo_random(static_name, o.library_bytes, "!<arch>\n")));
    }
  }
  return es;
}

std::vector<Entry> cudnn_windows_entries(const std::string& version, int cuda_major, const CudnnOptions& o, const std::string& platform) {
  Version4 v = parse_version(version);
  require_major(v.major);
  const bool arm = platform == "windows-arm64";
  const std::string top = top_dir(platform, version, cuda_major);
  const std::string maj = std::to_string(v.major);
  const std::string bin = arm ? top + "/bin/arm64" : at_least(v, 9, 18) ? top + "/bin/x64" : top + "/bin";
  const std::string lib = arm ? top + "/lib/arm64" : at_least(v, 8, 5) ? top + "/lib/x64" : top + "/lib";
  const std::uint16_t machine = arm ? 0xAA64 : 0x8664;

  std::vector<Entry> es;
  es.push_back(dir_entry(top));
  es.push_back(dir_entry(top + "/bin"));
  if (bin != top + "/bin") es.push_back(dir_entry(bin));
  es.push_back(dir_entry(top + "/include"));
  es.push_back(dir_entry(top + "/lib"));
  if (lib != top + "/lib") es.push_back(dir_entry(lib));
  es.push_back(file_entry(top + "/LICENSE", license_text(version)));
  for (const auto& h : cudnn_headers(v.major)) es.push_back(file_entry(top + "/include/" + h, header_text(h, version, v.major)));
  for (const auto& stem : cudnn_linux_stems(v.major)) {
    const std::string dll = stem.substr(3) + "64_" + maj + ".dll";
    es.push_back(file_entry(bin + "/" + dll, pe_library(dll, cudnn_library_needs(stem, v.major, true), cudnn_library_rodata(stem, version),
                                                        o.library_bytes, machine)));
  }
  for (const auto& b : dll_bases(v.major)) {
    for (const std::string& name : {b + ".lib", b + "64_" + maj + ".lib"})
      es.push_back(file_entry(lib + "/" + name, pseudo_random(name, o.library_bytes, "!<arch>\n")));
  }
  return es;
}

Info make_cudnn_linux(const fs::path& dir, const std::string& version, int cuda_major, const CudnnOptions& o) {
  fs::path out = dir / cudnn_archive_name("linux-x86_64", version, cuda_major);
  write_archive(out, Format::tar_xz, cudnn_linux_entries(version, cuda_major, o), o.xz_threads);
  return info(out);
}

Info make_cudnn_windows(const fs::path& dir, const std::string& version, int cuda_major, const CudnnOptions& o,
                        const std::string& platform) {
  fs::path out = dir / cudnn_archive_name(platform, version, cuda_major);
  write_archive(out, Format::zip, cudnn_windows_entries(version, cuda_major, o, platform));
  return info(out);
}

// ---- manifest ------------------------------------------------------------------------------------

std::string local_manifest(const std::string& cudnn_version, int cuda_major, const std::string& cuda_version,
                           const std::vector<std::pair<std::string, Info>>& platform_archives, const std::string& extra) {
  std::string s;
  s += "schema = 1\n";
  s += "name = \"fixture\"\n\n";
  s += "[cuda]\nversion = " + toml_string(cuda_version) + "\n\n";
  s += "[cudnn]\nversion = " + toml_string(cudnn_version) + "\ncuda = " + std::to_string(cuda_major) + "\n";
  for (const auto& [platform, inf] : platform_archives) {
    s += "\n[[cudnn.archives]]\n";
    s += "platform = " + toml_string(platform) + "\n";
    s += "origin = \"local\"\n";
    s += "file = " + toml_string(inf.path.filename().string()) + "\n";
    s += "sha256 = " + toml_string(inf.sha256) + "\n";
    s += "size = " + std::to_string(inf.size) + "\n";
  }
  if (!extra.empty()) {
    s += "\n" + extra;
    if (extra.back() != '\n') s += "\n";
  }
  return s;
}

// ---- CUDA toolkit components ----------------------------------------------------------------------

std::string cuda_component_archive_name(const std::string& component, const std::string& platform, const std::string& version) {
  return component + "-" + platform + "-" + version + "-archive." + (platform.rfind("windows", 0) == 0 ? "zip" : "tar.xz");
}

std::vector<Entry> cuda_component_entries(const std::string& component, const std::string& version, const std::string& platform) {
  std::string name = cuda_component_archive_name(component, platform, version);
  const std::string top = name.substr(0, name.find("-archive.") + 8);
  const std::string major = version.substr(0, version.find('.'));
  const std::string elf(
      "\x7f"
      "ELF\x02\x01\x01",
      7);
  std::vector<Entry> es;
  es.push_back(dir_entry(top));
  es.push_back(file_entry(top + "/LICENSE", "NVIDIA Software License Agreement (fixture) for " + component + " " + version + "\n"));
  auto library = [&](const std::string& stem) {
    const std::string real = stem + ".so." + version;
    es.push_back(file_entry(top + "/lib/" + real, pseudo_random(real, 4096, elf), 0755));
    es.push_back(symlink_entry(top + "/lib/" + stem + ".so." + major, real));
    es.push_back(symlink_entry(top + "/lib/" + stem + ".so", stem + ".so." + major));
  };
  auto header = [&](const std::string& h) { es.push_back(file_entry(top + "/include/" + h, "/* " + component + " " + version + " */\n")); };
  es.push_back(dir_entry(top + "/include"));
  std::string base = component.rfind("cuda_", 0) == 0 ? component.substr(5)
                     : component.rfind("lib", 0) == 0 ? component.substr(3)
                                                      : component;
  if (platform.rfind("windows", 0) == 0) {
    // bin\ (CUDA 13: bin\x64\) holds the DLLs and programs, lib\x64\ the import libraries;
    // Windows on Arm: bin\arm64\ and lib\arm64\ (the same, for the other machine)
    const std::string pe("MZ\x90\x00", 4);
    const std::string arch = platform == "windows-arm64" ? "arm64" : "x64";
    const std::string bin = top + (arch == "arm64" || std::stoi(major) >= 13 ? "/bin/" + arch : "/bin");
    es.push_back(dir_entry(top + "/bin"));
    if (bin != top + "/bin") es.push_back(dir_entry(bin));
    if (component == "cuda_nvcc") {
      es.push_back(file_entry(top + "/bin/nvcc.exe", pseudo_random("nvcc.exe", 4096, pe)));
      es.push_back(file_entry(top + "/bin/ptxas.exe", pseudo_random("ptxas.exe", 4096, pe)));
      header("crt/host_config.h");
      es.push_back(file_entry(top + "/nvvm/bin/cicc.exe", pseudo_random("cicc.exe", 4096, pe)));
      es.push_back(file_entry(top + "/nvvm/libdevice/libdevice.10.bc", pseudo_random("libdevice", 1024, "BC")));
      return es;
    }
    if (component == "cuda_cudart") {
      header("cuda_runtime.h");
      header("cuda_runtime_api.h");
    } else {
      header(base + ".h");
    }
    es.push_back(file_entry(bin + "/" + base + "64_" + major + ".dll", pseudo_random(base + ".dll", 4096, pe)));
    es.push_back(file_entry(top + "/lib/" + arch + "/" + base + ".lib", pseudo_random(base + ".lib", 1024, "!<arch>\n")));
    return es;
  }
  if (component == "cuda_nvcc") {
    es.push_back(dir_entry(top + "/bin"));
    es.push_back(file_entry(top + "/bin/nvcc", "#!/bin/sh\necho nvcc fixture " + version + "\n", 0755));
    es.push_back(file_entry(top + "/bin/ptxas", pseudo_random("ptxas", 4096, elf), 0755));
    header("crt/host_config.h");
    es.push_back(file_entry(top + "/nvvm/bin/cicc", pseudo_random("cicc", 4096, elf), 0755));
    es.push_back(file_entry(top + "/nvvm/libdevice/libdevice.10.bc", pseudo_random("libdevice", 1024, "BC")));
    return es;
  }
  es.push_back(dir_entry(top + "/lib"));
  if (component == "cuda_cudart") {
    header("cuda_runtime.h");
    header("cuda_runtime_api.h");
    library("libcudart");
    es.push_back(file_entry(top + "/lib/libcudart_static.a", pseudo_random("libcudart_static.a", 2048, "!<arch>\n")));
    es.push_back(file_entry(top + "/lib/stubs/libcuda.so", pseudo_random("libcuda-stub", 2048, elf), 0755));
    return es;
  }
  header(base + ".h");
  library("lib" + base);
  return es;
}

Info make_cuda_component(const fs::path& dir, const std::string& component, const std::string& version, const std::vector<Entry>& extra,
                         const std::string& platform) {
  fs::create_directories(dir);
  fs::path out = dir / cuda_component_archive_name(component, platform, version);
  auto es = cuda_component_entries(component, version, platform);
  es.insert(es.end(), extra.begin(), extra.end());
  write_archive(out, platform.rfind("windows", 0) == 0 ? Format::zip : Format::tar_xz, es);
  return info(out);
}

std::string local_toolkit_manifest(const std::string& cuda_version, const std::vector<std::string>& components,
                                   const std::vector<std::pair<std::string, Info>>& archives, const std::string& extra,
                                   const std::string& platform) {
  std::string s = "schema = 1\nname = \"toolkit-fixture\"\n\n[cuda]\nversion = " + toml_string(cuda_version) + "\ncomponents = [";
  for (std::size_t i = 0; i < components.size(); ++i) s += (i ? ", " : "") + toml_string(components[i]);
  s += "]\n";
  for (const auto& [component, inf] : archives) {
    s += "\n[[cuda.archives]]\ncomponent = " + toml_string(component) + "\nplatform = " + toml_string(platform) + "\norigin = \"local\"\n";
    s += "file = " + toml_string(inf.path.filename().string()) + "\nsha256 = " + toml_string(inf.sha256) +
         "\nsize = " + std::to_string(inf.size) + "\n";
  }
  if (!extra.empty()) {
    s += "\n" + extra;
    if (extra.back() != '\n') s += "\n";
  }
  return s;
}

// ---- broken streams ------------------------------------------------------------------------------

namespace {
void put_octal(char* field, std::size_t width, std::uint64_t value) {
  // width-1 octal digits, zero-padded, then NUL.
  std::string digits(width - 1, '0');
  for (std::size_t i = width - 1; i-- > 0 && value;) {
    digits[i] = static_cast<char>('0' + (value & 7));
    value >>= 3;
  }
  if (value) fail("value does not fit a " + std::to_string(width) + "-byte tar field");
  std::copy(digits.begin(), digits.end(), field);
  field[width - 1] = '\0';
}

void put_size(char* field, std::uint64_t value) {
  if (value < (std::uint64_t{1} << 33)) {
    put_octal(field, 12, value);
    return;
  }
  // GNU/star base-256: high bit of the first byte set, big-endian number in the rest.
  field[0] = static_cast<char>(0x80);
  for (int i = 11; i >= 1; --i) {
    field[i] = static_cast<char>(value & 0xFF);
    value >>= 8;
  }
}

void put_string(char* field, std::size_t width, const std::string& s) {
  if (s.size() > width) fail("\"" + s + "\" does not fit a " + std::to_string(width) + "-byte tar field");
  std::copy(s.begin(), s.end(), field);
}
}  // namespace

namespace {
// One 512-byte tar header for `e` (ustar, or GNU for sparse entries), checksum filled in.
std::string raw_header(const RawTarEntry& e) {
  std::array<char, 512> h{};
  // ustar header: name[100] mode[8] uid[8] gid[8] size[12] mtime[12] chksum[8] typeflag[1]
  // linkname[100] magic[6] version[2] uname[32] gname[32] devmajor[8] devminor[8] prefix[155]
  // GNU sparse ('S'): the prefix area holds atime[12] ctime[12] offset[12] longnames[4] unused[1]
  // sp[4] {offset[12] numbytes[12]} isextended[1] realsize[12]
  std::string name = e.name, prefix;
  bool gnu = e.type == 'S';
  if (name.size() > 100) {
    std::size_t cut = e.name.rfind('/', 155);
    if (gnu || cut == std::string::npos || e.name.size() - cut - 1 > 100 || e.name.size() - cut - 1 == 0)
      fail("path \"" + e.name + "\" does not fit a tar header");
    prefix = e.name.substr(0, cut);
    name = e.name.substr(cut + 1);
  }
  put_string(&h[0], 100, name);
  put_octal(&h[100], 8, e.mode);
  put_octal(&h[108], 8, 0);
  put_octal(&h[116], 8, 0);
  put_size(&h[124], e.declared_size == UINT64_MAX ? e.data.size() : e.declared_size);
  put_octal(&h[136], 12, static_cast<std::uint64_t>(fixed_mtime));
  h[156] = e.type;
  put_string(&h[157], 100, e.link);
  if (gnu) {
    put_string(&h[257], 8, std::string("ustar  \0", 8));
    if (e.sparse.size() > 4) fail("raw_tar: at most 4 sparse maps");
    for (std::size_t i = 0; i < e.sparse.size(); ++i) {
      put_size(&h[386 + 24 * i], e.sparse[i].first);
      put_size(&h[386 + 24 * i + 12], e.sparse[i].second);
    }
    put_size(&h[483], e.real_size);
  } else {
    put_string(&h[257], 6, std::string("ustar\0", 6));
    put_string(&h[263], 2, "00");
    put_string(&h[345], 155, prefix);
  }
  put_string(&h[265], 32, "root");
  put_string(&h[297], 32, "root");
  put_octal(&h[329], 8, 0);
  put_octal(&h[337], 8, 0);
  std::fill(h.begin() + 148, h.begin() + 156, ' ');
  unsigned sum = 0;
  for (char c : h) sum += static_cast<unsigned char>(c);
  put_octal(&h[148], 7, sum);  // six digits and NUL, the space stays: "0012345\0 " style
  h[155] = ' ';
  return std::string(h.data(), h.size());
}
}  // namespace

std::string raw_tar(const std::vector<RawTarEntry>& entries) {
  std::string bytes;
  for (const auto& e : entries) {
    bytes += raw_header(e);
    bytes += e.data;
    bytes.append((512 - e.data.size() % 512) % 512, '\0');
  }
  bytes.append(1024, '\0');
  return bytes;
}

void write_raw_tar(const fs::path& out, const std::vector<RawTarEntry>& entries) { write_bytes(out, raw_tar(entries)); }

void write_tar_with_lying_size(const fs::path& out, const std::string& path, std::uint64_t declared_size, const std::string& actual) {
  RawTarEntry e;
  e.name = path;
  e.data = actual;
  e.declared_size = declared_size;
  write_raw_tar(out, {e});
}

void truncate_copy(const fs::path& in, const fs::path& out, std::uint64_t keep) {
  std::string bytes = read_all(in);
  if (keep > bytes.size())
    fail("truncate_copy: keep " + std::to_string(keep) + " exceeds the " + std::to_string(bytes.size()) + " bytes of " + in.string());
  bytes.resize(static_cast<std::size_t>(keep));
  write_bytes(out, bytes);
}

void corrupt_copy(const fs::path& in, const fs::path& out, std::uint64_t offset) {
  std::string bytes = read_all(in);
  if (offset >= bytes.size())
    fail("corrupt_copy: offset " + std::to_string(offset) + " is past the " + std::to_string(bytes.size()) + " bytes of " + in.string());
  bytes[static_cast<std::size_t>(offset)] = static_cast<char>(~static_cast<unsigned char>(bytes[offset]));
  write_bytes(out, bytes);
}

namespace {
std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

Info make_cudnn_linux_elf(const fs::path& dir, const fs::path& stems_dir, const std::vector<Entry>& extra) {
  const std::string ver = "9.1.0.70", top = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive/";
  std::vector<Entry> e = {{top, Kind::dir}, {top + "include/", Kind::dir}, {top + "lib/", Kind::dir}};
  e.push_back({top + "LICENSE", Kind::file, "Copyright (c) 2014-2024 NVIDIA Corporation. Test license text.\n\nSecond paragraph.\n"});
  for (const auto& h : cudnn_headers(9))
    if (h != "cudnn_version.h") e.push_back({top + "include/" + h, Kind::file, "/* " + h + " */\n"});
  e.push_back({top + "include/cudnn_version.h", Kind::file, cudnn_version_header(ver)});
  std::string static_lib = bytes_of(stems_dir / "libstem_static.a");
  for (const auto& s : cudnn_linux_stems(9)) {
    e.push_back({top + "lib/" + s + ".so.9.1.0", Kind::file, bytes_of(stems_dir / (s + ".so.9.1.0")), "", 0755});
    e.push_back({top + "lib/" + s + ".so.9", Kind::symlink, "", s + ".so.9.1.0"});
    e.push_back({top + "lib/" + s + ".so", Kind::symlink, "", s + ".so.9"});
    e.push_back({top + "lib/" + s + "_static.a", Kind::file, static_lib});
  }
  e.insert(e.end(), extra.begin(), extra.end());
  fs::path out = dir / cudnn_archive_name("linux-x86_64", ver, 12);
  write_archive(out, Format::tar_xz, e);
  return info(out);
}

}  // namespace fixtures
