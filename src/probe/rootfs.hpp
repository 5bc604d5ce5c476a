#pragma once
// File access under a root directory, the way a process chrooted there would see it: absolute
// symlink targets are resolved inside the root, never on the host. The machine inspection reads
// "/" in real use and a fixture tree in tests through this one door, and reports machine paths
// ("/usr/local/cuda-13.0/lib") either way.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace probe::detail {

class RootFs {
 public:
  explicit RootFs(std::filesystem::path root);
  const std::filesystem::path& root() const { return m_root; }

  // The host path of a machine path ("/etc/os-release" -> "<root>/etc/os-release").
  std::filesystem::path host(const std::string& machine_path) const;
  // The machine path with every symlink resolved inside the root; nullopt when a component is
  // missing, a link dangles or links loop.
  std::optional<std::string> resolve(const std::string& machine_path) const;
  bool exists(const std::string& p) const { return resolve(p).has_value(); }
  bool is_dir(const std::string& p) const;
  bool is_file(const std::string& p) const;
  bool is_symlink(const std::string& p) const;
  // The target of a symlink as stored; "" when `p` is not one.
  std::string link_target(const std::string& p) const;
  std::optional<std::uint64_t> file_size(const std::string& p) const;
  // At most `limit` bytes of a file (symlinks followed); nullopt when unreadable.
  std::optional<std::string> read(const std::string& p, std::size_t limit = 1 << 20) const;
  // Entry names of a directory, sorted; empty when it is not one.
  std::vector<std::string> list(const std::string& dir) const;

 private:
  std::filesystem::path m_root;
};

// "/a/b" + "c" -> "/a/b/c"; "/" + "c" -> "/c".
std::string join(const std::string& dir, const std::string& name);
// "/a/b/c" -> "/a/b"; "/a" -> "/".
std::string parent(const std::string& path);
std::string base_name(const std::string& path);
// Lexically normal, absolute machine path ("/a/./b/../c/" -> "/a/c"); relative input stays relative.
std::string normal(const std::string& path);

}  // namespace probe::detail
