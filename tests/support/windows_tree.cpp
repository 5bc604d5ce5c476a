// A fake Windows drive in a scratch directory: C:\ paths mapped to local files.
#include "windows_tree.hpp"

#include <cctype>
#include <stdexcept>

#include "fixtures.hpp"
#include "tree.hpp"

namespace testing_support {

namespace fs = std::filesystem;

WindowsTree::WindowsTree(fs::path root) : m_root(std::move(root)) { fs::create_directories(m_root); }

fs::path WindowsTree::local(std::string_view windows_path) const {
  std::string p(windows_path);
  if (p.size() >= 2 && p[1] == ':') p.erase(0, 2);
  fs::path out = m_root;
  std::string part;
  for (char c : p + "\\") {
    if (c == '\\' || c == '/') {
      if (!part.empty()) out /= part;
      part.clear();
    } else {
      part += c;
    }
  }
  return out;
}

void WindowsTree::dir(std::string_view windows_path) const { fs::create_directories(local(windows_path)); }

void WindowsTree::file(std::string_view windows_path, const std::string& content) const { write_file(local(windows_path), content); }

void WindowsTree::pe(std::string_view windows_path, std::uint16_t machine) const {
  std::string image(0x80 + 8, '\0');
  image[0] = 'M';
  image[1] = 'Z';
  image[0x3C] = static_cast<char>(0x80);
  image.replace(0x80, 4, std::string("PE\0\0", 4));
  image[0x84] = static_cast<char>(machine & 0xFF);
  image[0x85] = static_cast<char>(machine >> 8);
  write_file(local(windows_path), image);
}

void WindowsTree::windows(bool vc_runtime) const {
  dir("C:\\Windows\\System32");
  dir("C:\\Windows\\System");
  file("C:\\Windows\\System32\\kernel32.dll");
  if (vc_runtime)
    for (const char* dll : {"msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"})
      pe(std::string("C:\\Windows\\System32\\") + dll, 0x8664);
}

std::string WindowsTree::cuda(const std::string& xy, bool x64) const {
  std::string root = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v" + xy;
  std::string major = xy.substr(0, xy.find('.'));
  std::string cudart = major == "11" ? "cudart64_110.dll" : "cudart64_" + major + ".dll";
  file(root + "\\bin\\nvcc.exe");
  if (x64) {
    file(root + "\\bin\\x64\\" + cudart);
    return root + "\\bin\\x64";
  }
  file(root + "\\bin\\" + cudart);
  return root + "\\bin";
}

std::string WindowsTree::cudnn(const std::string& root, const std::string& version, const std::vector<std::string>& dlls,
                               const std::string& bin, bool header) const {
  std::string bin_dir = root + "\\" + bin;
  // DLLs that name themselves (their export directory) and, for cudnn_graph, their release, as
  // NVIDIA's do
  for (const auto& d : dlls) {
    std::string lower = d;
    for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const bool graph = lower.starts_with("cudnn_graph64_");
    const std::string rodata = graph ? fixtures::cudnn_library_rodata("libcudnn_graph", version + ".0") : "";
    file(bin_dir + "\\" + d, fixtures::pe_library(d, {}, rodata, 0));
  }
  if (header) file(root + "\\include\\cudnn_version.h", cudnn_version_header(version));
  return bin_dir;
}

std::string cudnn_version_header(const std::string& version) {
  auto a = version.find('.');
  auto b = version.find('.', a + 1);
  if (a == std::string::npos || b == std::string::npos) throw std::invalid_argument("three-part version expected: " + version);
  return "/* test fixture, not NVIDIA's header */\n#define CUDNN_MAJOR " + version.substr(0, a) + "\n#define CUDNN_MINOR " +
         version.substr(a + 1, b - a - 1) + "\n#define CUDNN_PATCHLEVEL " + version.substr(b + 1) +
         "\n#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n";
}

}  // namespace testing_support
