// Dotted version numbers: parsing (bounded), comparing, prefixes.
#include "model/version.hpp"

namespace model {

std::optional<Version> Version::parse(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  Version v;
  std::uint64_t cur = 0;
  bool have_digit = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      cur = cur * 10 + static_cast<std::uint64_t>(c - '0');
      if (cur > 0xFFFFFFFFu) return std::nullopt;
      have_digit = true;
    } else if (c == '.') {
      if (!have_digit) return std::nullopt;
      v.m_parts.push_back(static_cast<std::uint32_t>(cur));
      cur = 0;
      have_digit = false;
    } else {
      return std::nullopt;
    }
  }
  if (!have_digit) return std::nullopt;
  v.m_parts.push_back(static_cast<std::uint32_t>(cur));
  if (v.m_parts.size() > 6) return std::nullopt;
  v.m_text = std::string(text);
  return v;
}

std::string Version::prefix(std::size_t n) const {
  std::string out;
  for (std::size_t i = 0; i < n && i < m_parts.size(); ++i) {
    if (i) out += '.';
    out += std::to_string(m_parts[i]);
  }
  return out;
}

std::strong_ordering compare_prefix(const Version& a, const Version& b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (auto c = a.part(i) <=> b.part(i); c != 0) return c;
  }
  return std::strong_ordering::equal;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
  std::size_t n = a.size() > b.size() ? a.size() : b.size();
  return compare_prefix(a, b, n);
}

bool in_range(const Version& v, const Version& from, const std::optional<Version>& until) {
  if (v < from) return false;
  return !until || v < *until;
}

bool has_prefix(const Version& v, const Version& prefix) {
  if (prefix.size() > v.size() && v.size() > 0) {
    // "1.17" does not have prefix "1.17.3"
    return false;
  }
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (v.part(i) != prefix.part(i)) return false;
  return true;
}

std::optional<Version> decode_cudnn_version(std::uint64_t value) {
  if (value == 0) return std::nullopt;
  std::uint64_t major, minor, patch;
  if (value >= 90000) {
    major = value / 10000;
    minor = (value / 100) % 100;
    patch = value % 100;
  } else {
    major = value / 1000;
    minor = (value / 100) % 10;
    patch = value % 100;
  }
  return Version::parse(std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch));
}

}  // namespace model
