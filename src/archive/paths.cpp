// Archive entry names come from the archive, so they are hostile until proven otherwise. The
// extractor only ever writes below a fresh directory it created, and these rules make sure no
// name can leave it: absolute names, drive letters, ".." components and backslashes (which some
// tools treat as separators, so "a\..\..\x" would escape on Windows) are refused rather than
// "sanitised", because a silently renamed file is a different install. For trees that will be
// copied to Windows, names that Windows cannot hold or that alias devices (CON, NUL, COM1.txt)
// and names differing only in case are refused too: the copy would otherwise fail or merge two
// files into one on the target machine. "Differing only in case" is judged the way Windows
// judges it: through its upcase table (simple uppercase of each UTF-16 code unit, so `É.h` and
// `é.h`, `Σ.h` and `ς.h` are one name, but `ß` and `SS` are two). The reserved device names are
// the documented set, COM0/LPT0 and the superscript-digit COM¹ .. LPT³ included, with or without
// an extension and with trailing spaces in the stem. Characters that Windows' "best fit" ANSI
// conversion turns into a dot, a separator or a drive colon are refused too: a tool that copies
// the tree through an ANSI code page would otherwise turn "．．＼x" into "..\x". A component in
// the form of an 8.3 short name ("CUDNN6~1.DLL", "STACKP~1") is refused for every target: on NTFS
// (Windows, or a Linux tree under /mnt/c in WSL) it can be another name of an existing file, so a
// write to it replaces a file no check looked at. Lengths and depth are bounded before the name is
// split, so that the work on one name stays proportional to a name any real tree holds.
#include "archive/paths.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "unsafe_entry.hpp"
#include "util/strings.hpp"

