// Parsing the names of targets, layouts and other words the command line accepts.
#include "model/contracts.hpp"

namespace model {

std::optional<Target> parse_target(const std::string& text) {
  if (text == "windows") return Target::windows;
  if (text == "linux") return Target::linux;
  if (text == "docker") return Target::docker;
  if (text == "conda") return Target::conda;
  return std::nullopt;
}

const char* to_string(Target t) {
  switch (t) {
    case Target::windows: return "windows";
    case Target::linux: return "linux";
    case Target::docker: return "docker";
    case Target::conda: return "conda";
  }
  return "?";
}

Platform default_platform(const Manifest& m, Target target, Platform host) {
  return target == Target::windows ? m.windows_platform() : host;
}

std::string windows_arch_conflict(const Manifest& m, Platform chosen) {
  if (!m.windows || !is_windows(chosen) || chosen == m.windows->platform.value) return {};
  const auto& arch = m.windows->platform;
  const bool written = arch.pos.line != m.windows->pos.line || arch.pos.column != m.windows->pos.column;
  return std::string("--platform ") + to_string(chosen) + " contradicts [targets.windows] in " + m.path +
         (written ? " (arch = \"" + std::string(windows_arch_dir(arch.value)) + "\", line " + std::to_string(arch.pos.line) + ")"
                  : " (no arch: x64 by default)") +
         ", which targets " + to_string(arch.value);
}

std::string cudnn_library_name(int major, bool windows) {
  return windows ? "cudnn64_" + std::to_string(major) + ".dll" : "libcudnn.so." + std::to_string(major);
}

bool is_windows_absolute(const std::string& p) {
  bool letter =
      p.size() >= 3 && ((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) && p[1] == ':' && (p[2] == '\\' || p[2] == '/');
  return letter || p.rfind("\\\\", 0) == 0;
}

}  // namespace model
