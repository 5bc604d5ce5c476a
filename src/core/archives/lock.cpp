// Locking works like a package manager's lock: the lock records both what the manifest asked for
// ([inputs], in canonical text) and what that resolved to. Drift is then a plain comparison of the
// manifest's inputs of the day with the recorded ones, independent of comments, key order or
// formatting, and each difference can be named with its manifest line. Archive pins are taken in
// order of authority: the manifest's own values, NVIDIA's redistrib file, the knowledge base; two
// sources that both know an archive must agree, or nothing is locked.
#include "core/archives/lock.hpp"
#include "gen/quote.hpp"

#include <algorithm>
#include <set>

#include "core/check/check.hpp"
#include "crypto/sha256.hpp"
#include "format/lock_file.hpp"
#include "format/manifest_reader.hpp"
#include "format/pylock.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

namespace {

constexpr const char* k_pypi = "https://pypi.org/simple";

int cudnn_cuda_major(const model::Manifest& m) {
  if (!m.cudnn) return 0;
  if (m.cudnn->cuda) return m.cudnn->cuda->value;
  return m.cuda ? static_cast<int>(m.cuda->version.value.major()) : 0;
}

template <class T>
model::Located<T> at(T v, model::Pos pos) {
  return model::Located<T>{std::move(v), pos};
}

// One archive as the lock will pin it, with the sources that agree on it.
struct Candidate {
  std::string url, sha256, md5;
  std::uint64_t size = 0;
  std::vector<std::string> sources;
};

util::Status agree(const Candidate& have, const Candidate& other, const std::string& what,
                   const std::string& redist = "https://developer.download.nvidia.com/compute/cudnn/redist/") {
  if (have.sha256 == other.sha256 && have.size == other.size) return {};
  return Error(ErrorCode::mismatch, what + ": " + have.sources.front() + " and " + other.sources.front() + " disagree (" + have.sha256 +
                                        ", " + std::to_string(have.size) + " bytes vs " + other.sha256 + ", " + std::to_string(other.size) +
                                        " bytes)")
      .with_hint("one of them is not NVIDIA's file: check the redistrib JSON came from " + redist);
}

void add_driver(model::Lock& lock, const model::DriverMinimum& d) {
  model::LockedDriver l;
  l.os = d.os;
  if (d.family_floor) l.floor = d.family_floor->text();
  if (d.release_min) l.minimum = d.release_min->text();
  l.required = d.effective;
  l.source = d.source;
  lock.drivers.push_back(std::move(l));
}

void add_frameworks(const model::Manifest& m, const model::CheckReport& report, model::Lock& lock) {
  const model::WheelMatch* torch = nullptr;
  for (const auto& w : report.wheels)
    if (w.framework == "torch") torch = &w;
  for (const auto& [name, v] : m.frameworks) {
    model::LockedFramework f;
    f.name = name;
    f.version = v.value.text();
    f.requirement = name + "==" + f.version;
    f.index_url = k_pypi;
    auto w = std::find_if(report.wheels.begin(), report.wheels.end(), [&f](const model::WheelMatch& x) { return x.framework == f.name; });
    if (w != report.wheels.end()) {
      f.requirement = w->requirement;
      if (!w->index_url.empty()) f.index_url = w->index_url;
      f.bundled_cudnn = w->bundled_cudnn;
    } else if ((name == "torchvision" || name == "torchaudio") && torch && !torch->variant.empty()) {
      // PyTorch's index serves the companions of a CUDA variant with the same local version label.
      f.requirement = name + "==" + f.version + "+" + torch->variant;
      f.index_url = torch->index_url;
    }
    lock.frameworks.push_back(std::move(f));
  }
}

// An archive pin the manifest does not write (from the lock or the knowledge base), located at
// the [cudnn] table.
model::ArchivePin implied_pin(model::Pos at, model::Platform platform, model::Origin origin, const std::string& url,
                              const std::string& file, const std::string& sha256, std::uint64_t size) {
  model::ArchivePin a;
  a.implied = true;
  a.pos = at;
  a.platform = model::Located<model::Platform>{platform, at};
  a.origin = model::Located<model::Origin>{origin, at};
  if (!url.empty()) a.url = model::Located<std::string>{url, at};
  if (!file.empty()) a.file = model::Located<std::string>{file, at};
  a.sha256 = model::Located<std::string>{sha256, at};
  a.size = model::Located<std::uint64_t>{size, at};
  return a;
}

// How a lock names a redistrib file (CUDA's or cuDNN's): read from NVIDIA, its URL and SHA-256
// (LockOptions::redistrib_sources); else its name and release date.
std::string redistrib_source(const LockOptions& o, const std::string& path, const std::string& release_date) {
  auto named = o.redistrib_sources.find(path);
  if (named != o.redistrib_sources.end()) return named->second;
  return "NVIDIA " + util::basename_of(path) + (release_date.empty() ? "" : " (released " + release_date + ")");
}

// NVIDIA's manifest of the pinned CUDA release: stackpin's own and the --redistrib files, which
// must agree with it where both describe an archive. nullptr (and no error) when none describes it.
util::Result<const format::CudaRedistribRelease*> cuda_release(const model::Manifest& m, const LockOptions& o, std::string& source) {
  const model::Version& v = m.cuda->version.value;
  SP_TRY_ASSIGN(const format::CudaRedistribRelease* release, o.cuda_catalog->release(v));
  if (release) source = o.cuda_catalog->source_of(v);
  for (const auto& r : o.cuda_redistribs) {
    // NVIDIA's oldest files do not say their release; their name does
    std::string label = r.release_label;
    if (label.empty())
      if (auto from_name = knowledge::CudaCatalog::release_of_file(r.path)) label = from_name->text();
    if (label != v.text())
      return Error(ErrorCode::invalid, r.path + " is NVIDIA's redistrib file for CUDA " +
                                           (label.empty() ? "(a release it does not name)" : label) + ", but the manifest pins " + v.text())
          .at(m.locate(m.cuda->version.pos))
          .with_hint("give redistrib_" + v.text() + ".json from " + knowledge::CudaCatalog::k_base_url);
    if (!release) {
      release = &r;
      source = redistrib_source(o, r.path, r.release_date);
      continue;
    }
    for (const auto& theirs : r.components)
      for (const auto& mine : release->components) {
        if (mine.id != theirs.id) continue;
        for (const auto& a : theirs.archives)
          for (const auto& b : mine.archives)
            if (a.platform_key == b.platform_key && (a.sha256 != b.sha256 || a.size != b.size))
              return Error(ErrorCode::mismatch, "the " + a.platform_key + " archive of " + mine.id + " in CUDA " + v.text() + ": " +
                                                    r.path + " and " + source + " disagree (" + a.sha256 + ", " + std::to_string(a.size) +
                                                    " bytes vs " + b.sha256 + ", " + std::to_string(b.size) + " bytes)")
                  .with_hint("one of them is not NVIDIA's file: check the redistrib JSON came from " +
                             std::string(knowledge::CudaCatalog::k_base_url));
      }
  }
  return release;
}

// The CUDA component archives of the lock: NVIDIA's manifest of the release resolved by
// [cuda] components, merged with the manifest's own [[cuda.archives]] pins.
util::Status lock_cuda(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const LockOptions& o, model::Lock& lock) {
  const model::Version& v = m.cuda->version.value;
  std::string source;
  SP_TRY_ASSIGN(const format::CudaRedistribRelease* release, cuda_release(m, o, source));
  if (!release) {
    // Re-locking without the --redistrib file that pinned it keeps what the previous lock says.
    const model::Lock* prev = o.previous;
    auto same = [&](const std::string& key) {
      auto before = prev->inputs.find(key);
      return before != prev->inputs.end() && before->second.value == lock.inputs.at(key).value;
    };
    if (prev && prev->cuda == v.text() && same("cuda.components") && !prev->cuda_archives.empty()) {
      lock.cuda_archives = prev->cuda_archives;
      return {};
    }
    return Error(ErrorCode::not_found, "stackpin has no NVIDIA manifest for CUDA " + v.text() + " and no --redistrib file was given for it")
        .at(m.locate(m.cuda->version.pos))
        .with_hint("`stackpin lock` reads it from NVIDIA when it is not --offline (STACKPIN_NVIDIA_BASE names a mirror); or download " +
                   std::string(knowledge::CudaCatalog::k_base_url) + "redistrib_" + v.text() + ".json and pass it with --redistrib");
  }
  auto resolved = resolve_cuda_components(m, *release, kb.cuda_sets(), source);
  std::set<model::Platform> incomplete;
  for (const auto& p : resolved.problems) {
    if (!resolved.stated) {
      incomplete.insert(p.platform);
      continue;
    }
    const auto& entry = m.cuda->components[p.problem.index];
    return Error(ErrorCode::invalid, "cannot lock [cuda] components: " + p.problem.message)
        .at(m.locate(entry.pos))
        .with_hint(p.problem.hint);
  }
  for (const auto& pick : resolved.picks) {
    if (incomplete.count(pick.platform)) continue;
    model::LockedArchive l;
    l.component = pick.component;
    l.version = pick.version;
    l.platform = pick.platform;
    l.url = pick.url;
    l.file = util::basename_of(pick.url);
    l.sha256 = pick.sha256;
    l.md5 = pick.md5;
    l.size = pick.size;
    l.source = pick.source;
    if (const model::ArchivePin* a = m.cuda_archive_for(pick.component, pick.platform); a && !a->implied) {
      l.pos = a->pos;
      l.origin = a->origin.value;
      std::string what = "the " + std::string(model::to_string(pick.platform)) + " archive of " + pick.component;
      if (a->origin.value == model::Origin::local) {
        if (!a->sha256 || !a->size || a->file_name().empty())
          return Error(ErrorCode::invalid, "cannot lock " + what + ": an origin = \"local\" pin needs its sha256, size and url (or file)")
              .at(m.locate(a->pos))
              .with_hint("add sha256, size and url (or file) to this entry");
        l.url = a->url ? a->url->value : "";
        l.file = a->file_name();
        l.sha256 = a->sha256->value;
        l.size = a->size->value;
        l.md5.clear();
        l.source = "manifest";
      } else {
        Candidate mine{"", a->sha256 ? a->sha256->value : pick.sha256, "", a->size ? a->size->value : pick.size, {"the manifest"}};
        Candidate nvidia{pick.url, pick.sha256, pick.md5, pick.size, {source}};
        if (auto st = agree(mine, nvidia, what, knowledge::CudaCatalog::k_base_url); !st) return std::move(st).error().at(m.locate(a->pos));
        if (a->url) l.url = a->url->value;
        if (!a->file_name().empty()) l.file = a->file_name();
        l.source = a->sha256 && a->size ? "manifest" : "manifest, with " + source;
      }
    }
    lock.cuda_archives.push_back(std::move(l));
  }
  for (const auto& a : m.cuda->archives)
    if (!a.implied && a.component && !lock.cuda_archive_for(a.component->value, a.platform.value))
      return Error(ErrorCode::invalid, "[[cuda.archives]] pins " + a.component->value + " for " + model::to_string(a.platform.value) +
                                           ", which [cuda] components do not bring in there")
          .at(m.locate(a.pos))
          .with_hint("add \"" + a.component->value + "\" to [cuda] components, or remove this entry");
  std::stable_sort(lock.cuda_archives.begin(), lock.cuda_archives.end(),
                   [](const model::LockedArchive& a, const model::LockedArchive& b) { return a.platform < b.platform; });
  if (lock.cuda_archives.empty())
    return Error(ErrorCode::not_found, "[cuda] components resolve to no platform of CUDA " + v.text())
        .at(m.locate(m.cuda->components_pos))
        .with_hint("run `stackpin check` for what NVIDIA ships on each platform");
  return {};
}

}  // namespace

