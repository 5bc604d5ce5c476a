// Manifest helpers: names of origins and layouts, an archive pin's NVIDIA file name.
#include "model/manifest.hpp"

#include "util/strings.hpp"

namespace model {

const char* to_string(Origin o) { return o == Origin::nvidia ? "nvidia" : "local"; }
const char* to_string(WindowsLayout l) { return l == WindowsLayout::isolated ? "isolated" : "cuda-merge"; }
const char* to_string(LinuxLayout l) { return l == LinuxLayout::lib64 ? "lib64" : "deb"; }
const char* to_string(DockerCudnn m) { return m == DockerCudnn::archive ? "archive" : "apt"; }
const char* to_string(DockerCuda m) { return m == DockerCuda::archive ? "archive" : "base"; }

std::string ArchivePin::file_name() const {
  if (file) return file->value;
  if (url) return util::basename_of(url->value);
  return {};
}

util::SourceLocation locate_in(const std::string& path, const std::vector<std::string>& lines, Pos pos) {
  const bool has = pos.line > 0 && static_cast<std::size_t>(pos.line) <= lines.size();
  return util::make_location(path, pos.line, pos.column, has ? lines[pos.line - 1] : std::string());
}

util::SourceLocation Manifest::locate(Pos pos) const { return locate_in(path, lines, pos); }

const ArchivePin* Manifest::archive_for(Platform p) const {
  if (!cudnn) return nullptr;
  for (const auto& a : cudnn->archives)
    if (a.platform.value == p) return &a;
  return nullptr;
}

Platform Manifest::windows_platform() const {
  if (windows) return windows->platform.value;
  if (archive_for(Platform::windows_arm64) && !archive_for(Platform::windows_x86_64)) return Platform::windows_arm64;
  return Platform::windows_x86_64;
}

const ArchivePin* Manifest::cuda_archive_for(const std::string& component, Platform p) const {
  if (!cuda) return nullptr;
  for (const auto& a : cuda->archives)
    if (a.component && a.component->value == component && a.platform.value == p) return &a;
  return nullptr;
}

ArchivePin* Manifest::cuda_archive_for(const std::string& component, Platform p) {
  return const_cast<ArchivePin*>(static_cast<const Manifest&>(*this).cuda_archive_for(component, p));
}

const std::vector<std::string>& framework_names() {
  static const std::vector<std::string> k_names{"torch", "torchvision", "torchaudio", "tensorflow", "onnxruntime-gpu"};
  return k_names;
}

}  // namespace model
