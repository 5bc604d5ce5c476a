// Windows paths read on any OS. A PATH value is split at ';' the way cmd.exe reads it (quotes
// protect a ';'), each entry normalized the way Win32 does before it touches the disk ('/' is
// '\', "." and ".." resolve lexically, trailing dots and spaces of a name vanish), then mapped
// onto local directories: drive letters to the directories given for them, each name looked up
// case-insensitively because NTFS compares names without case, keeping the names as they really
// are on disk so that the report shows the files that exist. Nothing is expanded that cannot be
// known: %NAME% falls back to the defaults every Windows has, else it stays and is reported; UNC
// paths and unmapped drives are reported as such, never guessed at.
#include <algorithm>
#include <cctype>
#include <system_error>

#include "core/windows/windows_search.hpp"
#include "util/env.hpp"
#include "util/strings.hpp"

namespace core {

namespace fs = std::filesystem;

namespace {

// Decodes one UTF-8 sequence at s[i]; invalid bytes come back as 0xDC00 + byte (never equal to
// a letter), so they compare byte for byte.
char32_t next_code_point(std::string_view s, std::size_t& i) {
  auto b = static_cast<unsigned char>(s[i]);
  auto cont = [&](std::size_t k) { return i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80; };
  auto bits = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k]) & 0x3F); };
  if (b < 0x80) {
    ++i;
    return b;
  }
  if ((b & 0xE0) == 0xC0 && cont(1)) {
    char32_t c = (static_cast<char32_t>(b & 0x1F) << 6) | bits(1);
    i += 2;
    return c;
  }
  if ((b & 0xF0) == 0xE0 && cont(1) && cont(2)) {
    char32_t c = (static_cast<char32_t>(b & 0x0F) << 12) | (bits(1) << 6) | bits(2);
    i += 3;
    return c;
  }
  if ((b & 0xF8) == 0xF0 && cont(1) && cont(2) && cont(3)) {
    char32_t c = (static_cast<char32_t>(b & 0x07) << 18) | (bits(1) << 12) | (bits(2) << 6) | bits(3);
    i += 4;
    return c;
  }
  ++i;
  return 0xDC00 + b;
}

// Simple case folding (to lower case) of the scripts most path names use.
char32_t fold(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 0x20;  // Latin-1
  if ((c >= 0x100 && c <= 0x12F) || (c >= 0x132 && c <= 0x137) || (c >= 0x14A && c <= 0x177))
    return (c % 2 == 0) ? c + 1 : c;  // Latin Extended-A pairs
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c % 2 == 1) ? c + 1 : c;
  if (c == 0x178) return 0xFF;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 0x20;  // Greek
  if (c >= 0x410 && c <= 0x42F) return c + 0x20;                // Cyrillic
  if (c >= 0x400 && c <= 0x40F) return c + 0x50;
  return c;
}

bool is_drive_letter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

std::string upper_ascii(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::map<std::string, std::string> windows_default_vars(const std::map<std::string, std::string>& overrides) {
  std::map<std::string, std::string> v{
      {"SYSTEMROOT", "C:\\Windows"},
      {"WINDIR", "C:\\Windows"},
      {"SYSTEMDRIVE", "C:"},
      {"PROGRAMFILES", "C:\\Program Files"},
      {"PROGRAMW6432", "C:\\Program Files"},
      {"PROGRAMFILES(X86)", "C:\\Program Files (x86)"},
      {"COMMONPROGRAMFILES", "C:\\Program Files\\Common Files"},
      {"COMMONPROGRAMFILES(X86)", "C:\\Program Files (x86)\\Common Files"},
      {"PROGRAMDATA", "C:\\ProgramData"},
      {"ALLUSERSPROFILE", "C:\\ProgramData"},
      {"PUBLIC", "C:\\Users\\Public"},
  };
  for (const auto& [name, value] : overrides) v[upper_ascii(name)] = value;
  return v;
}

std::string WindowsTree::system_root() const {
  auto it = vars.find("SYSTEMROOT");
  return normalize_windows_path(it == vars.end() ? std::string("C:\\Windows") : it->second);
}

bool names_equal_nocase(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size())
    if (fold(next_code_point(a, i)) != fold(next_code_point(b, j))) return false;
  return i == a.size() && j == b.size();
}

namespace {
std::string normalize_once(std::string_view in) {
  std::string p(in);
  std::replace(p.begin(), p.end(), '/', '\\');
  if (p.rfind("\\\\?\\", 0) == 0) {
    p.erase(0, 4);
    if (p.size() >= 4 && upper_ascii(p.substr(0, 4)) == "UNC\\") p = "\\\\" + p.substr(4);
  }
  if (p.empty()) return "";
  std::string prefix, rest;
  std::size_t keep = 0;  // leading components ".." may not remove (UNC server and share)
  if (p.rfind("\\\\", 0) == 0) {
    prefix = "\\\\";
    rest = p.substr(2);
    keep = 2;
  } else if (p.size() >= 2 && is_drive_letter(p[0]) && p[1] == ':') {
    prefix = std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(p[0])))) + ":";
    if (p.size() >= 3 && p[2] == '\\') prefix += "\\";
    rest = p.substr(2);
  } else if (p[0] == '\\') {
    prefix = "\\";
    rest = p.substr(1);
  } else {
    rest = p;
  }
  bool absolute = !prefix.empty();
  std::vector<std::string> parts;
  for (auto& c : util::split(rest, '\\')) {
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      if (parts.size() > keep && parts.back() != "..")
        parts.pop_back();
      else if (!absolute)
        parts.push_back(c);
      continue;
    }
    while (!c.empty() && (c.back() == '.' || c.back() == ' ')) c.pop_back();
    if (!c.empty()) parts.push_back(c);
  }
  return prefix + util::join(parts, "\\");
}
}  // namespace

