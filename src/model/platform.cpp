// Parsing and naming NVIDIA's redistributable platforms.
#include "model/platform.hpp"

namespace model {

std::optional<Platform> parse_platform(std::string_view text) {
  if (text == "linux-x86_64") return Platform::linux_x86_64;
  if (text == "linux-sbsa") return Platform::linux_sbsa;
  if (text == "windows-x86_64") return Platform::windows_x86_64;
  if (text == "linux-aarch64") return Platform::linux_aarch64;
  if (text == "windows-arm64") return Platform::windows_arm64;
  return std::nullopt;
}

const char* to_string(Platform p) {
  switch (p) {
    case Platform::linux_x86_64: return "linux-x86_64";
    case Platform::linux_sbsa: return "linux-sbsa";
    case Platform::windows_x86_64: return "windows-x86_64";
    case Platform::linux_aarch64: return "linux-aarch64";
    case Platform::windows_arm64: return "windows-arm64";
  }
  return "?";
}

bool is_windows(Platform p) { return p == Platform::windows_x86_64 || p == Platform::windows_arm64; }

const char* windows_arch_dir(Platform p) {
  if (p == Platform::windows_arm64) return "arm64";
  return p == Platform::windows_x86_64 ? "x64" : "";
}

const char* windows_machine(Platform p) { return windows_arch_dir(p); }

const std::vector<std::string>& platform_names() {
  static const std::vector<std::string> k_names{"linux-x86_64", "linux-sbsa", "windows-x86_64", "linux-aarch64", "windows-arm64"};
  return k_names;
}

const char* archive_extension(Platform p) { return is_windows(p) ? "zip" : "tar.xz"; }

const char* to_string(Os os) { return os == Os::windows ? "windows" : "linux"; }

Platform host_linux_platform() {
#if defined(__aarch64__)
  return Platform::linux_sbsa;
#else
  return Platform::linux_x86_64;
#endif
}

}  // namespace model
