// The PATH rule. Which cuDNN a Windows program loads is decided by the first directory in its
// search order holding the DLL, so activation puts this cuDNN's directory first. Entries that are
// other cuDNN trees (cuDNN DLLs and nothing of a CUDA toolkit) are taken out: left in, they are
// the "wrong cudnn64_8.dll found" of the seeds for any program that looks past the first entry
// (a missing sub-library falls through to them). A CUDA toolkit's bin\ that holds a stale cuDNN
// DLL (an earlier manual copy: cudnn64_7.dll in CUDA\v11.8\bin) is never taken out, since it
// holds cudart, cuBLAS and the rest of the toolkit: the stale DLL is reported instead, and
// `stackpin stage --remove-stale` moves it away for a cuda-merge tree. The same directory named
// twice keeps its first place.
#include "core/windows/windows_path_rule.hpp"

#include <algorithm>
#include <system_error>

#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;

const char* to_string(PathEntryKind k) {
  switch (k) {
    case PathEntryKind::ours: return "ours";
    case PathEntryKind::cudnn_only: return "cudnn-only";
    case PathEntryKind::toolkit_with_cudnn: return "toolkit-with-cudnn";
    case PathEntryKind::other: return "other";
  }
  return "other";
}

const std::vector<std::string>& cudnn_dll_patterns() {
  // cudnn64_8.dll, cudnn_ops_infer64_8.dll, cudnn_graph64_9.dll, ...: every DLL of cuDNN 7 to 9
  static const std::vector<std::string> k{"cudnn*64_*.dll"};
  return k;
}

const std::vector<std::string>& toolkit_dll_patterns() {
  // the CUDA runtime and libraries the toolkit's bin\ holds (CUDA 10 to 13), and nvcc
  static const std::vector<std::string> k{"cudart64_*.dll",   "cublas64_*.dll",   "cublaslt64_*.dll", "cufft64_*.dll",   "curand64_*.dll",
                                          "cusolver64_*.dll", "cusparse64_*.dll", "nvrtc64_*.dll",    "nvjitlink_*.dll", "nvcc.exe"};
  return k;
}

bool matches_pattern(std::string_view name, std::string_view pattern) {
  // iterative glob with '*' only, case-insensitive (ASCII)
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  std::size_t n = 0, p = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (p < pattern.size() && lower(pattern[p]) == lower(name[n])) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

PathEntryKind classify_dir(const std::vector<std::string>& names, std::vector<std::string>* cudnn_dlls) {
  bool cudnn = false, toolkit = false;
  for (const auto& n : names) {
    for (const auto& p : cudnn_dll_patterns())
      if (matches_pattern(n, p)) {
        cudnn = true;
        if (cudnn_dlls) cudnn_dlls->push_back(util::to_lower(n));
      }
    for (const auto& p : toolkit_dll_patterns())
      if (matches_pattern(n, p)) toolkit = true;
  }
  if (cudnn_dlls) std::sort(cudnn_dlls->begin(), cudnn_dlls->end());
  if (!cudnn) return PathEntryKind::other;
  return toolkit ? PathEntryKind::toolkit_with_cudnn : PathEntryKind::cudnn_only;
}

PathDecision decide_path(const WindowsTree& tree, std::string_view path_value, const std::vector<std::string>& first_dirs) {
  PathDecision d;
  std::vector<std::string> kept_raw, seen;
  auto is_ours = [&](const std::string& p) {
    return std::any_of(first_dirs.begin(), first_dirs.end(),
                       [&](const std::string& f) { return same_windows_path(p, normalize_windows_path(f)); });
  };
  for (const auto& e : parse_windows_path_list(path_value, tree.vars)) {
    PathEntryDecision x;
    x.raw = e.raw;
    x.windows_path = e.path;
    if (is_ours(e.path)) {
      x.kind = PathEntryKind::ours;
    } else {
      std::vector<std::string> names;
      auto m = map_windows_path(tree, e.path);
      std::error_code ec;
      if (m.exists && e.unexpanded.empty() && !e.quoted)
        for (fs::directory_iterator it(m.local_path, ec), end; !ec && it != end; it.increment(ec)) {
          std::error_code ec2;
          if (it->is_regular_file(ec2)) names.push_back(util::to_lower(it->path().filename().string()));
        }
      x.kind = classify_dir(names, &x.cudnn_dlls);
    }
    x.duplicate = std::any_of(seen.begin(), seen.end(), [&](const std::string& s) { return same_windows_path(s, e.path); });
    seen.push_back(e.path);
    bool drop = x.kind == PathEntryKind::ours || x.kind == PathEntryKind::cudnn_only || x.duplicate;
    if (drop && x.kind != PathEntryKind::ours) d.removed.push_back(e.raw);
    if (!drop) kept_raw.push_back(e.raw);
    if (!drop && x.kind == PathEntryKind::toolkit_with_cudnn)
      for (const auto& dll : x.cudnn_dlls) d.stale.push_back(e.path + "\\" + dll);
    d.entries.push_back(std::move(x));
  }
  d.value = util::join(first_dirs, ";");
  for (const auto& k : kept_raw) d.value += (d.value.empty() ? "" : ";") + k;
  return d;
}

PathDecision decide_path(const WindowsTree& tree, std::string_view path_value, std::string_view cudnn_bin) {
  return decide_path(tree, path_value, std::vector<std::string>{std::string(cudnn_bin)});
}

}  // namespace core
