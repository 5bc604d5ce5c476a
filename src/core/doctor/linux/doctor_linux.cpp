// doctor on Linux/WSL2: the OS, WSL and its driver mapping, the driver against what the manifest
// and each toolkit need (the rule doctor on Windows shares: driver_judgement.hpp), the toolkits
// and nvcc.
#include "core/doctor/doctor_linux.hpp"

#include <algorithm>

#include "core/check/check.hpp"
#include "doctor/driver_judgement.hpp"
#include "doctor/linux/doctor_linux_rules.hpp"
#include "knowledge/cuda_catalog.hpp"
#include "model/platform.hpp"

namespace core {

namespace doctor_rules {

using model::Severity;
using model::Version;

model::Finding& Ctx::add(std::string rule, Severity sev, std::string subject) {
  return model::add_finding(out, std::move(rule), sev, std::move(subject));
}

std::optional<Version> Ctx::cuda() const {
  if (m && m->cuda) return m->cuda->version.value;
  return std::nullopt;
}

std::optional<Version> Ctx::cudnn() const {
  if (m && m->cudnn) return m->cudnn->version.value;
  return std::nullopt;
}

void Ctx::point_at(model::Finding& f, model::Pos pos) const {
  if (m && pos.line > 0) f.where = m->locate(pos);
}

std::string join_lines(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

namespace {

std::string machine_platforms(const std::string& arch) {
  if (arch == "x86_64") return "linux-x86_64";
  if (arch == "aarch64" || arch == "arm64") return "linux-sbsa or linux-aarch64";
  return "";
}

// Judges a driver version against the minimum for one CUDA release (driver_judgement.hpp).
void judge_driver(Ctx& c, const Version& have, const std::string& have_text, const Version& cuda, const std::string& why,
                  const std::optional<model::Located<Version>>& pin) {
  bool wsl = c.r.wsl.wsl;
  auto j = doctor_rules::judge_driver(c.kb, wsl ? model::Os::windows : model::Os::linux, wsl, have, cuda,
                                      pin ? std::optional<Version>(pin->value) : std::nullopt);
  auto& f = c.add("linux.driver", j.severity, "NVIDIA driver for " + why);
  f.seen = have_text;
  f.expected = j.expected;
  f.fix = j.fix;
  f.source = j.source;
  if (j.against_pin) c.point_at(f, pin->pos);
}

}  // namespace

void os(Ctx& c) {
  if (c.r.os.source.empty()) {
    auto& f = c.add("linux.os", Severity::warning, "operating system");
    f.seen = "no /etc/os-release or /usr/lib/os-release";
    f.expected = "an os-release file naming the distribution";
    f.fix = "the distribution cannot be named, so NVIDIA's per-distribution packages (apt/dnf repositories) cannot be chosen";
  } else {
    auto& f = c.add("linux.os", Severity::ok, "operating system");
    f.seen = (c.r.os.pretty_name.empty() ? c.r.os.id : c.r.os.pretty_name) + " (ID=" + c.r.os.id + ", VERSION_ID=" + c.r.os.version_id +
             ", from " + c.r.os.source + ")";
  }
  std::string platforms = machine_platforms(c.r.arch);
  if (platforms.empty()) {
    auto& f = c.add("linux.os", Severity::error, "architecture " + c.r.arch);
    f.seen = c.r.arch.empty() ? "unknown" : c.r.arch;
    f.expected = "x86_64 or aarch64 (NVIDIA's Linux platforms: linux-x86_64, linux-sbsa, linux-aarch64)";
    f.fix = "NVIDIA publishes no CUDA or cuDNN for this architecture";
    return;
  }
  auto& f = c.add("linux.os", Severity::ok, "architecture " + c.r.arch);
  f.seen = c.r.arch + " (cuDNN platform " + platforms + ")";
  if (c.m && c.m->cudnn) {
    bool any_linux = false, match = false;
    for (const auto& a : c.m->cudnn->archives) {
      if (model::is_windows(a.platform.value)) continue;
      any_linux = true;
      std::string p = model::to_string(a.platform.value);
      if (platforms.find(p) != std::string::npos) match = true;
    }
    if (any_linux && !match) {
      f.severity = Severity::warning;
      f.expected = "a [[cudnn.archives]] entry for " + platforms;
      f.fix = "the manifest pins cuDNN archives for other platforms only: add the " + platforms + " archive to stage it here";
      c.point_at(f, c.m->cudnn->pos);
    }
  }
}

void wsl(Ctx& c) {
  const auto& w = c.r.wsl;
  if (!w.wsl) {
    auto& f = c.add("linux.wsl", Severity::ok, "WSL");
    f.seen = "not WSL (a native Linux kernel)";
    return;
  }
  if (w.version == 1) {
    auto& f = c.add("linux.wsl", Severity::error, "WSL");
    f.seen = "WSL 1 (" + w.evidence + ")";
    f.expected = "WSL 2: CUDA on WSL needs the WSL 2 kernel; WSL 1 has no GPU";
    f.fix = "in PowerShell on Windows: wsl --set-version <distribution> 2";
  } else if (w.version == 0) {
    auto& f = c.add("linux.wsl", Severity::warning, "WSL");
    f.seen = "WSL of unknown version (" + w.evidence + ")";
    f.expected = "WSL 2";
    f.fix = "check with `wsl -l -v` on Windows; CUDA needs WSL 2";
  } else {
    auto& f = c.add("linux.wsl", Severity::ok, "WSL");
    f.seen = "WSL 2 (" + w.evidence + ")";
  }

  {
    auto& f = c.add("linux.wsl-driver", w.windows_driver_mapped ? Severity::ok : Severity::error, "the Windows NVIDIA driver in WSL");
    f.seen = w.windows_driver_mapped ? w.windows_driver_path + " is mapped" : "/usr/lib/wsl/lib/libcuda.so.1 is absent";
    f.expected = "/usr/lib/wsl/lib/libcuda.so.1 (the Windows driver maps it into every WSL 2 distribution)";
    if (!w.windows_driver_mapped)
      f.fix = "install or update the NVIDIA driver on Windows, then `wsl --shutdown`; do not install a Linux NVIDIA driver inside WSL";
  }

  // libcuda.so.1 from a Linux driver package inside WSL hides or breaks the Windows one
  std::vector<std::string> stray;
  bool stray_wins = false;
  for (const auto& l : c.r.loader) {
    if (l.soname != "libcuda.so.1") continue;
    auto judge = [&](const model::LoaderCandidate& cand, bool winner) {
      if (cand.real_path.rfind("/usr/lib/wsl/", 0) == 0) return;
      stray.push_back(cand.path + (cand.real_path != cand.path ? " -> " + cand.real_path : "") + " (" + cand.via + ")");
      if (winner) stray_wins = true;
    };
    if (l.winner) judge(*l.winner, true);
    for (const auto& s : l.shadowed) judge(s, false);
  }
  auto& f = c.add("linux.linux-driver-in-wsl", stray.empty() ? Severity::ok : Severity::error, "libcuda.so.1 in WSL");
  f.expected = "libcuda.so.1 only from /usr/lib/wsl/lib";
  if (stray.empty()) {
    f.seen = "no Linux libcuda.so.1 outside /usr/lib/wsl/lib";
  } else {
    f.seen = "a Linux driver's libcuda: " + join_lines(stray) + (stray_wins ? "; it is the one the loader picks" : "");
    f.fix =
        "remove the Linux NVIDIA driver packages inside WSL (e.g. `apt remove --purge 'libnvidia-compute-*' 'nvidia-driver-*'`) "
        "and keep /usr/lib/wsl/lib first for the loader; in WSL only the Windows driver may provide libcuda";
  }
}

void driver(Ctx& c) {
  const auto& d = c.r.driver;
  if (d.version.empty()) {
    auto& f = c.add("linux.driver", Severity::note, "NVIDIA driver");
    f.seen = "no NVIDIA driver found (" + join_lines(d.tried) + ")";
    if (auto cuda = c.cuda())
      f.expected = "a driver for CUDA " + cuda->text() + " (" +
                   c.kb.driver_minimum(*cuda, c.r.wsl.wsl ? model::Os::windows : model::Os::linux).effective + " or newer)";
    f.fix = c.r.wsl.wsl ? "install the NVIDIA driver on Windows; WSL 2 maps it in"
                        : "install the NVIDIA driver (a machine without a GPU has none)";
    return;
  }
  auto have = Version::parse(d.version);
  std::string have_text = d.version + " (from " + model::to_string(d.source) + ")";
  if (!have) {
    auto& f = c.add("linux.driver", Severity::note, "NVIDIA driver");
    f.seen = have_text + ": not a version stackpin can compare";
    return;
  }
  bool judged = false;
  if (auto cuda = c.cuda()) {
    std::optional<model::Located<Version>> pin;
    if (c.m->driver) pin = c.r.wsl.wsl ? c.m->driver->windows : c.m->driver->linux;
    judge_driver(c, *have, have_text, *cuda, "the manifest's CUDA " + cuda->text(), pin);
    judged = true;
  }
  for (const auto& t : c.r.toolkits) {
    auto v = Version::parse(t.version);
    if (!v) continue;
    if (auto cuda = c.cuda(); cuda && compare_prefix(*cuda, *v, 2) == 0) continue;  // judged above, with the pin
    judge_driver(c, *have, have_text, *v, "CUDA " + t.version + " at " + t.root, std::nullopt);
    judged = true;
  }
  if (!judged) {
    auto& f = c.add("linux.driver", Severity::ok, "NVIDIA driver");
    f.seen = have_text;
    f.expected = "no manifest and no CUDA toolkit to hold it against";
  }
}

// The releases a toolkit's components are held against: its own, where NVIDIA's manifest of it is
// in stackpin; else (a runfile install's version.json gives a date, 12.6.20241114) those of its
// major.minor whose runtime is the tree's cuda_cudart, newest first.
std::vector<std::pair<Version, const format::CudaRedistribRelease*>> releases_of(const knowledge::CudaCatalog& catalog,
                                                                                 const model::ToolkitInfo& t, const Version& own) {
  std::vector<std::pair<Version, const format::CudaRedistribRelease*>> out;
  if (auto r = own.size() >= 3 ? catalog.release(own) : nullptr; r && *r) {
    out.emplace_back(own, *r);
    return out;
  }
  auto runtime = std::find_if(t.components.begin(), t.components.end(), [](const auto& x) { return x.id == "cuda_cudart"; });
  if (runtime == t.components.end()) return out;
  auto versions = catalog.releases();
  for (auto v = versions.rbegin(); v != versions.rend(); ++v) {
    if (v->major() != own.major() || v->minor() != own.minor()) continue;
    auto r = catalog.release(*v);
    if (!r || !*r) continue;
    if (const auto* x = knowledge::find_component(**r, "cuda_cudart"); x && x->version_text == runtime->version) out.emplace_back(*v, *r);
  }
  return out;
}

// The components of a toolkit at a version none of its releases (releases_of) ships, each with
// the releases that do ship it ("libcublas 13.1.0.3 (CUDA 13.1.0's; CUDA 13.0.2 ships 13.0.2.14)"):
// a library of a release of the same major copied in. Empty when no release is known.
std::vector<std::string> of_other_releases(const knowledge::CudaCatalog& catalog, const model::ToolkitInfo& t,
                                           const std::vector<std::pair<Version, const format::CudaRedistribRelease*>>& own) {
  std::vector<std::string> out;
  if (own.empty()) return out;
  for (const auto& comp : t.components) {
    const format::CudaComponent* shipped = nullptr;  // by the newest of the releases held against
    bool fits = false;
    for (const auto& [v, r] : own)
      if (const auto* rc = knowledge::find_component(*r, comp.id)) {
        if (!shipped) shipped = rc;
        fits = fits || rc->version_text == comp.version;
      }
    if (!shipped || fits) continue;
    std::vector<std::string> from;
    for (const auto& v : catalog.releases()) {
      if (v.major() != own.front().first.major()) continue;
      auto r = catalog.release(v);
      if (!r || !*r) continue;
      if (const auto* x = knowledge::find_component(**r, comp.id); x && x->version_text == comp.version) from.push_back(v.text());
    }
    out.push_back(comp.id + " " + comp.version + " (" +
                  (from.empty() ? "a version no NVIDIA manifest of CUDA " + std::to_string(own.front().first.major()) + " lists"
                                : "CUDA " + join_lines(from, ", ") + "'s") +
                  "; CUDA " + own.front().first.text() + " ships " + shipped->version_text + ")");
  }
  return out;
}

// The components a toolkit's version.json lists, held against NVIDIA's manifest of the release
// they should be from (the pinned CUDA for a toolkit of its major, else the toolkit's own): a
// component of another major is a tree mixing two releases (a library copied in from elsewhere);
// with [cuda] components, those the manifest pins and the toolkit of the pinned release lacks.
void toolkit_components(Ctx& c) {
  auto pinned = c.cuda();
  const auto& catalog = knowledge::CudaCatalog::embedded();
  model::Platform platform = c.r.arch == "aarch64" ? model::Platform::linux_sbsa : model::Platform::linux_x86_64;
  for (const auto& t : c.r.toolkits) {
    auto own = Version::parse(t.version);
    if (t.components.empty() || !own) continue;
    if (pinned && pinned->major() != own->major()) continue;  // another major: linux.toolkit says so
    Version ref = pinned && pinned->size() >= 3 ? *pinned : *own;
    std::string subject = "CUDA toolkit " + t.root + " components";
    auto release = catalog.release(ref);
    const format::CudaRedistribRelease* rel = release && *release ? *release : nullptr;
    std::vector<std::string> other_major;
    for (const auto& comp : t.components) {
      auto have = Version::parse(comp.version);
      if (!have) continue;
      std::optional<Version> want;
      if (rel) {
        if (const auto* rc = knowledge::find_component(*rel, comp.id)) want = rc->version;
      } else if (comp.id == "cuda_cudart") {
        want = ref;  // without NVIDIA's manifest, the runtime alone is known to share the release's major
      }
      if (want && want->major() != have->major())
        other_major.push_back(comp.id + " " + comp.version + " (CUDA " + ref.text() + " ships " + want->text() + ")");
    }
    if (!other_major.empty()) {
      auto& f = c.add("linux.toolkit-components", Severity::warning, subject);
      f.seen = join_lines(other_major, ", ") + " in " + t.root + "/version.json";
      f.expected = "each component of the major NVIDIA ships in CUDA " + ref.text();
      f.fix = "the tree mixes releases: stage the pinned components again (stackpin stage) or reinstall the toolkit";
      if (pinned) c.point_at(f, c.m->cuda->version.pos);
      continue;
    }
    const auto held = releases_of(catalog, t, *own);
    if (auto mixed = of_other_releases(catalog, t, held); !mixed.empty()) {
      std::vector<std::string> names;
      for (const auto& [v, r] : held) names.push_back(v.text());
      auto& f = c.add("linux.toolkit-components", Severity::warning, subject);
      f.seen = join_lines(mixed, ", ") + " in " + t.root + "/version.json";
      f.expected = "each component at the version NVIDIA ships in CUDA " + join_lines(names, " or ") +
                   (held.front().first == *own ? "" : " (the releases whose runtime is the tree's cuda_cudart)");
      f.fix = "the tree mixes releases: stage the pinned components again (stackpin stage) or reinstall the toolkit";
      continue;
    }
    std::vector<std::string> missing;
    if (pinned && c.m->cuda && !c.m->cuda->components.empty() && rel && compare_prefix(*pinned, *own, 3) == 0) {
      auto resolved = resolve_cuda_components(*c.m, *rel, c.kb.cuda_sets(), catalog.source_of(*pinned), true);
      for (const auto& p : resolved.picks) {
        if (p.platform != platform) continue;
        bool present =
            std::any_of(t.components.begin(), t.components.end(), [&](const model::ToolkitComponent& x) { return x.id == p.component; });
        if (!present && std::find(missing.begin(), missing.end(), p.component) == missing.end()) missing.push_back(p.component);
      }
    }
    if (!missing.empty()) {
      auto& f = c.add("linux.toolkit-components", Severity::warning, subject);
      f.seen = t.root + "/version.json lists no " + join_lines(missing, ", ");
      f.expected = "the components " + c.m->path + " pins";
      f.fix = "stage the manifest's [cuda] components into this tree (stackpin stage), or use the tree stackpin staged";
      c.point_at(f, c.m->cuda->components_pos);
      continue;
    }
    auto& f = c.add("linux.toolkit-components", Severity::ok, subject);
    f.seen = std::to_string(t.components.size()) + " components in version.json" +
             (rel ? ", each of the major NVIDIA ships in CUDA " + ref.text()
                  : " (NVIDIA's manifest of CUDA " + ref.text() + " is not in stackpin: majors not checked)");
  }
}

void toolkits(Ctx& c) {
  auto cuda = c.cuda();
  if (c.r.toolkits.empty()) {
    auto& f = c.add("linux.toolkit", Severity::note, "CUDA toolkit");
    f.seen = "none found (/usr/local/cuda*, /opt/cuda*, CUDA_HOME, CUDA_PATH, nvcc on PATH)";
    if (cuda) f.expected = "CUDA " + cuda->text() + " where programs are built here";
    f.fix = "a toolkit is needed to build CUDA code; frameworks' wheels bring their own CUDA runtime";
  }
  bool matches = false;
  for (const auto& t : c.r.toolkits) {
    auto v = Version::parse(t.version);
    std::string subject = "CUDA toolkit " + t.root;
    if (!v) {
      auto& f = c.add("linux.toolkit", Severity::warning, subject);
      f.seen = "version unknown (no version.json, version.txt, nvidia-cuda-runtime dist-info or cuda.h)";
      f.fix = "a half-installed or hand-copied toolkit: reinstall it from NVIDIA's packages";
      continue;
    }
    if (cuda && compare_prefix(*cuda, *v, 2) == 0) matches = true;
    auto h = Version::parse(t.cuda_h_version);
    if (h && t.version_source != model::ToolkitVersionSource::cuda_h && compare_prefix(*h, *v, 2) != 0) {
      auto& f = c.add("linux.toolkit", Severity::warning, subject);
      f.seen = "CUDA " + t.version + " by " + t.version_detail + ", but include/cuda.h is CUDA " + t.cuda_h_version;
      f.expected = "one release in one tree";
      f.fix = "the toolkit mixes two releases (a newer one copied over an older one): reinstall it";
      continue;
    }
    auto& f = c.add("linux.toolkit", Severity::ok, subject);
    f.seen = "CUDA " + t.version + " (" + model::to_string(t.version_source) + ": " + t.version_detail + ")" +
             (t.aliases.empty() ? "" : "; found as " + join_lines(t.aliases, ", "));
  }
  if (cuda && !c.r.toolkits.empty() && !matches) {
    auto& f = c.add("linux.toolkit", Severity::note, "CUDA toolkit " + cuda->text());
    std::vector<std::string> have;
    for (const auto& t : c.r.toolkits) have.push_back((t.version.empty() ? "?" : t.version) + " at " + t.root);
    f.seen = "no toolkit of CUDA " + cuda->prefix(2) + " (found " + join_lines(have, ", ") + ")";
    f.expected = "CUDA " + cuda->text() + " to build against the pinned stack";
    f.fix = "install the CUDA " + cuda->text() + " toolkit where code is compiled here";
    c.point_at(f, c.m->cuda->version.pos);
  }

  // /usr/local/cuda
  const model::ToolkitInfo* def = nullptr;
  for (const auto& t : c.r.toolkits)
    if (t.is_default) def = &t;
  if (!def) {
    auto& f = c.add("linux.default-toolkit", Severity::note, "/usr/local/cuda");
    f.seen = "/usr/local/cuda does not exist";
    if (cuda) f.expected = "/usr/local/cuda -> a CUDA " + cuda->prefix(2) + " toolkit";
    f.fix = "build systems (CMake's FindCUDAToolkit, setup.py of CUDA extensions) look there first";
    return;
  }
  auto v = Version::parse(def->version);
  auto& f = c.add("linux.default-toolkit", Severity::ok, "/usr/local/cuda");
  f.seen = "/usr/local/cuda -> " + def->root + " (CUDA " + (def->version.empty() ? "unknown" : def->version) + ")";
  if (cuda) {
    f.expected = "CUDA " + cuda->prefix(2);
    c.point_at(f, c.m->cuda->version.pos);
    if (v && v->major() != cuda->major()) {
      f.severity = Severity::error;
      f.fix = "point /usr/local/cuda at a CUDA " + cuda->prefix(2) + " toolkit (update-alternatives --config cuda, or ln -sfn)";
    } else if (v && compare_prefix(*v, *cuda, 2) != 0) {
      f.severity = Severity::warning;
      f.fix = "point /usr/local/cuda at the CUDA " + cuda->prefix(2) + " toolkit: code built here targets " + def->version;
    } else if (!v) {
      f.severity = Severity::warning;
      f.fix = "the default toolkit's version is unknown";
    }
  }
}

void nvcc(Ctx& c) {
  if (!c.r.nvcc) {
    auto& f = c.add("linux.nvcc", Severity::note, "nvcc");
    f.seen = "no nvcc on PATH";
    if (auto cuda = c.cuda()) f.expected = "nvcc of CUDA " + cuda->prefix(2) + " where code is compiled here";
    return;
  }
  const auto& n = *c.r.nvcc;
  auto v = Version::parse(n.version);
  auto& f = c.add("linux.nvcc", Severity::ok, "nvcc " + n.path);
  f.seen = n.path + (n.real_path != n.path ? " -> " + n.real_path : "") + ", CUDA " + (n.version.empty() ? "unknown" : n.version) +
           (n.version_source.empty() ? "" : " (" + n.version_source + ")");
  if (auto cuda = c.cuda()) {
    f.expected = "nvcc of CUDA " + cuda->prefix(2);
    if (v && v->major() != cuda->major()) {
      f.severity = Severity::error;
      f.fix = "put the CUDA " + cuda->prefix(2) + " toolkit's bin first on PATH: the nvcc found first builds for CUDA " + n.version;
    } else if (v && compare_prefix(*v, *cuda, 2) != 0) {
      f.severity = Severity::warning;
      f.fix = "put the CUDA " + cuda->prefix(2) + " toolkit's bin first on PATH";
    }
    return;
  }
  for (const auto& t : c.r.toolkits)
    if (t.is_default && t.root != n.toolkit_root) {
      f.severity = Severity::warning;
      f.expected = "the nvcc of /usr/local/cuda (" + t.root + ")";
      f.fix = "PATH finds the nvcc of " + n.toolkit_root + " first while /usr/local/cuda points to " + t.root +
              ": builds mix headers and compilers of two toolkits; fix PATH or the link";
    }
}

}  // namespace doctor_rules

probe::MachineOptions linux_machine_options(const util::Env& env, const knowledge::KnowledgeBase& kb, const model::Manifest* manifest) {
  probe::MachineOptions o;
  o.root = "/";
  o.env = &env;
  o.cudnn_contents = kb.facts().cudnn_majors;
  if (manifest && manifest->linux && manifest->linux->prefix) {
    const std::string& prefix = manifest->linux->prefix->value;
    o.extra_cudnn_dirs.push_back(prefix + "/lib64");
    o.extra_cudnn_dirs.push_back(prefix + "/lib");
  }
  return o;
}

std::vector<model::Finding> doctor_linux(const model::MachineReport& report, const model::Manifest* manifest,
                                         const knowledge::KnowledgeBase& kb) {
  std::vector<model::Finding> out;
  doctor_rules::Ctx c{report, manifest, kb, out};
  doctor_rules::os(c);
  doctor_rules::wsl(c);
  doctor_rules::driver(c);
  doctor_rules::gpus(c);
  doctor_rules::toolkits(c);
  doctor_rules::toolkit_components(c);
  doctor_rules::nvcc(c);
  doctor_rules::cudnn_copies(c);
  doctor_rules::loader(c);
  doctor_rules::ld_library_path(c);
  doctor_rules::conda(c);
  doctor_rules::frameworks(c);
  doctor_rules::python_environment(c);
  return out;
}

}  // namespace core
