// `stackpin lock --upgrade` (upgrade.hpp): the manifest with one newer release at a time, judged by
// check against what check says of the manifest as it is.
#include "core/archives/upgrade.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/archives/nvidia_manifests.hpp"
#include "core/check/check.hpp"
#include "format/redistrib.hpp"
#include "util/strings.hpp"

namespace core {

namespace {

using model::UpgradeCandidate;
using model::UpgradeReport;
using model::Version;

// What check says that a candidate must not add: errors, and the driver rules' warnings (a
// release that needs a newer driver than the manifest's floor).
bool blocks(const model::Finding& f) {
  return f.severity == model::Severity::error || (f.severity == model::Severity::warning && f.rule.rfind("driver.", 0) == 0);
}

// One blocking finding, as it is told apart from the others: its rule and where in the manifest
// it points (kept when only a release changes), and for the driver rules the minimum it asks for.
std::string key_of(const model::Finding& f) {
  std::string k = f.rule + "@" + (f.where ? std::to_string(f.where->line) + ":" + std::to_string(f.where->column) : f.subject);
  if (f.rule.rfind("driver.", 0) == 0) k += "|" + f.expected;
  return k;
}

struct Judge {
  const knowledge::KnowledgeBase& kb;
  const knowledge::CudaCatalog& cuda;
  std::map<std::string, int> baseline;  // blocking findings of the manifest as it is, by key_of

