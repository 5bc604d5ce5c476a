// Conda environments on a Windows tree, and the cuDNN each carries. Conda's Python 3.8+ adds the
// environment's Library\bin to the DLL directories extension modules are loaded with (conda's
// CONDA_DLL_SEARCH_MODIFICATION, on by default), and `conda activate` puts it at the front of
// PATH: a cudnn64_N.dll there (conda-forge's cudnn package, or one a framework's package pulled
// in) is what that environment's Python loads, before the staged tree that activate.ps1 put first
// on PATH. The other way round, a program of the environment started without `conda activate`
// gets the staged cuDNN when its directory comes first on PATH, though the environment's packages
// were built against their own. Environments are looked for where the installers put them
// (%USERPROFILE%\{miniconda3,anaconda3,miniforge3,mambaforge} and their envs\, the same under
// C:\ProgramData and C:\tools) and where --python points; an environment is a directory with a
// conda-meta\ folder.
#include <algorithm>
#include <regex>
#include <set>
#include <system_error>

#include "core/windows/windows_search.hpp"
#include "doctor/windows/doctor_windows_rules.hpp"
#include "util/strings.hpp"

namespace core::winrules {

namespace fs = std::filesystem;
using model::Severity;

namespace {

const char* const k_distributions[] = {"miniconda3", "anaconda3", "miniforge3", "mambaforge", "micromamba"};

struct Env {
  std::string windows_path;  // C:\Users\u\miniconda3\envs\ml
  fs::path local;
  std::string name;  // "ml", or "base"
};

bool is_env(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir / "conda-meta", ec);
}

void add_env(std::vector<Env>& out, const WindowsTree& tree, const std::string& windows_path, const std::string& name) {
  auto m = map_windows_path(tree, windows_path);
  if (!m.exists || !is_env(m.local_path)) return;
  for (const auto& e : out)
    if (same_windows_path(e.windows_path, m.windows_path)) return;
  out.push_back({m.windows_path, m.local_path, name});
}

void add_distribution(std::vector<Env>& out, const WindowsTree& tree, const std::string& root) {
  auto m = map_windows_path(tree, root);
  if (!m.exists) return;
  add_env(out, tree, m.windows_path, "base");
  std::error_code ec;
  auto envs = find_child_nocase(m.local_path, "envs");
  if (!envs) return;
  std::vector<std::string> names;
  for (fs::directory_iterator it(*envs, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec)) names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  for (const auto& n : names) add_env(out, tree, m.windows_path + "\\envs\\" + n, n);
}

std::vector<Env> find_envs(const WindowsTree& tree, const std::string& python) {
  std::vector<Env> out;
  if (!python.empty()) {
    std::string dir = dir_of(normalize_windows_path(python));
    add_env(out, tree, dir, "the --python environment");
  }
  std::vector<std::string> bases;
  auto users = map_windows_path(tree, "C:\\Users");
  std::error_code ec;
  if (users.exists) {
    std::vector<std::string> names;
    for (fs::directory_iterator it(users.local_path, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_directory(ec)) names.push_back(it->path().filename().string());
    std::sort(names.begin(), names.end());
    for (const auto& u : names) bases.push_back("C:\\Users\\" + u);
  }
  bases.push_back("C:\\ProgramData");
  bases.push_back("C:\\tools");
  for (const auto& b : bases)
    for (const char* d : k_distributions) add_distribution(out, tree, b + "\\" + d);
  return out;
}

// The cuDNN of an environment: its DLLs in Library\bin and the version its cudnn_version.h
// (Library\include) or its conda-meta record says.
struct EnvCudnn {
  std::vector<std::string> dlls;
  std::string version, version_from;
};

EnvCudnn cudnn_of(const Env& e) {
  EnvCudnn c;
  std::error_code ec;
  auto lib = find_child_nocase(e.local, "Library");
  auto bin = lib ? find_child_nocase(*lib, "bin") : std::nullopt;
  if (!bin) return c;
  for (fs::directory_iterator it(*bin, ec), end; !ec && it != end; it.increment(ec)) {
    std::string n = util::to_lower(it->path().filename().string());
    if (n.rfind("cudnn", 0) == 0 && n.size() > 4 && n.compare(n.size() - 4, 4, ".dll") == 0) c.dlls.push_back(n);
  }
  std::sort(c.dlls.begin(), c.dlls.end());
  if (c.dlls.empty()) return c;
  auto inc = find_child_nocase(*lib, "include");
  auto header = inc ? find_child_nocase(*inc, "cudnn_version.h") : std::nullopt;
  if (header)
    if (auto v = read_cudnn_header_version(*header)) {
      c.version = v->text();
      c.version_from = e.windows_path + "\\Library\\include\\cudnn_version.h";
      return c;
    }
  static const std::regex k_record(R"(^cudnn-([0-9]+\.[0-9]+\.[0-9]+(\.[0-9]+)?)-.*\.json$)", std::regex::icase);
  std::vector<std::string> records;
  for (fs::directory_iterator it(e.local / "conda-meta", ec), end; !ec && it != end; it.increment(ec))
    records.push_back(it->path().filename().string());
  std::sort(records.begin(), records.end());
  for (const auto& r : records) {
    std::smatch m;
    if (std::regex_match(r, m, k_record)) {
      c.version = m[1].str();
      c.version_from = e.windows_path + "\\conda-meta\\" + r;
      break;
    }
  }
  return c;
}

}  // namespace

void conda_envs(Ctx& c, const WindowsTree& tree, const std::string& python) {
  const std::string staged = c.cudnn_dir.empty() ? c.exp.windows_cudnn_dir : c.cudnn_dir;
  for (const auto& e : find_envs(tree, python)) {
    auto cu = cudnn_of(e);
    if (cu.dlls.empty()) continue;
    std::string bin = e.windows_path + "\\Library\\bin";
    auto v = model::Version::parse(cu.version);
    bool same = c.pinned && v && model::compare_prefix(*v, *c.pinned, 3) == 0;
    std::string what = "cuDNN " + (cu.version.empty() ? std::string("(version unknown)") : cu.version) + " (" + cu.dlls.front() +
                       (cu.version_from.empty() ? "" : ", version from " + cu.version_from) + ")";
    if (same || (!c.pinned && staged.empty())) {
      auto& f = c.add("windows.conda-cudnn", Severity::note, "conda environment " + e.name + " (" + e.windows_path + ")");
      f.seen = what + " in " + bin;
      f.expected = c.pinned ? "cuDNN " + c.pinned->prefix(3) : "";
      f.fix = same ? "the same cuDNN as the manifest: nothing to do" : "pin it in a manifest to have doctor judge it";
      f.source = k_src_python;
      continue;
    }
    // the environment's Python loads its own cuDNN before the staged one
    auto& f = c.add("windows.conda-cudnn", c.pinned ? Severity::warning : Severity::note,
                    "conda environment " + e.name + " (" + e.windows_path + ")");
    f.seen = "its Python loads " + what + " from " + bin +
             ": conda's Python searches Library\\bin for extension modules' DLLs, ahead of PATH" +
             (staged.empty() ? std::string() : " and of the staged " + staged);
    f.expected = c.pinned ? "cuDNN " + c.pinned->prefix(3) + (staged.empty() ? "" : " from " + staged) : "";
    f.fix =
        "in that environment remove conda's cuDNN (conda remove cudnn, unless a package needs it) and call "
        "os.add_dll_directory for the staged tree, or pin cuDNN " +
        (cu.version.empty() ? std::string("X") : cu.version) +
        " in the manifest so both agree (stackpin generate conda writes such an environment)";
    f.source = k_src_python;
    // the other way round: the staged tree first on PATH shadows the environment's own cuDNN for
    // its programs started without `conda activate`
    int ours = position(c.view.desktop, staged), theirs = position(c.view.desktop, bin);
    if (ours >= 0 && theirs > ours) {
      auto& g = c.add("windows.conda-cudnn-shadowed", Severity::warning, "conda environment " + e.name + " (" + bin + ")");
      g.seen = "PATH puts the staged " + staged + " (" + c.view.desktop.dirs[static_cast<std::size_t>(ours)].why + ") before " + bin +
               " (" + c.view.desktop.dirs[static_cast<std::size_t>(theirs)].why +
               "): programs of that environment started without "
               "`conda activate` get the staged cuDNN, not the " +
               what + " its packages were built against";
      g.fix = "start them from an activated environment (conda activate " + e.name + "), or make the environment's cuDNN the pinned one";
      g.source = k_src_search_order;
    }
  }
}

}  // namespace core::winrules
