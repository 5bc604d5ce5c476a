// Test helpers for file trees: hashing files, listing trees, comparing trees.
#include "tree.hpp"

#include <openssl/evp.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace testing_support {
namespace fs = std::filesystem;

std::string sha256_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  std::array<char, 1 << 16> buf{};
  while (in) {
    in.read(buf.data(), buf.size());
    if (in.gcount() > 0) EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &len);
  std::string s;
  char hex[3];
  for (unsigned i = 0; i < len; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", md[i]);
    s += hex;
  }
  return s;
}

void write_file(const fs::path& p, const std::string& content) {
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

namespace {
std::string octal(unsigned mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}
bool excluded(const std::string& rel, const std::vector<std::string>& exclude) {
  for (const auto& x : exclude)
    if (rel == x || rel.rfind(x + "/", 0) == 0) return true;
  return false;
}
}  // namespace

Tree snapshot(const fs::path& root, const std::vector<std::string>& exclude) {
  Tree t;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(root, ec))) return t;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::string rel = it->path().lexically_relative(root).generic_string();
    if (excluded(rel, exclude)) {
      if (it->is_directory() && !it->is_symlink()) it.disable_recursion_pending();
      continue;
    }
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) throw std::runtime_error("lstat " + it->path().string() + ": " + std::strerror(errno));
    if (S_ISDIR(st.st_mode))
      t[rel] = "dir " + octal(st.st_mode);
    else if (S_ISLNK(st.st_mode))
      t[rel] = "symlink -> " + fs::read_symlink(it->path()).string();
    else if (S_ISREG(st.st_mode))
      t[rel] = "file " + octal(st.st_mode) + " " + std::to_string(st.st_size) + " " + sha256_file(it->path());
    else
      t[rel] = "other";
  }
  if (ec) throw std::runtime_error("cannot list " + root.string() + ": " + ec.message());
  return t;
}

std::string diff(const Tree& before, const Tree& after) {
  std::string out;
  for (const auto& [k, v] : before) {
    auto it = after.find(k);
    if (it == after.end())
      out += "- " + k + ": " + v + "\n";
    else if (it->second != v)
      out += "~ " + k + ": " + v + " => " + it->second + "\n";
  }
  for (const auto& [k, v] : after)
    if (!before.count(k)) out += "+ " + k + ": " + v + "\n";
  return out;
}

Mount Mount::tmpfs(const fs::path& dir, const std::string& size) {
  Mount m;
  fs::create_directories(dir);
  std::string opts = "size=" + size;
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, opts.c_str()) != 0) {
    m.m_error = "cannot mount a tmpfs on " + dir.string() + ": " + std::strerror(errno) + " (needs root / CAP_SYS_ADMIN)";
    return m;
  }
  m.m_dir = dir;
  return m;
}

Mount Mount::read_only_bind(const fs::path& from, const fs::path& to) {
  Mount m;
  fs::create_directories(to);
  if (::mount(from.c_str(), to.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    m.m_error = "cannot bind-mount " + from.string() + " on " + to.string() + ": " + std::strerror(errno) + " (needs root / CAP_SYS_ADMIN)";
    return m;
  }
  m.m_dir = to;
  if (::mount(nullptr, to.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0)
    m.m_error = "cannot remount " + to.string() + " read-only: " + std::strerror(errno);
  return m;
}

Mount::~Mount() {
  if (!m_dir.empty()) ::umount2(m_dir.c_str(), MNT_DETACH);
}

}  // namespace testing_support