std::string normalize_windows_path(std::string_view in) {
  // Once more until nothing changes: stripping a component can make a prefix appear that the
  // first pass did not see ("\\?..\C:\x" becomes "\\?\C:\x", found by fuzzing). Each pass only
  // shortens the text or leaves it as it is, so this ends.
  std::string p = normalize_once(in);
  for (int i = 0; i < 8; ++i) {
    std::string q = normalize_once(p);
    if (q == p) break;
    p = std::move(q);
  }
  return p;
}

bool same_windows_path(std::string_view a, std::string_view b) {
  return names_equal_nocase(normalize_windows_path(a), normalize_windows_path(b));
}

std::optional<fs::path> find_child_nocase(const fs::path& dir, std::string_view name) {
  std::error_code ec;
  fs::path exact = dir / std::string(name);
  // On a case-sensitive file system an entry of that exact name is the one; on Windows' own, any
  // spelling opens it, and the name on disk is read from the folder.
  if (!util::host_is_windows() && fs::exists(fs::symlink_status(exact, ec))) return exact;
  std::vector<std::string> matches;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string n = it->path().filename().string();
    if (n == name) return exact;
    if (names_equal_nocase(n, name)) matches.push_back(n);
  }
  if (matches.empty()) {
    // Windows: an 8.3 short name (PROGRA~1) or a folder that cannot be listed still opens as given
    if (util::host_is_windows() && fs::exists(fs::symlink_status(exact, ec))) return exact;
    return std::nullopt;
  }
  std::sort(matches.begin(), matches.end());
  return dir / matches.front();
}

std::vector<WinPathEntry> parse_windows_path_list(std::string_view value, const std::map<std::string, std::string>& vars) {
  std::vector<std::string> raws;
  std::string cur;
  bool in_quotes = false;
  for (char c : value) {
    if (c == '"') in_quotes = !in_quotes;
    if (c == ';' && !in_quotes) {
      raws.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  raws.push_back(cur);

  std::vector<WinPathEntry> out;
  for (const auto& raw : raws) {
    std::string t(util::trim(raw));
    if (t.empty()) continue;
    WinPathEntry e;
    e.raw = t;
    if (t.find('"') != std::string::npos) {
      e.quoted = true;
      t.erase(std::remove(t.begin(), t.end(), '"'), t.end());
      t = std::string(util::trim(t));
    }
    std::string expanded;
    for (std::size_t i = 0; i < t.size();) {
      std::size_t close = t[i] == '%' ? t.find('%', i + 1) : std::string::npos;
      if (close == std::string::npos || close == i + 1) {
        expanded += t[i++];
        continue;
      }
      std::string name = t.substr(i + 1, close - i - 1);
      auto it = vars.find(upper_ascii(name));
      if (it != vars.end()) {
        expanded += it->second;
      } else {
        expanded += t.substr(i, close - i + 1);
        e.unexpanded.push_back(name);
      }
      i = close + 1;
    }
    e.path = normalize_windows_path(expanded);
    if (e.path.empty()) continue;
    e.index = static_cast<int>(out.size()) + 1;
    out.push_back(std::move(e));
  }
  return out;
}

MappedPath map_windows_path(const WindowsTree& tree, std::string_view windows_path, std::string_view cwd) {
  MappedPath m;
  m.windows_path = normalize_windows_path(windows_path);
  const std::string& p = m.windows_path;
  if (p.empty()) return m;
  if (p.find('%') != std::string::npos) {
    m.mapping = model::PathMapping::variable;
    return m;
  }
  if (p.rfind("\\\\", 0) == 0) {
    m.mapping = model::PathMapping::unc;
    return m;
  }
  bool absolute = p.size() >= 3 && p[1] == ':' && p[2] == '\\';
  if (!absolute) {
    std::string base = normalize_windows_path(cwd);
    if (base.size() < 3 || base[1] != ':' || base[2] != '\\') {
      m.mapping = model::PathMapping::relative;
      return m;
    }
    std::string full;
    if (p[0] == '\\')
      full = base.substr(0, 2) + p;  // \dir: the current drive's root
    else if (p.size() >= 2 && p[1] == ':' && p[0] != base[0])
      full = p.substr(0, 2) + "\\" + p.substr(2);  // D:dir
    else
      full = base + "\\" + (p.size() >= 2 && p[1] == ':' ? p.substr(2) : p);  // dir, C:dir
    MappedPath r = map_windows_path(tree, full);
    if (r.mapping == model::PathMapping::mapped) r.mapping = model::PathMapping::relative;
    return r;
  }
  auto drive = tree.drives.find(p[0]);
  if (drive == tree.drives.end()) {
    m.mapping = model::PathMapping::drive_unmapped;
    return m;
  }
  m.mapping = model::PathMapping::mapped;
  fs::path cur = drive->second;
  bool found = true;
  std::error_code ec;
  for (const auto& part : util::split(p.substr(3), '\\')) {
    if (part.empty()) continue;
    std::optional<fs::path> child;
    if (found && fs::is_directory(cur, ec)) child = find_child_nocase(cur, part);
    if (child) {
      cur = *child;
    } else {
      found = false;
      cur /= part;
    }
  }
  m.local_path = cur.string();
  m.exists = found && fs::is_directory(cur, ec);
  return m;
}

}  // namespace core
