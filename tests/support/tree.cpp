// Test helpers for file trees: listing trees, comparing trees (hashing and mounts are per
// platform: platform_posix.cpp, platform_windows.cpp).
#include "tree.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace testing_support {
namespace fs = std::filesystem;

void write_file(const fs::path& p, const std::string& content) {
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

void overwrite_in_place(const fs::path& p, const std::string& content) {
  std::fstream out(p, std::ios::binary | std::ios::in | std::ios::out);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.flush();
  if (!out) throw std::runtime_error("cannot write over " + p.string());
}

bool refused_as_rewritten(const std::string& message) {
  if (message.find("the bytes decoded are not the bytes verified") != std::string::npos) return true;
#ifdef _WIN32
  return message.find("changed while it was read") != std::string::npos;
#else
  return false;
#endif
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
    auto st = fs::symlink_status(it->path(), ec);
    if (ec) throw std::runtime_error("cannot stat " + it->path().string() + ": " + ec.message());
    auto mode = static_cast<unsigned>(st.permissions() & fs::perms::mask);
    if (st.type() == fs::file_type::directory)
      t[rel] = "dir " + octal(mode);
    else if (st.type() == fs::file_type::symlink)
      t[rel] = "symlink -> " + fs::read_symlink(it->path()).generic_string();
    else if (st.type() == fs::file_type::regular)
      t[rel] = "file " + octal(mode) + " " + std::to_string(fs::file_size(it->path())) + " " + sha256_file(it->path());
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

}  // namespace testing_support
