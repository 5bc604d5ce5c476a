// Windows path mapping and the DLL search order on arbitrary PATH values, directories and DLL
// names, against a small fake C:\ tree: normalizing is idempotent, a path equals itself, a mapped
// path never leaves the tree it is mapped onto, and every DLL found lies in a searched directory.
#include <map>
#include <string>
#include <vector>

#include "core/windows/windows_search.hpp"
#include "fuzz_support.hpp"
#include "util/strings.hpp"

namespace {
namespace fs = std::filesystem;

struct Tree {
  fs::path root;
  core::WindowsTree tree;
  Tree() {
    root = fuzz::scratch_root() / "c-drive";
    for (const char* f : {"Windows/System32/cudnn64_8.dll", "Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.1/bin/cudart64_12.dll",
                          "Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.1/bin/cudnn64_8.dll", "tools/cudnn/v8.8.0/bin/cudnn64_8.dll",
                          "tools/cudnn/v8.8.0/include/cudnn_version.h", "Python311/python.exe"}) {
      fs::create_directories((root / f).parent_path());
      fuzz::write_file(root / f, "MZ");
    }
    tree.drives['C'] = root;
    tree.vars = core::windows_default_vars();
  }
};

bool inside(const fs::path& p, const fs::path& root) {
  auto rel = p.lexically_normal().lexically_relative(root.lexically_normal()).generic_string();
  return !rel.empty() && rel.rfind("..", 0) != 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Tree t;
  auto parts = util::split(fuzz::as_text(data, size), '\n');
  while (parts.size() < 4) parts.emplace_back();
  const std::string& path_value = parts[0];
  const std::string& dir = parts[1];
  const std::string& cwd = parts[2];
  const std::string& dll = parts[3];

  std::string n = core::normalize_windows_path(dir);
  FUZZ_CHECK(core::normalize_windows_path(n) == n, "normalize is not idempotent: \"" + dir + "\" -> \"" + n + "\"");
  FUZZ_CHECK(n.empty() || core::same_windows_path(dir, dir), "a path differs from itself: " + dir);
  FUZZ_CHECK(core::names_equal_nocase(dll, dll), "a name differs from itself");

  auto entries = core::parse_windows_path_list(path_value, t.tree.vars);
  for (const auto& e : entries) FUZZ_CHECK(e.index >= 1, "a PATH entry without its position");

  auto mapped = core::map_windows_path(t.tree, dir, cwd);
  if (!mapped.local_path.empty() && mapped.exists)
    FUZZ_CHECK(inside(mapped.local_path, t.root) || fs::path(mapped.local_path) == t.root,
               "\"" + dir + "\" mapped outside the tree: " + mapped.local_path);

  core::SearchInputs in;
  in.path = path_value;
  in.app_dir = dir;
  in.cwd = cwd;
  in.dll_dirs = {cwd};
  in.cuda_path = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.1";
  in.cuda_version = "12.1";
  for (const auto& order : {core::desktop_search_order(t.tree, in), core::python_search_order(t.tree, in)}) {
    auto found = core::find_dll(order, dll.empty() ? "cudnn64_8.dll" : dll, "fuzz");
    (void)found;
    (void)core::dll_names_in_order(order, "cudnn", ".dll");
  }
  return 0;
}
