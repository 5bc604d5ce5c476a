#pragma once
// Fixture file systems for the machine inspection (doctor): a directory that stands for "/", with
// cuDNN trees, toolkits, an ld.so cache, /proc files, conda and Python environments, written at
// test time. Paths given to Root are machine paths ("/usr/lib/x86_64-linux-gnu").
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace machine_fixtures {
namespace fs = std::filesystem;

struct CacheEntry {
  std::string key, value;
  std::int32_t flags = 0x0303;  // libc6,x86-64
  std::string hwcaps_subdir;    // "x86-64-v3": a glibc-hwcaps entry
  std::uint32_t osversion = 0;
};

// The bytes of an ld.so cache in glibc's new format ("glibc-ld.so.cache1.1", little endian), with the
// generator and glibc-hwcaps extensions, in the order given.
std::string ld_cache_bytes(const std::vector<CacheEntry>& entries, const std::string& generator = "stackpin test writer");

class Root {
 public:
  explicit Root(fs::path host_dir);
  const fs::path& path() const { return m_root; }
  fs::path host(const std::string& machine_path) const;

  void file(const std::string& p, const std::string& content = "placeholder\n");
  void link(const std::string& p, const std::string& target);
  void dir(const std::string& p);
  void remove(const std::string& p);

  // cuDNN libraries of `version` (3 parts, "9.1.0") in lib_dir. versioned: NVIDIA's archive chain
  // L.so -> L.so.M -> L.so.M.m.p (file); otherwise wheel style, only L.so.M files. Stems in `skip`
  // are left out.
  void cudnn_libs(const std::string& lib_dir, const std::string& version, bool versioned = true, const std::vector<std::string>& skip = {});
  // cuDNN headers (cudnn_version.h saying `version`) in include_dir, but those named in `skip`.
  void cudnn_headers(const std::string& include_dir, const std::string& version, const std::vector<std::string>& skip = {});
  // /etc/ld.so.cache
  void ld_cache(const std::vector<CacheEntry>& entries);
  void os_release(const std::string& id, const std::string& version_id);
  // A dist-info directory with METADATA and a RECORD listing `files` ("path", size) in `site`.
  void dist_info(const std::string& site, const std::string& name, const std::string& version,
                 const std::vector<std::pair<std::string, std::uint64_t>>& files = {});
  std::uint64_t size_of(const std::string& machine_path) const;

 private:
  fs::path m_root;
};

}  // namespace machine_fixtures