namespace archive_io {

namespace {

constexpr std::pair<std::uint16_t, std::uint16_t> k_upcase[] = {
#include "windows_upcase.inc"
};

std::uint32_t windows_upcase(std::uint32_t cp) {
  if (cp >= 0x10000) return cp;  // not case-mapped: Windows compares UTF-16 code units
  auto it = std::lower_bound(std::begin(k_upcase), std::end(k_upcase), cp,
                             [](const std::pair<std::uint16_t, std::uint16_t>& p, std::uint32_t c) { return p.first < c; });
  return it != std::end(k_upcase) && it->first == cp ? it->second : cp;
}

bool reserved_windows_name(const std::string& component) {
  std::string stem = component.substr(0, component.find('.'));
  while (!stem.empty() && stem.back() == ' ') stem.pop_back();
  std::string lower = util::to_lower(stem);
  static const std::array<const char*, 6> k_plain{"con", "prn", "aux", "nul", "conin$", "conout$"};
  for (const char* r : k_plain)
    if (lower == r) return true;
  if (lower.size() >= 4 && (lower.rfind("com", 0) == 0 || lower.rfind("lpt", 0) == 0)) {
    std::string tail = lower.substr(3);
    if (tail.size() == 1 && tail[0] >= '0' && tail[0] <= '9') return true;
    if (tail == "\xC2\xB9" || tail == "\xC2\xB2" || tail == "\xC2\xB3") return true;  // ¹ ² ³
  }
  return false;
}

// A character that Windows' best-fit conversion to an ANSI code page maps to '.', '/', '\\' or ':'.
const char* best_fit_hazard(std::uint32_t cp) {
  switch (cp) {
    case 0xFF0E: return "FULLWIDTH FULL STOP (best-fit mapped to '.')";
    case 0xFF0F: return "FULLWIDTH SOLIDUS (best-fit mapped to '/')";
    case 0x2215: return "DIVISION SLASH (best-fit mapped to '/')";
    case 0xFF3C: return "FULLWIDTH REVERSE SOLIDUS (best-fit mapped to '\\')";
    case 0x29F5: return "REVERSE SOLIDUS OPERATOR (best-fit mapped to '\\')";
    case 0xFE68: return "SMALL REVERSE SOLIDUS (best-fit mapped to '\\')";
    case 0x00A5: return "YEN SIGN (the path separator in code page 932)";
    case 0x20A9: return "WON SIGN (the path separator in code page 949)";
    case 0xFF1A: return "FULLWIDTH COLON (best-fit mapped to ':')";
    default: return nullptr;
  }
}

// The form Windows gives the short (8.3) name of a long one: a stem of at most 8 characters ending
// in "~" and digits ("CUDNN6~1", "CU2B4F~12"), and at most one extension of up to 3 characters.
bool short_name_form(const std::string& component) {
  std::size_t dot = component.find('.');
  std::string_view stem = std::string_view(component).substr(0, dot);
  if (dot != std::string::npos) {
    std::string_view ext = std::string_view(component).substr(dot + 1);
    if (ext.size() > 3 || ext.find('.') != std::string_view::npos) return false;
  }
  std::size_t tilde = stem.rfind('~');
  if (stem.size() > 8 || tilde == std::string_view::npos || tilde == 0 || tilde + 1 == stem.size()) return false;
  for (char c : stem.substr(tilde + 1))
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

util::Result<std::vector<std::string>> split_entry_path(std::string_view name, NameRules rules) {
  if (name.empty()) return detail::unsafe_entry(name, "empty name");
  if (name.size() > k_max_name_bytes)
    return detail::unsafe_entry(std::string(name.substr(0, 120)) + "...",
                                "the name is " + std::to_string(name.size()) + " bytes long; stackpin accepts at most " +
                                    std::to_string(k_max_name_bytes) + " (the longest path Linux opens)");
  if (std::size_t depth = static_cast<std::size_t>(std::count(name.begin(), name.end(), '/')) + 1; depth > k_max_depth)
    return detail::unsafe_entry(
        std::string(name.substr(0, 120)) + "...",
        "the name is " + std::to_string(depth) + " components deep; stackpin accepts at most " + std::to_string(k_max_depth));
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return detail::unsafe_entry(name, "control character in the name");
    if (c == '\\') return detail::unsafe_entry(name, "backslash in the name (a path separator on Windows)");
  }
  if (name.front() == '/') return detail::unsafe_entry(name, "absolute path");
  if (name.size() >= 2 && name[1] == ':') return detail::unsafe_entry(name, "drive-letter path");
  std::vector<std::string> parts;
  for (auto& part : util::split(name, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return detail::unsafe_entry(name, "\"..\" component (would escape the destination)");
    if (part.size() > k_max_component_bytes)
      return detail::unsafe_entry(name, "a component is " + std::to_string(part.size()) + " bytes long; file systems hold at most " +
                                            std::to_string(k_max_component_bytes));
    if (short_name_form(part))
      return detail::unsafe_entry(name, "\"" + part +
                                            "\" has the form of a Windows 8.3 short name, which on NTFS can be another name of an existing "
                                            "file (as git's core.protectNTFS refuses)");
    if (rules == NameRules::windows) {
      if (reserved_windows_name(part)) return detail::unsafe_entry(name, "\"" + part + "\" is a reserved device name on Windows");
      if (part.back() == '.' || part.back() == ' ')
        return detail::unsafe_entry(name, "\"" + part + "\" ends in a dot or space, which Windows strips");
      if (part.find_first_of("<>:\"|?*") != std::string::npos)
        return detail::unsafe_entry(name, "\"" + part + "\" contains a character Windows does not allow in file names");
      for (std::string_view rest = part; !rest.empty();) {
        std::size_t n = util::utf8_sequence_length(rest);
        if (n == 0) return detail::unsafe_entry(name, "the name is not valid UTF-8");
        if (const char* why = best_fit_hazard(static_cast<std::uint32_t>(util::utf8_code_point(rest, n))))
          return detail::unsafe_entry(
              name, "\"" + part + "\" contains " + why + ", which can turn into a path character when the tree is copied on Windows");
        rest.remove_prefix(n);
      }
    }
    parts.push_back(std::move(part));
  }
  if (parts.empty()) return detail::unsafe_entry(name, "names no file");
  return parts;
}

std::string join_path(const std::vector<std::string>& parts) { return util::join(parts, "/"); }

std::string collision_key(const std::string& path, NameRules rules) {
  if (rules != NameRules::windows) return path;
  std::string out;
  out.reserve(path.size());
  for (std::string_view rest = path; !rest.empty();) {
    std::size_t n = util::utf8_sequence_length(rest);
    if (n == 0) {  // not UTF-8 (refused elsewhere): compared byte for byte
      out += rest[0];
      rest.remove_prefix(1);
      continue;
    }
    util::append_utf8(out, windows_upcase(static_cast<std::uint32_t>(util::utf8_code_point(rest, n))));
    rest.remove_prefix(n);
  }
  return out;
}

std::optional<std::vector<std::string>> resolve_link_lexically(const std::vector<std::string>& link_dir, std::string_view target) {
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

util::Error unsafe_entry(std::string_view name, const std::string& why) {
  util::Error e(util::ErrorCode::unsafe, "unsafe archive entry \"" + util::printable(name) + "\": " + why);
  e.hints.push_back("the archive is not NVIDIA's original or was tampered with; nothing was staged");
  return e;
}

}  // namespace archive_io
