// `stackpin verify`: an archive's expected size and SHA-256 from the lock, manifest or knowledge base, checked before any decoder sees it.
#include "core/archives/verify.hpp"

#include <algorithm>
#include <system_error>

#include "core/archives/cache.hpp"
#include "crypto/sha256.hpp"
#include "gen/quote.hpp"
#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;

util::Result<ArchiveExpectation> expectation_for(const model::Manifest& m, const model::ArchivePin& pin,
                                                 const knowledge::KnowledgeBase& kb) {
  ArchiveExpectation e;
  e.platform = pin.platform.value;
  e.file = pin.file_name();
  if (pin.sha256) e.sha256 = pin.sha256->value;
  if (pin.size) e.size = pin.size->value;
  if (pin.origin.value == model::Origin::nvidia && (e.sha256.empty() || !e.size)) {
    const model::CudnnArchiveFact* fact = kb.cudnn_archive_by_file(e.file);
    if (!fact && m.cudnn && m.cudnn->cuda) fact = kb.cudnn_archive(m.cudnn->version.value, m.cudnn->cuda->value, e.platform);
    if (fact) {
      if (e.sha256.empty()) e.sha256 = fact->sha256;
      if (!e.size && fact->size) e.size = fact->size;
      if (e.file.empty()) e.file = fact->file;
    }
  }
  if (e.sha256.empty()) {
    util::Error err(util::ErrorCode::invalid, std::string("no SHA-256 to verify the ") + model::to_string(e.platform) + " archive against");
    err.where = m.locate(pin.pos);
    err.hints.push_back("add sha256 = \"...\" to this [[cudnn.archives]] entry");
    return err;
  }
  return e;
}

util::Result<std::optional<fs::path>> locate_archive(const ArchiveExpectation& e, const fs::path& dir, bool& found_by_content) {
  found_by_content = false;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return util::Error(util::ErrorCode::not_found, "archive directory " + dir.string() + " does not exist")
        .with_hint("give the folder the archives were downloaded to with --archives DIR");
  if (!e.file.empty()) {
    fs::path p = dir / e.file;
    if (fs::is_regular_file(p, ec)) return std::optional<fs::path>(p);
  }
  if (!e.size) return std::optional<fs::path>();
  std::vector<fs::path> candidates;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (!it->is_regular_file(ec2)) continue;
    if (it->file_size(ec2) == *e.size) candidates.push_back(it->path());
  }
  if (ec) return util::Error(util::ErrorCode::io, "cannot read " + dir.string() + ": " + ec.message());
  std::sort(candidates.begin(), candidates.end());
  for (const auto& c : candidates) {
    auto h = crypto::hash_file(c);
    if (h && crypto::to_hex(h->digest) == e.sha256) {
      found_by_content = true;
      return std::optional<fs::path>(c);
    }
  }
  return std::optional<fs::path>();
}

util::Result<archive_io::PinnedFile> open_pinned(const fs::path& file, const ArchiveExpectation& e) {
  auto digest = crypto::from_hex(e.sha256);
  if (!digest) return util::Error(util::ErrorCode::internal, "the pinned SHA-256 \"" + e.sha256 + "\" is not 64 hex digits");
  return archive_io::PinnedFile::open(file, *digest, e.size);
}

namespace {

model::VerifiedArchive check_one(const fs::path& path, const ArchiveExpectation& e, std::vector<model::Finding>& findings,
                                 bool by_content) {
  model::VerifiedArchive v;
  v.platform = e.platform;
  v.expected_file = e.file;
  v.path = path.string();
  v.found_by_content = by_content;
  v.expected_sha256 = e.sha256;
  v.expected_size = e.size;
  auto h = crypto::hash_file(path);
  if (!h) {
    auto& f = model::add_finding(findings, "verify.read", model::Severity::error, path.string());
    f.seen = h.error().message;
    f.fix = "check the file's permissions";
    return v;
  }
  v.actual_sha256 = crypto::to_hex(h->digest);
  v.actual_size = h->size;
  bool size_ok = !e.size || *e.size == h->size;
  bool hash_ok = v.actual_sha256 == e.sha256;
  v.ok = size_ok && hash_ok;
  if (!size_ok) {
    auto& f = model::add_finding(findings, "verify.size", model::Severity::error, path.string());
    f.seen = std::to_string(h->size) + " bytes";
    f.expected = std::to_string(*e.size) + " bytes";
    f.fix = h->size < *e.size ? "the download is incomplete: download it again" : "this is another file: download the pinned archive";
  }
  if (!hash_ok) {
    auto& f = model::add_finding(findings, "verify.sha256", model::Severity::error, path.string());
    f.seen = v.actual_sha256;
    f.expected = e.sha256;
    f.fix = "the file is not the pinned archive (corrupt, tampered with, or another build): download it again from NVIDIA";
  }
  if (v.ok) {
    auto& f = model::add_finding(findings, "verify.ok", model::Severity::ok, path.string());
    f.seen = "sha256 " + v.actual_sha256 + ", " + std::to_string(h->size) + " bytes" +
             (by_content ? " (found under another name than " + e.file + ")" : "");
  }
  return v;
}

}  // namespace