  void operator()(const model::Manifest& changed, UpgradeCandidate& c) const {
    auto r = check_manifest(changed, kb, cuda);
    if (!r) {
      c.why_not.push_back(r.error().message);
      c.fits = false;
      return;
    }
    std::map<std::string, int> seen;
    for (const auto& f : r->findings) {
      if (!blocks(f)) continue;
      const std::string k = key_of(f);
      auto b = baseline.find(k);
      if (++seen[k] > (b == baseline.end() ? 0 : b->second))
        c.why_not.push_back("[" + f.rule + "] " + f.subject + ": " + f.seen + (f.expected.empty() ? "" : ", expected " + f.expected));
    }
    c.fits = c.why_not.empty();
  }
};

// The newest of each major.minor among `versions` (ascending) that are newer than `current`.
std::vector<Version> newest_per_minor(const std::vector<Version>& versions, const Version& current, std::size_t parts) {
  std::map<std::pair<long, long>, Version> newest;
  for (const auto& v : versions)
    if (model::compare_prefix(v, current, parts) > 0) {
      auto key = std::make_pair(static_cast<long>(v.major()), static_cast<long>(v.minor()));
      auto it = newest.find(key);
      if (it == newest.end() || it->second < v) newest[key] = v;
    }
  std::vector<Version> out;
  for (const auto& [key, v] : newest) out.push_back(v);
  return out;
}

// The cuDNN build of `three` (X.Y.Z) for CUDA `major`, when the knowledge base has one.
std::optional<Version> cudnn_build_for(const knowledge::KnowledgeBase& kb, const Version& three, int major) {
  std::optional<Version> out;
  for (const auto& a : kb.facts().cudnn_archives)
    if (a.cuda == major && model::compare_prefix(a.version, three, 3) == 0 && (!out || *out < a.version)) out = a.version;
  return out;
}

int cudnn_major_of(const model::Manifest& m) {
  if (m.cudnn && m.cudnn->cuda) return m.cudnn->cuda->value;
  return m.cuda ? static_cast<int>(m.cuda->version.value.major()) : 0;
}

// A pin the knowledge gives for a candidate, on the platform (and for the component) the manifest
// pinned, so that check judges the candidate on the same platforms.
model::ArchivePin implied(const model::ArchivePin& old, const std::string& url, const std::string& sha256, std::uint64_t size) {
  model::ArchivePin a;
  a.implied = true;
  a.pos = old.pos;
  a.component = old.component;
  a.platform = old.platform;
  a.origin = model::Located<model::Origin>{model::Origin::nvidia, old.pos};
  a.url = model::Located<std::string>{url, old.pos};
  a.file = model::Located<std::string>{url.substr(url.rfind('/') + 1), old.pos};
  a.sha256 = model::Located<std::string>{sha256, old.pos};
  a.size = model::Located<std::uint64_t>{size, old.pos};
  return a;
}

// The manifest's cuDNN archive pins for build `v` of CUDA `major`: each platform's from the
// knowledge, or a reason the candidate does not fit.
void repin_cudnn(model::Manifest& changed, const model::Manifest& m, const knowledge::KnowledgeBase& kb, const Version& v, int major,
                 UpgradeCandidate& c) {
  changed.cudnn->archives.clear();
  for (const auto& old : m.cudnn->archives) {
    const auto* f = kb.cudnn_archive(v, major, old.platform.value);
    if (f && f->size)
      changed.cudnn->archives.push_back(implied(old, f->url, f->sha256, *f->size));
    else
      c.why_not.push_back("[cudnn.published] cuDNN " + v.text() + ": no build for CUDA " + std::to_string(major) + " on " +
                          model::to_string(old.platform.value) + " that the knowledge base has (the manifest pins that platform)");
  }
}

void cuda_candidates(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const knowledge::CudaCatalog& cuda, const Judge& judge,
                     UpgradeReport& out) {
  if (!m.cuda) return;
  const Version& current = m.cuda->version.value;
  const std::size_t parts = current.size() >= 3 ? 3 : current.size();
  for (const auto& v : newest_per_minor(cuda.releases(), current, parts)) {
    UpgradeCandidate c;
    c.product = "cuda";
    c.from = current.text();
    c.to = v.text();
    c.source = cuda.source_of(v);
    model::Manifest changed = m;
    changed.cuda->version.value = v;
    // the component archives are the release's own, on the platforms the manifest pinned
    changed.cuda->archives.clear();
    auto release = cuda.release(v);
    for (const auto& old : m.cuda->archives) {
      if (!old.component || !release || !*release) continue;
      const format::CudaComponentArchive* a = nullptr;
      for (const auto& comp : (*release)->components)
        if (comp.id == old.component->value) a = knowledge::archive_for(comp, old.platform.value);
      auto url = a ? format::archive_url((*release)->path, a->relative_path, std::string(k_nvidia_base) + "cuda/redist/")
                   : util::Result<std::string>(util::Error(util::ErrorCode::not_found, ""));
      if (url)
        changed.cuda->archives.push_back(implied(old, *url, a->sha256, a->size));
      else
        c.why_not.push_back("[cuda.components] " + old.component->value + ": no " + model::to_string(old.platform.value) +
                            " archive in CUDA " + v.text() + " (the manifest pins that platform)");
    }
    // NVIDIA's driver table must know the release for its minimum to be judged
    if (const auto* row = kb.driver_release(v); !row || row->cuda.prefix(2) != v.prefix(2))
      c.why_not.push_back("[driver.minimum] CUDA " + v.text() + ": the knowledge base has no row of NVIDIA's driver table for CUDA " +
                          v.prefix(2) + ", so its minimum driver is not known");
    const int major = static_cast<int>(v.major());
    if (changed.cudnn && cudnn_major_of(m) != major) {
      if (auto build = cudnn_build_for(kb, *Version::parse(m.cudnn->version.value.prefix(3)), major)) {
        changed.cudnn->version.value = *build;
        changed.cudnn->cuda = model::Located<int>{major, m.cudnn->cuda ? m.cudnn->cuda->pos : m.cudnn->pos};
        repin_cudnn(changed, m, kb, *build, major, c);
        c.changes.push_back("cuDNN build " + build->text() + " for CUDA " + std::to_string(major));
      } else {
        c.why_not.push_back("[cudnn.cuda-major] cuDNN " + m.cudnn->version.value.prefix(3) + " has no build for CUDA " +
                            std::to_string(major) + " in the knowledge base");
      }
    }
    const bool blocked = !c.why_not.empty();
    judge(changed, c);
    if (blocked) c.fits = false;
    out.candidates.push_back(std::move(c));
  }
}

void cudnn_candidates(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const Judge& judge, UpgradeReport& out) {
  if (!m.cudnn) return;
  const int major = cudnn_major_of(m);
  const Version& current = m.cudnn->version.value;
  for (const auto& v : newest_per_minor(kb.cudnn_versions_for(major, std::nullopt), current, 3)) {
    UpgradeCandidate c;
    c.product = "cudnn";
    c.from = current.text();
    c.to = v.text();
    for (const auto* a : kb.cudnn_archives(v))
      if (a->cuda == major) {
        c.source = knowledge::first_source(a->source);
        break;
      }
    model::Manifest changed = m;
    changed.cudnn->version.value = v;
    repin_cudnn(changed, m, kb, v, major, c);  // the pins are the old version's archives
    const bool blocked = !c.why_not.empty();
    judge(changed, c);
    if (blocked) c.fits = false;
    out.candidates.push_back(std::move(c));
  }
}

void torch_candidates(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const Judge& judge, UpgradeReport& out) {
  auto it = m.frameworks.find("torch");
  if (it == m.frameworks.end()) return;
  const Version& current = it->second.value;
  for (const auto& row : kb.facts().torch) {
    if (model::compare_prefix(row.release, current, 2) <= 0) continue;
    UpgradeCandidate c;
    c.product = "torch";
    c.from = current.text();
    c.to = row.release.text() + ".0";
    // a variant published from a later patch (cu129 from 2.12.1) is that patch's
    if (m.cuda) {
      const std::string variant = "cu" + std::to_string(m.cuda->version.value.major()) + std::to_string(m.cuda->version.value.minor());
      if (auto p = row.first_patch.find(variant); p != row.first_patch.end()) c.to = p->second.text();
    }
    c.source = knowledge::first_source(row.source);
    model::Manifest changed = m;
    changed.frameworks["torch"].value = *Version::parse(c.to);
    judge(changed, c);
    out.candidates.push_back(std::move(c));
  }
}

}  // namespace

util::Result<model::UpgradeReport> upgrades(const model::Manifest& m, const knowledge::KnowledgeBase& kb,
                                            const knowledge::CudaCatalog& cuda) {
  SP_TRY_ASSIGN(auto now, check_manifest(m, kb, cuda));
  Judge judge{kb, cuda, {}};
  std::set<std::string> rules;
  for (const auto& f : now.findings)
    if (blocks(f)) {
      ++judge.baseline[key_of(f)];
      rules.insert(f.rule);
    }
  UpgradeReport out;
  out.manifest = m.path;
  if (!rules.empty())
    out.notes.push_back("the manifest as it is already has errors or driver warnings (" +
                        util::join(std::vector<std::string>(rules.begin(), rules.end()), ", ") +
                        "): candidates are judged by what they add to them (run `stackpin check`)");
  cuda_candidates(m, kb, cuda, judge, out);
  cudnn_candidates(m, kb, judge, out);
  torch_candidates(m, kb, judge, out);
  if (m.frameworks.size() > m.frameworks.count("torch"))
    out.notes.push_back("newer releases of frameworks other than torch are not looked for");
  return out;
}

}  // namespace core
