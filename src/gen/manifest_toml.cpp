// Values are TOML basic strings (toml_quote); comments go through comment_safe so a value cannot
// end one.
#include "gen/manifest_toml.hpp"

#include "gen/quote.hpp"

namespace gen {

// TOML basic strings take exactly the escapes JSON strings use (\", \\, \n, \r, \t, \uXXXX), so
// the quoting module's JSON form is a valid TOML basic string holding the same text.
std::string toml_quote(const std::string& s) { return json_quote(s); }

std::string render_manifest(const ManifestSpec& s) {
  std::string t;
  // TOML comments may hold no control character but tab: line breaks and the rest become '?'.
  auto comment = [&](const std::string& c) {
    if (c.empty()) return;
    std::string safe = comment_safe(c);
    for (char& ch : safe)
      if ((static_cast<unsigned char>(ch) < 0x20 && ch != '\t') || ch == 0x7f) ch = '?';
    t += "# " + safe + "\n";
  };
  for (const auto& h : s.header) comment(h);
  t += "\nschema = 1\nname = " + toml_quote(s.name) + "\n";
  if (!s.description.empty()) t += "description = " + toml_quote(s.description) + "\n";
  if (!s.cuda.empty()) {
    t += "\n";
    comment(s.cuda_comment);
    t += "[cuda]\nversion = " + toml_quote(s.cuda) + "\n";
    if (!s.cuda_components.empty()) {
      comment(s.cuda_components_comment);
      t += "components = [";
      for (std::size_t i = 0; i < s.cuda_components.size(); ++i) t += (i ? ", " : "") + toml_quote(s.cuda_components[i]);
      t += "]\n";
    }
  }
  if (!s.driver_linux.empty() || !s.driver_windows.empty()) {
    t += "\n";
    comment(s.driver_comment);
    t += "[driver]\n";
    if (!s.driver_linux.empty()) t += "linux = " + toml_quote(s.driver_linux) + "\n";
    if (!s.driver_windows.empty()) t += "windows = " + toml_quote(s.driver_windows) + "\n";
  }
  if (!s.cudnn.empty()) {
    t += "\n";
    comment(s.cudnn_comment);
    t += "[cudnn]\nversion = " + toml_quote(s.cudnn) + "\n";
    if (s.cudnn_cuda) t += "cuda = " + std::to_string(s.cudnn_cuda) + "\n";
  }
  for (const auto& a : s.archives) {
    t += "\n";
    comment(a.comment);
    t += "[[cudnn.archives]]\nplatform = " + toml_quote(a.platform) + "\norigin = " + toml_quote(a.origin) + "\n";
    if (!a.url.empty()) t += "url = " + toml_quote(a.url) + "\n";
    if (!a.file.empty()) t += "file = " + toml_quote(a.file) + "\n";
    if (!a.sha256.empty()) t += "sha256 = " + toml_quote(a.sha256) + "\n";
    if (a.size) t += "size = " + std::to_string(*a.size) + "\n";
  }
  if (!s.archive_comments.empty()) {
    t += "\n";
    for (const auto& c : s.archive_comments) comment(c);
  }
  if (!s.frameworks.empty()) {
    t += "\n";
    comment(s.frameworks_comment);
    t += "[frameworks]\n";
    for (const auto& [name, version] : s.frameworks) t += name + " = " + toml_quote(version) + "\n";
  }
  if (!s.python.empty() || !s.python_packages.empty()) {
    t += "\n";
    for (const auto& c : s.python_comments) comment(c);
    t += "[python]\n";
    if (!s.python.empty()) t += "version = " + toml_quote(s.python) + "\n";
    if (!s.python_packages.empty()) {
      t += "packages = [\n";
      for (const auto& p : s.python_packages) t += "  " + toml_quote(p) + ",\n";
      t += "]\n";
    }
  }
  if (!s.gpu_arch.empty()) {
    t += "\n";
    comment(s.gpus_comment);
    t += "[gpus]\narch = [";
    for (std::size_t i = 0; i < s.gpu_arch.size(); ++i) t += (i ? ", " : "") + toml_quote(s.gpu_arch[i]);
    t += "]\n";
  }
  if (!s.linux_layout.empty()) {
    t += "\n";
    comment(s.linux_comment);
    t += "[targets.linux]\nlayout = " + toml_quote(s.linux_layout) + "\n";
    if (!s.linux_prefix.empty()) t += "prefix = " + toml_quote(s.linux_prefix) + "\n";
  }
  if (!s.windows_layout.empty()) {
    t += "\n";
    comment(s.windows_comment);
    t += "[targets.windows]\nlayout = " + toml_quote(s.windows_layout) + "\n";
    if (!s.windows_arch.empty()) t += "arch = " + toml_quote(s.windows_arch) + "\n";
    if (!s.windows_prefix.empty()) t += "prefix = " + toml_quote(s.windows_prefix) + "\n";
    if (!s.windows_cuda_path.empty()) t += "cuda_path = " + toml_quote(s.windows_cuda_path) + "\n";
  }
  return t;
}

}  // namespace gen
