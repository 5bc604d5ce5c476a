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
#include "core/windows/windows_path_rule.hpp"
#include "core/windows/windows_search.hpp"
#include "format/json.hpp"
#include "format/receipt.hpp"
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

std::string safe_name(std::string s) {
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '-';
  return s;
}

}  // namespace

util::Result<Capture> capture_windows(const WindowsDoctorOptions& o, const knowledge::KnowledgeBase& kb, const CaptureOptions& co) {
  std::error_code ec;
  if (!fs::is_directory(o.root, ec))
    return Error(ErrorCode::usage, "--windows-root " + o.root.string() + ": no such directory")
        .with_hint("give the directory C:\\ is mounted at (from WSL2: /mnt/c)");
  WindowsTree tree;
  tree.drives['C'] = o.root;
  for (const auto& [letter, dir] : o.drives) tree.drives[static_cast<char>(std::toupper(static_cast<unsigned char>(letter)))] = dir;
  tree.vars = windows_default_vars(o.env);
  SearchInputs in;
  in.path = o.path;
  in.user_path = o.user_path;
  if (!o.python.empty()) in.app_dir = parent_dir(normalize_windows_path(o.python));
  auto order = desktop_search_order(tree, in);

  // the cuDNN that runs: the highest major whose DLL the order finds
  std::optional<model::DllCopy> winner;
  std::vector<std::string> others;
  for (int major : {9, 8, 7}) {
    auto l = find_dll(order, "cudnn64_" + std::to_string(major) + ".dll", "capture");
    if (!l.winner()) continue;
    if (!winner) winner = *l.winner();
    else others.push_back(l.winner()->windows_path);
  }
  if (!winner)
    return Error(ErrorCode::not_found, "no cudnn64_N.dll in the DLL search order of " + o.root.string() +
                                           (o.path.empty() ? " (no --path given: only System32 and the Windows directory were searched)" : ""))
        .with_hint("give that machine's PATH with --path (there, in PowerShell: [Environment]::GetEnvironmentVariable('Path', 'Machine'))");
  Capture cap;
  auto& s = cap.spec;
  for (const auto& x : others) cap.notes.push_back("also on the search path, not pinned: " + x);

  const std::string dll_dir = parent_dir(winner->windows_path);
  std::string root = dll_dir;
  if (ends_with_nocase(root, "\\bin\\x64")) root = parent_dir(parent_dir(root));
  else if (ends_with_nocase(root, "\\bin")) root = parent_dir(root);
  // a CUDA toolkit's bin: the tree was merged into it
  std::vector<std::string> names;
  auto mapped = map_windows_path(tree, dll_dir);
  for (fs::directory_iterator it(mapped.local_path, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(util::to_lower(it->path().filename().string()));
  bool merged = classify_dir(names) == PathEntryKind::toolkit_with_cudnn;

  // the version: the header beside the tree, then the build
  auto root_local = map_windows_path(tree, root);
  std::optional<model::Version> three;
  if (root_local.exists)
    if (auto inc = find_child_nocase(root_local.local_path, "include"))
      if (auto h = find_child_nocase(*inc, "cudnn_version.h")) three = read_cudnn_header_version(*h);
  if (!three)
    return Error(ErrorCode::invalid, "the version of " + winner->windows_path + " cannot be told: no " + root + "\\include\\cudnn_version.h")
        .with_hint("a half-copied tree: copy include\\ with the DLLs, or pin the version by hand");

  std::optional<model::Receipt> receipt;
  if (root_local.exists)
    if (auto sp = find_child_nocase(root_local.local_path, ".stackpin"))
      if (auto rf = find_child_nocase(*sp, "receipt.json"))
        if (auto text = util::read_file(*rf); text && text->size() < (16u << 20))
          if (auto r = format::parse_receipt(*text, rf->string()); r && model::Version::parse(r->cudnn_version) &&
                                                                   model::compare_prefix(*model::Version::parse(r->cudnn_version), *three, 3) == 0)
            receipt = *r;

  std::optional<model::Version> cudnn;
  std::string cudnn_from;
  int cuda_major = receipt ? receipt->cudnn_cuda_major : 0;
  // the CUDA toolkit: the merged one, else the first toolkit bin on the search path
  std::string cuda_root, cuda_release;
  if (merged) {
    cuda_root = root;
  } else {
    for (const auto& d : order.dirs)
      if (d.searched && !d.cuda_version.empty()) {
        cuda_root = ends_with_nocase(d.windows_path, "\\bin\\x64") ? parent_dir(parent_dir(d.windows_path)) : parent_dir(d.windows_path);
        break;
      }
  }
  if (!cuda_root.empty()) cuda_release = toolkit_release(tree, cuda_root);
  if (!cuda_major)
    if (auto v = model::Version::parse(cuda_release)) cuda_major = static_cast<int>(v->major());

  if (receipt) {
    cudnn = model::Version::parse(receipt->cudnn_version);
    cudnn_from = "stackpin's receipt in " + root + "\\.stackpin";
  } else {
    // the Windows builds of that X.Y.Z, for the toolkit's CUDA major when one is known (8.9.5.29
    // is the CUDA 11 build of 8.9.5, 8.9.5.30 the CUDA 12 one)
    std::set<std::string> builds;
    for (const auto& a : kb.facts().cudnn_archives)
      if (a.platform == model::Platform::windows_x86_64 && model::compare_prefix(a.version, *three, 3) == 0 &&
          (!cuda_major || a.cuda == cuda_major))
        builds.insert(a.version.text());
    if (builds.size() == 1) {
      cudnn = model::Version::parse(*builds.begin());
      cudnn_from = "the only Windows build of cuDNN " + three->text() + " NVIDIA published (knowledge base)";
    } else if (builds.empty()) {
      return Error(ErrorCode::invalid, "cuDNN " + three->text() + " in " + root + " is not in the knowledge base and no receipt names its build")
          .with_hint("pin it by hand: [cudnn] version = \"" + three->text() + ".<build>\" with the archive you installed it from");
    } else {
      return Error(ErrorCode::invalid, "cuDNN " + three->text() + " in " + root + " has several Windows builds (" +
                                           util::join(std::vector<std::string>(builds.begin(), builds.end()), ", ") + ") and nothing says which")
          .with_hint("the files report only three parts; pin the build you installed by hand");
    }
  }

  s.name = co.name.empty() ? safe_name("captured-windows-cudnn" + three->text()) : co.name;
  s.description = "Captured by stackpin capture from the Windows tree at " + o.root.string();
  s.header = {"Written by `stackpin capture --windows-root`: a Windows machine's GPU stack, for a teammate to reproduce",
              "with `stackpin apply --target windows` (or stage). Check it with `stackpin check`."};
  if (!cuda_release.empty()) {
    s.cuda = cuda_release;
    s.cuda_comment = "the CUDA toolkit at " + cuda_root + " (its version.json)";
  } else {
    cap.notes.push_back(cuda_root.empty() ? "no CUDA toolkit on the search path: [cuda] left out"
                                          : "no version.json in " + cuda_root + ": [cuda] left out (add version = \"X.Y.Z\")");
  }
  cap.notes.push_back("the driver cannot be read from a mounted disk: add [driver] windows = \"<version>\" from nvidia-smi on that machine");
  s.cudnn = cudnn->text();
  s.cudnn_cuda = cuda_major;
  if (!cuda_major) cap.notes.push_back("the CUDA major cuDNN was built for cannot be told: add cuda = <major> to [cudnn]");
  s.cudnn_comment = "the cuDNN the DLL search order finds first: " + winner->windows_path + "; build from " + cudnn_from;

  gen::ManifestArchive a;
  a.platform = model::to_string(model::Platform::windows_x86_64);
  if (receipt && !receipt->archive_sha256.empty()) {
    const auto* known = kb.cudnn_archive_by_sha256(receipt->archive_sha256);
    a.origin = known ? "nvidia" : "local";
    if (known) a.url = known->url;
    a.file = receipt->archive_file.empty() ? "" : util::basename_of(receipt->archive_file);
    a.sha256 = receipt->archive_sha256;
    if (receipt->archive_size) a.size = receipt->archive_size;
    a.comment = "the archive stackpin staged this tree from";
    s.archives.push_back(a);
  } else if (const auto* fact = kb.cudnn_archive(*cudnn, cuda_major, model::Platform::windows_x86_64); fact && fact->size) {
    a.origin = "nvidia";
    a.url = fact->url;
    a.sha256 = fact->sha256;
    a.size = fact->size;
    a.comment = "NVIDIA's archive of this build (knowledge base)";
    s.archives.push_back(a);
  } else {
    cap.notes.push_back("no complete archive pin is known for cuDNN " + cudnn->text() + " on windows-x86_64 (CUDA " + std::to_string(cuda_major) +
                        "): add [[cudnn.archives]] (stackpin lock --redistrib NVIDIA's redistrib JSON fills it)");
  }

  // frameworks of --python's environment, from package metadata
  if (!o.python.empty()) {
    auto env = map_windows_path(tree, parent_dir(normalize_windows_path(o.python)));
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
      if (model::Version::parse(version)) s.frameworks.emplace_back(name, version);
    }
    if (!s.frameworks.empty()) s.frameworks_comment = "installed beside " + o.python + " (package metadata)";
  }

  s.windows_layout = merged ? "cuda-merge" : "isolated";
  if (merged) s.windows_cuda_path = root;
  else {
    s.windows_prefix = root;
    if (!cuda_root.empty()) s.windows_cuda_path = cuda_root;
  }
  s.windows_comment = merged ? "cuDNN was copied into the CUDA toolkit at " + root : "cuDNN's own tree at " + root;
  return cap;
}

}  // namespace core