fs::path default_lock_path(const fs::path& manifest) {
  fs::path p = manifest;
  if (p.extension() == ".toml") p.replace_extension();
  p += ".lock";
  return p;
}

std::map<std::string, model::LockInput> lock_inputs(const model::Manifest& m) {
  std::map<std::string, model::LockInput> in;
  auto put = [&](const std::string& key, std::string value, model::Pos pos) { in[key] = {std::move(value), pos}; };
  if (m.cuda) put("cuda.version", m.cuda->version.value.text(), m.cuda->version.pos);
  if (m.driver) {
    if (m.driver->linux) put("driver.linux", m.driver->linux->value.text(), m.driver->linux->pos);
    if (m.driver->windows) put("driver.windows", m.driver->windows->value.text(), m.driver->windows->pos);
  }
  if (m.cudnn) {
    put("cudnn.version", m.cudnn->version.value.text(), m.cudnn->version.pos);
    put("cudnn.cuda", std::to_string(cudnn_cuda_major(m)), m.cudnn->cuda ? m.cudnn->cuda->pos : m.cudnn->pos);
    for (const auto& a : m.cudnn->archives) {
      if (a.implied) continue;
      std::string k = std::string("cudnn.archives.") + model::to_string(a.platform.value) + ".";
      put(k + "origin", model::to_string(a.origin.value), a.origin.pos);
      if (a.url) put(k + "url", a.url->value, a.url->pos);
      if (a.file) put(k + "file", a.file->value, a.file->pos);
      if (a.sha256) put(k + "sha256", a.sha256->value, a.sha256->pos);
      if (a.size) put(k + "size", std::to_string(a.size->value), a.size->pos);
    }
  }
  if (m.cuda && !m.cuda->components.empty()) {
    std::vector<std::string> names;
    for (const auto& n : m.cuda->components) names.push_back(n.value);
    put("cuda.components", util::join(names, ", "), m.cuda->components_pos);
    for (const auto& a : m.cuda->archives) {
      if (a.implied || !a.component) continue;
      std::string k = "cuda.archives." + a.component->value + "." + model::to_string(a.platform.value) + ".";
      put(k + "origin", model::to_string(a.origin.value), a.origin.pos);
      if (a.url) put(k + "url", a.url->value, a.url->pos);
      if (a.file) put(k + "file", a.file->value, a.file->pos);
      if (a.sha256) put(k + "sha256", a.sha256->value, a.sha256->pos);
      if (a.size) put(k + "size", std::to_string(a.size->value), a.size->pos);
    }
  }
  for (const auto& [name, v] : m.frameworks) put("frameworks." + name, v.value.text(), v.pos);
  if (m.gpus) {
    std::vector<std::string> arch, models;
    for (const auto& a : m.gpus->arch) arch.push_back(a.value.text());
    for (const auto& g : m.gpus->models) models.push_back(g.value);
    if (!arch.empty()) put("gpus.arch", util::join(arch, ", "), m.gpus->arch.front().pos);
    if (!models.empty()) put("gpus.models", util::join(models, ", "), m.gpus->models.front().pos);
  }
  if (m.python) put("python", m.python->value.text(), m.python->pos);
  if (m.python_index) put("python.index", m.python_index->value, m.python_index->pos);
  if (!m.python_packages.empty()) {
    std::vector<std::string> pins;
    for (const auto& p : m.python_packages) pins.push_back(p.value);
    put("python.packages", util::join(pins, ", "), m.python_packages.front().pos);
  }
  if (m.docker) {
    if (m.docker->base_image) put("docker.base_image", m.docker->base_image->value, m.docker->base_image->pos);
    if (m.docker->base_digest) put("docker.base_digest", m.docker->base_digest->value, m.docker->base_digest->pos);
  }
  return in;
}

