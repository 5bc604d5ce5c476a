// `stackpin lock --upgrade` (upgrade.hpp): the manifest with one newer release at a time, judged by
// check against what check says of the manifest as it is.
#include "core/archives/upgrade.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/check/check.hpp"
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

struct Judge {
  const knowledge::KnowledgeBase& kb;
  const knowledge::CudaCatalog& cuda;
  std::set<std::string> baseline;  // rules that already block the manifest as it is

  void operator()(const model::Manifest& changed, UpgradeCandidate& c) const {
    auto r = check_manifest(changed, kb, cuda);
    if (!r) {
      c.why_not.push_back(r.error().message);
      return;
    }
    for (const auto& f : r->findings)
      if (blocks(f) && !baseline.count(f.rule))
        c.why_not.push_back("[" + f.rule + "] " + f.subject + ": " + f.seen + (f.expected.empty() ? "" : ", expected " + f.expected));
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
    changed.cuda->archives.clear();  // component archives are a release's own
    const int major = static_cast<int>(v.major());
    if (changed.cudnn && cudnn_major_of(m) != major) {
      if (auto build = cudnn_build_for(kb, *Version::parse(m.cudnn->version.value.prefix(3)), major)) {
        changed.cudnn->version.value = *build;
        if (changed.cudnn->cuda) changed.cudnn->cuda->value = major;
        changed.cudnn->archives.clear();
        c.changes.push_back("cuDNN build " + build->text() + " for CUDA " + std::to_string(major));
      }
    }
    judge(changed, c);
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
    changed.cudnn->archives.clear();  // the pins are the old version's archives
    judge(changed, c);
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
  for (const auto& f : now.findings)
    if (blocks(f)) judge.baseline.insert(f.rule);
  UpgradeReport out;
  out.manifest = m.path;
  if (!judge.baseline.empty())
    out.notes.push_back("the manifest as it is already has findings of " +
                        util::join(std::vector<std::string>(judge.baseline.begin(), judge.baseline.end()), ", ") +
                        ": candidates are not judged by those rules (run `stackpin check`)");
  cuda_candidates(m, kb, cuda, judge, out);
  cudnn_candidates(m, kb, judge, out);
  torch_candidates(m, kb, judge, out);
  if (m.frameworks.size() > m.frameworks.count("torch"))
    out.notes.push_back("newer releases of frameworks other than torch are not looked for");
  return out;
}

}  // namespace core
