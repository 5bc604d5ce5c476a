#include "model/kernels.hpp"

#include <charconv>
#include <tuple>

namespace model {

namespace {

// 9.0 -> "90", 12.1 -> "121", 10.3 -> "103": nvcc's number is major * 10 + minor.
std::string arch_number(const Version& v) { return std::to_string(v.major() * 10 + v.minor()); }

}  // namespace

std::string GpuTarget::name() const {
  std::string prefix;
  switch (kind) {
    case CodeKind::sass: prefix = "sm_"; break;
    case CodeKind::ptx: prefix = "compute_"; break;
    case CodeKind::lto: prefix = "lto_"; break;
    case CodeKind::other: prefix = "kind-" + std::to_string(raw_kind) + "_"; break;
  }
  std::string suffix = variant == ArchVariant::specific ? "a" : variant == ArchVariant::family ? "f" : "";
  return prefix + arch_number(arch) + suffix;
}

bool operator<(const GpuTarget& a, const GpuTarget& b) {
  return std::tie(a.kind, a.raw_kind, a.arch, a.variant) < std::tie(b.kind, b.raw_kind, b.arch, b.variant);
}

std::optional<GpuTarget> parse_gpu_target(const std::string& name) {
  GpuTarget t;
  std::string_view rest = name;
  for (auto [p, k] : {std::pair{"sm_", CodeKind::sass}, {"compute_", CodeKind::ptx}, {"lto_", CodeKind::lto}}) {
    if (rest.substr(0, std::char_traits<char>::length(p)) == p) {
      t.kind = k;
      rest.remove_prefix(std::char_traits<char>::length(p));
      break;
    }
    if (k == CodeKind::lto) return std::nullopt;
  }
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
    t.variant = rest.back() == 'a' ? ArchVariant::specific : ArchVariant::family;
    rest.remove_suffix(1);
  }
  unsigned n = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
  if (ec != std::errc() || end != rest.data() + rest.size() || rest.size() < 2 || rest.size() > 4 || rest[0] == '0') return std::nullopt;
  auto v = Version::parse(std::to_string(n / 10) + "." + std::to_string(n % 10));
  if (!v) return std::nullopt;
  t.arch = *v;
  return t;
}

const char* to_string(Fit f) {
  switch (f) {
    case Fit::native: return "native";
    case Fit::compatible: return "compatible";
    case Fit::jit: return "jit";
    case Fit::none: return "none";
  }
  return "none";
}

}  // namespace model
