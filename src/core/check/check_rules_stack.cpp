// Rules about the rest of the stack: the driver minimum, the frameworks against the CUDA variant
// and the cuDNN they bundle or require, and each target section (Windows paths and directories,
// Linux, conda-forge availability, Docker base images).
#include <algorithm>
#include <regex>

#include "check/check_rules.hpp"
#include "model/contracts.hpp"
#include "util/strings.hpp"

namespace core::rules {

using model::Os;
using model::Severity;
using model::Version;

namespace {

std::string cuda_variant(const Version& cuda) { return "cu" + std::to_string(cuda.major()) + std::to_string(cuda.minor()); }

bool has_windows(const Ctx& c) {
  return c.m.windows || c.m.archive_for(model::Platform::windows_x86_64) || c.m.archive_for(model::Platform::windows_arm64);
}
bool has_linux(const Ctx& c) {
  if (c.m.linux || c.m.docker) return true;
  if (!c.m.cudnn) return false;
  return std::any_of(c.m.cudnn->archives.begin(), c.m.cudnn->archives.end(),
                     [](const model::ArchivePin& a) { return !model::is_windows(a.platform.value); });
}

// ">=3.8, <=3.11, (3.12 experimental)" / "3.9-3.11" -> [min, max] on major.minor
std::pair<std::optional<Version>, std::optional<Version>> python_range(const std::string& text) {
  static const std::regex k_ge(R"(>=\s*([0-9]+\.[0-9]+))"), k_le(R"(<=\s*\(?\s*([0-9]+\.[0-9]+))"),
      k_dash(R"(^([0-9]+\.[0-9]+)\s*-\s*([0-9]+\.[0-9]+)$)");
  std::smatch m;
  std::optional<Version> lo, hi;
  if (std::regex_search(text, m, k_dash)) return {Version::parse(m[1].str()), Version::parse(m[2].str())};
  if (std::regex_search(text, m, k_ge)) lo = Version::parse(m[1].str());
  if (std::regex_search(text, m, k_le)) hi = Version::parse(m[1].str());
  return {lo, hi};
}

void judge_python(Ctx& c, const std::string& who, const std::string& range_text, const model::Sources& src) {
  if (!c.m.python || range_text.empty()) return;
  c.examined("framework.python");
  auto [lo, hi] = python_range(range_text);
  const Version& py = c.m.python->value;
  bool below = lo && compare_prefix(py, *lo, 2) < 0;
  bool above = hi && compare_prefix(py, *hi, 2) > 0;
  if (!below && !above) return;
  auto& f = c.add("framework.python", Severity::warning, who, c.m.python->pos);
  f.seen = "Python " + py.text();
  f.expected = "Python " + range_text;
  f.fix = "pin a Python version the framework publishes wheels for";
  f.source = knowledge::first_source(src);
}

}  // namespace

// --- driver ----------------------------------------------------------------------------------

void driver(Ctx& c) {
  std::vector<Os> oses;
  bool pinned_linux = c.m.driver && c.m.driver->linux, pinned_windows = c.m.driver && c.m.driver->windows;
  if (pinned_linux || has_linux(c)) oses.push_back(Os::linux);
  if (pinned_windows || has_windows(c)) oses.push_back(Os::windows);
  if (oses.empty()) oses = {Os::linux, Os::windows};

  c.examined("cuda.known");
  const auto* rel = c.kb.driver_release(c.cuda);
  if (!c.kb.driver_family(static_cast<int>(c.cuda.major()))) {
    auto& f = c.add("cuda.known", Severity::warning, "CUDA " + c.cuda.text(), c.m.cuda->version.pos);
    f.seen = "CUDA major " + std::to_string(c.cuda.major()) + " is not in the knowledge base";
    f.expected = "CUDA 11.x, 12.x or 13.x";
    f.fix = "driver minimums cannot be derived; pin [driver] by hand from NVIDIA's release notes";
  } else if (!rel) {
    auto& f = c.add("cuda.known", Severity::warning, "CUDA " + c.cuda.text(), c.m.cuda->version.pos);
    f.seen = "no CUDA " + c.cuda.prefix(2) + " release in NVIDIA's driver table";
    f.expected = "a CUDA toolkit release NVIDIA published";
    f.fix = "check the version; only the CUDA " + std::to_string(c.cuda.major()) + ".x floor can be applied";
  } else if (compare_prefix(rel->cuda, c.cuda, 3) != 0) {
    auto& f = c.add("cuda.known", Severity::note, "CUDA " + c.cuda.text(), c.m.cuda->version.pos);
    f.seen = "NVIDIA's table has no row of its own for " + c.cuda.text();
    f.expected = "";
    f.fix = "the minimum of the nearest earlier release, " + rel->cuda.text() + ", is used";
    f.source = knowledge::first_source(rel->source);
  }

  for (Os os : oses) {
    model::DriverMinimum dm = c.kb.required_driver(c.m, os);
    std::string subject = std::string("driver minimum (") + model::to_string(os) + ")";
    const std::optional<model::Located<Version>>* pin = nullptr;
    if (c.m.driver) pin = os == Os::linux ? &c.m.driver->linux : &c.m.driver->windows;
    if (pin && *pin) {
      c.examined("driver.minimum");
      const auto& p = **pin;
      if (dm.family_floor && p.value < *dm.family_floor) {
        auto& f = c.add("driver.minimum", Severity::error, subject, p.pos);
        f.seen = p.value.text();
        f.expected =
            ">= " + dm.family_floor->text() + " (no CUDA " + std::to_string(c.cuda.major()) + ".x application runs on an older driver)";
        f.fix = "set [driver] " + std::string(model::to_string(os)) + " = \"" +
                (dm.release_min ? dm.release_min->text() : dm.family_floor->text()) + "\" or newer";
        f.source = dm.source;
      } else if (dm.release_min && p.value < *dm.release_min) {
        auto& f = c.add("driver.minimum", Severity::warning, subject, p.pos);
        f.seen = p.value.text();
        f.expected = ">= " + dm.release_min->text() + " (NVIDIA's minimum for CUDA " + c.cuda.text() + ")";
        f.fix = "minor-version compatibility runs most code from " +
                (dm.family_floor ? dm.family_floor->text() : std::string("the family floor")) + " on, but PTX JIT and newer APIs need " +
                dm.release_min->text() + ": raise the pin";
        f.source = dm.source;
      } else {
        auto& f = c.add("driver.minimum", Severity::ok, subject, p.pos);
        f.seen = p.value.text();
        f.expected = ">= " + dm.effective;
        if (dm.release_min)
          f.expected = ">= " + dm.release_min->text();
        else if (dm.family_floor)
          f.expected = ">= " + dm.family_floor->text();
        f.source = dm.source;
      }
    } else {
      c.examined("driver.derived");
      auto& f = c.add("driver.derived", Severity::note, subject, c.m.driver ? c.m.driver->pos : c.m.cuda->version.pos);
      if (dm.release_min) {
        f.seen = "not pinned; derived " + dm.release_min->text() + " (NVIDIA's minimum for CUDA " + c.cuda.text() + ")";
      } else if (dm.family_floor) {
        f.seen = "not pinned; derived " + dm.family_floor->text() + " (CUDA " + std::to_string(c.cuda.major()) + ".x floor";
        f.seen += dm.release_na ? "; NVIDIA's release table lists N/A for Windows)" : ")";
      } else {
        f.seen = "not pinned; unknown for this CUDA release";
      }
      f.expected = dm.effective;
      f.source = dm.source;
    }
    c.report.drivers.push_back(std::move(dm));
  }
}

// --- frameworks ------------------------------------------------------------------------------

namespace {

void judge_torch(Ctx& c, const model::Located<Version>& v) {
  std::string subject = "torch " + v.value.text();
  c.examined("framework.known");
  const auto* rel = c.kb.torch_release(v.value);
  if (!rel) {
    auto& f = c.add("framework.known", Severity::warning, subject, v.pos);
    f.seen = "torch " + v.value.prefix(2) + " is not in the knowledge base";
    f.fix = "check PyTorch's compatibility matrix by hand; CUDA variant and bundled cuDNN cannot be judged";
    f.source = "PyTorch RELEASE.md (Release Compatibility Matrix)";
    return;
  }
  c.examined("framework.cuda-variant");
  std::string want = cuda_variant(c.cuda);
  std::vector<std::string> published = rel->variants;
  published.insert(published.end(), rel->extra_variants.begin(), rel->extra_variants.end());
  std::sort(published.begin(), published.end());
  std::string variant;
  auto first = rel->first_patch.find(want);
  const bool too_early = first != rel->first_patch.end() && compare_prefix(v.value, first->second, 3) < 0;
  const bool linux_only = std::find(rel->linux_only.begin(), rel->linux_only.end(), want) != rel->linux_only.end();
  if (std::find(published.begin(), published.end(), want) != published.end() && !too_early) {
    variant = want;
    auto& f = c.add("framework.cuda-variant", linux_only && has_windows(c) ? Severity::warning : Severity::ok, subject, v.pos);
    f.seen = "torch " + v.value.text() + "+" + want + " is published" +
             (linux_only ? " (Linux wheels; PyTorch builds no Windows " + want + " wheels of this release)" : "");
    if (linux_only && has_windows(c)) {
      f.fix = "on Windows pin a CUDA that torch " + v.value.prefix(2) + " publishes Windows wheels for (" + util::join(published, ", ") +
              " except " + want + ")";
      if (!rel->wheels_note.empty()) f.fix += "; " + rel->wheels_note;
    }
    f.source = knowledge::first_source(linux_only || first != rel->first_patch.end() ? rel->wheels_source : rel->source);
  } else if (too_early) {
    auto& f = c.add("framework.cuda-variant", Severity::error, subject, v.pos);
    f.seen = "torch " + want + " wheels are published from " + first->second.text() + " on, not for " + v.value.text();
    f.expected = "torch >= " + first->second.text() + " for " + want;
    f.fix =
        "pin torch " + first->second.text() + " or later, or another CUDA variant of this release (" + util::join(published, ", ") + ")";
    f.source = knowledge::first_source(rel->wheels_source);
  } else {
    // the newest variant of the same CUDA major that is not newer than the toolkit
    for (const auto& cand : published) {
      auto vv = Version::parse(cand.substr(2, cand.size() - 3) + "." + cand.substr(cand.size() - 1));
      if (!vv || vv->major() != c.cuda.major() || compare_prefix(*vv, c.cuda, 2) > 0) continue;
      if (variant.empty() || cand > variant) variant = cand;
    }
    auto& f = c.add("framework.cuda-variant", variant.empty() ? Severity::error : Severity::warning, subject, v.pos);
    f.seen = "no torch " + v.value.text() + " build for CUDA " + c.cuda.prefix(2) + " (" + want + ")";
    f.expected = "one of " + util::join(published, ", ");
    f.fix = variant.empty() ? "pin a torch release built for CUDA " + c.cuda.prefix(2) + ", or a CUDA version torch " + v.value.prefix(2) +
                                  " is built for (" + util::join(published, ", ") + ")"
                            : "the " + variant + " wheel runs on this CUDA " + std::to_string(c.cuda.major()) +
                                  " driver (wheels bring their own CUDA runtime); pin CUDA " + variant.substr(2, variant.size() - 3) + "." +
                                  variant.substr(variant.size() - 1) + " to match it exactly";
    f.source = knowledge::first_source(rel->source);
  }
  judge_python(c, subject, rel->python, rel->source);
  if (variant.empty()) return;

  model::WheelMatch w;
  w.framework = "torch";
  w.version = v.value.text();
  w.variant = variant;
  w.requirement = "torch==" + v.value.text() + "+" + variant;
  w.index_url = c.kb.torch_index_url(variant);
  w.source = knowledge::first_source(rel->source);
  c.examined("framework.bundled-cudnn");
  // what the wheel's METADATA pins wins over RELEASE.md's row (2.11's wheels pin a newer cuDNN)
  const auto pinned = rel->wheel_cudnn.find(variant);
  const bool by_wheel = pinned != rel->wheel_cudnn.end();
  const auto listed = rel->cudnn.find(variant);
  const Version* bundled = by_wheel ? &pinned->second : listed != rel->cudnn.end() ? &listed->second : nullptr;
  if (bundled) {
    w.bundled_cudnn = bundled->text();
    const std::string source = knowledge::first_source(by_wheel ? rel->wheel_pins_source : rel->source);
    if (c.m.cudnn && *bundled != c.cudnn) {
      auto& f = c.add("framework.bundled-cudnn", Severity::warning, subject + "+" + variant, v.pos);
      f.seen =
          "torch " + v.value.text() + "+" + variant +
          (by_wheel ? "'s wheel pins nvidia-cudnn-cu" + variant.substr(2, variant.size() - 3) + "==" + bundled->text() + " (its own cuDNN)"
                    : " brings its own cuDNN " + bundled->text());
      f.expected = "the pinned cuDNN " + c.cudnn.text();
      f.fix = "torch loads the cuDNN it bundles (torch.backends.cudnn.version() will report " + bundled->prefix(3) +
              "), not the pinned one; the pinned cuDNN serves other programs. Pin cuDNN " + bundled->text() +
              " to have one cuDNN in the stack";
      f.source = source;
    }
  }
  // from 2.11 the wheel's CUDA libraries come from one cuda-toolkit release
  if (auto t = rel->wheel_cuda.find(variant); t != rel->wheel_cuda.end() && c.cuda.size() == 3) {
    c.examined("framework.wheel-cuda");
    if (t->second != c.cuda) {
      auto& f = c.add("framework.wheel-cuda", Severity::note, subject + "+" + variant, v.pos);
      f.seen = "torch " + v.value.text() + "+" + variant + "'s wheel pins cuda-toolkit==" + t->second.text() +
               ": its CUDA runtime and libraries are that release's wheels";
      f.expected = "CUDA " + c.cuda.text() + " (the manifest's [cuda])";
      f.fix = "the wheels' libraries serve torch, the pinned toolkit everything else; pin [cuda] version = \"" + t->second.text() +
              "\" to have one CUDA release in the stack";
      f.source = knowledge::first_source(rel->wheel_pins_source);
    }
  }
  c.report.wheels.push_back(std::move(w));
}

void judge_tensorflow(Ctx& c, const model::Located<Version>& v) {
  std::string subject = "tensorflow " + v.value.text();
  const auto& notes = c.kb.facts();
  c.examined("framework.known");
  if (has_windows(c)) c.examined("framework.tensorflow-windows");
  if (has_windows(c) && notes.tensorflow_windows_native_gpu_last &&
      compare_prefix(v.value, *notes.tensorflow_windows_native_gpu_last, 2) > 0) {
    auto& f = c.add("framework.tensorflow-windows", Severity::error, subject, v.pos);
    f.seen = "TensorFlow " + v.value.text() + " with a Windows target";
    f.expected = "TensorFlow <= " + notes.tensorflow_windows_native_gpu_last->text() + " for GPU on native Windows";
    f.fix = "run TensorFlow " + v.value.text() + " in WSL2 (targets.linux), or pin tensorflow 2.10 for native Windows";
    f.source = knowledge::first_source(notes.tensorflow_notes_source);
  }
  auto builds = c.kb.tensorflow_builds(v.value, Os::linux);
  if (builds.empty()) {
    auto& f = c.add("framework.known", Severity::warning, subject, v.pos);
    f.seen = "TensorFlow " + v.value.prefix(2) + " is not in the knowledge base";
    f.fix = "check TensorFlow's tested build configurations by hand";
    f.source = "TensorFlow tested build configurations";
    return;
  }
  const auto& b = *builds.front();
  c.examined("framework.cuda-variant");
  c.examined("framework.required-cudnn");
  judge_python(c, subject, b.python, b.source);
  if (b.cuda.major() != c.cuda.major()) {
    auto& f = c.add("framework.cuda-variant", Severity::error, subject, v.pos);
    f.seen = "CUDA " + c.cuda.text();
    f.expected = "CUDA " + b.cuda.text() + " (TensorFlow " + b.version.text() + " is built against it)";
    f.fix = "pin CUDA " + std::to_string(b.cuda.major()) + ".x, or a TensorFlow built for CUDA " + std::to_string(c.cuda.major());
    f.source = knowledge::first_source(b.source);
  }
  if (!c.m.cudnn) {
    auto& f = c.add("framework.required-cudnn", Severity::note, subject, v.pos);
    f.seen = "the manifest leaves cuDNN to the machine; TensorFlow " + b.version.text() + " needs cuDNN " + b.cudnn.text() +
             " or a newer " + std::to_string(b.cudnn.major()) + ".x";
    f.fix = "`stackpin doctor --manifest` judges the machine's cuDNN";
    f.source = knowledge::first_source(b.source);
  } else if (b.cudnn.major() != c.cudnn.major() || c.cudnn.minor() < b.cudnn.minor()) {
    auto& f = c.add("framework.required-cudnn", Severity::error, subject, v.pos);
    f.seen = "cuDNN " + c.cudnn.text();
    f.expected = "cuDNN " + b.cudnn.text() + " or a newer " + std::to_string(b.cudnn.major()) +
                 ".x (TensorFlow needs the same major and a minor at least the one it was built with)";
    f.fix = "pin cuDNN " + std::to_string(b.cudnn.major()) + ".x >= " + b.cudnn.text();
    f.source = knowledge::first_source(b.source);
  } else {
    auto& f = c.add("framework.required-cudnn", Severity::ok, subject, v.pos);
    f.seen = "cuDNN " + c.cudnn.prefix(3) + " satisfies TensorFlow's " + b.cudnn.text();
    f.source = knowledge::first_source(b.source);
  }
  model::WheelMatch w;
  w.framework = "tensorflow";
  w.version = v.value.text();
  w.requirement = "tensorflow==" + v.value.text();
  w.source = knowledge::first_source(b.source);
  c.report.wheels.push_back(std::move(w));
}

void judge_onnxruntime(Ctx& c, const model::Located<Version>& v) {
  std::string subject = "onnxruntime-gpu " + v.value.text();
  c.examined("framework.known");
  auto rows = c.kb.onnxruntime_rows(v.value);
  if (rows.empty()) {
    auto& f = c.add("framework.known", Severity::warning, subject, v.pos);
    f.seen = "ONNX Runtime " + v.value.prefix(2) + " is not in the knowledge base";
    f.fix = "check ONNX Runtime's CUDA execution provider requirements by hand";
    f.source = knowledge::first_source(c.kb.facts().onnxruntime_notes_source);
    return;
  }
  c.examined("framework.cuda-variant");
  const model::OnnxRuntimeRow* row = nullptr;
  for (auto* r : rows)
    if (r->cuda_major == static_cast<int>(c.cuda.major())) row = r;
  if (!row) {
    std::vector<std::string> majors;
    for (auto* r : rows) majors.push_back("CUDA " + r->cuda);
    auto& f = c.add("framework.cuda-variant", Severity::error, subject, v.pos);
    f.seen = "CUDA " + c.cuda.text();
    f.expected = util::join(majors, ", ");
    f.fix = "ONNX Runtime " + v.value.text() + " has no CUDA " + std::to_string(c.cuda.major()) + " build: change one of the two";
    f.source = knowledge::first_source(rows.front()->source);
    return;
  }
  c.examined("framework.required-cudnn");
  if (!c.m.cudnn) {
    auto& f = c.add("framework.required-cudnn", Severity::note, subject, v.pos);
    f.seen = "the manifest leaves cuDNN to the machine; ONNX Runtime " + v.value.text() + " needs cuDNN " +
             std::to_string(row->cudnn_major) + ".x";
    f.fix = "`stackpin doctor --manifest` judges the machine's cuDNN";
    f.source = knowledge::first_source(row->source);
  } else if (row->cudnn_major != static_cast<int>(c.cudnn.major())) {
    auto& f = c.add("framework.required-cudnn", Severity::error, subject, v.pos);
    f.seen = "cuDNN " + c.cudnn.text();
    f.expected = "cuDNN " + std::to_string(row->cudnn_major) + ".x";
    f.fix = "ONNX Runtime built with cuDNN " + std::to_string(row->cudnn_major) + ".x cannot use another major: pin cuDNN " +
            std::to_string(row->cudnn_major) + ".x or another onnxruntime-gpu";
    f.source = knowledge::first_source(row->source);
  } else {
    auto& f = c.add("framework.required-cudnn", Severity::ok, subject, v.pos);
    f.seen = "CUDA " + row->cuda + " / cuDNN " + std::to_string(row->cudnn_major) + ".x";
    f.source = knowledge::first_source(row->source);
  }
  if (row->pypi == false) {
    // the build exists, but not where pip (the lock, the Dockerfile, the conda environment) gets
    // onnxruntime-gpu from: what they would install is the other CUDA major's build
    const auto* pypi = c.kb.onnxruntime_pypi_row(v.value);
    auto& f = c.add("framework.cuda-variant", Severity::error, subject, v.pos);
    f.seen = "PyPI's onnxruntime-gpu " + v.value.text() + " is " +
             (pypi ? "the CUDA " + pypi->cuda + " build" : std::string("not the CUDA ") + row->cuda + " build");
    f.expected = "the CUDA " + row->cuda + " build of onnxruntime-gpu " + v.value.text();
    std::string newer;
    for (const auto& r : c.kb.facts().onnxruntime)
      if (r.cuda_major == row->cuda_major && r.pypi == true && v.value < r.first) newer = r.first.text();
    f.fix = (newer.empty() ? std::string() : "pin onnxruntime-gpu " + newer + " or newer, which PyPI serves for CUDA " + row->cuda + "; ") +
            "pip would install the other build, whose CUDA provider does not load here. The CUDA " + row->cuda +
            " build is published apart from PyPI: " + row->note;
    f.source = knowledge::first_source(row->source);
  }
  model::WheelMatch w;
  w.framework = "onnxruntime-gpu";
  w.version = v.value.text();
  w.requirement = "onnxruntime-gpu==" + v.value.text();
  w.source = knowledge::first_source(row->source);
  c.report.wheels.push_back(std::move(w));
}

}  // namespace

void frameworks(Ctx& c) {
  for (const auto& [name, v] : c.m.frameworks) {
    if (name == "torch")
      judge_torch(c, v);
    else if (name == "tensorflow")
      judge_tensorflow(c, v);
    else if (name == "onnxruntime-gpu")
      judge_onnxruntime(c, v);
    else {
      c.examined("framework.known");
      auto& f = c.add("framework.known", Severity::note, name + " " + v.value.text(), v.pos);
      f.seen = "stackpin has no compatibility facts for " + name + "; it is pinned as written";
      f.fix = "pick the " + name + " release that matches your torch release";
    }
  }
}

// --- targets ---------------------------------------------------------------------------------

namespace {
std::string backslashes(std::string s) {
  std::replace(s.begin(), s.end(), '/', '\\');
  return s;
}
}  // namespace

void windows_target(Ctx& c) {
  if (has_windows(c)) {
    c.examined("windows.layout");
    c.examined("windows.zlibwapi");
    model::WindowsDirs dirs;
    const model::Platform platform = c.m.windows_platform();
    const auto* dll = c.kb.windows_dll_dir(c.cudnn, platform);
    const auto* lib = c.kb.windows_import_lib_dir(c.cudnn, platform);
    const auto* contents = c.kb.cudnn_contents(static_cast<int>(c.cudnn.major()));
    if (!dll || !lib || !contents) {
      auto& f = c.add("windows.layout", Severity::warning, "Windows layout of cuDNN " + c.cudnn.text(), c.m.cudnn->version.pos);
      f.seen = "the knowledge base has no " + std::string(model::to_string(platform)) + " archive layout for cuDNN " + c.cudnn.prefix(3);
      f.fix = "staging for Windows will refuse this version until its layout is added to data/knowledge/cudnn-layouts.toml";
    } else {
      dirs.dll_dir = backslashes(dll->dirs.front());
      dirs.import_lib_dir = backslashes(lib->dirs.front());
      dirs.main_dll = contents->main_dll;
      dirs.verified = dll->verified && lib->verified;
      dirs.source = knowledge::first_source(lib->source);
      if (!lib->verified) {
        auto& f = c.add("windows.layout", Severity::note, "Windows layout of cuDNN " + c.cudnn.text(), c.m.cudnn->version.pos);
        std::vector<std::string> alts;
        for (const auto& d : lib->dirs) alts.push_back(backslashes(d));
        f.seen = "import libraries in " + util::join(alts, " or ") + " (not verified for " + c.cudnn.prefix(2) + ")";
        f.fix = "staging takes whichever of these the archive has";
        f.source = knowledge::first_source(lib->source);
      }
    }
    dirs.zlibwapi_needed = c.kb.zlibwapi_needed(c.cudnn);
    if (dirs.zlibwapi_needed) {
      const auto& z = *c.kb.facts().zlibwapi;
      auto& f = c.add("windows.zlibwapi", Severity::warning, "cuDNN " + c.cudnn.text() + " on Windows", c.m.cudnn->version.pos);
      f.seen =
          "cuDNN " + z.from.text() + " up to " + z.until.text() + " (exclusive) loads " + z.dll + ", which the cuDNN zip does not ship";
      f.expected = z.dll + " reachable on PATH";
      f.fix =
          "put zlibwapi.dll (x64) next to the cuDNN DLLs or on PATH; without it cuDNN fails with "
          "\"Could not locate zlibwapi.dll\". cuDNN " +
          z.until.text() + " and later link zlib statically";
      f.source = knowledge::first_source(z.source);
    }
    c.report.windows = dirs;
  }
  if (!c.m.windows) return;
  const auto& w = *c.m.windows;
  std::string subject = "[targets.windows]";
  c.examined("windows.archive");
  const model::Platform platform = w.platform.value;
  const std::string pname = model::to_string(platform);
  if (!c.m.archive_for(platform) && !c.kb.cudnn_archive(c.cudnn, c.cudnn_cuda, platform)) {
    auto& f = c.add("windows.archive", Severity::warning, subject, w.pos);
    f.seen = "no [[cudnn.archives]] for " + pname;
    f.fix = "pin the " + pname + " archive: `stackpin stage --target windows` needs it";
    if (platform == model::Platform::windows_arm64)
      f.fix +=
          " (NVIDIA builds cuDNN for Windows on Arm from 9.25, for CUDA 13 only: `stackpin check --explain` lists each release's "
          "platforms)";
  }
  const model::Platform other =
      platform == model::Platform::windows_arm64 ? model::Platform::windows_x86_64 : model::Platform::windows_arm64;
  if (const auto* a = c.m.archive_for(other)) {
    auto& f = c.add("windows.archive", Severity::warning, "[[cudnn.archives]] " + std::string(model::to_string(other)), a->platform.pos);
    f.seen = "the manifest pins a " + std::string(model::to_string(other)) + " archive, but [targets.windows] targets " + pname;
    f.fix = "set arch = \"" + std::string(model::windows_arch_dir(other)) + "\" in [targets.windows], or pin the " + pname + " archive";
  }
  bool isolated = w.layout.value == model::WindowsLayout::isolated;
  if (isolated) c.examined("windows.prefix");
  if (!isolated || w.cuda_path) c.examined("windows.cuda-path");
  if (isolated && !w.prefix) {
    auto& f = c.add("windows.prefix", Severity::error, subject, w.layout.pos);
    f.seen = "layout = \"isolated\" without a prefix";
    f.fix = "add prefix = 'C:\\tools\\cudnn\\v" + c.cudnn.prefix(3) + "' (where the tree will live on the Windows machine)";
  }
  if (!isolated && !w.cuda_path) {
    auto& f = c.add("windows.cuda-path", Severity::error, subject, w.layout.pos);
    f.seen = "layout = \"cuda-merge\" without cuda_path";
    f.fix = "add cuda_path = 'C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v" + c.cuda.prefix(2) + "'";
  }
  for (const auto* p : {&w.prefix, &w.cuda_path}) {
    if (!*p) continue;
    const auto& path = (*p)->value;
    std::string key = p == &w.prefix ? "prefix" : "cuda_path";
    c.examined("windows.path");
    c.examined("windows.path-chars");
    if (!model::is_windows_absolute(path)) {
      auto& f = c.add("windows.path", Severity::error, subject + " " + key, (*p)->pos);
      f.seen = path;
      f.expected = "an absolute Windows path (C:\\... or \\\\server\\share\\...)";
      f.fix =
          "write the full path on the Windows machine, in single quotes ('C:\\tools\\cudnn'; with an apostrophe in it: "
          "'''C:\\Users\\O'Brien\\cudnn''')";
    }
    bool spaces = path.find(' ') != std::string::npos, ascii = util::is_ascii(path);
    // The toolkit's own default location has spaces; only the user's chosen prefix is judged for them.
    if ((key == "prefix" && spaces) || !ascii) {
      auto& f = c.add("windows.path-chars", Severity::warning, subject + " " + key, (*p)->pos);
      f.seen = path + (ascii ? " contains spaces" : " contains non-ASCII characters");
      f.fix = "prefer a short ASCII path without spaces (e.g. C:\\tools\\cudnn\\v" + c.cudnn.prefix(3) +
              "): build tools and scripts that do not quote paths break on them";
    }
  }
  if (w.cuda_path) {
    static const std::regex k_ver(R"([\\/]v([0-9]+)\.([0-9]+)[\\/]?$)");
    std::smatch m;
    if (std::regex_search(w.cuda_path->value, m, k_ver) &&
        (m[1].str() != std::to_string(c.cuda.major()) || m[2].str() != std::to_string(c.cuda.minor()))) {
      auto& f = c.add("windows.cuda-path", Severity::error, subject + " cuda_path", w.cuda_path->pos);
      f.seen = w.cuda_path->value + " is the CUDA " + m[1].str() + "." + m[2].str() + " toolkit";
      f.expected = "the CUDA " + c.cuda.prefix(2) + " toolkit (...\\CUDA\\v" + c.cuda.prefix(2) + ")";
      f.fix = "merge cuDNN into the toolkit [cuda] pins, or change [cuda]";
    }
  }
}

void linux_target(Ctx& c) {
  if (!c.m.linux) return;
  const auto& l = *c.m.linux;
  c.examined("linux.archive");
  if (l.layout.value == model::LinuxLayout::lib64) c.examined("linux.prefix");
  bool any_linux = std::any_of(c.m.cudnn->archives.begin(), c.m.cudnn->archives.end(),
                               [](const model::ArchivePin& a) { return !model::is_windows(a.platform.value); });
  // a manifest that names only the version gets NVIDIA's archives from the knowledge base
  any_linux = any_linux || c.kb.cudnn_archive(c.cudnn, c.cudnn_cuda, model::host_linux_platform());
  if (!any_linux) {
    auto& f = c.add("linux.archive", Severity::warning, "[targets.linux]", l.pos);
    f.seen = "no [[cudnn.archives]] for a Linux platform";
    f.fix = "pin the Linux archive: staging and .deb building need it";
  }
  if (l.layout.value == model::LinuxLayout::lib64 && !l.prefix) {
    auto& f = c.add("linux.prefix", Severity::note, "[targets.linux]", l.pos);
    f.seen = "no prefix";
    f.fix = "stage will need --dest; add prefix = \"/usr/local/cudnn-" + c.cudnn.prefix(3) + "\" to make it the default";
  }
}

void conda_target(Ctx& c) {
  if (!c.m.conda) return;
  const auto& t = *c.m.conda;
  c.examined("conda.channel");
  Version want = t.cudnn ? t.cudnn->value : c.cudnn;
  model::Pos pos = t.cudnn ? t.cudnn->pos : t.pos;
  std::string subject = "conda-forge cudnn=" + want.text();
  bool forge =
      t.channels.empty() || std::any_of(t.channels.begin(), t.channels.end(), [](const auto& ch) { return ch.value == "conda-forge"; });
  if (!forge) {
    auto& f = c.add("conda.channel", Severity::note, "[targets.conda] channels", t.pos);
    f.seen = "conda-forge is not among the channels";
    f.fix = "stackpin knows conda-forge's cudnn builds only; other channels are not judged";
    return;
  }
  c.examined("conda.cudnn");
  c.examined("conda.differs");
  const auto* cf = c.kb.conda_forge_cudnn(want);
  if (!cf) {
    std::vector<std::string> near;
    // Only builds for this CUDA major: a suggestion conda-forge builds for another major only would
    // fail the same way.
    auto for_major = [&](const model::CondaCudnn& x) {
      return std::find(x.cuda_majors.begin(), x.cuda_majors.end(), static_cast<int>(c.cuda.major())) != x.cuda_majors.end();
    };
    for (const auto& x : c.kb.facts().conda_forge_cudnn)
      if (compare_prefix(x.version, want, 2) == 0 && for_major(x)) near.push_back(x.version.text());
    if (near.empty())
      for (const auto& x : c.kb.facts().conda_forge_cudnn)
        if (x.version.major() == want.major() && for_major(x)) near.push_back(x.version.text());
    auto& f = c.add("conda.cudnn", Severity::error, subject, pos);
    f.seen =
        "conda-forge does not publish cudnn " + want.text() + " (`conda install -c conda-forge cudnn=" + want.text() + "` cannot succeed)";
    f.expected = "a version conda-forge publishes: " + util::join(near, ", ");
    f.fix = "set [targets.conda] cudnn = \"" + (near.empty() ? std::string("...") : near.back()) +
            "\" (the conda environment then differs from the archive pin, which check reports as a note)";
    f.source = knowledge::first_source(c.kb.facts().conda_forge_cudnn.front().source);
    return;
  }
  if (std::find(cf->cuda_majors.begin(), cf->cuda_majors.end(), static_cast<int>(c.cuda.major())) == cf->cuda_majors.end()) {
    std::vector<std::string> majors;
    for (int m : cf->cuda_majors) majors.push_back("CUDA " + std::to_string(m));
    auto& f = c.add("conda.cudnn", Severity::error, subject, pos);
    f.seen = "conda-forge builds cudnn " + want.text() + " for " + util::join(majors, ", ") + " only";
    f.expected = "a build for CUDA " + std::to_string(c.cuda.major());
    f.fix = "pick a cudnn conda-forge builds for CUDA " + std::to_string(c.cuda.major()) + "; never mix two CUDA majors in one environment";
    f.source = knowledge::first_source(cf->source);
    return;
  }
  auto& f = c.add("conda.cudnn", Severity::ok, subject, pos);
  f.seen = "published for CUDA " + std::to_string(c.cuda.major()) + " (cuda-version " + c.cuda.prefix(2) + ")";
  f.source = knowledge::first_source(cf->source);
  if (want != c.cudnn) {
    auto& g = c.add("conda.differs", Severity::note, subject, pos);
    g.seen = "the conda environment gets cuDNN " + want.text() + ", the archives pin " + c.cudnn.text();
    g.fix = "expected when conda-forge lacks the pinned build; programs in the environment load " + want.prefix(3);
  }
}

void docker_target(Ctx& c) {
  if (!c.m.docker) return;
  const auto& d = *c.m.docker;
  std::string subject = "[targets.docker]";
  c.examined("docker.base-image");
  const bool hermetic = d.cuda.value == model::DockerCuda::archive;
  if (hermetic) c.examined("docker.cuda-archive");
  if (hermetic && c.m.cuda && c.m.cuda->components.empty()) {
    auto& f = c.add("docker.cuda-archive", Severity::error, subject + " cuda", d.cuda.pos);
    f.seen = "cuda = \"archive\" builds the toolkit from the pinned [cuda] components, and [cuda] lists none";
    f.fix = "add components = [\"runtime\"] to [cuda] (or \"torch\", \"devel\"), or use cuda = \"base\"";
  }
  if (hermetic && !d.base_image) {
    auto& f = c.add("docker.base-image", Severity::note, subject, d.pos);
    f.seen = "no base_image; `stackpin generate dockerfile` starts from debian:bookworm-slim and installs the pinned CUDA components";
    f.fix = "set base_image (and base_digest) to the distribution your images use";
    return;
  }
  if (!d.base_image) {
    auto& f = c.add("docker.base-image", Severity::note, subject, d.pos);
    f.seen = "no base_image; `stackpin generate dockerfile` uses NVIDIA's CUDA " + c.cuda.prefix(3) +
             " runtime image without cuDNN, from the tags the knowledge base knows";
    return;
  }
  const std::string& image = d.base_image->value;
  auto colon = image.rfind(':');
  auto slash = image.rfind('/');
  std::string repo = colon == std::string::npos || (slash != std::string::npos && colon < slash) ? image : image.substr(0, colon);
  std::string tag = repo.size() < image.size() ? image.substr(colon + 1) : "";
  bool nvidia = repo == "nvidia/cuda" || (repo.size() > 12 && repo.compare(repo.size() - 12, 12, "/nvidia/cuda") == 0);
  if (hermetic && nvidia) {
    auto& f = c.add("docker.base-image", Severity::warning, subject + " base_image", d.base_image->pos);
    f.seen = image + " carries NVIDIA's own CUDA toolkit, and cuda = \"archive\" installs the pinned one beside it";
    f.expected = "a plain distribution base";
    f.fix = "use base_image = \"debian:bookworm-slim\" or \"ubuntu:24.04\" (or cuda = \"base\" to use this image's toolkit)";
  } else if (hermetic) {
    auto& f = c.add("docker.base-image", Severity::note, subject + " base_image", d.base_image->pos);
    f.seen = image + ": the pinned CUDA components and cuDNN are installed on it from their verified archives";
  } else if (!nvidia) {
    auto& f = c.add("docker.base-image", Severity::note, subject + " base_image", d.base_image->pos);
    f.seen = image + " is not an NVIDIA CUDA image; its CUDA and cuDNN cannot be judged";
  } else {
    static const std::regex k_tag(R"(^([0-9]+\.[0-9]+(?:\.[0-9]+)?)-(?:(cudnn[0-9]*)-)?(base|runtime|devel)-(.+)$)");
    std::smatch m;
    if (!std::regex_match(tag, m, k_tag)) {
      auto& f = c.add("docker.base-image", Severity::warning, subject + " base_image", d.base_image->pos);
      f.seen = "tag \"" + tag + "\" does not follow NVIDIA's {cuda}-[cudnn-]{base|runtime|devel}-{os} naming";
      f.fix = "use a tag like " + c.cuda.prefix(3) + "-runtime-ubuntu22.04";
    } else {
      c.examined("docker.base-cuda");
      c.examined("docker.base-cudnn");
      auto tag_cuda = Version::parse(m[1].str());
      if (tag_cuda && compare_prefix(*tag_cuda, c.cuda, 3) != 0) {
        auto& f = c.add("docker.base-cuda", Severity::error, subject + " base_image", d.base_image->pos);
        f.seen = image + " carries CUDA " + tag_cuda->text();
        f.expected = "CUDA " + c.cuda.text();
        f.fix = "use nvidia/cuda:" + c.cuda.prefix(3) + "-runtime-ubuntu22.04 (or change [cuda])";
        f.source = knowledge::first_source(c.kb.facts().docker_source);
      }
      if (m[2].matched) {
        const auto* known = c.kb.docker_tag(tag);
        std::string suffix = m[2].str();
        if (known && known->cudnn != c.cudnn) {
          auto& f = c.add("docker.base-cudnn", Severity::error, subject + " base_image", d.base_image->pos);
          f.seen = image + " already carries cuDNN " + known->cudnn.text() + " (" + known->apt_package + ")";
          f.expected = "a base without cuDNN, or one with the pinned " + c.cudnn.text();
          f.fix = "use nvidia/cuda:" + m[1].str() + "-" + m[3].str() + "-" + m[4].str() +
                  " (no cuDNN): two cuDNNs in one image load whichever the loader finds first";
          f.source = knowledge::first_source(known->source);
        } else if (known) {
          auto& f = c.add("docker.base-cudnn", Severity::note, subject + " base_image", d.base_image->pos);
          f.seen = image + " already carries the pinned cuDNN " + known->cudnn.text();
          f.fix = "staging the archive on top is redundant; a base without cuDNN keeps one copy";
          f.source = knowledge::first_source(known->source);
        } else {
          std::string digits = suffix.substr(5);
          bool other_major = !digits.empty() && digits != std::to_string(c.cudnn.major());
          auto& f =
              c.add("docker.base-cudnn", other_major ? Severity::error : Severity::warning, subject + " base_image", d.base_image->pos);
          f.seen = image + " carries a cuDNN" + (digits.empty() ? "" : " " + digits + ".x") + " stackpin cannot identify";
          f.expected = "a base without cuDNN";
          f.fix = "use nvidia/cuda:" + m[1].str() + "-" + m[3].str() + "-" + m[4].str();
          f.source = knowledge::first_source(c.kb.facts().docker_source);
        }
      }
    }
  }
  c.examined("docker.digest");
  if (!d.base_digest) {
    auto& f = c.add("docker.digest", Severity::note, subject, d.base_image->pos);
    f.seen = "base image pinned by tag only";
    f.fix = "tags move; add base_digest = \"sha256:...\" for byte-identical images";
  }
  if (d.cudnn.value == model::DockerCudnn::apt) {
    c.examined("docker.apt");
    std::string pkg = c.cudnn.major() >= 9 ? "libcudnn9-cuda-" + std::to_string(c.cudnn_cuda) + "=" + c.cudnn.text() + "-1"
                                           : "libcudnn8=" + c.cudnn.text() + "-1+cuda" + c.cuda.prefix(2);
    auto& f = c.add("docker.apt", Severity::note, subject + " cudnn = \"apt\"", d.cudnn.pos);
    f.seen = "installs " + pkg + " from NVIDIA's apt repository";
    f.fix = "stackpin cannot see that repository's index: the build fails if NVIDIA has no such package";
    f.source = knowledge::first_source(c.kb.facts().apt_naming_source);
  }
}

}  // namespace core::rules