model::Manifest resolve_archives(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const knowledge::CudaCatalog& cuda) {
  model::Manifest r = m;
  if (r.cuda && !r.cuda->components.empty() && r.cuda->version.value.size() == 3) {
    auto release = cuda.release(r.cuda->version.value);
    if (release && *release) {
      // every platform the components resolve on, as for cuDNN: --platform may stage another one
      auto resolved = resolve_cuda_components(m, **release, kb.cuda_sets(), cuda.source_of(r.cuda->version.value), true);
      std::set<model::Platform> incomplete;
      for (const auto& p : resolved.problems) incomplete.insert(p.platform);
      for (const auto& pick : resolved.picks) {
        if (incomplete.count(pick.platform)) continue;
        if (model::ArchivePin* written = r.cuda_archive_for(pick.component, pick.platform)) {
          // the manifest's own entry: NVIDIA's values fill what it leaves out (check holds them to agree)
          written->component_version = pick.version;
          if (written->origin.value == model::Origin::nvidia) {
            if (!written->url) written->url = model::Located<std::string>{pick.url, written->pos};
            if (!written->sha256) written->sha256 = model::Located<std::string>{pick.sha256, written->pos};
            if (!written->size) written->size = model::Located<std::uint64_t>{pick.size, written->pos};
          }
          continue;
        }
        auto pin =
            implied_pin(r.cuda->pos, pick.platform, model::Origin::nvidia, pick.url, util::basename_of(pick.url), pick.sha256, pick.size);
        pin.component = model::Located<std::string>{pick.component, r.cuda->pos};
        pin.component_version = pick.version;
        r.cuda->archives.push_back(std::move(pin));
      }
    }
  }
  int major = cudnn_cuda_major(m);
  if (!r.cudnn || major == 0) return r;
  for (const model::CudnnArchiveFact* f : kb.cudnn_archives(r.cudnn->version.value)) {
    if (f->cuda != major || r.archive_for(f->platform) || !f->size) continue;
    r.cudnn->archives.push_back(implied_pin(r.cudnn->pos, f->platform, model::Origin::nvidia, f->url, f->file, f->sha256, *f->size));
  }
  return r;
}

