// capture of a Windows machine mounted at a directory (from WSL2: /mnt/c). The cuDNN that runs is
// the first cudnn64_N.dll of the DLL search order for the PATH given (the process's, or the
// registry's Machine and User values), so that is what the manifest pins, as on Linux the
// loader's winner is. Its tree tells the layout: a DLL in a CUDA toolkit's bin\ (bin\x64\) is a
// cuda-merge into that toolkit, any other an isolated prefix. The build comes from stackpin's
// receipt in the tree when it was staged, else from the knowledge base when that X.Y.Z has one
// Windows build; the CUDA release from the toolkit's version.json (what NVIDIA's installer
// writes); the frameworks from the package metadata of --python's site-packages. The driver is not
// on the disk in a form stackpin reads: the note says how to add it.
#include <algorithm>
#include <set>
#include <system_error>

#include "core/capture/capture.hpp"

#include "capture/capture_pins.hpp"
#include "core/windows/windows_path_rule.hpp"
#include "core/windows/windows_search.hpp"
#include "format/json.hpp"
#include "format/receipt.hpp"
#include "model/contracts.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

namespace {

std::string parent_dir(const std::string& windows_path) {
  auto pos = windows_path.rfind('\\');
  if (pos == std::string::npos || pos < 2) return windows_path;
  return windows_path.substr(0, pos == 2 ? 3 : pos);
}

bool ends_with_nocase(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && util::to_lower(s.substr(s.size() - tail.size())) == util::to_lower(tail);
}

// "12.1.1" from a toolkit root's version.json ({"cuda": {"version": ...}}); "" when absent.
std::string toolkit_release(const WindowsTree& tree, const std::string& root) {
  auto m = map_windows_path(tree, root);
  if (!m.exists) return "";
  auto file = find_child_nocase(m.local_path, "version.json");
  if (!file) return "";
  auto text = util::read_file(*file);
  if (!text || text->size() > (1u << 20)) return "";
  auto v = format::json_string_at(*text, {"cuda", "version"});
  return v && *v ? **v : "";
}

// The Windows machine as capture sees it: its tree and the DLL search order of its PATH.
struct WindowsMachine {
  WindowsTree tree;
  model::SearchOrder order;
};

util::Result<WindowsMachine> open_machine(const WindowsDoctorOptions& o) {
  std::error_code ec;
  if (!fs::is_directory(o.root, ec))
    return Error(ErrorCode::usage, "--windows-root " + o.root.string() + ": no such directory")
        .with_hint("give the directory C:\\ is mounted at (from WSL2: /mnt/c)");
  WindowsMachine w;
  w.tree.drives['C'] = o.root;
  for (const auto& [letter, dir] : o.drives) w.tree.drives[static_cast<char>(std::toupper(static_cast<unsigned char>(letter)))] = dir;
  w.tree.vars = windows_default_vars(o.env);
  SearchInputs in;
  in.path = o.path;
  in.user_path = o.user_path;
  if (!o.python.empty()) in.app_dir = parent_dir(normalize_windows_path(o.python));
  w.order = desktop_search_order(w.tree, in);
  return w;
}

// The cuDNN that runs: the highest major whose DLL the order finds (the others are noted).
util::Result<model::DllCopy> running_cudnn(const WindowsMachine& w, const WindowsDoctorOptions& o, Capture& cap) {
  std::optional<model::DllCopy> winner;
  for (int major : {9, 8, 7}) {
    auto l = find_dll(w.order, model::cudnn_library_name(major, true), "capture");
    if (!l.winner()) continue;
    if (!winner)
      winner = *l.winner();
    else
      cap.notes.push_back("also on the search path, not pinned: " + l.winner()->windows_path);
  }
  if (!winner)
    return Error(ErrorCode::not_found,
                 "no cudnn64_N.dll in the DLL search order of " + o.root.string() +
                     (o.path.empty() ? " (no --path given: only System32 and the Windows directory were searched)" : ""))
        .with_hint("give that machine's PATH with --path (there, in PowerShell: [Environment]::GetEnvironmentVariable('Path', 'Machine'))");
  return *winner;
}

// The tree around that DLL: its root, whether it was merged into a CUDA toolkit's bin, the
// version its cudnn_version.h says, and stackpin's receipt when it was staged.
struct CudnnTree {
  std::string root;
  bool merged = false;
  model::Version three;
  std::optional<model::Receipt> receipt;
};

util::Result<CudnnTree> tree_of(const WindowsMachine& w, const model::DllCopy& winner) {
  std::error_code ec;
  CudnnTree t;
  const std::string dll_dir = parent_dir(winner.windows_path);
  t.root = dll_dir;
  if (ends_with_nocase(t.root, "\\bin\\x64") || ends_with_nocase(t.root, "\\bin\\arm64"))
    t.root = parent_dir(parent_dir(t.root));
  else if (ends_with_nocase(t.root, "\\bin"))
    t.root = parent_dir(t.root);
  std::vector<std::string> names;
  auto mapped = map_windows_path(w.tree, dll_dir);
  for (fs::directory_iterator it(mapped.local_path, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(util::to_lower(it->path().filename().string()));
  t.merged = classify_dir(names) == PathEntryKind::toolkit_with_cudnn;
  auto root_local = map_windows_path(w.tree, t.root);
  std::optional<model::Version> three;
  if (root_local.exists)
    if (auto inc = find_child_nocase(root_local.local_path, "include"))
      if (auto h = find_child_nocase(*inc, "cudnn_version.h")) three = read_cudnn_header_version(*h);
  if (!three)
    return Error(ErrorCode::invalid,
                 "the version of " + winner.windows_path + " cannot be told: no " + t.root + "\\include\\cudnn_version.h")
        .with_hint("a half-copied tree: copy include\\ with the DLLs, or pin the version by hand");
  t.three = *three;
  if (root_local.exists)
    if (auto sp = find_child_nocase(root_local.local_path, ".stackpin"))
      if (auto rf = find_child_nocase(*sp, "receipt.json"))
        if (auto text = util::read_file(*rf); text && text->size() < (16u << 20))
          if (auto r = format::parse_receipt(*text, rf->string())) {
            auto v = model::Version::parse(r->cudnn_version);
            if (v && model::compare_prefix(*v, t.three, 3) == 0) t.receipt = *r;
          }
  return t;
}

// The CUDA toolkit: the one merged into, else the first toolkit bin on the search path; its
// release from version.json.
struct Toolkit {
  std::string root, release;
};

Toolkit toolkit_of(const WindowsMachine& w, const CudnnTree& t) {
  Toolkit k;
  if (t.merged) {
    k.root = t.root;
  } else {
    for (const auto& d : w.order.dirs)
      if (d.searched && !d.cuda_version.empty()) {
        const bool arch_dir = ends_with_nocase(d.windows_path, "\\bin\\x64") || ends_with_nocase(d.windows_path, "\\bin\\arm64");
        k.root = arch_dir ? parent_dir(parent_dir(d.windows_path)) : parent_dir(d.windows_path);
        break;
      }
  }
  if (!k.root.empty()) k.release = toolkit_release(w.tree, k.root);
  return k;
}

// The frameworks of --python's environment, from package metadata (its Lib\site-packages).
std::vector<std::pair<std::string, std::string>> frameworks_beside(const WindowsMachine& w, const std::string& python) {
  std::vector<std::pair<std::string, std::string>> out;
  std::error_code ec;
  auto env = map_windows_path(w.tree, parent_dir(normalize_windows_path(python)));
  std::optional<fs::path> site;
  if (env.exists)
    if (auto lib = find_child_nocase(env.local_path, "Lib")) site = find_child_nocase(*lib, "site-packages");
  static const std::vector<std::string> k_frameworks = {"torch", "torchvision", "torchaudio", "tensorflow", "onnxruntime_gpu"};
  std::vector<std::string> dist;
  if (site)
    for (fs::directory_iterator it(*site, ec), end; !ec && it != end; it.increment(ec)) dist.push_back(it->path().filename().string());
  std::sort(dist.begin(), dist.end());
  for (const auto& d : dist) {
    if (!ends_with_nocase(d, ".dist-info")) continue;
    auto dash = d.find('-');
    if (dash == std::string::npos) continue;
    std::string name = util::to_lower(d.substr(0, dash));
    if (std::find(k_frameworks.begin(), k_frameworks.end(), name) == k_frameworks.end()) continue;
    std::string version = d.substr(dash + 1, d.size() - dash - 1 - 10);
    version = version.substr(0, version.find('+'));
    if (name == "onnxruntime_gpu") name = "onnxruntime-gpu";
    if (model::Version::parse(version)) out.emplace_back(name, version);
  }
  return out;
}

}  // namespace

util::Result<Capture> capture_windows(const WindowsDoctorOptions& o, const knowledge::KnowledgeBase& embedded, const CaptureOptions& co) {
  Capture cap;
  std::optional<knowledge::KnowledgeBase> own;  // the knowledge with NVIDIA's manifest of a release it lacks
  auto& s = cap.spec;
  SP_TRY_ASSIGN(auto machine, open_machine(o));
  SP_TRY_ASSIGN(auto winner, running_cudnn(machine, o, cap));
  SP_TRY_ASSIGN(auto tree, tree_of(machine, winner));
  auto toolkit = toolkit_of(machine, tree);
  int cuda_major = tree.receipt ? tree.receipt->cudnn_cuda_major : 0;
  if (!cuda_major)
    if (auto v = model::Version::parse(toolkit.release)) cuda_major = static_cast<int>(v->major());

  // the archive's platform: the machine the winning DLL was built for (Windows on Arm: arm64)
  const model::Platform platform = winner.machine == "arm64" ? model::Platform::windows_arm64 : model::Platform::windows_x86_64;
  const knowledge::KnowledgeBase& kb =
      tree.receipt ? embedded : detail::knowledge_for(embedded, tree.three, platform, cuda_major, co, own, cap);
  model::Version cudnn = tree.three;
  std::string cudnn_from;
  if (tree.receipt) {
    cudnn = *model::Version::parse(tree.receipt->cudnn_version);
    cudnn_from = "stackpin's receipt in " + tree.root + "\\.stackpin";
  } else {
    // 8.9.5.29 is the CUDA 11 build of 8.9.5, 8.9.5.30 the CUDA 12 one: the toolkit's major chooses
    SP_TRY_ASSIGN(cudnn, detail::with_notes(detail::only_build(kb, tree.three, platform, cuda_major, tree.root), cap));
    cudnn_from = "the only " + std::string(model::to_string(platform)) + " build of cuDNN " + tree.three.text() +
                 (cuda_major ? " for CUDA " + std::to_string(cuda_major) : "") + " NVIDIA published (" +
                 detail::facts_from(kb, tree.three) + ")";
  }

  s.name = co.name.empty() ? detail::safe_name("captured-windows-cudnn" + tree.three.text()) : co.name;
  s.description = "Captured by stackpin capture from the Windows tree at " + o.root.string();
  s.header = {"Written by `stackpin capture --windows-root`: a Windows machine's GPU stack, for a teammate to reproduce",
              "with `stackpin apply --target windows` (or stage). Check it with `stackpin check`."};
  if (!toolkit.release.empty()) {
    s.cuda = toolkit.release;
    s.cuda_comment = "the CUDA toolkit at " + toolkit.root + " (its version.json)";
  } else {
    cap.notes.push_back(toolkit.root.empty() ? "no CUDA toolkit on the search path: [cuda] left out"
                                             : "no version.json in " + toolkit.root + ": [cuda] left out (add version = \"X.Y.Z\")");
  }
  cap.notes.push_back(
      "the driver cannot be read from a mounted disk: add [driver] windows = \"<version>\" from nvidia-smi on that machine");
  s.cudnn = cudnn.text();
  s.cudnn_cuda = cuda_major;
  if (!cuda_major) cap.notes.push_back("the CUDA major cuDNN was built for cannot be told: add cuda = <major> to [cudnn]");
  s.cudnn_comment = "the cuDNN the DLL search order finds first: " + winner.windows_path + "; build from " + cudnn_from;
  detail::add_archive_pin(cap, kb, tree.receipt, cudnn, cuda_major, platform, tree.root + "\\.stackpin\\receipt.json");
  if (!o.python.empty()) {
    s.frameworks = frameworks_beside(machine, o.python);
    if (!s.frameworks.empty()) s.frameworks_comment = "installed beside " + o.python + " (package metadata)";
  }
  s.windows_layout = tree.merged ? "cuda-merge" : "isolated";
  if (platform == model::Platform::windows_arm64) s.windows_arch = "arm64";
  if (tree.merged) {
    s.windows_cuda_path = tree.root;
  } else {
    s.windows_prefix = tree.root;
    if (!toolkit.root.empty()) s.windows_cuda_path = toolkit.root;
  }
  s.windows_comment = tree.merged ? "cuDNN was copied into the CUDA toolkit at " + tree.root : "cuDNN's own tree at " + tree.root;
  return cap;
}

}  // namespace core
