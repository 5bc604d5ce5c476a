// Environment variables: the real environment and a map for tests.
#include "util/env.hpp"

#include <cstdlib>

namespace util {

std::optional<std::string> SystemEnv::get(const std::string& name) const {
  const char* v = std::getenv(name.c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

std::optional<std::string> MapEnv::get(const std::string& name) const {
  auto it = m_vars.find(name);
  if (it == m_vars.end()) return std::nullopt;
  return it->second;
}

bool host_is_windows() {
#ifdef _WIN32
  return true;
#else
  return false;
#endif
}

std::optional<std::filesystem::path> executable_path() {
#if defined(__linux__)
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) return p;
#endif
  return std::nullopt;
}

}  // namespace util