namespace {

// A knowledge-base archive with a hash but no size gives no pin, but what a redistrib file says of
// the same archive must have its hash.
util::Status agree_with_hash_only(const model::CudnnArchiveFact& f, const std::map<model::Platform, Candidate>& known,
                                  const model::Version& version, const model::Manifest& m, const std::string& base) {
  auto it = known.find(f.platform);
  if (it == known.end() || it->second.sha256 == f.sha256) return {};
  return Error(ErrorCode::mismatch, "the " + std::string(model::to_string(f.platform)) + " archive of cuDNN " + version.text() + ": " +
                                        util::join(it->second.sources, "; ") + " gives sha256 " + it->second.sha256 +
                                        ", the knowledge base " + f.sha256)
      .at(m.locate(m.cudnn->version.pos))
      .with_hint("one of them is not NVIDIA's: check where the redistrib file came from (" + base + ")");
}

}  // namespace

namespace {

// A `check` error refuses the lock, named with its fix. `deferred`: gpu.cudnn errors are let
// through, for the libraries read from the archives may overturn what NVIDIA's matrices say.
util::Status refuse_failing(const model::Manifest& m, const model::CheckReport& report, bool deferred) {
  auto first_error = std::find_if(report.findings.begin(), report.findings.end(), [&](const model::Finding& f) {
    return f.severity == model::Severity::error && !(deferred && f.rule == "gpu.cudnn");
  });
  if (first_error == report.findings.end()) return {};
  Error e(ErrorCode::invalid, "cannot lock " + m.path + ": it does not pass `stackpin check` (" + first_error->subject + ": " +
                                  first_error->seen + (first_error->expected.empty() ? "" : ", expected " + first_error->expected) + ")");
  if (first_error->where) e.where = first_error->where;
  if (!first_error->fix.empty()) e.hints.push_back(first_error->fix);
  e.hints.push_back("run `stackpin check " + gen::sh_quote(m.path) + "` for every finding");
  return e;
}

util::Result<LockOutcome> pin_stack(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const LockOptions& o,
                                    const model::CheckReport& report);

}  // namespace

