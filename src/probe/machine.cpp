// The machine inspection's entry point and its first parts: the OS, WSL and the NVIDIA driver.
// The driver version is taken from the kernel module first (/proc/driver/nvidia/version), then
// from NVML (which is how WSL2 answers: the Windows driver's libnvidia-ml is mapped into
// /usr/lib/wsl/lib), then from nvidia-smi; the report keeps every source tried.

#include <algorithm>

#include "loader.hpp"
#include "machine_internal.hpp"
#include "process.hpp"
#include "util/env.hpp"
#include "util/strings.hpp"

namespace probe {

namespace detail {

std::string MachineCtx::env(const char* name) const {
  if (!o.env) return {};
  return o.env->get(name).value_or("");
}

std::vector<std::string> MachineCtx::env_list(const char* name) const {
  auto v = o.env ? o.env->get(name) : std::nullopt;
  if (!v) return {};
  return util::split(*v, ':');
}

bool MachineCtx::real_root() const {
  std::error_code ec;
  return std::filesystem::equivalent(o.root, "/", ec);
}

std::string MachineCtx::find_on_path(const std::string& name) const {
  for (const auto& dir : env_list("PATH")) {
    if (dir.empty() || dir[0] != '/') continue;
    std::string p = join(dir, name);
    if (fs.is_file(p)) return p;
  }
  return {};
}

std::map<std::string, std::string> read_metadata_headers(const std::string& text) {
  std::map<std::string, std::string> out;
  for (const auto& raw : util::split(text, '\n')) {
    std::string line = raw;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;
    if (line[0] == ' ' || line[0] == '\t') continue;  // continuation
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key(util::trim(line.substr(0, colon)));
    if (!out.count(key)) out[key] = std::string(util::trim(line.substr(colon + 1)));
  }
  return out;
}

std::string normalize_package_name(const std::string& name) {
  std::string out;
  for (char ch : name) {
    if (ch == '-' || ch == '_' || ch == '.') {
      if (out.empty() || out.back() != '-') out += '-';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
  }
  return out;
}

std::optional<std::pair<std::string, std::string>> split_dist_info_name(const std::string& dir_name) {
  std::string stem;
  for (const char* suffix : {".dist-info", ".egg-info"}) {
    std::string s(suffix);
    if (dir_name.size() > s.size() && dir_name.compare(dir_name.size() - s.size(), s.size(), s) == 0)
      stem = dir_name.substr(0, dir_name.size() - s.size());
  }
  if (stem.empty()) return std::nullopt;
  // name-version: the name's own '-' are '_' in dist-info directory names
  auto dash = stem.find('-');
  if (dash == std::string::npos || dash == 0) return std::nullopt;
  std::string version = stem.substr(dash + 1);
  auto more = version.find('-');  // egg-info: name-version-pyX.Y
  if (more != std::string::npos) version.erase(more);
  return std::make_pair(normalize_package_name(stem.substr(0, dash)), version);
}

namespace {

std::string unquote(std::string v) {
  v = std::string(util::trim(v));
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    char q = v.front();
    v = v.substr(1, v.size() - 2);
    if (q == '"') {
      std::string out;
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i] == '\\' && i + 1 < v.size()) ++i;
        out += v[i];
      }
      v = out;
    }
  }
  return v;
}

std::string first_line(const std::string& text) {
  auto nl = text.find('\n');
  return std::string(util::trim(nl == std::string::npos ? text : text.substr(0, nl)));
}

bool model_version_like(const std::string& v) {
  if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0]))) return false;
  return std::all_of(v.begin(), v.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) || ch == '.'; });
}

}  // namespace

void inspect_os(MachineCtx& c) {
  for (const char* p : {"/etc/os-release", "/usr/lib/os-release"}) {
    auto text = c.fs.read(p, 64 * 1024);
    if (!text) continue;
    c.r.os.source = p;
    for (const auto& line : util::split(*text, '\n')) {
      auto eq = line.find('=');
      if (eq == std::string::npos || line.empty() || line[0] == '#') continue;
      std::string key(util::trim(line.substr(0, eq))), value = unquote(line.substr(eq + 1));
      if (key == "ID")
        c.r.os.id = value;
      else if (key == "VERSION_ID")
        c.r.os.version_id = value;
      else if (key == "PRETTY_NAME")
        c.r.os.pretty_name = value;
    }
    break;
  }
}

void inspect_wsl(MachineCtx& c) {
  auto& w = c.r.wsl;
  for (const char* p : {"/proc/sys/kernel/osrelease", "/proc/version"}) {
    auto text = c.fs.read(p, 4096);
    if (!text) continue;
    std::string lower = util::to_lower(*text);
    if (lower.find("microsoft") == std::string::npos) continue;
    w.wsl = true;
    w.version = (lower.find("wsl2") != std::string::npos || lower.find("microsoft-standard") != std::string::npos) ? 2 : 1;
    w.evidence = std::string(p) + ": " + first_line(*text);
    break;
  }
  if (!w.wsl && !c.env("WSL_DISTRO_NAME").empty()) {
    w.wsl = true;
    w.version = c.fs.is_dir("/usr/lib/wsl/lib") ? 2 : 0;
    w.evidence = "WSL_DISTRO_NAME=" + c.env("WSL_DISTRO_NAME");
  }
  const std::string mapped = "/usr/lib/wsl/lib/libcuda.so.1";
  if (c.fs.exists(mapped)) {
    w.windows_driver_mapped = true;
    w.windows_driver_path = mapped;
  }
}

