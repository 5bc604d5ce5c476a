// Rules about the CUDA toolkit components a manifest provisions: the release must be one NVIDIA's
// manifests describe (stackpin's or one given to `lock --redistrib`), every [cuda] components entry
// must be a set, component or alias NVIDIA ships for each platform provisioned, and every
// [[cuda.archives]] pin must be one of them and agree with NVIDIA's values.
#include <algorithm>

#include "check/check_rules.hpp"
#include "core/check/check.hpp"
#include "util/strings.hpp"

namespace core {

namespace {
// Every platform stackpin provisions that the release builds its runtime for.
std::vector<model::Platform> cudart_platforms(const format::CudaRedistribRelease& release) {
  std::vector<model::Platform> out;
  for (model::Platform p : {model::Platform::linux_x86_64, model::Platform::linux_sbsa, model::Platform::windows_x86_64,
                            model::Platform::linux_aarch64, model::Platform::windows_arm64})
    for (const auto& c : release.components)
      if (c.id == "cuda_cudart" && knowledge::archive_for(c, p)) out.push_back(p);
  return out;
}
}  // namespace

std::vector<model::Platform> cuda_platforms(const model::Manifest& m, const format::CudaRedistribRelease& release, bool& stated) {
  std::vector<model::Platform> out;
  auto add = [&out](model::Platform p) {
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  if (m.cuda)
    for (const auto& a : m.cuda->archives) add(a.platform.value);
  if (m.windows) add(m.windows_platform());
  if (m.linux) add(model::host_linux_platform());
  if (m.docker) add(model::Platform::linux_x86_64);
  stated = !out.empty();
  if (!stated) out = cudart_platforms(release);
  std::sort(out.begin(), out.end());
  return out;
}

CudaComponents resolve_cuda_components(const model::Manifest& m, const format::CudaRedistribRelease& release,
                                       const std::vector<model::CudaComponentSet>& sets, const std::string& source, bool every_platform) {
  CudaComponents out;
  if (!m.cuda || m.cuda->components.empty()) return out;
  std::vector<std::string> names;
  for (const auto& n : m.cuda->components) names.push_back(n.value);
  const int major = static_cast<int>(m.cuda->version.value.major());
  auto platforms = cuda_platforms(m, release, out.stated);
  if (every_platform) {
    out.stated = false;
    platforms = cudart_platforms(release);
  }
  for (model::Platform p : platforms) {
    auto r = knowledge::resolve_components(release, major, p, names, sets);
    for (auto& problem : r.problems) out.problems.push_back({p, std::move(problem)});
    for (const auto& c : r.components) {
      model::CudaComponentPick pick;
      pick.platform = p;
      pick.component = c.component->id;
      pick.name = c.component->name;
      pick.version = c.component->version_text;
      pick.via = c.via;
      auto url = format::archive_url(release.path, c.archive->relative_path, knowledge::CudaCatalog::k_base_url);
      if (!url) {
        out.problems.push_back({p, {c.index, url.error().message, url.error().hints.empty() ? "" : url.error().hints.front()}});
        continue;
      }
      pick.url = *url;
      pick.sha256 = c.archive->sha256;
      pick.md5 = c.archive->md5;
      pick.size = c.archive->size;
      pick.source = source;
      out.picks.push_back(std::move(pick));
    }
  }
  return out;
}

namespace rules {

using model::Severity;

namespace {
std::string releases_text(const std::vector<model::Version>& vs) {
  if (vs.empty()) return "none";
  return vs.front().text() + " ... " + vs.back().text() + " (" + std::to_string(vs.size()) + " releases)";
}

// A [[cuda.archives]] pin against the component NVIDIA's manifest gives for its platform.
void archive_pin(Ctx& c, const model::ArchivePin& a, const std::vector<model::CudaComponentPick>& picks) {
  const std::string& id = a.component->value;
  std::string subject = "[[cuda.archives]] " + id + " for " + model::to_string(a.platform.value);
  auto pick = std::find_if(picks.begin(), picks.end(),
                           [&](const model::CudaComponentPick& p) { return p.component == id && p.platform == a.platform.value; });
  if (pick == picks.end()) {
    auto& f = c.add("cuda.archive", Severity::error, subject, a.pos);
    f.seen = id + " pinned, but [cuda] components do not bring it in for " + model::to_string(a.platform.value);
    f.fix = "add \"" + id + "\" to [cuda] components, or remove this [[cuda.archives]] entry";
    return;
  }
  if (a.origin.value == model::Origin::local) {
    auto& f = c.add("cuda.archive", Severity::note, subject, a.pos);
    f.seen = "origin = \"local\": the manifest's sha256 and size are the truth; NVIDIA's values are not consulted";
    return;
  }
  bool ok = true;
  if (a.sha256 && a.sha256->value != pick->sha256) {
    auto& f = c.add("cuda.archive", Severity::error, subject, a.sha256->pos);
    f.seen = "sha256 " + a.sha256->value;
    f.expected = "sha256 " + pick->sha256 + " (NVIDIA's " + util::basename_of(pick->url) + ")";
    f.fix = "use NVIDIA's sha256, or set origin = \"local\" for an archive of your own";
    f.source = pick->source;
    ok = false;
  }
  if (a.size && a.size->value != pick->size) {
    auto& f = c.add("cuda.archive", Severity::error, subject, a.size->pos);
    f.seen = "size " + std::to_string(a.size->value);
    f.expected = "size " + std::to_string(pick->size) + " (NVIDIA's " + util::basename_of(pick->url) + ")";
    f.fix = "use NVIDIA's size; a different size means a different file";
    f.source = pick->source;
    ok = false;
  }
  std::string file = a.file_name();
  if (!file.empty() && file != util::basename_of(pick->url)) {
    auto& f = c.add("cuda.archive", Severity::error, subject, a.file ? a.file->pos : a.url->pos);
    f.seen = "archive " + file;
    f.expected = util::basename_of(pick->url) + " (" + id + " " + pick->version + ")";
    f.fix = "use NVIDIA's archive of this release, or set origin = \"local\" for an archive of your own";
    f.source = pick->source;
    ok = false;
  }
  if (ok) {
    auto& f = c.add("cuda.archive", Severity::ok, subject, a.pos);
    f.seen = "agrees with NVIDIA's " + util::basename_of(pick->url);
    f.fix = a.sha256 && a.size ? "nothing to change" : "`stackpin lock` completes the pin with NVIDIA's sha256 and size";
  }
}
}  // namespace

void cuda_components(Ctx& c) {
  const model::CudaPin& pin = *c.m.cuda;
  if (pin.components.empty() && pin.archives.empty()) return;
  c.examined("cuda.components");
  c.examined("cuda.release");
  c.examined("cuda.archive");
  const std::string release_text = pin.version.value.text();
  if (pin.components.empty()) {
    auto& f = c.add("cuda.components", Severity::error, "[cuda] components", pin.archives.front().pos);
    f.seen = "[[cuda.archives]] without [cuda] components";
    f.fix = "list what to provision, e.g. components = [\"runtime\"]";
    return;
  }
  if (pin.version.value.size() != 3) {
    auto& f = c.add("cuda.release", Severity::error, "CUDA " + release_text, pin.version.pos);
    f.seen = "version " + release_text + " names no single release";
    std::vector<std::string> same;
    for (const auto& v : c.cuda_catalog.releases())
      if (compare_prefix(v, pin.version.value, pin.version.value.size()) == 0) same.push_back(v.text());
    f.expected = same.empty() ? "a full release X.Y.Z" : "one of " + util::join(same, ", ");
    f.fix = "components are pinned per release: write the full version, e.g. version = \"" + (same.empty() ? "12.4.1" : same.back()) + "\"";
    return;
  }
  auto release = c.cuda_catalog.release(pin.version.value);
  if (!release) {
    auto& f = c.add("cuda.release", Severity::error, "CUDA " + release_text, pin.version.pos);
    f.seen = release.error().message;
    f.fix = "this is a defect in stackpin's data: report it";
    return;
  }
  if (!*release) {
    // No manifest for this release here: `lock` reads NVIDIA's (or takes it with --redistrib).
    auto& f = c.add("cuda.release", Severity::warning, "CUDA " + release_text, pin.version.pos);
    f.seen = "stackpin has no NVIDIA manifest for CUDA " + release_text + " (it has " + releases_text(c.cuda_catalog.releases()) + ")";
    f.expected = "NVIDIA's redistrib_" + release_text + ".json";
    f.fix = "`stackpin lock MANIFEST` reads " + std::string(knowledge::CudaCatalog::k_base_url) + "redistrib_" + release_text +
            ".json and pins its archives (offline: download it and pass it with --redistrib)";
    return;
  }
  auto resolved = resolve_cuda_components(c.m, **release, c.kb.cuda_sets(), c.cuda_catalog.source_of(pin.version.value));
  for (const auto& p : resolved.problems) {
    const auto& entry = pin.components[p.problem.index];
    auto& f = c.add("cuda.components", resolved.stated ? Severity::error : Severity::warning,
                    "[cuda] components \"" + entry.value + "\" on " + model::to_string(p.platform), entry.pos);
    f.seen = p.problem.message;
    f.fix = p.problem.hint;
    f.source = c.cuda_catalog.source_of(pin.version.value);
  }
  if (resolved.problems.empty()) {
    std::vector<std::string> platforms;
    for (const auto& pick : resolved.picks)
      if (std::find(platforms.begin(), platforms.end(), model::to_string(pick.platform)) == platforms.end())
        platforms.push_back(model::to_string(pick.platform));
    auto& f = c.add("cuda.components", Severity::ok, "[cuda] components", pin.components_pos);
    f.seen = std::to_string(resolved.picks.size()) + " archives of CUDA " + release_text + " for " + util::join(platforms, ", ");
    f.fix = "`stackpin lock` writes every component's archive pin into the lock file beside the manifest";
    f.source = c.cuda_catalog.source_of(pin.version.value);
  }
  for (const auto& a : pin.archives) archive_pin(c, a, resolved.picks);
  c.report.cuda_components = std::move(resolved.picks);
}

}  // namespace rules
}  // namespace core