util::Result<LockOutcome> make_lock(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const LockOptions& o) {
  // NVIDIA's documents first; what only the libraries can settle waits for them
  SP_TRY_ASSIGN(auto report, check_manifest(m, kb, *o.cuda_catalog));
  SP_TRY(refuse_failing(m, report, true));
  SP_TRY_ASSIGN(auto out, pin_stack(m, kb, o, report));
  if (o.kernels) SP_TRY(read_lock_kernels(out.lock, *o.kernels, out.findings));
  // judged again with the GPU code just read, which check prefers to the documents
  const bool read = std::any_of(out.lock.archives.begin(), out.lock.archives.end(), [](const auto& a) { return a.kernels_read; }) ||
                    std::any_of(out.lock.cuda_archives.begin(), out.lock.cuda_archives.end(), [](const auto& a) { return a.kernels_read; });
  if (read) {
    SP_TRY_ASSIGN(report, check_manifest(m, kb, *o.cuda_catalog, &out.lock));
  }
  SP_TRY(refuse_failing(m, report, false));
  // the GPU architectures the stack was checked against, with what check found for each
  for (const auto& g : report.gpus)
    out.lock.gpus.push_back({g.cc, g.arch, g.names, g.cudnn, g.nvcc, g.torch, g.onnxruntime, g.tensorflow, {}});
  return out;
}

