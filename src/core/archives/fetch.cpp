// `stackpin fetch`: which archives, from which URLs, and what the report says about each; the
// download itself is fetch_transfer.cpp.
#include "core/archives/fetch.hpp"

#include <algorithm>
#include <cctype>

#include <system_error>

#include "archives/fetch_transfer.hpp"
#include "core/archives/cache.hpp"
#include "core/archives/nvidia_manifests.hpp"
#include "core/archives/registry.hpp"
#include "core/archives/verify.hpp"
#include "crypto/sha256.hpp"
#include "knowledge/cuda_catalog.hpp"
#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

std::vector<std::string> candidate_urls(const std::string& url, const std::string& sha256, const std::vector<std::string>& mirrors,
                                        const std::string& base) {
  const bool under_base = !base.empty() && url.rfind(base, 0) == 0;
  std::vector<std::string> out;
  for (std::string m : mirrors) {
    if (m.empty()) continue;
    if (is_oci_url(m)) {
      if (auto ref = parse_oci_reference(m); ref && !sha256.empty()) out.push_back(oci_blob_url(*ref, sha256));
      continue;
    }
    if (!under_base) continue;
    if (m.back() != '/') m += '/';
    out.push_back(m + url.substr(base.size()));
  }
  // NVIDIA's server is not asked when a mirror serves its archive; another URL always is
  if (!url.empty() && (out.empty() || !under_base)) out.push_back(url);
  return out;
}

util::Status check_mirrors(const std::vector<std::string>& mirrors) {
  for (const auto& m : mirrors)
    if (is_oci_url(m)) SP_TRY(parse_oci_reference(m));
  return {};
}

namespace {

// Where an archive of NVIDIA's is read: the mirrors of its redist folder `base`, else `tree` (where
// NVIDIA's whole tree is read from, core::nvidia_base). Other URLs as they are.
std::vector<std::string> urls_for(const std::string& url, const std::string& sha256, const FetchOptions& o, const std::string& base,
                                  const std::string& tree) {
  if (!o.mirrors.empty()) return candidate_urls(url, sha256, o.mirrors, base);
  return candidate_urls(url, sha256, {tree}, k_nvidia_base);
}

// The URL of a pin: its own, else (origin = "nvidia") NVIDIA's from the knowledge base.
std::string url_of(const model::Manifest& m, const model::ArchivePin& pin, const knowledge::KnowledgeBase& kb) {
  if (pin.url) return pin.url->value;
  if (pin.origin.value == model::Origin::nvidia && m.cudnn && m.cudnn->cuda)
    return kb.cudnn_archive_url(m.cudnn->version.value, m.cudnn->cuda->value, pin.platform.value);
  return {};
}

// One finding per archive: its outcome.
void add_fetch_finding(std::vector<model::Finding>& to, const model::FetchedArchive& a, const model::Manifest& m,
                       const model::ArchivePin& pin) {
  std::string subject = std::string(model::to_string(a.platform)) + " archive " + a.file;
  std::string rule = !a.error                                  ? "fetch.ok"
                     : a.status == model::FetchStatus::missing ? "fetch.missing"
                                                               : std::string("fetch.") + util::to_string(a.error->code);
  auto& f = model::add_finding(to, rule, a.error ? model::Severity::error : model::Severity::ok, subject);
  f.expected = "sha256 " + a.sha256 + ", " + std::to_string(a.size) + " bytes";
  if (a.error) {
    f.seen = a.error->message;
    if (!a.error->hints.empty()) f.fix = a.error->hints.front();
    f.where = m.locate(pin.pos);
    return;
  }
  f.seen = std::string(model::to_string(a.status)) + ": " + a.path;
}

// Whether the cached copy is good: size always (find_in_cache), the hash with verify_cached. A
// corrupt copy is removed so that it is downloaded again.
std::optional<fs::path> usable_cached(const fs::path& cache, const ArchiveExpectation& e, bool verify) {
  auto p = find_in_cache(cache, e);
  if (!p || !verify) return p;
  auto h = crypto::hash_file(*p);
  if (h && crypto::to_hex(h->digest) == e.sha256) return p;
  remove_cached_archive(cache, e);  // every name it has: a plain entry may share its bytes with an unsynced one
  return std::nullopt;
}

}  // namespace