void inspect_driver(MachineCtx& c) {
  auto& d = c.r.driver;
  const std::string proc = "/proc/driver/nvidia/version";
  if (auto text = c.fs.read(proc, 4096)) {
    std::string v = driver_version_from_proc(*text);
    if (!v.empty()) {
      d.version = v;
      d.source = model::DriverSource::proc;
      d.detail = first_line(*text);
      d.tried.push_back(proc + ": " + v);
      return;
    }
    d.tried.push_back(proc + ": no version in \"" + first_line(*text) + "\"");
  } else {
    d.tried.push_back(proc + ": absent (no NVIDIA kernel module loaded)");
  }

  if (!c.o.use_nvml) {
    c.r.skipped.push_back("NVML: not asked (dlopen disabled)");
  } else if (!c.real_root()) {
    c.r.skipped.push_back("NVML: only asked when inspecting /");
  } else {
    std::string v = nvml_driver_version();
    if (!v.empty()) {
      d.version = v;
      d.source = model::DriverSource::nvml;
      d.detail = "nvmlSystemGetDriverVersion() = " + v;
      d.tried.push_back("NVML (libnvidia-ml.so.1): " + v);
      return;
    }
    d.tried.push_back("NVML (libnvidia-ml.so.1): not loadable or no answer");
  }

  if (!c.o.run_programs) {
    c.r.skipped.push_back("nvidia-smi: programs not run");
  } else if (!c.real_root()) {
    c.r.skipped.push_back("nvidia-smi: programs only run when inspecting /");
  } else {
    std::string smi = c.find_on_path("nvidia-smi");
    if (smi.empty()) {
      d.tried.push_back("nvidia-smi: not on PATH");
    } else {
      auto run = run_captured({smi, "--query-gpu=driver_version", "--format=csv,noheader"}, c.o.program_timeout_ms);
      std::string v = first_line(run.out);
      if (run.exit_code == 0 && model_version_like(v)) {
        d.version = v;
        d.source = model::DriverSource::nvidia_smi;
        d.detail = smi + " --query-gpu=driver_version: " + v;
        d.tried.push_back("nvidia-smi: " + v);
        return;
      }
      d.tried.push_back("nvidia-smi: " +
                        (run.error.empty() ? "exit " + std::to_string(run.exit_code) + (v.empty() ? "" : ": " + v) : run.error));
    }
  }
  d.detail = "no NVIDIA driver answered";
}

// The GPUs, from nvidia-smi (the runtime's view is convtest's): only on the live machine.
void inspect_gpus(MachineCtx& c) {
  if (!c.o.run_programs || !c.real_root()) return;  // (the driver probe names why in skipped)
  std::string smi = c.find_on_path("nvidia-smi");
  if (smi.empty()) return;
  auto run = run_captured({smi, "--query-gpu=index,name,compute_cap", "--format=csv,noheader"}, c.o.program_timeout_ms, 64 << 10);
  if (run.exit_code != 0) {
    c.r.skipped.push_back("nvidia-smi --query-gpu: " + (run.error.empty() ? "exit " + std::to_string(run.exit_code) : run.error));
    return;
  }
  c.r.gpus = parse_nvidia_smi_gpus(run.out, &c.r.skipped);
}

}  // namespace detail

std::vector<model::GpuDevice> parse_nvidia_smi_gpus(const std::string& text, std::vector<std::string>* skipped) {
  std::vector<model::GpuDevice> out;
  std::size_t at = 0;
  auto trim = [](std::string s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.pop_back();
    std::size_t b = s.find_first_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b);
  };
  while (at < text.size() && out.size() < 64) {
    std::size_t nl = text.find('\n', at);
    std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    at = nl == std::string::npos ? text.size() : nl + 1;
    if (trim(line).empty()) continue;
    auto first = line.find(','), last = line.rfind(',');
    model::GpuDevice g;
    bool ok = first != std::string::npos && last != first;
    if (ok) {
      std::string index = trim(line.substr(0, first)), cc = trim(line.substr(last + 1));
      g.name = trim(line.substr(first + 1, last - first - 1));
      auto v = model::Version::parse(cc);
      ok = !index.empty() && index.size() <= 3 && index.find_first_not_of("0123456789") == std::string::npos && v && v->size() == 2 &&
           !g.name.empty() && g.name.size() <= 100 &&
           std::all_of(g.name.begin(), g.name.end(), [](char ch) { return static_cast<unsigned char>(ch) >= 0x20 && ch != 0x7f; });
      if (ok) {
        g.index = std::stoi(index);
        g.cc = v->text();
      }
    }
    if (ok) {
      out.push_back(std::move(g));
    } else if (skipped) {
      skipped->push_back("nvidia-smi --query-gpu: a line that is not index, name, compute capability: \"" + util::printable(line, 80) +
                         "\"");
    }
  }
  return out;
}

model::WslInfo inspect_wsl(const MachineOptions& options) {
  model::MachineReport r;
  detail::MachineCtx c(options, r);
  detail::inspect_wsl(c);
  return r.wsl;
}

model::MachineReport inspect_machine(const MachineOptions& options) {
  model::MachineReport r;
  r.root = options.root.string();
  detail::MachineCtx c(options, r);
  if (!options.arch.empty()) {
    r.arch = options.arch;
  } else {
    r.arch = util::host_arch();
  }
  detail::inspect_os(c);
  detail::inspect_wsl(c);
  detail::inspect_driver(c);
  detail::inspect_gpus(c);
  detail::inspect_toolkits(c);
  detail::inspect_nvcc(c);
  detail::inspect_conda(c);
  detail::inspect_python(c);
  detail::inspect_loader(c);
  detail::inspect_cudnn(c);
  return r;
}

}  // namespace probe
