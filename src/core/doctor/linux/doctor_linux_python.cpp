// doctor on Linux/WSL2: the active conda environment (its CUDA and cuDNN packages against the
// manifest, or against the system when there is none) and the cuDNN a framework brings along
// (torch/lib, or the nvidia-cudnn wheel torch depends on) against the pin.
#include "doctor/linux/doctor_linux_rules.hpp"
#include "model/contracts.hpp"

#include <algorithm>

#include "core/check/python_rules.hpp"
#include "knowledge/cuda_catalog.hpp"
#include "model/pylock.hpp"

namespace core::doctor_rules {

using model::Severity;
using model::Version;

void conda(Ctx& c) {
  if (!c.r.conda) return;
  const auto& e = *c.r.conda;
  std::string subject = "conda environment " + e.prefix;
  auto cuda = c.cuda();
  std::optional<int> system_major;
  for (const auto& t : c.r.toolkits)
    if (t.is_default)
      if (auto v = Version::parse(t.version)) system_major = static_cast<int>(v->major());
  bool any = false;
  auto judge_cuda = [&](const std::string& pkg, const std::string& version) {
    if (version.empty()) return;
    any = true;
    auto v = Version::parse(version);
    auto& f = c.add("linux.conda", Severity::ok, subject);
    f.seen = pkg + " " + version;
    if (!v) return;
    if (cuda) {
      f.expected = "CUDA " + std::to_string(cuda->major()) + ".x (the manifest's CUDA " + cuda->text() + ")";
      c.point_at(f, c.m->cuda->version.pos);
      if (v->major() != cuda->major()) {
        f.severity = Severity::error;
        f.fix = "this environment puts CUDA " + std::to_string(v->major()) + " libraries first for its programs: `conda remove " + pkg +
                "` and install the CUDA " + std::to_string(cuda->major()) +
                " packages (conda install -c conda-forge cuda-version=" + cuda->prefix(2) + ")";
      }
    } else if (system_major && static_cast<int>(v->major()) != *system_major) {
      f.severity = Severity::warning;
      f.expected = "CUDA " + std::to_string(*system_major) + ".x like /usr/local/cuda";
      f.fix = "programs run in this environment load CUDA " + std::to_string(v->major()) + " libraries, others the system's CUDA " +
              std::to_string(*system_major);
    }
  };
  judge_cuda("cudatoolkit", e.cudatoolkit);
  judge_cuda("cuda-version", e.cuda_version);

  if (!e.cudnn.empty()) {
    any = true;
    auto v = Version::parse(e.cudnn);
    auto& f = c.add("linux.conda", Severity::ok, subject);
    f.seen = "cudnn " + e.cudnn;
    std::optional<Version> want = c.cudnn();
    std::string want_what = "the manifest's cuDNN";
    if (c.m && c.m->conda && c.m->conda->cudnn) {
      want = c.m->conda->cudnn->value;
      want_what = "the manifest's [targets.conda] cudnn";
    }
    if (v && want) {
      f.expected = want->text() + " (" + want_what + ")";
      if (compare_prefix(*v, *want, 3) != 0) {
        f.severity = v->major() != want->major() ? Severity::error : Severity::warning;
        f.fix = "conda install -c conda-forge cudnn=" + want->text() + " in this environment (programs here load its cuDNN first)";
      }
    } else if (v) {
      // against the cuDNN the system loader finds outside the environment
      for (const auto& l : c.r.loader) {
        if (l.soname != model::cudnn_library_name(v->major(), false) || !l.winner) continue;
        const auto* cp = copy_of(c.r, l.winner->real_path);
        if (!cp || cp->kind == model::CudnnKind::conda) continue;
        auto sv = Version::parse(copy_version(*cp));
        if (sv && compare_prefix(*sv, *v, 3) != 0) {
          f.severity = Severity::warning;
          f.expected = "the system's cuDNN " + sv->text() + " (" + cp->dir + ")";
          f.fix = "two cuDNN versions: programs in this environment get " + e.cudnn + ", others " + sv->text() + "; align them";
        }
      }
    }
  }
  if (!any) {
    auto& f = c.add("linux.conda", Severity::ok, subject);
    f.seen = "no cudatoolkit, cuda-version or cudnn package";
  }
  if (!e.problems.empty()) {
    auto& f = c.add("linux.conda", Severity::warning, subject);
    f.seen = join_lines(e.problems);
    f.fix =
        "CONDA_PREFIX is not a readable conda environment, or its conda-meta records are damaged: `conda list` shows what "
        "conda believes is installed";
  }
}

void frameworks(Ctx& c) {
  for (const auto& p : c.r.python.frameworks) {
    if (p.name != "torch") continue;
    std::string subject = "torch " + p.version + " (" + p.location + ")";
    const model::CudnnCopy* bundled = nullptr;
    for (const auto& cp : c.r.cudnn) {
      if (cp.kind == model::CudnnKind::torch_lib && cp.dir == p.location + "/torch/lib") bundled = &cp;
      if (!bundled && cp.kind == model::CudnnKind::pip_wheel && cp.dir == p.location + "/nvidia/cudnn/lib") bundled = &cp;
    }
    // what the knowledge base says this wheel bundles
    std::string kb_says;
    auto plus = p.version.find('+');
    if (auto v = Version::parse(p.version.substr(0, plus)); v && plus != std::string::npos)
      if (const auto* rel = c.kb.torch_release(*v)) {
        auto it = rel->cudnn.find(p.version.substr(plus + 1));
        if (it != rel->cudnn.end()) kb_says = it->second.text();
      }
    if (!bundled) {
      auto& f = c.add("linux.framework-bundled-cudnn", Severity::note, subject);
      f.seen = "no cuDNN next to torch (neither torch/lib nor an nvidia-cudnn wheel in " + p.location + ")";
      f.fix = "a CPU-only build, or torch loads the system's cuDNN; `stackpin convtest --framework torch` shows which";
      continue;
    }
    std::string have = bundled->package_version.empty() ? copy_version(*bundled) : bundled->package_version;
    auto& f = c.add("linux.framework-bundled-cudnn", Severity::ok, subject);
    f.seen = "bundles cuDNN " + (have.empty() ? "of unknown version" : have) + " in " + bundled->dir +
             (kb_says.empty() ? "" : " (the knowledge base lists " + kb_says + " for this wheel)");
    auto hv = Version::parse(have);
    if (auto pin = c.cudnn()) {
      f.expected = "cuDNN " + pin->text() + " (the manifest's pin)";
      c.point_at(f, c.m->cudnn->version.pos);
      if (hv && compare_prefix(*hv, *pin, 3) != 0) {
        f.severity = Severity::warning;
        f.fix = "torch loads its own cuDNN " + hv->text() + " before any system copy; the pinned " + pin->text() +
                " serves other programs. Install the torch build that bundles the pinned cuDNN, or pin the cuDNN torch bundles";
      }
    }
  }
}

// The Python environment read (site-packages) as a Python lock of what is installed, judged by the
// same agreement rules as the lock (core::check_python_lock) against the manifest; and a cuDNN
// wheel missing a sub-library that a system copy has: the loader takes it from there, and cuDNN
// refuses the mix with CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH.
void python_environment(Ctx& c) {
  if (c.r.python.site_packages.empty()) return;
  const std::string where = join_lines(c.r.python.site_packages, ", ");
  if (c.m && c.m->cuda && !c.r.python.frameworks.empty()) {
    model::PyLock installed;
    installed.path = where;
    const model::Platform platform = model::host_linux_platform();
    installed.environments.push_back(model::python_marker(platform));
    for (const auto& p : c.r.python.frameworks) {
      model::PyPackage pkg;
      pkg.name = model::normalize_python_name(p.name);
      pkg.version = p.version;
      installed.packages.push_back(std::move(pkg));
    }
    model::CheckReport judged;
    check_python_lock(*c.m, installed, c.kb, knowledge::CudaCatalog::embedded(), judged);
    for (auto& f : judged.findings) {
      f.source = "the packages installed in " + where;
      c.out.push_back(std::move(f));
    }
  }
  for (const auto& wheel : c.r.cudnn) {
    if (wheel.kind != model::CudnnKind::pip_wheel) continue;
    for (const auto& w : wheel.whole)
      for (const auto& lib : w.missing) {
        const model::CudnnCopy* filler = nullptr;
        for (const auto& other : c.r.cudnn)
          if (&other != &wheel && other.kind != model::CudnnKind::pip_wheel)
            for (const auto& ow : other.whole)
              if (ow.major == w.major && std::find(ow.present.begin(), ow.present.end(), lib) != ow.present.end()) filler = &other;
        auto& f = c.add("python.cudnn-split", Severity::error,
                        "cuDNN " + (w.release ? w.release->text() : std::to_string(w.major)) + " in " + wheel.dir);
        f.seen = wheel.kind_detail + " lacks " + lib +
                 (filler ? "; the loader takes it from " + filler->dir + " (cuDNN " + copy_version(*filler) + ")"
                         : "; no other copy has it, so cuDNN cannot load it");
        f.expected = "every sub-library of the wheel's cuDNN in " + wheel.dir;
        f.fix =
            filler
                ? "one cuDNN from two places: the first convolution fails with CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH. Reinstall the "
                  "wheel (pip install --force-reinstall --no-deps), or install the environment again from its Python lock (stackpin apply)"
                : "the first convolution fails with CUDNN_STATUS_NOT_INITIALIZED: reinstall the wheel, or install the environment again "
                  "from "
                  "its Python lock (stackpin apply)";
      }
  }
}

}  // namespace core::doctor_rules