util::Result<PinnedArchive> pinned_archive(const model::Manifest& m, model::Platform platform, const knowledge::KnowledgeBase& kb) {
  PinnedArchive p;
  p.pin = m.archive_for(platform);
  if (!p.pin) {
    std::vector<std::string> pinned;
    if (m.cudnn)
      for (const auto& a : m.cudnn->archives) pinned.push_back(model::to_string(a.platform.value));
    return util::Error(util::ErrorCode::invalid, std::string("no archive pinned for ") + model::to_string(platform) + " in " + m.path)
        .with_hint(pinned.empty() ? "add a [[cudnn.archives]] entry"
                                  : "pinned platforms: " + util::join(pinned, ", ") + " (choose with --platform)");
  }
  SP_TRY_ASSIGN(auto expect, expectation_for(m, *p.pin, kb));
  if (!expect.size)
    return util::Error(util::ErrorCode::invalid, std::string("no size pinned for the ") + model::to_string(platform) + " archive")
        .at(m.locate(p.pin->pos))
        .with_hint("add size = N (bytes) to the [[cudnn.archives]] entry");
  p.expect = std::move(expect);
  return p;
}

util::Result<PinnedArchive> pinned_cuda_archive(const model::Manifest& m, const model::ArchivePin& pin) {
  std::string what = "the " + std::string(model::to_string(pin.platform.value)) + " archive of " + pin.component->value;
  if (!pin.sha256 || !pin.size || pin.file_name().empty())
    return util::Error(util::ErrorCode::invalid, "no " +
                                                     std::string(!pin.sha256 ? "SHA-256"
                                                                 : !pin.size ? "size"
                                                                             : "file name or URL") +
                                                     " pinned for " + what)
        .at(m.locate(pin.pos))
        .with_hint(pin.origin.value == model::Origin::local ? "add sha256, size and url (or file) to this [[cuda.archives]] entry"
                                                            : "run `stackpin lock` (with --redistrib for a release stackpin has no "
                                                              "NVIDIA manifest of), then use --locked");
  PinnedArchive p;
  p.pin = &pin;
  p.expect.platform = pin.platform.value;
  p.expect.file = pin.file_name();
  p.expect.sha256 = pin.sha256->value;
  p.expect.size = pin.size->value;
  return p;
}

