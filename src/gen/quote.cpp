// Quoting a string for each language stackpin writes: POSIX sh, PowerShell, Python, CMake, JSON, YAML.
#include "gen/quote.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "util/strings.hpp"

namespace gen {

bool plain_reference(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' || c == '/' ||
           c == ':' || c == '@';
  });
}

std::string sh_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string ps_quote(std::string_view s) {
  // PowerShell's tokenizer takes four typographic quotes for the apostrophe too (U+2018 and U+2019,
  // the low U+201A and the reversed U+201B: CharExtensions.IsSingleQuote), so "O’Brien" ends a
  // string quoted with ' ... ' unless its ’ is doubled like the apostrophe.
  std::string out = "'";
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\'') {
      out += "''";
    } else if (static_cast<unsigned char>(c) == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
               static_cast<unsigned char>(s[i + 2]) >= 0x98 && static_cast<unsigned char>(s[i + 2]) <= 0x9B) {
      out.append(s.substr(i, 3));  // U+2018 .. U+201B, doubled
      out.append(s.substr(i, 3));
      i += 2;
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string py_quote(std::string_view s) {
  std::string out = "'";
  char buf[16];
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = util::utf8_sequence_length(s.substr(i));
    auto c = static_cast<unsigned char>(s[i]);
    if (n == 0) {  // not UTF-8: Python source cannot hold it; U+FFFD says something was lost
      out += "\\ufffd";
      i += 1;
      continue;
    }
    if (n == 1) {
      if (c == '\\' || c == '\'') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c < 0x20 || c == 0x7F) {
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    } else {  // non-ASCII as an escape: the line is pure ASCII, right in any console code page
      std::uint32_t cp = c & (0xFF >> (n + 1));
      for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
      if (cp <= 0xFFFF)
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      else
        std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(cp));
      out += buf;
    }
    i += n;
  }
  return out + "'";
}

util::Result<std::string> cmd_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\n' || c == '\r')
      return util::Error(util::ErrorCode::unsupported,
                         "cmd cannot quote \"" + std::string(s) + "\": it holds a double quote or a line break")
          .with_hint("choose a path without double quotes or line breaks, or use the PowerShell script");
    if (c == '%')
      out += "%%";
    else
      out += c;
  }
  return out + "\"";
}

std::string cmake_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '$': out += "\\$"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

util::Result<std::string> pc_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r')
      return util::Error(util::ErrorCode::unsupported,
                         "a pkg-config file cannot hold the value \"" + std::string(s) + "\": it has a line break")
          .with_hint("choose a path without line breaks");
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || u >= 0x80 ||
                 std::string_view("/._+,:=@^~%-").find(c) != std::string_view::npos;
    if (!plain) out += '\\';
    out += c;
  }
  return out;
}

std::string dockerfile_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      out += ' ';
    else if (c == '"' || c == '\\' || c == '$')
      out += std::string("\\") + c;
    else
      out += c;
  }
  return out + "\"";
}

std::string comment_safe(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '\r') c = '?';
  return s;
}

std::string json_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + json_quote(items[i]);
  return out + "]";
}

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

namespace {
// The code point of the UTF-8 sequence at s[i] and its length; {-1, 1} for a byte that does not
// start a well-formed sequence (stray continuation, overlong form, surrogate, beyond U+10FFFF).
std::pair<long, std::size_t> utf8_at(std::string_view s, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return {c, 1};
  std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
  if (len == 0 || c > 0xF4 || i + len > s.size()) return {-1, 1};
  long cp = c & (0x7F >> len);
  for (std::size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return {-1, 1};
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  static const long k_min[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < k_min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {-1, 1};
  return {cp, len};
}
}  // namespace

std::string yaml_quote(std::string_view s) {
  std::string out = "\"";
  char buf[16];
  for (std::size_t i = 0; i < s.size();) {
    auto [cp, len] = utf8_at(s, i);
    switch (cp) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\0': out += "\\0"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case -1: out += "\\uFFFD"; break;
      default:
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
          std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(cp));
          out += buf;
        } else if (cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF || cp == 0xFFFE || cp == 0xFFFF) {
          std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(cp));
          out += buf;
        } else {
          out.append(s.substr(i, len));
        }
    }
    i += len;
  }
  return out + "\"";
}

}  // namespace gen