namespace {

util::Result<LockOutcome> pin_stack(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const LockOptions& o,
                                    const model::CheckReport& report) {
  LockOutcome out;
  model::Lock& lock = out.lock;
  lock.generated_by = o.generated_by;
  lock.manifest = o.manifest_file;
  lock.name = m.name.value;
  lock.inputs = lock_inputs(m);
  if (m.cuda) lock.cuda = m.cuda->version.value.text();
  for (const auto& d : report.drivers) add_driver(lock, d);
  add_frameworks(m, report, lock);
  if (m.docker) {
    if (m.docker->base_image) lock.base_image = m.docker->base_image->value;
    if (m.docker->base_digest) lock.base_digest = m.docker->base_digest->value;
    if (m.docker->base_image && !m.docker->base_digest) {
      auto& f = model::add_finding(out.findings, "lock.base-digest", model::Severity::warning, "[targets.docker] base_image");
      f.seen = m.docker->base_image->value + " without a digest: a tag can be moved to another image";
      f.fix = "add base_digest = \"sha256:...\" (docker buildx imagetools inspect " + m.docker->base_image->value + ")";
      f.where = m.locate(m.docker->base_image->pos);
    }
  }
  if (m.cuda && !m.cuda->components.empty()) SP_TRY(lock_cuda(m, kb, o, lock));
  if (!m.cudnn) return out;

  const model::Version& version = m.cudnn->version.value;
  const int major = cudnn_cuda_major(m);
  lock.cudnn = version.text();
  lock.cudnn_cuda = major;
  const std::string& base = kb.cudnn_base_url();

  // Candidates per platform from each source, checked against each other as they come.
  std::map<model::Platform, Candidate> known;
  auto offer = [&](model::Platform p, Candidate c) -> util::Status {
    auto it = known.find(p);
    if (it == known.end()) {
      known.emplace(p, std::move(c));
      return {};
    }
    auto st = agree(it->second, c, std::string("the ") + model::to_string(p) + " archive of cuDNN " + version.text());
    if (!st) return st;
    it->second.sources.push_back(c.sources.front());
    if (it->second.md5.empty()) it->second.md5 = c.md5;
    return {};
  };
  for (const auto& r : o.redistribs) {
    // one file may hold two builds of its release (9.15.0: .57 for CUDA 12, .58 for CUDA 13): an
    // archive's file name says its build
    auto of_build = [&](const format::RedistribArchive& a) { return a.build == version; };
    const bool has_build = std::any_of(r.archives.begin(), r.archives.end(), of_build);
    if (r.version != version && !(r.version.prefix(3) == version.prefix(3) && has_build))
      return Error(ErrorCode::invalid,
                   r.path + " is NVIDIA's redistrib file for cuDNN " + r.version.text() + ", but the manifest pins " + version.text())
          .at(m.locate(m.cudnn->version.pos))
          .with_hint("give redistrib_" + version.prefix(3) + ".json");
    for (const auto& a : r.archives) {
      if (a.cuda != major || (r.version != version && !of_build(a))) continue;
      auto url = format::archive_url(r.path, a.relative_path, base);
      if (!url) return std::move(url).error().with_context(r.path).at(m.locate(m.cudnn->version.pos));
      Candidate c{*url, a.sha256, a.md5, a.size, {redistrib_source(o, r.path, r.release_date)}};
      SP_TRY(offer(a.platform, std::move(c)));
    }
  }
  for (const model::CudnnArchiveFact* f : kb.cudnn_archives(version)) {
    if (f->cuda != major) continue;
    if (!f->size) {  // no candidate of its own, but a redistrib file must still agree with its hash
      SP_TRY(agree_with_hash_only(*f, known, version, m, base));
      continue;
    }
    Candidate c{f->url, f->sha256, f->md5, *f->size, {"knowledge base: " + knowledge::first_source(f->source)}};
    SP_TRY(offer(f->platform, std::move(c)));
  }
  if (o.previous && o.previous->cudnn == version.text() && o.previous->cudnn_cuda == major)
    for (const auto& a : o.previous->archives)
      if (a.origin == model::Origin::nvidia && !known.count(a.platform))
        known.emplace(a.platform, Candidate{a.url, a.sha256, a.md5, a.size, {a.source.empty() ? "the previous lock" : a.source}});

  for (const auto& a : m.cudnn->archives) {
    if (a.implied) continue;
    model::LockedArchive l;
    l.platform = a.platform.value;
    l.origin = a.origin.value;
    l.pos = a.pos;
    l.source = "manifest";
    auto it = a.origin.value == model::Origin::nvidia ? known.find(l.platform) : known.end();
    if (it != known.end()) {
      Candidate mine{"", a.sha256 ? a.sha256->value : it->second.sha256, "", a.size ? a.size->value : it->second.size, {"the manifest"}};
      if (auto st = agree(mine, it->second, std::string("the ") + model::to_string(l.platform) + " archive"); !st)
        return std::move(st).error().at(m.locate(a.pos));
      if (!a.sha256 || !a.size) l.source = "manifest, with " + util::join(it->second.sources, "; ");
      l.md5 = it->second.md5;
    }
    l.url = a.url ? a.url->value : (it != known.end() ? it->second.url : "");
    l.file = a.file_name();
    if (l.file.empty() && !l.url.empty()) l.file = util::basename_of(l.url);
    if (a.sha256)
      l.sha256 = a.sha256->value;
    else if (it != known.end())
      l.sha256 = it->second.sha256;
    if (a.size)
      l.size = a.size->value;
    else if (it != known.end())
      l.size = it->second.size;
    if (l.sha256.empty() || l.size == 0 || l.file.empty())
      return Error(ErrorCode::invalid, std::string("cannot lock the ") + model::to_string(l.platform) + " archive: no " +
                                           (l.sha256.empty() ? "SHA-256"
                                            : l.size == 0    ? "size"
                                                             : "file name or URL") +
                                           " for it")
          .at(m.locate(a.pos))
          .with_hint(a.origin.value == model::Origin::nvidia
                         ? "pass NVIDIA's redistrib JSON with --redistrib FILE, or add the value to this entry"
                         : "add sha256, size and url (or file) to this entry");
    lock.archives.push_back(std::move(l));
  }
  for (const auto& [platform, c] : known) {
    if (lock.archive_for(platform)) continue;
    model::LockedArchive l;
    l.platform = platform;
    l.url = c.url;
    l.file = util::basename_of(c.url);
    l.sha256 = c.sha256;
    l.md5 = c.md5;
    l.size = c.size;
    l.source = util::join(c.sources, "; ");
    lock.archives.push_back(std::move(l));
  }
  std::sort(lock.archives.begin(), lock.archives.end(),
            [](const model::LockedArchive& a, const model::LockedArchive& b) { return a.platform < b.platform; });
  if (lock.archives.empty())
    return Error(ErrorCode::not_found, "no archive of cuDNN " + version.text() + " for CUDA " + std::to_string(major) +
                                           " is known: the knowledge base does not list it and no redistrib file was given")
        .at(m.locate(m.cudnn->version.pos))
        .with_hint("download NVIDIA's redistrib_" + version.prefix(3) + ".json from " + base + " and pass it with --redistrib")
        .with_hint("or pin the archives yourself with [[cudnn.archives]] entries");
  return out;
}

}  // namespace