util::Result<std::vector<PinnedArchive>> pinned_cuda_archives(const model::Manifest& m, model::Platform platform) {
  std::vector<PinnedArchive> out;
  if (!m.cuda) return out;
  for (const auto& pin : m.cuda->archives) {
    if (pin.platform.value != platform || !pin.component) continue;
    SP_TRY_ASSIGN(auto p, pinned_cuda_archive(m, pin));
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

// Where to look, in words, for messages: "in DIR", "in the cache CACHE", "in DIR nor in the cache CACHE".
std::string places(const fs::path& dir, const fs::path& cache) {
  if (!dir.empty() && !cache.empty()) return "in " + dir.string() + " nor in the download cache " + cache.string();
  if (!dir.empty()) return "in " + dir.string();
  return "in the download cache " + cache.string();
}

std::string download_hint(const model::ArchivePin& pin, const ArchiveExpectation& e, const fs::path& dir, const fs::path& cache) {
  if (cache.empty()) return pin.url ? "download " + pin.url->value + " into " + dir.string() : "put the archive into " + dir.string();
  if (pin.url) return "run `stackpin fetch MANIFEST` to download " + pin.url->value + " into the cache";
  return (dir.empty() ? "give the folder holding it with --archives DIR, or put it into "
                      : "put the archive into " + dir.string() + " or into ") +
         cache_entry_dir(cache, e.sha256).string();
}

// The archive in `dir` (when given), else in the cache (when given). Errors: usage (neither), io.
util::Result<std::optional<fs::path>> search(const ArchiveExpectation& e, const fs::path& dir, const fs::path& cache, bool& by_content) {
  by_content = false;
  if (dir.empty() && cache.empty())
    return util::Error(util::ErrorCode::usage, "no place to look for the archive")
        .with_hint("give the folder the archives were downloaded to with --archives DIR, or run `stackpin fetch MANIFEST`");
  if (!dir.empty()) {
    auto located = locate_archive(e, dir, by_content);
    if (!located) return located;
    if (*located) return located;
  }
  if (!cache.empty())
    if (auto c = find_in_cache(cache, e)) return std::optional<fs::path>(*c);
  return std::optional<fs::path>();
}

}  // namespace

util::Result<std::optional<fs::path>> find_expected_archive(const ArchiveExpectation& e, const fs::path& dir, const fs::path& cache_dir,
                                                            bool& found_by_content) {
  return search(e, dir, cache_dir, found_by_content);
}

util::Result<fs::path> find_pinned_archive(const PinnedArchive& p, const fs::path& dir, bool& found_by_content, const fs::path& cache_dir) {
  SP_TRY_ASSIGN(auto located, search(p.expect, dir, cache_dir, found_by_content));
  if (!located)
    return util::Error(util::ErrorCode::not_found, "archive " + p.expect.file + " not found " + places(dir, cache_dir))
        .with_hint(download_hint(*p.pin, p.expect, dir, cache_dir));
  return *located;
}

util::Result<model::VerifyReport> verify_manifest(const model::Manifest& m, const fs::path& dir, std::optional<model::Platform> platform,
                                                  const knowledge::KnowledgeBase& kb, const fs::path& cache_dir) {
  model::VerifyReport report;
  auto& findings = report.findings;
  const bool has_cudnn = m.cudnn && !m.cudnn->archives.empty();
  const bool has_cuda = m.cuda && !m.cuda->archives.empty();
  if (!has_cudnn && !has_cuda)
    return util::Error(util::ErrorCode::invalid, m.path + " pins no [[cudnn.archives]] and no CUDA component archive to verify")
        .with_hint("add one [[cudnn.archives]] entry per platform, or [cuda] components to verify the toolkit's archives");
  // cuDNN's archives, then the toolkit's
  std::vector<const model::ArchivePin*> pins;
  if (has_cudnn)
    for (const auto& pin : m.cudnn->archives) pins.push_back(&pin);
  if (has_cuda)
    for (const auto& pin : m.cuda->archives) pins.push_back(&pin);
  bool any = false;
  for (const model::ArchivePin* pp : pins) {
    const model::ArchivePin& pin = *pp;
    if (platform && pin.platform.value != *platform) continue;
    any = true;
    ArchiveExpectation e;
    if (pin.component) {
      SP_TRY_ASSIGN(auto p, pinned_cuda_archive(m, pin));
      e = std::move(p.expect);
    } else {
      SP_TRY_ASSIGN(e, expectation_for(m, pin, kb));
    }
    bool by_content = false;
    SP_TRY_ASSIGN(auto where, search(e, dir, cache_dir, by_content));
    if (!where) {
      if (pin.implied) continue;  // pinned by the lock or the knowledge base: verified when present
      model::VerifiedArchive v;
      v.platform = e.platform;
      v.expected_file = e.file;
      v.expected_sha256 = e.sha256;
      v.expected_size = e.size;
      report.archives.push_back(v);
      auto& f =
          model::add_finding(findings, "verify.found", model::Severity::error,
                             std::string(model::to_string(e.platform)) + " archive" + (pin.component ? " of " + pin.component->value : ""));
      f.seen = "no " + e.file + " " + places(dir, cache_dir) +
               (e.size && !dir.empty() ? ", and no file of " + std::to_string(*e.size) + " bytes with the pinned SHA-256" : "");
      f.expected = e.file;
      f.fix = download_hint(pin, e, dir, cache_dir);
      f.where = m.locate(pin.pos);
      continue;
    }
    report.archives.push_back(check_one(*where, e, findings, by_content));
  }
  if (any && report.archives.empty())
    return util::Error(util::ErrorCode::not_found, "none of the archives " + m.path + " pins was found " + places(dir, cache_dir))
        .with_hint("download one with `stackpin fetch " + gen::sh_quote(m.path) + "`, or give the folder that holds it with --archives");
  if (!any) {
    std::vector<std::string> pinned;
    for (const model::ArchivePin* pin : pins)
      if (std::find(pinned.begin(), pinned.end(), model::to_string(pin->platform.value)) == pinned.end())
        pinned.push_back(model::to_string(pin->platform.value));
    return util::Error(util::ErrorCode::invalid, std::string("no archive pinned for ") + model::to_string(*platform) + " in " + m.path)
        .with_hint("pinned platforms: " + util::join(pinned, ", "));
  }
  return report;
}

util::Result<model::VerifyReport> verify_file(const fs::path& file, const std::string& sha256_hex, std::optional<std::uint64_t> size) {
  if (!crypto::from_hex(sha256_hex)) return util::Error(util::ErrorCode::usage, "--sha256 must be 64 hexadecimal digits");
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return util::Error(util::ErrorCode::not_found, "no such file: " + file.string());
  ArchiveExpectation e;
  e.file = file.filename().string();
  e.sha256 = util::to_lower(sha256_hex);
  e.size = size;
  model::VerifyReport r;
  auto v = check_one(file, e, r.findings, false);
  r.archives.push_back(v);
  return r;
}

}  // namespace core
