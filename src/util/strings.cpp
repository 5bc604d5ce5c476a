// String helpers: split, join, trim, case, ASCII and UTF-8 checks, bounded number parsing.
#include "util/strings.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace util {

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto pos = text.find(sep, start);
    out.emplace_back(text.substr(start, pos == std::string_view::npos ? text.npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string_view trim(std::string_view text) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

bool is_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

std::string one_of(const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += (i + 1 == values.size()) ? " or " : ", ";
    out += values[i];
  }
  return out;
}

std::string basename_of(std::string_view path_or_url) {
  auto cut = path_or_url.find_first_of("?#");
  if (cut != std::string_view::npos && path_or_url.find("://") != std::string_view::npos) path_or_url = path_or_url.substr(0, cut);
  auto slash = path_or_url.find_last_of("/\\");
  return std::string(slash == std::string_view::npos ? path_or_url : path_or_url.substr(slash + 1));
}

std::string format_bytes(std::uint64_t bytes) {
  std::string digits = std::to_string(bytes);
  std::string grouped;
  int n = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it, ++n) {
    if (n && n % 3 == 0) grouped.insert(grouped.begin(), ',');
    grouped.insert(grouped.begin(), *it);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, " bytes (%.1f MiB)", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return grouped + buf;
}

std::string short_size(std::uint64_t bytes) {
  if (bytes < (1u << 20)) return std::to_string((bytes + 1023) / 1024) + " KiB";
  auto tenths = (bytes * 10 + (1u << 19)) >> 20;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " MiB";
}

std::size_t utf8_sequence_length(std::string_view text) {
  if (text.empty()) return 0;
  auto b = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char c = b(0);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  std::uint32_t min = 0, cp = 0;
  if ((c & 0xE0) == 0xC0)
    n = 2, min = 0x80, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0)
    n = 3, min = 0x800, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0)
    n = 4, min = 0x10000, cp = c & 0x07;
  else
    return 0;
  if (text.size() < n) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

bool is_valid_utf8(std::string_view text) {
  while (!text.empty()) {
    std::size_t n = utf8_sequence_length(text);
    if (n == 0) return false;
    text.remove_prefix(n);
  }
  return true;
}

std::string printable(std::string_view text, std::size_t max_bytes) {
  std::string out;
  std::size_t total = text.size();
  std::string_view rest = text;
  while (!rest.empty() && out.size() < max_bytes) {
    std::size_t n = utf8_sequence_length(rest);
    unsigned char c = static_cast<unsigned char>(rest[0]);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F))) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
      rest.remove_prefix(1);
    } else {
      out.append(rest.data(), n);
      rest.remove_prefix(n);
    }
  }
  if (!rest.empty()) out += "... (" + std::to_string(total) + " bytes in all)";
  return out;
}

char32_t utf8_code_point(std::string_view text, std::size_t n) {
  auto b = [&](std::size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(text[i])); };
  if (n == 1) return b(0);
  if (n == 2) return (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
  if (n == 3) return (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
  return (b(0) & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::u16string utf8_to_utf16(std::string_view text) {
  std::u16string out;
  out.reserve(text.size());
  while (!text.empty()) {
    std::size_t n = utf8_sequence_length(text);
    if (n == 0) {
      out += u'\uFFFD';
      text.remove_prefix(1);
      continue;
    }
    char32_t c = utf8_code_point(text, n);
    if (c >= 0x10000) {
      c -= 0x10000;
      out += static_cast<char16_t>(0xD800 + (c >> 10));
      out += static_cast<char16_t>(0xDC00 + (c & 0x3FF));
    } else {
      out += static_cast<char16_t>(c);
    }
    text.remove_prefix(n);
  }
  return out;
}

std::string utf16_to_utf8(std::u16string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char32_t c = text[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < text.size() && text[i + 1] >= 0xDC00 && text[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (text[i + 1] - 0xDC00);
      ++i;
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      c = 0xFFFD;
    }
    append_utf8(out, c);
  }
  return out;
}

}  // namespace util
