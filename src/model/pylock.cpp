// Python lock lookups, PEP 503 names, the markers stackpin writes for its targets, wheel file names.
#include "model/pylock.hpp"

#include <algorithm>
#include <cctype>

#include "util/url.hpp"

namespace model {

util::SourceLocation PyLock::locate(Pos pos) const { return locate_in(path, lines, pos); }

const PyPackage* PyLock::package_for(const std::string& name, Platform platform) const {
  const std::string n = normalize_python_name(name);
  const std::string mine = python_marker(platform);
  for (const auto& p : packages) {
    if (p.name != n) continue;
    if (p.marker.empty() || p.marker.find(mine) != std::string::npos) return &p;
  }
  return nullptr;
}

std::string normalize_python_name(const std::string& name) {
  std::string out;
  bool sep = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      sep = true;
      continue;
    }
    if (sep && !out.empty()) out += '-';
    sep = false;
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

std::string python_marker(Platform p) {
  switch (p) {
    case Platform::linux_x86_64: return "sys_platform == 'linux' and platform_machine == 'x86_64'";
    case Platform::linux_sbsa:
    case Platform::linux_aarch64: return "sys_platform == 'linux' and platform_machine == 'aarch64'";
    case Platform::windows_x86_64: return "sys_platform == 'win32' and platform_machine == 'AMD64'";
    case Platform::windows_arm64: return "sys_platform == 'win32' and platform_machine == 'ARM64'";
  }
  return {};
}

std::vector<Platform> platforms_of_marker(const std::string& marker, const std::vector<Platform>& all) {
  if (marker.empty()) return all;
  std::vector<Platform> out;
  for (Platform p : all)
    if (marker.find(python_marker(p)) != std::string::npos) out.push_back(p);
  return out;
}

std::string url_file_name(const std::string& url) {
  std::string path = url.substr(0, url.find_first_of("?#"));
  auto slash = path.rfind('/');
  return util::percent_decode(slash == std::string::npos ? path : path.substr(slash + 1));
}

std::string file_url_path(const std::string& url) {
  if (url.rfind("file://", 0) != 0) return {};
  std::string path =
      util::percent_decode(url.substr(7, url.find_first_of("?#") == std::string::npos ? std::string::npos : url.find_first_of("?#") - 7));
  // file:///C:/wheels/x.whl is C:/wheels/x.whl
  if (path.size() > 3 && path[0] == '/' && std::isalpha(static_cast<unsigned char>(path[1])) && path[2] == ':' && path[3] == '/')
    path.erase(0, 1);
  return path;
}

std::optional<WheelName> parse_wheel_name(const std::string& file) {
  const std::string ext = ".whl";
  if (file.size() <= ext.size() || file.compare(file.size() - ext.size(), ext.size(), ext) != 0) return std::nullopt;
  if (file.find('/') != std::string::npos || file.find('\\') != std::string::npos) return std::nullopt;
  std::vector<std::string> parts;
  std::string stem = file.substr(0, file.size() - ext.size());
  std::size_t start = 0;
  for (;;) {
    auto dash = stem.find('-', start);
    parts.push_back(stem.substr(start, dash == std::string::npos ? std::string::npos : dash - start));
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  if (parts.size() != 5 && parts.size() != 6) return std::nullopt;
  for (const auto& p : parts)
    if (p.empty()) return std::nullopt;
  WheelName w;
  w.name = parts[0];
  w.version = parts[1];
  w.python = parts[parts.size() - 3];
  w.abi = parts[parts.size() - 2];
  w.platform = parts.back();
  return w;
}

}  // namespace model
