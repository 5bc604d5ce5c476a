#pragma once
// Dotted numeric versions ("12.1.1", "8.9.5.30", "530.30.02", "580").
//
// Comparison is numeric part by part; a missing part counts as 0, so "580" == "580.0.0". Driver
// versions keep their leading zeros in text ("530.30.02") but compare numerically (02 == 2).
// cuDNN pins have four parts while libraries and headers reveal three: compare_prefix() compares
// only the first N parts, which is how the contract in ARCHITECTURE ("compare at three parts") is
// applied.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace model {

class Version {
 public:
  Version() = default;
  // Parses 1 to 6 dot-separated decimal parts. nullopt on anything else ("", "1.", "v1", "1.x").
  static std::optional<Version> parse(std::string_view text);

  const std::string& text() const { return m_text; }
  std::size_t size() const { return m_parts.size(); }
  std::uint32_t part(std::size_t i) const { return i < m_parts.size() ? m_parts[i] : 0; }
  std::uint32_t major() const { return part(0); }
  std::uint32_t minor() const { return part(1); }
  std::uint32_t patch() const { return part(2); }
  bool empty() const { return m_parts.empty(); }
  // The first n parts as text ("8.9.5.30".prefix(3) == "8.9.5").
  std::string prefix(std::size_t n) const;

  friend std::strong_ordering operator<=>(const Version& a, const Version& b);
  friend bool operator==(const Version& a, const Version& b) { return (a <=> b) == 0; }

 private:
  std::vector<std::uint32_t> m_parts;
  std::string m_text;
};

// Compares the first n parts only (missing parts are 0).
std::strong_ordering compare_prefix(const Version& a, const Version& b, std::size_t n);

// True when `v` lies in [from, until); an empty `until` means no upper bound.
bool in_range(const Version& v, const Version& from, const std::optional<Version>& until);

// True when every part of `prefix` equals the same part of `v` ("1.17" matches "1.17.3").
bool has_prefix(const Version& v, const Version& prefix);

// cuDNN's integer version (CUDNN_VERSION / cudnnGetVersion): MAJOR*1000+MINOR*100+PATCH up to 8.x,
// MAJOR*10000+MINOR*100+PATCH from 9.0.0. Returns "8.9.7" / "9.10.2"; nullopt for 0.
std::optional<Version> decode_cudnn_version(std::uint64_t value);

}  // namespace model
