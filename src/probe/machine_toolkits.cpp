// CUDA toolkits: found under /usr/local/cuda*, /opt/cuda*, CUDA_HOME / CUDA_PATH / CUDA_ROOT and
// the nvcc first on PATH, each once (by its resolved directory). The version comes from the
// toolkit's own records, most exact first: version.json (CUDA 11.1+ runfile and packages),
// version.txt (older), the dist-info of NVIDIA's nvidia-cuda-runtime wheel (a toolkit assembled
// from pip wheels, which has neither), and last cuda.h's CUDA_VERSION (major.minor only).
#include <algorithm>
#include <regex>

#include "format/json.hpp"
#include "machine_internal.hpp"
#include "model/version.hpp"
#include "process.hpp"
#include "util/strings.hpp"

namespace probe::detail {

namespace {

bool looks_like_toolkit(const MachineCtx& c, const std::string& dir) {
  for (const char* p : {"bin/nvcc", "version.json", "version.txt", "include/cuda.h", "include/cuda_runtime_api.h"})
    if (c.fs.exists(join(dir, p))) return true;
  for (const auto& t : c.fs.list(join(dir, "targets")))
    if (c.fs.exists(join(dir, "targets/" + t + "/include/cuda.h"))) return true;
  return false;
}

// "#define CUDA_VERSION 12040" -> "12.4"
std::string cuda_h_version(const MachineCtx& c, const std::string& root, std::string* where) {
  std::vector<std::string> candidates = {join(root, "include/cuda.h")};
  for (const auto& t : c.fs.list(join(root, "targets"))) candidates.push_back(join(root, "targets/" + t + "/include/cuda.h"));
  static const std::regex k_re(R"(#define\s+CUDA_VERSION\s+([0-9]+))");
  for (const auto& p : candidates) {
    auto text = c.fs.read(p, 2 << 20);
    if (!text) continue;
    std::smatch m;
    if (!std::regex_search(*text, m, k_re)) continue;
    auto v = util::parse_u64(m[1].str());
    if (!v || *v == 0) continue;
    if (where) *where = p + ": CUDA_VERSION " + m[1].str();
    return std::to_string(*v / 1000) + "." + std::to_string((*v % 1000) / 10);
  }
  return {};
}

// NVIDIA's pip wheels beside a toolkit assembled from them (dist-info/, the root, and for
// site-packages/nvidia/cu13 the site-packages folder), each distribution once, first found first:
// the version its METADATA records, else its folder name's.
struct NvidiaWheel {
  std::string distribution, dist_info, version;
  bool metadata_read = false;
};
std::vector<NvidiaWheel> nvidia_wheels(const MachineCtx& c, const std::string& root) {
  std::vector<std::string> dirs = {join(root, "dist-info"), root};
  if (base_name(parent(root)) == "nvidia") dirs.push_back(parent(parent(root)));  // site-packages/nvidia/cu13
  std::vector<NvidiaWheel> out;
  for (const auto& d : dirs) {
    for (const auto& name : c.fs.list(d)) {
      auto nv = split_dist_info_name(name);
      if (!nv || nv->first.rfind("nvidia-", 0) != 0) continue;
      if (std::any_of(out.begin(), out.end(), [&](const NvidiaWheel& w) { return w.distribution == nv->first; })) continue;
      NvidiaWheel w{nv->first, join(d, name), nv->second};
      if (auto text = c.fs.read(join(w.dist_info, "METADATA"), 256 * 1024)) {
        auto h = read_metadata_headers(*text);
        if (h.count("Version")) w.version = h["Version"];
        w.metadata_read = true;
      }
      out.push_back(std::move(w));
    }
  }
  return out;
}

void read_version(const MachineCtx& c, model::ToolkitInfo& t) {
  std::string h_where;
  t.cuda_h_version = cuda_h_version(c, t.root, &h_where);
  if (auto text = c.fs.read(join(t.root, "version.json"), 1 << 20)) {
    if (auto components = format::version_json_components(*text))
      for (auto& e : *components) t.components.push_back({std::move(e.id), std::move(e.name), std::move(e.version)});
    auto v = format::json_string_at(*text, {"cuda", "version"});
    if (v.ok() && v.value() && model::Version::parse(**v)) {
      t.version = **v;
      t.version_source = model::ToolkitVersionSource::version_json;
      t.version_detail = join(t.root, "version.json") + ": cuda.version " + t.version;
      return;
    }
  }
  if (auto text = c.fs.read(join(t.root, "version.txt"), 64 * 1024)) {
    std::smatch m;
    static const std::regex k_re(R"(CUDA Version\s+([0-9]+(?:\.[0-9]+)*))");
    if (std::regex_search(*text, m, k_re)) {
      t.version = m[1].str();
      t.version_source = model::ToolkitVersionSource::version_txt;
      t.version_detail = join(t.root, "version.txt") + ": CUDA Version " + t.version;
      return;
    }
  }
  // the nvidia-cuda-runtime wheel's version is cudart's: only major.minor name the release; the
  // wheels are kept, for capture to tell the release by (the knowledge base's to map)
  auto wheels = nvidia_wheels(c, t.root);
  auto runtime =
      std::find_if(wheels.begin(), wheels.end(), [](const NvidiaWheel& w) { return w.distribution.rfind("nvidia-cuda-runtime", 0) == 0; });
  if (runtime != wheels.end()) {
    auto v = model::Version::parse(runtime->version);
    if (v) {
      t.version = v->prefix(2);
      t.version_source = model::ToolkitVersionSource::pip_wheel;
      t.version_detail = runtime->distribution + " " + runtime->version + " (" +
                         (runtime->metadata_read ? join(runtime->dist_info, "METADATA") : runtime->dist_info) + ")";
      for (auto& w : wheels)
        if (model::Version::parse(w.version)) t.wheels.push_back({std::move(w.distribution), std::move(w.dist_info), std::move(w.version)});
      std::sort(t.wheels.begin(), t.wheels.end(), [](const auto& a, const auto& b) { return a.distribution < b.distribution; });
      return;
    }
  }
  if (!t.cuda_h_version.empty()) {
    t.version = t.cuda_h_version;
    t.version_source = model::ToolkitVersionSource::cuda_h;
    t.version_detail = h_where;
  }
}

}  // namespace

void inspect_toolkits(MachineCtx& c) {
  std::vector<std::pair<std::string, std::string>> candidates;  // path, how found
  candidates.emplace_back("/usr/local/cuda", "/usr/local/cuda");
  for (const char* base : {"/usr/local", "/opt"})
    for (const auto& name : c.fs.list(base))
      if (name.rfind("cuda", 0) == 0) candidates.emplace_back(join(base, name), join(base, name));
  for (const char* var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"}) {
    std::string v = c.env(var);
    if (!v.empty() && v[0] == '/') candidates.emplace_back(v, std::string(var) + "=" + v);
  }
  std::string nvcc = c.find_on_path("nvcc");
  if (!nvcc.empty())
    if (auto real = c.fs.resolve(nvcc)) candidates.emplace_back(parent(parent(*real)), "nvcc on PATH (" + nvcc + ")");

  auto default_root = c.fs.resolve("/usr/local/cuda");
  for (const auto& [path, how] : candidates) {
    auto root = c.fs.resolve(path);
    if (!root || !c.fs.is_dir(*root) || !looks_like_toolkit(c, *root)) continue;
    auto it = std::find_if(c.r.toolkits.begin(), c.r.toolkits.end(), [&](const auto& t) { return t.root == *root; });
    if (it == c.r.toolkits.end()) {
      model::ToolkitInfo t;
      t.root = *root;
      t.is_default = default_root && *default_root == *root;
      read_version(c, t);
      c.r.toolkits.push_back(std::move(t));
      it = std::prev(c.r.toolkits.end());
    }
    if (how != it->root && std::find(it->aliases.begin(), it->aliases.end(), how) == it->aliases.end()) it->aliases.push_back(how);
  }
  std::stable_sort(c.r.toolkits.begin(), c.r.toolkits.end(), [](const auto& a, const auto& b) {
    if (a.is_default != b.is_default) return a.is_default;
    return a.root < b.root;
  });
}

void inspect_nvcc(MachineCtx& c) {
  std::string path = c.find_on_path("nvcc");
  if (path.empty()) return;
  model::NvccInfo n;
  n.path = path;
  n.real_path = c.fs.resolve(path).value_or(path);
  n.toolkit_root = parent(parent(n.real_path));
  if (c.o.run_programs && c.real_root()) {
    auto run = run_captured({path, "--version"}, c.o.program_timeout_ms);
    std::smatch m;
    static const std::regex k_full(R"(release\s+[0-9.]+,\s+V([0-9]+(?:\.[0-9]+)+))"), k_short(R"(release\s+([0-9]+\.[0-9]+))");
    if (std::regex_search(run.out, m, k_full) || std::regex_search(run.out, m, k_short)) {
      n.version = m[1].str();
      n.version_source = "nvcc --version";
    }
  } else if (!c.o.run_programs) {
    c.r.skipped.push_back("nvcc --version: programs not run (the toolkit's version is used)");
  }
  if (n.version.empty()) {
    for (const auto& t : c.r.toolkits)
      if (t.root == n.toolkit_root && !t.version.empty()) {
        n.version = t.version;
        n.version_source = "toolkit";
      }
  }
  c.r.nvcc = std::move(n);
}

}  // namespace probe::detail
