// Rules about the cuDNN pin and its archives: the CUDA major of the build, whether NVIDIA
// published the version for that major and platform, and whether each archive's name, URL, hash
// and size agree with each other, with [cudnn] and with NVIDIA's published values.
#include <algorithm>
#include <regex>

#include "check/check_rules.hpp"
#include "util/strings.hpp"

namespace core::rules {

using model::Severity;
using model::Version;

namespace {
std::string versions_text(const std::vector<Version>& vs, std::size_t max = 12) {
  std::vector<std::string> out;
  std::size_t start = vs.size() > max ? vs.size() - max : 0;
  if (start) out.push_back("...");
  for (std::size_t i = start; i < vs.size(); ++i) out.push_back(vs[i].text());
  return util::join(out, ", ");
}

std::string cudnn_subject(const Ctx& c) { return "cuDNN " + c.cudnn.text() + " (cuda" + std::to_string(c.cudnn_cuda) + ")"; }
}  // namespace

void cudnn_cuda_major(Ctx& c) {
  c.examined("cudnn.cuda-major");
  const auto& pin = *c.m.cudnn;
  int toolkit_major = static_cast<int>(c.cuda.major());
  if (c.cudnn_cuda != toolkit_major) {
    auto& f = c.add("cudnn.cuda-major", Severity::error, cudnn_subject(c), pin.cuda->pos);
    f.seen = "cuDNN built for CUDA " + std::to_string(c.cudnn_cuda) + " with CUDA toolkit " + c.cuda.text();
    f.expected = "a cuDNN build for CUDA " + std::to_string(toolkit_major) + " (archive suffix _cuda" + std::to_string(toolkit_major) + ")";
    f.fix = "set [cudnn] cuda = " + std::to_string(toolkit_major) + " and pin the _cuda" + std::to_string(toolkit_major) +
            " archives; a cuDNN for another CUDA major fails to load (missing libcublas/cudart of that major) or "
            "fails at run time with CUDNN_STATUS_NOT_INITIALIZED";
    f.source = "NVIDIA cuDNN archive naming (cudnn-<platform>-<version>_cuda<major>-archive); cuDNN support matrix";
  } else {
    auto& f = c.add("cudnn.cuda-major", Severity::ok, cudnn_subject(c), pin.cuda->pos);
    f.seen = "cuDNN for CUDA " + std::to_string(c.cudnn_cuda) + ", toolkit " + c.cuda.text();
  }
}

void cudnn_published(Ctx& c) {
  c.examined("cudnn.published");
  const auto& pin = *c.m.cudnn;
  auto all = c.kb.cudnn_archives(c.cudnn);
  if (all.empty()) {
    auto known = c.kb.cudnn_versions_for(c.cudnn_cuda, std::nullopt);
    // same major.minor.patch with another build number: the 8.9.5.29 / 8.9.5.30 trap
    std::vector<Version> same3;
    for (const auto& v : known)
      if (compare_prefix(v, c.cudnn, 3) == 0) same3.push_back(v);
    if (!same3.empty()) {
      auto& f = c.add("cudnn.published", Severity::error, cudnn_subject(c), pin.version.pos);
      f.seen = "build " + c.cudnn.text();
      f.expected = "a build NVIDIA published: " + versions_text(same3);
      f.fix =
          "use the four-part version from NVIDIA's archive name (cuDNN " + c.cudnn.prefix(3) + " exists as " + versions_text(same3) + ")";
      f.source = c.kb.cudnn_base_url() + " (redistrib manifests)";
    } else {
      auto& f = c.add("cudnn.published", Severity::warning, cudnn_subject(c), pin.version.pos);
      f.seen = "cuDNN " + c.cudnn.text() + " is not in stackpin's knowledge base";
      f.expected = "a version the knowledge base knows (for CUDA " + std::to_string(c.cudnn_cuda) + ": " + versions_text(known) + ")";
      f.fix = "check the version against NVIDIA's redistrib_<version>.json; archive hashes cannot be cross-checked";
      f.source = "stackpin knowledge base (data/knowledge/cudnn-archives.toml)";
    }
    return;
  }
  bool for_major = std::any_of(all.begin(), all.end(), [&](auto* a) { return a->cuda == c.cudnn_cuda; });
  if (!for_major) {
    std::vector<std::string> majors;
    for (auto* a : all) majors.push_back("cuda" + std::to_string(a->cuda));
    std::sort(majors.begin(), majors.end());
    majors.erase(std::unique(majors.begin(), majors.end()), majors.end());
    auto& f = c.add("cudnn.published", Severity::error, cudnn_subject(c), pin.cuda->pos);
    f.seen = "NVIDIA never published cuDNN " + c.cudnn.text() + " for CUDA " + std::to_string(c.cudnn_cuda);
    f.expected = "one of the published variants: " + util::join(majors, ", ");
    auto others = c.kb.cudnn_versions_for(c.cudnn_cuda, std::nullopt);
    f.fix = "pin a cuDNN published for CUDA " + std::to_string(c.cudnn_cuda) + " (" + versions_text(others, 8) + ")";
    f.source = knowledge::first_source(all.front()->source);
    return;
  }
  auto& f = c.add("cudnn.published", Severity::ok, cudnn_subject(c), pin.version.pos);
  f.seen = "published by NVIDIA";
  f.source = knowledge::first_source(all.front()->source);
  // Platforms pinned but absent for this (version, major). The knowledge base lists a version's
  // platforms completely only where it read NVIDIA's whole manifest for it; that shows as one CUDA
  // variant covering the three main platforms. Elsewhere an absent platform may just be unknown.
  std::vector<std::string> platforms;
  for (auto* x : all)
    if (x->cuda == c.cudnn_cuda) platforms.push_back(model::to_string(x->platform));
  bool complete = false;
  for (int major : {11, 12, 13}) {
    int n = 0;
    for (auto p : {model::Platform::linux_x86_64, model::Platform::linux_sbsa, model::Platform::windows_x86_64})
      n += c.kb.cudnn_archive(c.cudnn, major, p) != nullptr;
    complete = complete || n == 3;
  }
  for (const auto& a : pin.archives) {
    if (c.kb.cudnn_archive(c.cudnn, c.cudnn_cuda, a.platform.value)) continue;
    std::string where = " for CUDA " + std::to_string(c.cudnn_cuda) + " on " + model::to_string(a.platform.value);
    auto& g = c.add("cudnn.published", complete ? Severity::error : Severity::warning,
                    std::string("[[cudnn.archives]] ") + model::to_string(a.platform.value), a.platform.pos);
    g.expected = "a published platform: " + util::join(platforms, ", ");
    g.source = knowledge::first_source(all.front()->source);
    if (complete) {
      g.seen = "NVIDIA did not publish cuDNN " + c.cudnn.text() + where;
      g.fix = "remove this archive or pin a version published for " + std::string(model::to_string(a.platform.value));
    } else {
      g.seen = "the knowledge base has no cuDNN " + c.cudnn.text() + where + " (its record of this version is partial)";
      g.fix = "check NVIDIA's redistrib_" + c.cudnn.prefix(3) + ".json; the archive's hash cannot be cross-checked";
    }
  }
}

namespace {

struct NameParts {
  std::string platform, version, cuda, ext;
};

std::optional<NameParts> parse_archive_name(const std::string& name) {
  static const std::regex k_re(R"(^cudnn-([a-z0-9_]+-[a-z0-9_]+)-([0-9.]+)_cuda([0-9]+)-archive\.(zip|tar\.xz)$)");
  std::smatch m;
  if (!std::regex_match(name, m, k_re)) return std::nullopt;
  return NameParts{m[1], m[2], m[3], m[4]};
}

void judge_name(Ctx& c, const model::ArchivePin& a, const std::string& subject) {
  c.examined("archive.name");
  std::string name = a.file_name();
  model::Pos pos = a.file ? a.file->pos : a.url ? a.url->pos : a.pos;
  auto parts = parse_archive_name(name);
  bool nvidia = a.origin.value == model::Origin::nvidia;
  if (!parts) {
    if (nvidia) {
      auto& f = c.add("archive.name", Severity::error, subject, pos);
      f.seen = "file name \"" + name + "\"";
      f.expected = "NVIDIA's name: " + knowledge::KnowledgeBase::cudnn_archive_file_name(c.cudnn, c.cudnn_cuda, a.platform.value);
      f.fix = "use NVIDIA's URL; a renamed or repacked archive is origin = \"local\"";
      f.source = "NVIDIA redist naming: " + c.kb.cudnn_base_url();
    }
    return;
  }
  std::vector<std::string> problems;
  if (parts->platform != model::to_string(a.platform.value))
    problems.push_back("its platform is " + parts->platform + ", the entry says " + model::to_string(a.platform.value));
  if (parts->version != c.cudnn.text()) problems.push_back("its version is " + parts->version + ", [cudnn] pins " + c.cudnn.text());
  if (parts->cuda != std::to_string(c.cudnn_cuda))
    problems.push_back("its CUDA suffix is _cuda" + parts->cuda + ", [cudnn] cuda = " + std::to_string(c.cudnn_cuda));
  if (parts->ext != model::archive_extension(a.platform.value))
    problems.push_back("its extension is ." + parts->ext + ", NVIDIA ships ." + model::archive_extension(a.platform.value) + " for " +
                       model::to_string(a.platform.value));
  if (!problems.empty()) {
    auto& f = c.add("archive.name", Severity::error, subject, pos);
    f.seen = name + ": " + util::join(problems, "; ");
    f.expected = knowledge::KnowledgeBase::cudnn_archive_file_name(c.cudnn, c.cudnn_cuda, a.platform.value);
    f.fix = "make the archive, its platform and [cudnn] agree: pin the archive NVIDIA built for this version, CUDA major and platform";
    f.source = "NVIDIA redist naming: " + c.kb.cudnn_base_url();
  }
}

void judge_url(Ctx& c, const model::ArchivePin& a, const model::CudnnArchiveFact* fact, const std::string& subject) {
  if (!a.url || a.origin.value != model::Origin::nvidia || !fact) return;
  c.examined("archive.url");
  if (a.url->value == fact->url) return;
  bool same_file = util::basename_of(a.url->value) == fact->file;
  auto& f = c.add("archive.url", same_file ? Severity::warning : Severity::error, subject, a.url->pos);
  f.seen = a.url->value;
  f.expected = fact->url;
  f.fix = same_file ? "use NVIDIA's URL in the manifest; point downloads at a mirror with `stackpin fetch --mirror` instead"
                    : "the URL names another file than NVIDIA's archive for this pin: use " + fact->url;
  f.source = knowledge::first_source(fact->source);
}

void judge_hash(Ctx& c, const model::ArchivePin& a, const model::CudnnArchiveFact* fact, const std::string& subject) {
  bool nvidia = a.origin.value == model::Origin::nvidia;
  c.examined("archive.hash-missing");
  c.examined("archive.size-missing");
  c.examined("archive.origin");
  if (!a.sha256) {
    auto& f = c.add("archive.hash-missing", Severity::error, subject, a.pos);
    f.seen = "no sha256";
    f.expected = fact && nvidia ? "sha256 = \"" + fact->sha256 + "\"" : "the archive's SHA-256";
    f.fix = fact && nvidia ? "add the sha256 NVIDIA publishes (above)" : "add sha256 = \"...\" (sha256sum ARCHIVE)";
    if (fact) f.source = knowledge::first_source(fact->source);
  }
  if (!a.size) {
    auto& f = c.add("archive.size-missing", Severity::error, subject, a.pos);
    f.seen = "no size";
    f.expected = fact && nvidia && fact->size ? "size = " + std::to_string(*fact->size) : "the archive's size in bytes";
    f.fix = fact && nvidia && fact->size ? "add the size NVIDIA publishes (above)" : "add size = N (stat -c %s ARCHIVE)";
    if (fact) f.source = knowledge::first_source(fact->source);
  }
  if (!nvidia) {
    auto& f = c.add("archive.origin", Severity::note, subject, a.origin.pos);
    f.seen = "origin = \"local\": the manifest's sha256 and size are the truth; NVIDIA's values are not consulted";
    return;
  }
  c.examined("archive.unknown");
  if (!fact) {
    auto& f = c.add("archive.unknown", Severity::warning, subject, a.file ? a.file->pos : a.url ? a.url->pos : a.pos);
    f.seen = "\"" + a.file_name() + "\" is not an archive stackpin's knowledge base knows";
    f.expected = "an NVIDIA archive listed in data/knowledge/cudnn-archives.toml";
    f.fix =
        "its hash cannot be cross-checked against NVIDIA's: compare it with NVIDIA's redistrib_<version>.json by hand, or "
        "pin it with `stackpin lock --redistrib` once available";
    f.source = "stackpin knowledge base";
    return;
  }
  c.examined("archive.hash");
  c.examined("archive.size");
  if (a.sha256 && a.sha256->value != fact->sha256) {
    auto& f = c.add("archive.hash", Severity::error, subject, a.sha256->pos);
    f.seen = "sha256 " + a.sha256->value;
    f.expected = "sha256 " + fact->sha256 + " (NVIDIA's " + fact->file + ")";
    f.fix =
        "the pinned hash is not NVIDIA's: it was mistyped, or the archive it came from was tampered with or is another file; "
        "use NVIDIA's value, or origin = \"local\" for a deliberate repack";
    f.source = knowledge::first_source(fact->source);
  }
  if (a.size && fact->size && a.size->value != *fact->size) {
    auto& f = c.add("archive.size", Severity::error, subject, a.size->pos);
    f.seen = "size " + std::to_string(a.size->value);
    f.expected = "size " + std::to_string(*fact->size) + " (NVIDIA's " + fact->file + ")";
    f.fix = "use NVIDIA's size; a different size means a different file";
    f.source = knowledge::first_source(fact->source);
  }
  if (a.size && !fact->size) {
    auto& f = c.add("archive.size", Severity::note, subject, a.size->pos);
    f.seen = "NVIDIA's size for " + fact->file + " is not recorded in the knowledge base";
    f.fix = "the size in the manifest is used as given; the SHA-256 is still cross-checked";
    f.source = knowledge::first_source(fact->source);
  }
  if (a.sha256 && a.sha256->value == fact->sha256 && (!a.size || !fact->size || a.size->value == *fact->size)) {
    auto& f = c.add("archive.hash", Severity::ok, subject, a.sha256->pos);
    f.seen = "sha256" + std::string(fact->size && a.size ? " and size" : "") + " match NVIDIA's " + fact->file;
    if (!fact->cross_checked) f.seen += " (single source in the knowledge base)";
    f.source = knowledge::first_source(fact->source);
  }
}

}  // namespace

void archives(Ctx& c) {
  const auto& pin = *c.m.cudnn;
  if (pin.archives.empty()) {
    c.examined("archive.none");
    std::vector<std::string> known;
    std::string source;
    for (const auto* fact : c.kb.cudnn_archives(c.cudnn))
      if (fact->cuda == c.cudnn_cuda && fact->size) {
        known.push_back(model::to_string(fact->platform));
        source = knowledge::first_source(fact->source);
      }
    if (!known.empty()) {
      auto& f = c.add("archive.none", Severity::ok, cudnn_subject(c), pin.pos);
      const bool read = source.rfind("NVIDIA redistrib_", 0) == 0;  // read from NVIDIA's manifest (check --online, the cache)
      f.seen = "no [[cudnn.archives]] written: NVIDIA's archives for " + util::join(known, ", ") + " come from " +
               (read ? "NVIDIA's manifest of the release" : "the knowledge base");
      f.fix = "`stackpin lock` writes their URLs, hashes and sizes into the lock file beside the manifest";
      f.source = source;
      return;
    }
    // NVIDIA's hashes without their sizes (releases whose manifest stackpin does not carry): the
    // manifest NVIDIA publishes beside the archives completes them
    std::vector<std::string> sizeless;
    for (const auto* fact : c.kb.cudnn_archives(c.cudnn))
      if (fact->cuda == c.cudnn_cuda) sizeless.push_back(model::to_string(fact->platform));
    auto& f = c.add("archive.none", Severity::note, cudnn_subject(c), pin.pos);
    std::string redistrib = "redistrib_" + c.cudnn.prefix(3) + ".json";
    if (!sizeless.empty()) {
      f.seen = "no [[cudnn.archives]] pinned; the knowledge base has NVIDIA's SHA-256 for " + util::join(sizeless, ", ") +
               " but not the sizes (NVIDIA's " + redistrib + " is not among the manifests stackpin carries)";
      f.fix = "run `stackpin check --online` or `stackpin lock`, which read NVIDIA's " + redistrib + " (from " + c.kb.cudnn_base_url() +
              ", or the copy STACKPIN_NVIDIA_BASE names): it completes the pins (verify and stage need the sizes)";
    } else {
      f.seen = "no [[cudnn.archives]] pinned, and the knowledge base has no archive of this release";
      f.fix = "run `stackpin check --online` or `stackpin lock`, which read NVIDIA's " + redistrib +
              ", or add one [[cudnn.archives]] per platform you provision (verify and stage need them)";
    }
    return;
  }
  for (const auto& a : pin.archives) {
    std::string subject = std::string("[[cudnn.archives]] ") + model::to_string(a.platform.value);
    const model::CudnnArchiveFact* fact = c.kb.cudnn_archive_by_file(a.file_name());
    if (!fact) fact = c.kb.cudnn_archive(c.cudnn, c.cudnn_cuda, a.platform.value);
    // for the fact to apply, it must be the archive this entry names
    if (fact && (fact->version != c.cudnn || fact->cuda != c.cudnn_cuda || fact->platform != a.platform.value) &&
        fact->file != a.file_name())
      fact = nullptr;
    judge_name(c, a, subject);
    judge_url(c, a, fact, subject);
    judge_hash(c, a, fact, subject);

    model::ArchiveMatch am;
    am.platform = a.platform.value;
    am.file = a.file_name();
    am.known = fact != nullptr && a.origin.value == model::Origin::nvidia;
    am.cross_checked = fact && fact->cross_checked;
    am.sha256 = a.sha256 ? a.sha256->value : (fact ? fact->sha256 : "");
    if (a.size)
      am.size = a.size->value;
    else if (fact && fact->size)
      am.size = *fact->size;
    am.url = a.url ? a.url->value : (fact ? fact->url : "");
    c.report.archives.push_back(std::move(am));
  }
}

}  // namespace core::rules
