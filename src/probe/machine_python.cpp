// The active conda environment (CONDA_PREFIX and its conda-meta records) and the frameworks of the
// current Python. Frameworks are read from site-packages' *.dist-info/METADATA, never imported:
// importing torch takes seconds and can itself fail on the very problem being diagnosed.
#include <algorithm>
#include <set>

#include "format/json.hpp"
#include "machine_internal.hpp"
#include "process.hpp"
#include "util/strings.hpp"

namespace probe::detail {

namespace {

const std::set<std::string>& conda_names() {
  static const std::set<std::string> k = {"cudatoolkit",  "cuda-version",   "cudnn",       "libcudnn", "cuda-cudart",
                                          "cuda-runtime", "cuda-toolkit",   "cuda-nvcc",   "pytorch",  "pytorch-cuda",
                                          "tensorflow",   "tensorflow-gpu", "onnxruntime", "jaxlib",   "nccl"};
  return k;
}

bool framework_name(const std::string& n) {
  static const std::set<std::string> k = {"torch",          "torchvision",     "torchaudio",  "tensorflow",      "tensorflow-gpu",
                                          "tensorflow-cpu", "tf-nightly",      "onnxruntime", "onnxruntime-gpu", "jax",
                                          "jaxlib",         "paddlepaddle-gpu"};
  if (k.count(n)) return true;
  // NVIDIA's library wheels (cuDNN, cuBLAS, the runtime, ...) and the cuda-toolkit release they pin
  if (n == "cuda-toolkit") return true;
  for (const char* prefix : {"nvidia-", "cupy-cuda", "jax-cuda"})
    if (n.rfind(prefix, 0) == 0) return true;
  return false;
}

// "cudatoolkit-11.8.0-h6a678d5_0.json" -> name, version, build
std::optional<model::CondaPackage> split_conda_file(const std::string& file) {
  if (file.size() <= 5 || file.compare(file.size() - 5, 5, ".json") != 0) return std::nullopt;
  std::string stem = file.substr(0, file.size() - 5);
  auto b = stem.rfind('-');
  if (b == std::string::npos || b == 0) return std::nullopt;
  auto v = stem.rfind('-', b - 1);
  if (v == std::string::npos || v == 0) return std::nullopt;
  return model::CondaPackage{stem.substr(0, v), stem.substr(v + 1, b - v - 1), stem.substr(b + 1)};
}

}  // namespace

void inspect_conda(MachineCtx& c) {
  std::string prefix = c.env("CONDA_PREFIX");
  if (prefix.empty()) return;
  model::CondaEnv env;
  env.prefix = prefix;
  std::string meta = join(prefix, "conda-meta");
  if (!c.fs.is_dir(meta)) env.problems.push_back(meta + ": absent (not a conda environment?)");
  for (const auto& file : c.fs.list(meta)) {
    auto pkg = split_conda_file(file);
    if (!pkg || !conda_names().count(pkg->name)) continue;
    // the record itself is the truth; the file name is conda's own rendering of it
    if (auto text = c.fs.read(join(meta, file), 64u << 20)) {
      auto name = format::json_string_at(*text, {"name"});
      auto version = format::json_string_at(*text, {"version"});
      auto build = format::json_string_at(*text, {"build"});
      if (!name.ok()) {
        env.problems.push_back(join(meta, file) + ": not JSON (the file name is used)");
      } else {
        if (*name && !(*name)->empty()) pkg->name = **name;
        if (version.ok() && *version) pkg->version = **version;
        if (build.ok() && *build) pkg->build = **build;
      }
    }
    if (pkg->name == "cudatoolkit") env.cudatoolkit = pkg->version;
    if (pkg->name == "cuda-version") env.cuda_version = pkg->version;
    if (pkg->name == "cudnn" || (pkg->name == "libcudnn" && env.cudnn.empty())) env.cudnn = pkg->version;
    env.packages.push_back(*pkg);
  }
  c.r.conda = std::move(env);
}

void inspect_python(MachineCtx& c) {
  auto& py = c.r.python;
  std::vector<std::string> dirs = c.o.site_packages;
  if (dirs.empty()) {
    if (!c.o.run_programs) {
      c.r.skipped.push_back("python3: programs not run (pass site-packages directories to read them)");
      py.error = "site-packages not known: programs not run";
      return;
    }
    if (!c.real_root()) {
      c.r.skipped.push_back("python3: programs only run when inspecting /");
      py.error = "site-packages not known: not inspecting /";
      return;
    }
    py.python = c.find_on_path("python3");
    if (py.python.empty()) {
      py.error = "python3 is not on PATH";
      return;
    }
    auto run = run_captured({py.python, "-c",
                             "import site, sysconfig\n"
                             "p = sysconfig.get_paths()\n"
                             "print(p['purelib']); print(p['platlib'])\n"
                             "if site.ENABLE_USER_SITE: print(site.getusersitepackages())\n"},
                            c.o.program_timeout_ms);
    if (run.exit_code != 0 || run.out.empty()) {
      py.error = py.python + ": " + (run.error.empty() ? "exit " + std::to_string(run.exit_code) : run.error);
      return;
    }
    for (const auto& line : util::split(run.out, '\n'))
      if (!util::trim(line).empty()) dirs.emplace_back(util::trim(line));
  }
  for (const auto& d : dirs) {
    auto real = c.fs.resolve(d);
    if (!real || !c.fs.is_dir(*real)) continue;
    if (std::find(c.site_dirs.begin(), c.site_dirs.end(), *real) != c.site_dirs.end()) continue;
    c.site_dirs.push_back(*real);
    py.site_packages.push_back(*real);
    for (const auto& name : c.fs.list(*real)) {
      auto nv = split_dist_info_name(name);
      if (!nv || !framework_name(nv->first)) continue;
      model::PythonPackage p{nv->first, nv->second, *real};
      bool egg = name.size() > 9 && name.compare(name.size() - 9, 9, ".egg-info") == 0;
      if (auto text = c.fs.read(join(join(*real, name), egg ? "PKG-INFO" : "METADATA"), 1 << 20)) {
        auto h = read_metadata_headers(*text);
        if (h.count("Name")) p.name = normalize_package_name(h["Name"]);
        if (h.count("Version")) p.version = h["Version"];
      }
      if (!egg) {
        if (c.fs.is_file(join(join(*real, name), "RECORD"))) p.record_path = c.fs.host(join(join(*real, name), "RECORD")).string();
        if (auto direct = c.fs.read(join(join(*real, name), "direct_url.json"), 1 << 20)) {
          if (auto url = format::json_string_at(*direct, {"url"}); url.ok() && *url) p.url = util::printable(**url, 400);
          if (auto sha = format::json_string_at(*direct, {"archive_info", "hashes", "sha256"});
              sha.ok() && *sha && (*sha)->size() == 64 && util::is_hex(**sha))
            p.wheel_sha256 = util::to_lower(**sha);
        }
      }
      py.frameworks.push_back(std::move(p));
    }
  }
}

}  // namespace probe::detail
