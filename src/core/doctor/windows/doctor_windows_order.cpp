// Order on PATH. Toolkits of one CUDA major ship DLLs of the same names (cudart64_12.dll,
// cublas64_12.dll), so the first such bin directory on PATH decides which toolkit a program gets:
// the manifest's must come first (another major's toolkit first only matters for programs and
// cuDNN copies found there, a warning). The cuDNN directory must come before every CUDA bin,
// since a cuda-merge copy or an installer may put another cudnn64_N.dll there. Windows builds a
// process PATH as the machine value followed by the user's, so a User-scope cuDNN entry can never
// precede the CUDA installer's machine entries. Python 3.8+ ignores PATH for extension modules:
// only os.add_dll_directory (or python.exe's directory and System32) can bring cuDNN in.
#include <algorithm>

#include "core/windows/windows_search.hpp"
#include "doctor/windows/doctor_windows_rules.hpp"
#include "model/contracts.hpp"
#include "util/strings.hpp"

namespace core::winrules {

using model::Severity;

namespace {

bool ends_with_nocase(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && names_equal_nocase(std::string_view(s).substr(s.size() - tail.size()), tail);
}

std::string cuda_major_of(const std::string& xy) { return xy.substr(0, xy.find('.')); }

std::string where(const model::SearchDir& d) { return d.windows_path + " (" + d.why + ")"; }

}  // namespace

void cuda_bin_order(Ctx& c) {
  const auto& dirs = c.view.desktop.dirs;
  std::vector<int> bins;
  for (std::size_t i = 0; i < dirs.size(); ++i)
    if (dirs[i].searched && !dirs[i].cuda_version.empty() &&
        (dirs[i].source == model::SearchSource::path || dirs[i].source == model::SearchSource::user_path))
      bins.push_back(static_cast<int>(i));

  if (c.cuda) {
    std::string want = c.cuda->prefix(2);
    // CUDA 13 keeps its DLLs in bin\x64, Windows on Arm's toolkit in bin\arm64
    // the manifest's architecture when it has [targets.windows], else the machine's
    const bool arm = !c.exp.windows_arch.empty() ? c.exp.windows_arch == "arm64" : c.view.machine == "arm64";
    bool x64 = c.cuda->major() >= 13 || arm;
    std::string tail = arm ? "\\bin\\arm64" : x64 ? "\\bin\\x64" : "\\bin";
    auto wanted = [&](int i) { return dirs[i].cuda_version == want && ends_with_nocase(dirs[i].windows_path, tail); };
    auto it = std::find_if(bins.begin(), bins.end(), wanted);
    std::string subject = "CUDA " + want + tail;
    std::string root = c.exp.windows_cuda_path.empty() ? "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v" + want
                                                       : normalize_windows_path(c.exp.windows_cuda_path);
    if (it == bins.end()) {
      auto& f = c.add("windows.cuda-bin-order", Severity::warning, subject);
      bool bin_only = x64 && std::any_of(bins.begin(), bins.end(), [&](int i) { return dirs[i].cuda_version == want; });
      f.seen = bin_only ? "CUDA " + want + "'s bin is on PATH, but " + (arm ? "Windows on Arm's toolkit" : std::string("CUDA 13")) +
                              " keeps its DLLs in " + tail.substr(1) + ", which is not"
                        : "no bin directory of CUDA " + want + " on PATH";
      f.expected = root + tail + " on PATH, before every other CUDA toolkit's";
      f.fix = "add " + root + tail + " to PATH (the CUDA installer's entry), after the cuDNN directory";
    } else if (it != bins.begin()) {
      const auto& first = dirs[bins.front()];
      bool same_major = cuda_major_of(first.cuda_version) == cuda_major_of(want);
      auto& f = c.add("windows.cuda-bin-order", same_major ? Severity::error : Severity::warning, subject);
      f.seen = "CUDA " + first.cuda_version + " " + where(first) + " comes before CUDA " + want + " " + where(dirs[*it]);
      if (same_major)
        f.seen += "; toolkits of one major ship DLLs of the same names (cudart64_" + cuda_major_of(want) + ".dll), so programs get " +
                  first.cuda_version + "'s";
      else
        f.seen += "; its DLLs have other names, but its programs and any cuDNN copied into it come first";
      f.expected = "CUDA " + want + " first among the CUDA directories on PATH";
      f.fix = "move " + dirs[*it].windows_path + " before " + first.windows_path + " in PATH, or take the other toolkit out";
    } else {
      auto& f = c.add("windows.cuda-bin-order", Severity::ok, subject);
      f.seen = dirs[*it].windows_path + " comes first among " + std::to_string(bins.size()) + " CUDA bin director" +
               (bins.size() == 1 ? "y" : "ies") + " on PATH";
    }
  } else if (bins.size() > 1) {
    std::vector<std::string> order;
    for (int i : bins) order.push_back("CUDA " + dirs[i].cuda_version + " (" + dirs[i].windows_path + ")");
    auto& f = c.add("windows.cuda-bin-order", Severity::note, "CUDA bin directories");
    f.seen = "several toolkits on PATH, in this order: " + util::join(order, ", ");
    f.fix = "programs get the first toolkit of each major; pass --manifest to have doctor judge the order against the pinned CUDA";
  }

  // the cuDNN directory before every CUDA bin directory
  if (c.cudnn_dir.empty()) return;
  int p = position(c.view.desktop, c.cudnn_dir);
  if (p < 0 || bins.empty()) return;
  bool any = false;
  for (int i : bins) {
    if (i >= p) break;
    if (same_windows_path(dirs[i].windows_path, c.cudnn_dir)) continue;
    any = true;
    auto held = cudnn_files_in(dirs[i]);
    auto& f = c.add("windows.cuda-bin-order", held.empty() ? Severity::warning : Severity::error, "cuDNN directory " + c.cudnn_dir);
    f.seen = "CUDA " + dirs[i].cuda_version + " " + where(dirs[i]) + " comes before the cuDNN directory (" + dirs[p].why + ")";
    f.seen += held.empty() ? "; it holds no cuDNN now, but a cuDNN merged into it later (cuda-merge, an installer) would win"
                           : " and holds " + util::join(held, ", ");
    f.expected = c.cudnn_dir + " before every CUDA bin directory";
    f.fix = "put " + c.cudnn_dir + " first on PATH: activate.ps1 -Scope Machine (`stackpin generate activate --shell powershell`)";
    f.source = k_src_search_order;
  }
  if (!any) {
    auto& f = c.add("windows.cuda-bin-order", Severity::ok, "cuDNN directory " + c.cudnn_dir);
    f.seen = "comes before every CUDA bin directory on PATH";
  }
}

void path_scope(Ctx& c) {
  if (!c.view.user_path || c.cudnn_dir.empty()) return;
  const auto& dirs = c.view.desktop.dirs;
  int p = position(c.view.desktop, c.cudnn_dir);
  if (p < 0 || dirs[p].source != model::SearchSource::user_path) return;
  std::vector<std::string> ahead;
  for (int i = 0; i < p; ++i) {
    const auto& d = dirs[i];
    if (!d.searched || d.source != model::SearchSource::path) continue;
    auto held = cudnn_files_in(d);
    if (!d.cuda_version.empty())
      ahead.push_back("CUDA " + d.cuda_version + " " + d.windows_path);
    else if (!held.empty())
      ahead.push_back(d.windows_path + " (" + util::join(held, ", ") + ")");
  }
  if (ahead.empty()) return;
  auto& f = c.add("windows.path-scope", Severity::warning, "cuDNN directory " + c.cudnn_dir);
  f.seen = "it is a User PATH entry (" + dirs[p].why +
           "); Windows builds PATH as the machine entries followed by the user's, so "
           "these machine entries come first: " +
           util::join(ahead, "; ");
  f.expected = c.cudnn_dir + " in the machine PATH, ahead of the CUDA installer's entries";
  f.fix = "move it into the machine PATH: activate.ps1 -Scope Machine (administrator); no User-scope change can come first";
  f.source = k_src_search_order;
}

void python_dirs(Ctx& c) {
  if (!c.view.python_order) return;
  auto& po = *c.view.python_order;
  std::vector<std::string> searched;
  for (const auto& d : po.dirs)
    if (d.searched) searched.push_back(d.windows_path);
  std::string subject = "Python " + c.view.python;
  std::string fix_dir = c.cudnn_dir.empty() ? std::string("<cuDNN>\\bin") : c.cudnn_dir;
  std::string fix = "before importing, call os.add_dll_directory(r'" + fix_dir +
                    "'), or put a .pth file holding "
                    "`import os; os.add_dll_directory(r'" +
                    fix_dir +
                    "')` into the environment's site-packages "
                    "(activate.ps1 prints it); a framework that brings its own cuDNN (PyTorch's wheels) loads that one instead";
  for (int major : c.majors) {
    std::string name = model::cudnn_library_name(major, true);
    auto l = find_dll(po, name, "cuDNN " + std::to_string(major) + " for Python extension modules");
    bool pinned_major = c.pinned && static_cast<int>(c.pinned->major()) == major;
    if (l.copies.empty()) {
      auto& f = c.add("windows.python-dll-dirs", pinned_major || !c.pinned ? Severity::error : Severity::note, subject);
      f.seen = "Python 3.8+ does not search PATH for extension modules' DLLs; none of the directories it searches (" +
               util::join(searched, ", ") + ") holds " + name;
      if (!c.cudnn_dir.empty()) f.seen += "; cuDNN is in " + c.cudnn_dir;
      f.expected = (c.cudnn_dir.empty() ? std::string("the cuDNN directory") : c.cudnn_dir) + " among the directories Python searches";
      f.fix = fix;
      f.source = k_src_python;
    } else {
      const auto& w = l.copies.front();
      auto v = full_version(w);
      bool right_dir = !c.cudnn_dir.empty() && same_windows_path(dir_of(w.windows_path), c.cudnn_dir);
      bool wrong_version = pinned_major && v && model::compare_prefix(*v, *c.pinned, 3) != 0;
      bool ok = !wrong_version && (right_dir || (pinned_major && v));
      auto& f = c.add("windows.python-dll-dirs", ok ? Severity::ok : Severity::error, subject);
      f.seen = "Python finds " + describe(w) + " (" + po.dirs[w.dir].why + ")";
      if (!ok) {
        f.expected = (pinned_major ? "cuDNN " + c.pinned->prefix(3) : name) + " from " + fix_dir;
        f.fix = "take that copy out of " + po.dirs[w.dir].windows_path + "; " + fix;
        f.source = k_src_python;
      }
    }
    po.dlls.push_back(std::move(l));
  }
}

}  // namespace core::winrules