util::Result<model::FetchReport> fetch(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const FetchOptions& o) {
  const bool has_cudnn = m.cudnn && !m.cudnn->archives.empty();
  const bool has_cuda = m.cuda && !m.cuda->archives.empty();
  if (!has_cudnn && !has_cuda)
    return Error(ErrorCode::invalid, m.path + " pins no [[cudnn.archives]] and no CUDA component archive to fetch")
        .with_hint("add one [[cudnn.archives]] entry per platform, or [cuda] components to fetch the toolkit's archives");
  if (o.cache_dir.empty()) return Error(ErrorCode::usage, "no cache directory given").with_hint("give one with --cache-dir DIR");
  SP_TRY(check_mirrors(o.mirrors));
  const std::string tree = nvidia_base(o.env, o.nvidia_base);
  const bool has_registry = std::any_of(o.mirrors.begin(), o.mirrors.end(), [](const std::string& mi) { return is_oci_url(mi); });

  // Everything is checked before the first byte moves.
  struct Job {
    const model::ArchivePin* pin;
    detail::TransferJob transfer;
  };
  std::vector<Job> jobs;
  // Without --platform: what the manifest writes, and of the archives it leaves to the lock or the
  // knowledge base only those its targets need (not every platform NVIDIA publishes).
  std::vector<model::Platform> wanted;
  if (m.windows) wanted.push_back(m.windows_platform());
  if (m.linux || m.docker || !m.windows) wanted.push_back(model::host_linux_platform());
  auto take = [&](const model::ArchivePin& pin) {
    if (o.platform) return pin.platform.value == *o.platform;
    return !pin.implied || std::find(wanted.begin(), wanted.end(), pin.platform.value) != wanted.end();
  };
  auto wanted_hash = [&](const std::string& sha256) {
    return o.only_sha256.empty() || std::find(o.only_sha256.begin(), o.only_sha256.end(), sha256) != o.only_sha256.end();
  };
  // a job for the pin's archive: the file it must be (its URLs are the caller's)
  auto job_for = [](const model::ArchivePin& pin, const PinnedArchive& p) {
    Job j{&pin, {}};
    j.transfer.platform = pin.platform.value;
    j.transfer.file = p.expect.file;
    j.transfer.sha256 = p.expect.sha256;
    j.transfer.size = *p.expect.size;
    return j;
  };
  // the toolkit's archives: pinned by the manifest, its lock or NVIDIA's manifest of the release
  if (has_cuda) {
    for (const auto& pin : m.cuda->archives) {
      if (!take(pin)) continue;
      SP_TRY_ASSIGN(auto p, pinned_cuda_archive(m, pin));
      if (!wanted_hash(p.expect.sha256)) continue;
      Job j = job_for(pin, p);
      // a registry mirror serves any archive by its digest: a URL of its own is then not needed
      if ((!pin.url && !has_registry) || j.transfer.file.find_first_of("/\\") != std::string::npos || j.transfer.file == "." ||
          j.transfer.file == "..")
        return Error(ErrorCode::invalid, "no URL to fetch the " + std::string(model::to_string(pin.platform.value)) + " archive of " +
                                             pin.component->value + " from")
            .at(m.locate(pin.pos))
            .with_hint("add url = \"...\" to this [[cuda.archives]] entry");
      j.transfer.urls = urls_for(pin.url ? pin.url->value : "", j.transfer.sha256, o, knowledge::CudaCatalog::k_base_url, tree);
      jobs.push_back(std::move(j));
    }
  }
  static const std::vector<model::ArchivePin> k_none;
  for (const auto& pin : has_cudnn ? m.cudnn->archives : k_none) {
    if (!take(pin)) continue;
    SP_TRY_ASSIGN(auto p, pinned_archive(m, pin.platform.value, kb));
    if (!wanted_hash(p.expect.sha256)) continue;
    Job j = job_for(pin, p);
    std::string url = url_of(m, pin, kb);
    if (url.empty() && !has_registry)
      return Error(ErrorCode::invalid, std::string("no URL to fetch the ") + model::to_string(pin.platform.value) + " archive from")
          .at(m.locate(pin.pos))
          .with_hint("add url = \"...\" to this [[cudnn.archives]] entry");
    if (j.transfer.file.empty() || j.transfer.file.find_first_of("/\\") != std::string::npos || j.transfer.file == "." ||
        j.transfer.file == "..")
      return Error(ErrorCode::invalid, "the archive's file name '" + j.transfer.file + "' cannot name a file in the cache")
          .at(m.locate(pin.pos))
          .with_hint("set file = \"NAME\" in this [[cudnn.archives]] entry");
    j.transfer.urls = urls_for(url, j.transfer.sha256, o, kb.cudnn_base_url(), tree);
    jobs.push_back(std::move(j));
  }
  if (jobs.empty()) {
    std::vector<std::string> pinned;
    for (const auto* list : {has_cudnn ? &m.cudnn->archives : nullptr, has_cuda ? &m.cuda->archives : nullptr})
      if (list)
        for (const auto& pin : *list)
          if (std::find(pinned.begin(), pinned.end(), model::to_string(pin.platform.value)) == pinned.end())
            pinned.push_back(model::to_string(pin.platform.value));
    std::vector<std::string> want;
    for (auto p : wanted) want.push_back(model::to_string(p));
    std::string what = o.platform ? std::string(model::to_string(*o.platform)) : "this manifest's targets (" + util::join(want, ", ") + ")";
    return Error(ErrorCode::invalid, "no archive pinned for " + what + " in " + m.path)
        .with_hint("pinned platforms: " + util::join(pinned, ", ") + " (choose with --platform)");
  }

  model::FetchReport report;
  detail::RegistryClients registries;  // one connection (and token) per oci:// mirror, for all the archives
  detail::Committer committer;         // each download is named in the cache while the next one arrives
  report.cache_dir = o.cache_dir.string();
  report.offline = o.offline;
  report.mirrors = o.mirrors;
  // The largest first: where downloads are fsynced (no boot named), each one's fsync runs while the
  // next downloads, so the one left to wait for at the end is the smallest. The report keeps the
  // manifest's order.
  std::vector<std::size_t> order(jobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return jobs[x].transfer.size > jobs[y].transfer.size; });
  report.archives.resize(jobs.size());
  for (std::size_t index : order) {
    const auto& t = jobs[index].transfer;
    model::FetchedArchive& a = report.archives[index];
    a.platform = t.platform;
    a.file = t.file;
    a.sha256 = t.sha256;
    a.size = t.size;
    a.url = t.urls.front();
    ArchiveExpectation e{t.platform, t.file, t.sha256, t.size};
    if (auto p = usable_cached(o.cache_dir, e, o.verify_cached)) {
      a.status = model::FetchStatus::cached;
      a.path = p->string();
    } else if (o.offline) {
      a.status = model::FetchStatus::missing;
      a.error = Error(ErrorCode::not_found, std::string("not in the cache (--offline): ") + model::to_string(t.platform) + " " + t.file +
                                                ", sha256 " + t.sha256 + ", " + std::to_string(t.size) + " bytes, from " +
                                                util::join(t.urls, " or "))
                    .with_hint(
                        "run `stackpin fetch` without --offline where the network (or a --mirror) is reachable, "
                        "or copy the file into " +
                        cache_entry_dir(o.cache_dir, t.sha256).string());
    } else if (auto s = detail::transfer_archive(t, o, a, registries, &committer, index); !s) {
      a.status = model::FetchStatus::failed;
      a.error = std::move(s).error();
      a.path.clear();
    }
  }
  // every archive in the cache (or not, and why) before the report is made
  for (auto& [index, error] : committer.finish()) {
    auto& a = report.archives[index];
    a.status = model::FetchStatus::failed;
    a.error = std::move(error);
    a.path.clear();
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) add_fetch_finding(report.findings, report.archives[i], m, *jobs[i].pin);
  return report;
}

std::string proxy_for(const std::string& url, const util::Env* env) {
  if (!env) return {};
  auto colon = url.find("://");
  if (colon == std::string::npos) return {};
  std::string scheme = util::to_lower(url.substr(0, colon));
  if (scheme == "file") return {};
  auto get = [&](const std::string& name) { return env->get(name).value_or(""); };
  std::string p = get(scheme + "_proxy");
  if (p.empty() && scheme != "http") {  // curl reads HTTP_PROXY in lower case only (CGI's HTTP_* headers)
    std::string upper = scheme;
    for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    p = get(upper + "_PROXY");
  }
  if (p.empty()) p = get("ALL_PROXY");
  if (p.empty()) p = get("all_proxy");
  return p;
}

}  // namespace core