std::optional<model::Version> cudnn_manifest_needed(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const LockOptions& o) {
  if (!m.cudnn || !o.redistribs.empty()) return std::nullopt;
  const model::Version& version = m.cudnn->version.value;
  if (version.size() != 4) return std::nullopt;  // check refuses it, with its reason
  const int major = cudnn_cuda_major(m);
  // re-locking keeps what the lock being replaced pinned of this build
  if (o.previous && o.previous->cudnn == version.text() && o.previous->cudnn_cuda == major && !o.previous->archives.empty())
    return std::nullopt;
  bool any = false, sizeless = false;
  for (const model::CudnnArchiveFact* f : kb.cudnn_archives(version)) {
    if (f->cuda != major) continue;
    any = true;
    sizeless = sizeless || !f->size;
  }
  if (any && !sizeless) return std::nullopt;
  return model::Version::parse(version.prefix(3));
}

std::vector<model::LockDrift> lock_drift(const model::Manifest& m, const model::Lock& lock) {
  std::vector<model::LockDrift> out;
  auto now = lock_inputs(m);
  for (const auto& [k, v] : now) {
    auto it = lock.inputs.find(k);
    if (it == lock.inputs.end())
      out.push_back({k, v.value, std::nullopt, v.pos});
    else if (it->second.value != v.value)
      out.push_back({k, v.value, it->second.value, v.pos});
  }
  for (const auto& [k, v] : lock.inputs)
    if (!now.count(k)) out.push_back({k, std::nullopt, v.value, {}});
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return out;
}

util::Result<model::Manifest> apply_lock(const model::Manifest& m, const model::Lock& lock) {
  auto drift = lock_drift(m, lock);
  if (!drift.empty()) {
    Error e(ErrorCode::mismatch, m.path + " and its lock " + lock.path + " disagree on " + std::to_string(drift.size()) + " value(s)");
    const model::LockDrift* located = nullptr;
    for (const auto& d : drift) {
      if (!located && d.manifest_pos.line > 0) located = &d;
      e.hints.push_back(describe(d));
    }
    if (located) e.where = m.locate(located->manifest_pos);
    e.hints.push_back("run `stackpin lock " + gen::sh_quote(m.path) + "` to lock the manifest as it is now, or undo the edit");
    return e;
  }
  model::Manifest r = m;
  if (r.cuda)
    for (const auto& l : lock.cuda_archives) {
      model::ArchivePin* pin = r.cuda_archive_for(l.component, l.platform);
      if (!pin) {
        auto implied = implied_pin(r.cuda->pos, l.platform, l.origin, l.url, l.file, l.sha256, l.size);
        implied.component = model::Located<std::string>{l.component, r.cuda->pos};
        implied.component_version = l.version;
        r.cuda->archives.push_back(std::move(implied));
        continue;
      }
      pin->component_version = l.version;
      if (!pin->url && !l.url.empty()) pin->url = at(l.url, pin->pos);
      if (!pin->file && !l.file.empty()) pin->file = at(l.file, pin->pos);
      if (!pin->sha256) pin->sha256 = at(l.sha256, pin->pos);
      if (!pin->size) pin->size = at<std::uint64_t>(l.size, pin->pos);
    }
  if (!r.cudnn) return r;
  for (const auto& l : lock.archives) {
    model::ArchivePin* pin = nullptr;
    for (auto& a : r.cudnn->archives)
      if (a.platform.value == l.platform) pin = &a;
    if (!pin) {
      r.cudnn->archives.push_back(implied_pin(r.cudnn->pos, l.platform, l.origin, l.url, l.file, l.sha256, l.size));
      continue;
    }
    if (!pin->url && !l.url.empty()) pin->url = at(l.url, pin->pos);
    if (!pin->file && !l.file.empty()) pin->file = at(l.file, pin->pos);
    if (!pin->sha256) pin->sha256 = at(l.sha256, pin->pos);
    if (!pin->size) pin->size = at<std::uint64_t>(l.size, pin->pos);
  }
  return r;
}

std::string describe(const model::LockDrift& d) {
  return d.key + ": the manifest says " + (d.manifest ? "\"" + *d.manifest + "\"" : "nothing") + ", the lock " +
         (d.lock ? "\"" + *d.lock + "\"" : "nothing");
}

