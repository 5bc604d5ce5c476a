// generate conda: every decision about the environment is made here, from the manifest and the
// knowledge base, and handed to the pure renderer in gen/conda.cpp.
//
// The frameworks are judged by `check` itself, on a copy of the manifest whose [cudnn] version is
// the cuDNN the environment really gets (conda-forge's): the CUDA variant of torch, its index URL
// and bundled cuDNN, TensorFlow's and ONNX Runtime's CUDA major and cuDNN needs all come from the
// same rules, so `generate conda` cannot disagree with `check`.
#include "core/package/conda.hpp"
#include "core/python/python_env.hpp"

#include <algorithm>
#include <optional>

#include "core/archives/lock.hpp"
#include "core/check/check.hpp"
#include "gen/quote.hpp"
#include "util/strings.hpp"

namespace core {

using model::Version;
using util::Error;
using util::ErrorCode;

namespace {

constexpr const char* k_forge = "conda-forge";

Error refuse(const model::Manifest& m, model::Pos pos, std::string message) {
  Error e(ErrorCode::invalid, std::move(message));
  if (pos.line > 0) e.where = m.locate(pos);
  return e;
}

bool has(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// A cuDNN conda-forge publishes for `cuda_major`, to name in a refusal: the nearest at or above
// `want` in the same major.minor, then in the same cuDNN major, then the newest below it in that
// major, then the newest of any major. Empty when there is none for that CUDA major.
std::string suggest_cudnn(const knowledge::KnowledgeBase& kb, const Version& want, int cuda_major) {
  std::vector<Version> same_minor, same_major, any;
  for (const auto& c : kb.facts().conda_forge_cudnn) {
    if (!has(c.cuda_majors, cuda_major)) continue;
    any.push_back(c.version);
    if (c.version.major() != want.major()) continue;
    same_major.push_back(c.version);
    if (c.version.minor() == want.minor()) same_minor.push_back(c.version);
  }
  for (auto* list : {&same_minor, &same_major, &any}) std::sort(list->begin(), list->end());
  for (auto* list : {&same_minor, &same_major})
    for (const auto& v : *list)
      if (v >= want) return v.text();
  if (!same_major.empty()) return same_major.back().text();
  return any.empty() ? "" : any.back().text();
}

std::string published_for(const knowledge::KnowledgeBase& kb, int cudnn_major, int cuda_major) {
  std::vector<std::string> out;
  for (const auto& c : kb.facts().conda_forge_cudnn)
    if (has(c.cuda_majors, cuda_major) && static_cast<int>(c.version.major()) == cudnn_major) out.push_back(c.version.text());
  return util::join(out, ", ");
}

util::Result<Version> choose_cudnn(const model::Manifest& m, const knowledge::KnowledgeBase& kb, int cuda_major, CondaPlan& plan) {
  const auto* t = m.conda ? &*m.conda : nullptr;
  const Version& pin = m.cudnn->version.value;
  bool own = t && t->cudnn;
  Version want = own ? t->cudnn->value : pin;
  model::Pos pos = own ? t->cudnn->pos : m.cudnn->version.pos;
  std::string from = own ? "[targets.conda] cudnn" : "[cudnn] version";
  const auto* cf = kb.conda_forge_cudnn(want);
  if (!cf || !has(cf->cuda_majors, cuda_major)) {
    std::string message;
    if (!cf) {
      message = from + " " + want.text() + ": conda-forge does not publish cudnn " + want.text() + " (`cudnn=" + want.text() +
                "` cannot be installed from it)";
    } else {
      std::vector<std::string> majors;
      for (int x : cf->cuda_majors) majors.push_back("CUDA " + std::to_string(x));
      message = from + " " + want.text() + ": conda-forge builds cudnn " + want.text() + " for " + util::join(majors, " and ") +
                " only, not for CUDA " + std::to_string(cuda_major) + " ([cuda] " + m.cuda->version.value.text() +
                "); installing it would mix two CUDA majors in one environment";
    }
    Error e = refuse(m, pos, message);
    std::string s = suggest_cudnn(kb, want, cuda_major);
    if (s.empty()) {
      e.hints.push_back("the knowledge base records no conda-forge cudnn for CUDA " + std::to_string(cuda_major));
    } else {
      auto v = *Version::parse(s);
      e.hints.push_back("set [targets.conda] cudnn = \"" + s + "\" (conda-forge's cuDNN " + std::to_string(v.major()) +
                        ".x builds for CUDA " + std::to_string(cuda_major) + ": " +
                        published_for(kb, static_cast<int>(v.major()), cuda_major) + ")");
    }
    return e;
  }
  gen::CondaEntry entry;
  entry.spec = "cudnn=" + want.text();
  std::vector<std::string> majors;
  for (int x : cf->cuda_majors) majors.push_back(std::to_string(x));
  entry.comments.push_back("cuDNN " + want.text() + " (" + from + "): conda-forge publishes it for CUDA " + util::join(majors, " and ") +
                           " (" + knowledge::first_source(cf->source) + ").");
  if (want != pin) {
    bool pin_there = kb.conda_forge_cudnn(pin) != nullptr;
    entry.comments.push_back("The archives pin cuDNN " + pin.text() + (pin_there ? "" : ", which conda-forge does not publish") +
                             "; programs in this environment load cuDNN " + want.prefix(3) + ".");
    plan.notes.push_back("the conda environment gets cuDNN " + want.text() + " from conda-forge; the archives pin " + pin.text());
  }
  plan.spec.dependencies.push_back(std::move(entry));
  return want;
}

util::Status choose_channels(const model::Manifest& m, CondaPlan& plan) {
  const auto& cuda = m.cuda->version.value;
  auto& s = plan.spec;
  model::Pos pos = m.conda ? m.conda->pos : model::Pos{};
  if (m.conda)
    for (const auto& c : m.conda->channels) s.channels.push_back(c.value);
  if (s.channels.empty()) {
    s.channels.push_back(k_forge);
    s.header_notes.push_back(std::string("Channels: conda-forge (") +
                             (m.conda ? "[targets.conda] lists none" : "the manifest has no [targets.conda]") + ").");
  }
  if (std::find(s.channels.begin(), s.channels.end(), k_forge) == s.channels.end())
    return refuse(m, pos,
                  "[targets.conda] channels do not include conda-forge: stackpin knows conda-forge's cudnn builds only, "
                  "so it cannot vouch for a cudnn from " +
                      util::join(s.channels, ", "))
        .with_hint("add \"conda-forge\" to [targets.conda] channels");
  if (s.channels.front() != k_forge)
    s.header_notes.push_back("cuda-version and cudnn are judged against conda-forge's builds; with " + gen::yaml_quote(s.channels.front()) +
                             " listed first and strict channel priority, conda takes them from there when it has them.");
  if (!m.conda) return {};
  for (const auto& c : m.conda->channels) {
    static const std::string k_label = "nvidia/label/cuda-";
    auto at = c.value.find(k_label);
    if (at != std::string::npos) {
      auto v = Version::parse(c.value.substr(at + k_label.size()));
      if (!v) continue;
      if (v->major() != cuda.major())
        return refuse(m, c.pos,
                      "channel \"" + c.value + "\" holds NVIDIA's CUDA " + v->text() + " packages, but [cuda] is " + cuda.text() +
                          ": one conda environment never mixes two CUDA majors")
            .with_hint("use the label of [cuda]'s release, nvidia/label/cuda-" + cuda.text() + ", or drop the channel");
      if (compare_prefix(*v, cuda, std::min(v->size(), cuda.size())) != 0)
        return refuse(m, c.pos,
                      "channel \"" + c.value + "\" holds NVIDIA's CUDA " + v->text() + " packages, but [cuda] pins " + cuda.text() +
                          " and cuda-version=" + cuda.prefix(2))
            .with_hint("use the label of [cuda]'s release, nvidia/label/cuda-" + cuda.text() + ", or drop the channel");
      s.header_notes.push_back("Channel " + gen::yaml_quote(c.value) + ": NVIDIA's packages of CUDA " + v->text() +
                               ", the release [cuda] pins.");
    }
    const auto& name = c.value;
    if (name == "pytorch" || (name.size() > 8 && name.compare(name.size() - 8, 8, "/pytorch") == 0)) {
      s.header_notes.push_back("Channel " + gen::yaml_quote(name) +
                               " is listed as the manifest asks, but torch comes from pip: the knowledge base records which torch "
                               "wheels exist for each CUDA variant, not which builds the pytorch channel carries.");
      plan.notes.push_back("the pytorch channel is listed, but torch comes from pip (PyTorch's wheel index)");
    }
  }
  return {};
}

std::string version_of(const model::Manifest& m, const char* name) {
  auto it = m.frameworks.find(name);
  return it == m.frameworks.end() ? "" : it->second.value.text();
}

util::Status choose_frameworks(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const Version& cudnn, const model::Lock* lock,
                               CondaPlan& plan) {
  if (m.frameworks.empty()) return {};
  const auto& cuda = m.cuda->version.value;
  int cuda_major = static_cast<int>(cuda.major());
  if (!m.python)
    return refuse(m, m.frameworks_pos, "the frameworks come from pip, which needs the environment's Python: [python] version is not set")
        .with_hint("add [python] version = \"3.X\", a version the frameworks publish wheels for");

  // `check` on the environment as conda builds it: conda-forge's cudnn instead of the archive pin.
  model::Manifest env = m;
  env.cudnn->version.value = cudnn;
  env.conda.reset();
  SP_TRY_ASSIGN(auto report, check_manifest(env, kb));
  if (lock) use_locked_builds(report, *lock);
  for (const auto& f : report.findings) {
    if (f.severity != model::Severity::error) continue;
    std::string why;
    if (f.rule == "framework.cuda-variant")
      why = " (the environment is CUDA " + cuda.text() + "; a build for another CUDA major would mix two in one environment)";
    else if (f.rule == "framework.required-cudnn")
      why = " (the environment's cuDNN is conda-forge's cudnn " + cudnn.text() + ")";
    else
      continue;
    Error e(ErrorCode::invalid,
            f.subject + " cannot go into the conda environment: " + f.seen + (f.expected.empty() ? "" : "; expected " + f.expected) + why);
    e.where = f.where;
    if (!f.fix.empty()) e.hints.push_back(f.fix);
    return e;
  }
  for (const auto& f : report.findings)
    if (f.severity == model::Severity::warning && (f.rule == "framework.python" || f.rule == "framework.cuda-variant"))
      plan.notes.push_back(f.subject + ": " + f.seen + (f.expected.empty() ? "" : " (expected " + f.expected + ")"));

  auto wheel = [&](const std::string& name) -> const model::WheelMatch* {
    for (const auto& w : report.wheels)
      if (w.framework == name) return &w;
    return nullptr;
  };
  auto unknown = [&](const char* name) {
    const auto& v = m.frameworks.at(name);
    return refuse(m, v.pos,
                  std::string(name) + " " + v.value.text() + " is not in the knowledge base: which build fits CUDA " + cuda.text() +
                      " and where it is published cannot be derived")
        .with_hint("pin a release the knowledge base knows (`stackpin check --explain` lists the framework wheels it matches)");
  };

  bool tf = m.frameworks.count("tensorflow") > 0, ort = m.frameworks.count("onnxruntime-gpu") > 0;
  bool torch = m.frameworks.count("torch") > 0;
  auto& pip = plan.spec.pip;

  if (torch) {
    const auto* w = wheel("torch");
    if (!w) return unknown("torch");
    auto torch_version = *Version::parse(w->version);
    // PyPI stays the main index when other pip packages need it; torch 1.x used the extra index.
    bool extra = tf || ort || torch_version.major() < 2;
    std::string flag =
        extra ? "--extra-index-url" : (kb.facts().torch_install_flag.empty() ? "--index-url" : kb.facts().torch_install_flag);
    gen::CondaEntry index{flag + " " + w->index_url, {}};
    index.comments.push_back(
        "PyTorch's wheel index for the " + w->variant + " builds" +
        (extra ? " (an extra index: PyPI stays the main one" + std::string(tf || ort ? " for the other packages)" : ")") : "") + ".");
    pip.push_back(std::move(index));
    gen::CondaEntry t{w->requirement, {}};
    t.comments.push_back("torch " + w->version + " for CUDA " + cuda.prefix(2) + " is the " + w->variant +
                         " wheel (as `stackpin check` derives it; " + w->source +
                         "). No conda channel is claimed for it: "
                         "the knowledge base records no conda package of torch.");
    if (!w->bundled_cudnn.empty()) {
      auto b = *Version::parse(w->bundled_cudnn);
      if (b == cudnn) {
        t.comments.push_back("torch loads the cuDNN its wheel brings, " + b.text() + ": the same build as conda's cudnn.");
      } else {
        t.comments.push_back("torch loads the cuDNN its wheel brings, " + b.text() + " (torch.backends.cudnn.version() reports " +
                             b.prefix(3) + "), not conda's cudnn " + cudnn.text() +
                             ", which serves the other programs in the environment.");
        plan.notes.push_back("torch " + w->version + "+" + w->variant + " loads the cuDNN its wheel brings (" + b.text() +
                             "), not conda's cudnn " + cudnn.text());
      }
    } else {
      t.comments.push_back("Which cuDNN the torch wheel brings is not in the knowledge base; check torch.backends.cudnn.version().");
    }
    pip.push_back(std::move(t));
  }
  for (const char* name : {"torchvision", "torchaudio"}) {
    std::string v = version_of(m, name);
    if (v.empty()) continue;
    if (!torch)
      return refuse(m, m.frameworks.at(name).pos, std::string(name) + " " + v + " is pinned without torch: its CUDA build follows torch's")
          .with_hint("pin torch in [frameworks] too");
    gen::CondaEntry e{std::string(name) + "==" + v, {}};
    e.comments.push_back(std::string(name) + " " + v + " as pinned" +
                         (tf || ort ? ", without a local version: pip takes it from PyPI or PyTorch's index, whichever it prefers."
                                    : ", from PyTorch's index like torch."));
    pip.push_back(std::move(e));
  }
  if (tf) {
    const auto* w = wheel("tensorflow");
    if (!w) return unknown("tensorflow");
    auto builds = kb.tensorflow_builds(m.frameworks.at("tensorflow").value, model::Os::linux);
    gen::CondaEntry e{w->requirement, {}};
    if (!builds.empty())
      e.comments.push_back("TensorFlow " + w->version + " from PyPI, built against CUDA " + builds.front()->cuda.text() + " and cuDNN " +
                           builds.front()->cudnn.text() + " (tested build configuration, Linux; " + w->source +
                           "). It loads cuDNN through the dynamic loader; the knowledge base records no conda package of it.");
    pip.push_back(std::move(e));
  }
  if (ort) {
    const auto& pinned = m.frameworks.at("onnxruntime-gpu");
    const auto* w = wheel("onnxruntime-gpu");
    if (!w) return unknown("onnxruntime-gpu");
    const model::OnnxRuntimeRow* row = nullptr;
    for (const auto* r : kb.onnxruntime_rows(pinned.value))
      if (r->cuda_major == cuda_major) row = r;
    if (!row || row->pypi != true) {
      std::vector<std::string> on_pypi;
      for (const auto& r : kb.facts().onnxruntime)
        if (r.cuda_major == cuda_major && r.pypi == true)
          on_pypi.push_back(r.first == r.last ? r.first.text() : r.first.text() + " to " + r.last.text());
      Error e = refuse(m, pinned.pos,
                       "onnxruntime-gpu " + pinned.value.text() + " for CUDA " + std::to_string(cuda_major) + ": " +
                           (row && row->pypi == false ? "the knowledge base says this build is not on PyPI"
                                                      : "the knowledge base does not say that PyPI carries this build") +
                           ", and it knows no other index for it (PyPI's onnxruntime-gpu is built for one CUDA major per release)");
      e.hints.push_back(on_pypi.empty()
                            ? "install onnxruntime-gpu by hand from the index ONNX Runtime documents for CUDA " + std::to_string(cuda_major)
                            : "pin an onnxruntime-gpu release that PyPI carries for CUDA " + std::to_string(cuda_major) + ": " +
                                  util::join(on_pypi, ", "));
      return e;
    }
    gen::CondaEntry e{w->requirement, {}};
    e.comments.push_back("onnxruntime-gpu " + w->version + " from PyPI: its CUDA " + std::to_string(cuda_major) + " build (CUDA " +
                         row->cuda + ", cuDNN " + std::to_string(row->cudnn_major) + ".x; " + w->source +
                         "). It loads cuDNN through the dynamic loader.");
    pip.push_back(std::move(e));
  }
  return {};
}

}  // namespace

util::Result<CondaPlan> plan_conda(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const CondaOptions& o) {
  auto missing = [&](model::Pos pos, const std::string& key, const std::string& example) {
    return refuse(m, pos.line > 0 ? pos : model::Pos{1, 1},
                  "`stackpin generate conda` needs `" + key + "`, which " + m.path + " does not set")
        .with_hint("add it, for example: " + example);
  };
  if (!m.cuda) return missing({1, 1}, "cuda.version", "[cuda] version = \"12.1.1\"");
  if (!m.cudnn) return missing({1, 1}, "cudnn.version", "[cudnn] version = \"8.9.7.29\"");
  if (!m.cudnn->cuda) return missing(m.cudnn->pos, "cudnn.cuda", "cuda = 12   (the CUDA major of the cuDNN build)");

  const auto& cuda = m.cuda->version.value;
  int cuda_major = static_cast<int>(cuda.major());
  CondaPlan plan;
  auto& s = plan.spec;
  s.manifest_file = o.manifest_file;
  s.manifest_sha256 = o.manifest_sha256;
  if (m.description) s.manifest_description = m.description->value;
  s.env_name = m.name.value;

  const auto& cudnn_cuda = *m.cudnn->cuda;
  if (cudnn_cuda.value != cuda_major) {
    Error e =
        refuse(m, cudnn_cuda.pos,
               "[cudnn] cuda = " + std::to_string(cudnn_cuda.value) + " is a cuDNN build for CUDA " + std::to_string(cudnn_cuda.value) +
                   ", but [cuda] is " + cuda.text() + ": one conda environment never mixes two CUDA majors");
    e.hints.push_back("pin the cuDNN build for CUDA " + std::to_string(cuda_major) + " ([cudnn] cuda = " + std::to_string(cuda_major) +
                      "), or a CUDA " + std::to_string(cudnn_cuda.value) + " release in [cuda]");
    if (cudnn_cuda.value == 11 || cuda_major == 11)
      e.hints.push_back("on conda-forge CUDA 11 is the cudatoolkit 11.* package; cuda-version=" + cuda.prefix(2) +
                        " allows only cudatoolkit " + cuda.prefix(2) + " (its run_constrained), never another major");
    return e;
  }
  const auto& known = kb.facts().conda_cuda_versions;
  if (!known.empty() && std::find(known.begin(), known.end(), cuda.prefix(2)) == known.end())
    return refuse(m, m.cuda->version.pos,
                  "conda-forge publishes no cuda-version " + cuda.prefix(2) + " (known: " + util::join(known, ", ") + ")")
        .with_hint("pin a CUDA release whose MAJOR.MINOR conda-forge's cuda-version has");

  SP_TRY(choose_channels(m, plan));

  if (m.python) s.dependencies.push_back({"python=" + m.python->value.text(), {}});
  plan.cuda_version = cuda.prefix(2);
  gen::CondaEntry cv{"cuda-version=" + plan.cuda_version, {}};
  cv.comments.push_back("CUDA " + cuda.text() +
                        " ([cuda]): conda-forge versions cuda-version by MAJOR.MINOR; it keeps every CUDA package "
                        "of the environment at CUDA " +
                        plan.cuda_version + " and asks for a driver that runs CUDA " + std::to_string(cuda_major) +
                        " through the __cuda virtual package (CONDA_OVERRIDE_CUDA overrides it).");
  if (cuda_major == 11)
    cv.comments.push_back("CUDA 11 on conda-forge is the cudatoolkit package, which cudnn's CUDA 11 builds pull in; cuda-version=" +
                          plan.cuda_version + " allows only cudatoolkit " + plan.cuda_version + " (run_constrained).");
  s.dependencies.push_back(std::move(cv));

  SP_TRY_ASSIGN(auto cudnn, choose_cudnn(m, kb, cuda_major, plan));
  plan.cudnn_version = cudnn.text();

  SP_TRY(choose_frameworks(m, kb, cudnn, o.lock, plan));
  if (o.pylock) {
    // the Python lock replaces the requirements: its wheels, each by URL and SHA-256
    SP_TRY_ASSIGN(auto wheels, pinned_wheels(*o.pylock, model::Platform::linux_x86_64));
    auto& pip = plan.spec.pip;
    pip.clear();
    gen::CondaEntry head{"--no-index", {}};
    head.comments.push_back("The wheels of " + std::filesystem::path(o.pylock->path).filename().string() +
                            " for linux-x86_64, each by URL and SHA-256: pip installs them in hash-checking mode, every dependency "
                            "included, and asks no index. Lock again (`stackpin lock`) to change them.");
    pip.push_back(std::move(head));
    pip.push_back({"--only-binary=:all:", {}});
    for (const auto& w : wheels) pip.push_back({w.requirement, {}});
  }
  return plan;
}

}  // namespace core
