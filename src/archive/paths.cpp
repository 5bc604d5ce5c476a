// Archive entry names come from the archive, so they are hostile until proven otherwise. The
// extractor only ever writes below a fresh directory it created, and these rules make sure no
// name can leave it: absolute names, drive letters, ".." components and backslashes (which some
// tools treat as separators, so "a\..\..\x" would escape on Windows) are refused rather than
// "sanitised", because a silently renamed file is a different install. For trees that will be
// copied to Windows, names that Windows cannot hold or that alias devices (CON, NUL, COM1.txt)
// and names differing only in case are refused too: the copy would otherwise fail or merge two
// files into one on the target machine.
#include "archive/paths.hpp"

#include <algorithm>
#include <array>

#include "util/strings.hpp"

namespace archive_io {

namespace {

bool reserved_windows_name(const std::string& component) {
  std::string stem = util::to_lower(component.substr(0, component.find('.')));
  static const std::array<const char*, 4> k_plain{"con", "prn", "aux", "nul"};
  for (const char* r : k_plain)
    if (stem == r) return true;
  if (stem.size() == 4 && (stem.rfind("com", 0) == 0 || stem.rfind("lpt", 0) == 0) && stem[3] >= '1' && stem[3] <= '9')
    return true;
  return false;
}

util::Error unsafe(std::string_view name, const std::string& why) {
  util::Error e(util::ErrorCode::unsafe, "unsafe archive entry \"" + std::string(name) + "\": " + why);
  e.hints.push_back("the archive is not NVIDIA's original or was tampered with; nothing was staged");
  return e;
}

}  // namespace

util::Result<std::vector<std::string>> split_entry_path(std::string_view name, NameRules rules) {
  if (name.empty()) return unsafe(name, "empty name");
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return unsafe(name, "control character in the name");
    if (c == '\\') return unsafe(name, "backslash in the name (a path separator on Windows)");
  }
  if (name.front() == '/') return unsafe(name, "absolute path");
  if (name.size() >= 2 && name[1] == ':') return unsafe(name, "drive-letter path");
  std::vector<std::string> parts;
  for (auto& part : util::split(name, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return unsafe(name, "\"..\" component (would escape the destination)");
    if (rules == NameRules::windows) {
      if (reserved_windows_name(part)) return unsafe(name, "\"" + part + "\" is a reserved device name on Windows");
      if (part.back() == '.' || part.back() == ' ')
        return unsafe(name, "\"" + part + "\" ends in a dot or space, which Windows strips");
      if (part.find_first_of("<>:\"|?*") != std::string::npos)
        return unsafe(name, "\"" + part + "\" contains a character Windows does not allow in file names");
    }
    parts.push_back(std::move(part));
  }
  if (parts.empty()) return unsafe(name, "names no file");
  return parts;
}

std::string join_path(const std::vector<std::string>& parts) { return util::join(parts, "/"); }

std::string collision_key(const std::string& path, NameRules rules) {
  return rules == NameRules::windows ? util::to_lower(path) : path;
}

std::optional<std::vector<std::string>> resolve_link_lexically(const std::vector<std::string>& link_dir,
                                                               std::string_view target) {
  if (target.empty() || target.front() == '/' || target.find('\\') != std::string_view::npos) return std::nullopt;
  if (target.size() >= 2 && target[1] == ':') return std::nullopt;
  std::vector<std::string> out = link_dir;
  for (auto& part : util::split(target, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (out.empty()) return std::nullopt;
      out.pop_back();
    } else {
      out.push_back(part);
    }
  }
  return out;
}

}  // namespace archive_io