std::vector<std::string> lock_differences(const model::Lock& before, const model::Lock& now) {
  // Flattened to key -> value, so that one comparison covers every pinned field.
  auto flat = [](const model::Lock& l) {
    std::map<std::string, std::string> f;
    for (const auto& [k, v] : l.inputs) f["inputs." + k] = v.value;
    f["cuda.version"] = l.cuda;
    f["cudnn.version"] = l.cudnn;
    f["cudnn.cuda"] = std::to_string(l.cudnn_cuda);
    auto archive = [&f](const std::string& k, const model::LockedArchive& a) {
      f[k + "origin"] = model::to_string(a.origin);
      f[k + "url"] = a.url;
      f[k + "file"] = a.file;
      f[k + "sha256"] = a.sha256;
      f[k + "size"] = std::to_string(a.size);
      f[k + "md5"] = a.md5;
    };
    for (const auto& a : l.archives) archive(std::string("cudnn.archives.") + model::to_string(a.platform) + ".", a);
    for (const auto& a : l.cuda_archives) {
      std::string k = "cuda.archives." + a.component + "." + model::to_string(a.platform) + ".";
      f[k + "version"] = a.version;
      archive(k, a);
    }
    for (const auto& d : l.drivers) {
      std::string k = std::string("driver.") + model::to_string(d.os) + ".";
      f[k + "floor"] = d.floor;
      f[k + "minimum"] = d.minimum;
      f[k + "required"] = d.required;
    }
    for (const auto& fw : l.frameworks) {
      std::string k = "frameworks." + fw.name + ".";
      f[k + "requirement"] = fw.requirement;
      f[k + "index_url"] = fw.index_url;
      f[k + "bundled_cudnn"] = fw.bundled_cudnn;
    }
    for (const auto& g : l.gpus) {
      std::string k = "gpus." + g.cc + ".";
      f[k + "cudnn"] = g.cudnn;
      f[k + "nvcc"] = g.nvcc;
      f[k + "torch"] = g.torch;
      f[k + "onnxruntime"] = g.onnxruntime;
      f[k + "tensorflow"] = g.tensorflow;
    }
    f["docker.base_image"] = l.base_image;
    f["docker.base_digest"] = l.base_digest;
    return f;
  };
  auto a = flat(before), b = flat(now);
  std::vector<std::string> out;
  auto show = [](const std::map<std::string, std::string>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? std::string("nothing") : "\"" + it->second + "\"";
  };
  std::set<std::string> keys;
  for (const auto& [k, v] : a) keys.insert(k);
  for (const auto& [k, v] : b) keys.insert(k);
  for (const auto& k : keys)
    if (show(a, k) != show(b, k)) out.push_back(k + ": the lock has " + show(a, k) + ", locking now gives " + show(b, k));
  return out;
}

void use_locked_builds(model::CheckReport& report, const model::Lock& lock) {
  for (const auto& f : lock.frameworks) {
    auto w = std::find_if(report.wheels.begin(), report.wheels.end(), [&](const model::WheelMatch& x) { return x.framework == f.name; });
    if (w == report.wheels.end()) {
      if (f.name != "torch" && f.name != "tensorflow" && f.name != "onnxruntime-gpu") continue;  // companions follow torch
      report.wheels.emplace_back();
      w = std::prev(report.wheels.end());
      w->framework = f.name;
    }
    w->version = f.version;
    w->requirement = f.requirement;
    w->index_url = f.index_url == k_pypi ? "" : f.index_url;
    w->bundled_cudnn = f.bundled_cudnn;
    auto plus = f.requirement.find('+');
    w->variant = plus == std::string::npos ? "" : f.requirement.substr(plus + 1);
    w->source = "the lock " + lock.path;
  }
}

util::Result<std::optional<model::PyLock>> load_python_lock(const model::Lock& lock, const fs::path& lock_path) {
  if (lock.python_lock.empty()) return std::optional<model::PyLock>();
  const fs::path file = lock_path.parent_path() / lock.python_lock;
  auto text = util::read_file(file);
  if (!text)
    return std::move(text)
        .error()
        .with_context("reading the Python lock " + lock_path.string() + " records")
        .with_hint("run `stackpin lock MANIFEST` to write both locks again, and commit them together");
  const std::string sha = crypto::to_hex(crypto::sha256_of(*text));
  if (sha != lock.python_lock_sha256)
    return Error(ErrorCode::mismatch, file.string() + " is not the Python lock " + lock_path.string() + " records: its SHA-256 is " + sha +
                                          ", the lock's " + lock.python_lock_sha256)
        .at(lock.locate(lock.python_lock_pos))
        .with_hint("it was edited by hand or written by another lock run: run `stackpin lock MANIFEST` and commit both files");
  SP_TRY_ASSIGN(auto parsed, format::parse_pylock(*text, file.string()));
  return std::optional<model::PyLock>(std::move(parsed));
}

util::Result<LoadedManifest> load_manifest(const std::string& path, const LockChoice& choice, const knowledge::KnowledgeBase& kb) {
  std::string bytes;
  SP_TRY_ASSIGN(auto m, format::load_manifest(path, &bytes));
  m.sha256 = crypto::to_hex(crypto::sha256_of(bytes));
  LoadedManifest out;
  if (!choice.locked && choice.file.empty()) {
    out.manifest = resolve_archives(m, kb);
  } else {
    const fs::path lock_path = choice.file.empty() ? default_lock_path(path) : std::filesystem::path(choice.file);
    SP_TRY_ASSIGN(auto lock, format::load_lock(lock_path));
    SP_TRY_ASSIGN(out.manifest, apply_lock(m, lock));
    SP_TRY_ASSIGN(out.pylock, load_python_lock(lock, lock_path));
    out.lock = std::move(lock);
  }
  out.manifest.sha256 = m.sha256;
  return out;
}

}  // namespace core
