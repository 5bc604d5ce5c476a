// Builds machine files for doctor and capture tests: ld.so.cache bytes, ELF and PE headers.
#include "machine_fixtures.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

#include "fixtures.hpp"

namespace machine_fixtures {

namespace {
void put32(std::string& b, std::size_t at, std::uint32_t v) { std::memcpy(&b[at], &v, 4); }
void put64(std::string& b, std::size_t at, std::uint64_t v) { std::memcpy(&b[at], &v, 8); }
}  // namespace

std::string ld_cache_bytes(const std::vector<CacheEntry>& entries, const std::string& generator) {
  std::vector<std::string> hwcaps;
  for (const auto& e : entries)
    if (!e.hwcaps_subdir.empty() && std::find(hwcaps.begin(), hwcaps.end(), e.hwcaps_subdir) == hwcaps.end())
      hwcaps.push_back(e.hwcaps_subdir);
  const std::size_t header = 48, entry = 24;
  std::size_t strings_at = header + entries.size() * entry;
  std::string strings;
  std::map<std::string, std::uint32_t> offsets;
  auto intern = [&](const std::string& s) {
    auto it = offsets.find(s);
    if (it != offsets.end()) return it->second;
    auto off = static_cast<std::uint32_t>(strings_at + strings.size());
    strings += s;
    strings += '\0';
    offsets[s] = off;
    return off;
  };
  std::string b(strings_at, '\0');
  std::memcpy(&b[0], "glibc-ld.so.cache1.1", 20);
  put32(b, 20, static_cast<std::uint32_t>(entries.size()));
  b[28] = 2;  // little endian
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    std::size_t at = header + i * entry;
    put32(b, at, static_cast<std::uint32_t>(e.flags));
    put32(b, at + 4, intern(e.key));
    put32(b, at + 8, intern(e.value));
    put32(b, at + 12, e.osversion);
    std::uint64_t hwcap = 0;
    if (!e.hwcaps_subdir.empty())
      hwcap = (1ull << 62) | static_cast<std::uint64_t>(std::find(hwcaps.begin(), hwcaps.end(), e.hwcaps_subdir) - hwcaps.begin());
    put64(b, at + 16, hwcap);
  }
  std::vector<std::uint32_t> hwcap_offsets;
  for (const auto& h : hwcaps) hwcap_offsets.push_back(intern(h));
  put32(b, 24, static_cast<std::uint32_t>(strings.size()));
  b += strings;
  while (b.size() % 4) b += '\0';
  // extensions: generator (tag 0) and glibc-hwcaps (tag 1)
  std::size_t ext = b.size();
  std::size_t sections = hwcaps.empty() ? 1 : 2;
  std::size_t data = ext + 8 + sections * 16;
  std::string tail(8 + sections * 16, '\0');
  put32(tail, 0, 0xeaa42174u);
  put32(tail, 4, static_cast<std::uint32_t>(sections));
  put32(tail, 8, 0);
  put32(tail, 12, 0);
  put32(tail, 16, static_cast<std::uint32_t>(data));
  put32(tail, 20, static_cast<std::uint32_t>(generator.size()));
  std::string payload = generator;
  if (!hwcaps.empty()) {
    while (payload.size() % 4) payload += '\0';
    put32(tail, 24, 1);
    put32(tail, 28, 0);
    put32(tail, 32, static_cast<std::uint32_t>(data + payload.size()));
    put32(tail, 36, static_cast<std::uint32_t>(hwcap_offsets.size() * 4));
    for (auto off : hwcap_offsets) {
      std::string w(4, '\0');
      put32(w, 0, off);
      payload += w;
    }
  }
  put32(b, 32, static_cast<std::uint32_t>(ext));
  return b + tail + payload;
}

Root::Root(fs::path host_dir) : m_root(std::move(host_dir)) { fs::create_directories(m_root); }

fs::path Root::host(const std::string& machine_path) const {
  std::string rel = machine_path;
  while (!rel.empty() && rel[0] == '/') rel.erase(0, 1);
  return rel.empty() ? m_root : m_root / rel;
}

void Root::file(const std::string& p, const std::string& content) {
  fs::create_directories(host(p).parent_path());
  std::ofstream out(host(p), std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + host(p).string());
}

void Root::link(const std::string& p, const std::string& target) {
  fs::create_directories(host(p).parent_path());
  std::error_code ec;
  fs::remove(host(p), ec);
  fs::create_symlink(target, host(p));
}

void Root::dir(const std::string& p) { fs::create_directories(host(p)); }
void Root::remove(const std::string& p) { fs::remove_all(host(p)); }

void Root::cudnn_libs(const std::string& lib_dir, const std::string& version, bool versioned, const std::vector<std::string>& skip) {
  std::string major = version.substr(0, version.find('.'));
  for (const auto& stem : fixtures::cudnn_linux_stems(std::stoi(major))) {
    if (std::find(skip.begin(), skip.end(), stem) != skip.end()) continue;
    std::string so = stem + ".so", soname = so + "." + major, full = so + "." + version;
    // shared objects with NVIDIA's sonames, needs and (libcudnn_graph) release string
    const int m = std::stoi(major);
    std::string bytes = fixtures::elf_library(soname, fixtures::cudnn_library_needs(stem, m, false),
                                              fixtures::cudnn_library_rodata(stem, version + ".0"), 0);
    if (versioned) {
      file(lib_dir + "/" + full, bytes);
      link(lib_dir + "/" + soname, full);
      link(lib_dir + "/" + so, soname);
    } else {
      file(lib_dir + "/" + soname, bytes);
    }
  }
}

void Root::cudnn_headers(const std::string& include_dir, const std::string& version, const std::vector<std::string>& skip) {
  std::string major = version.substr(0, version.find('.'));
  for (const auto& h : fixtures::cudnn_headers(std::stoi(major))) {
    if (std::find(skip.begin(), skip.end(), h) != skip.end()) continue;
    file(include_dir + "/" + h, h == "cudnn_version.h" ? fixtures::cudnn_version_header(version + ".0") : "/* " + h + " */\n");
  }
}

void Root::ld_cache(const std::vector<CacheEntry>& entries) { file("/etc/ld.so.cache", ld_cache_bytes(entries)); }

void Root::os_release(const std::string& id, const std::string& version_id) {
  file("/etc/os-release",
       "PRETTY_NAME=\"Fixture " + id + " " + version_id + "\"\nNAME=\"Fixture\"\nID=" + id + "\nVERSION_ID=\"" + version_id + "\"\n");
}

void Root::dist_info(const std::string& site, const std::string& name, const std::string& version,
                     const std::vector<std::pair<std::string, std::uint64_t>>& files) {
  std::string dir_name = name;
  for (auto& ch : dir_name)
    if (ch == '-') ch = '_';
  std::string d = site + "/" + dir_name + "-" + version + ".dist-info";
  file(d + "/METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\nSummary: fixture\n\nLong description.\n");
  std::string record;
  for (const auto& [p, size] : files) record += p + ",sha256=AAAA," + std::to_string(size) + "\n";
  record += dir_name + "-" + version + ".dist-info/METADATA,,\n";
  file(d + "/RECORD", record);
}

std::uint64_t Root::size_of(const std::string& machine_path) const { return fs::file_size(host(machine_path)); }

}  // namespace machine_fixtures
