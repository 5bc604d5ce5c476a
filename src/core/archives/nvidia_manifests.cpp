// NVIDIA's CUDA and cuDNN manifests read when a command needs a release stackpin has no complete
// copy of (nvidia_manifests.hpp): the cache first, then one download, validated before it is kept.
#include "core/archives/nvidia_manifests.hpp"
#include "core/archives/http.hpp"

#include <system_error>

#include "archives/fetch_transfer.hpp"
#include "crypto/sha256.hpp"
#include "net/download.hpp"
#include "util/fs.hpp"

namespace core {
namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

namespace {

constexpr std::uint64_t k_max_manifest_bytes = 16u << 20;  // NVIDIA's largest CUDA manifest is under 1 MiB

const char* const k_base_hint = "STACKPIN_NVIDIA_BASE or [nvidia] base in the settings file must name a copy of NVIDIA's tree";

// The text must be NVIDIA's CUDA manifest of `release`; `where` names it in errors.
util::Result<format::CudaRedistribRelease> accept_cuda(const std::string& text, const model::Version& release, const std::string& where) {
  auto parsed = format::parse_cuda_redistrib(text, where);
  if (!parsed) return parsed.error();
  if (parsed->release_label != release.text())
    return Error(ErrorCode::invalid, where + " is not NVIDIA's manifest of CUDA " + release.text() + ": it says release_label \"" +
                                         parsed->release_label + "\"")
        .with_hint(std::string(k_base_hint) + " (" + k_nvidia_base + ", the folder above cuda/redist/)");
  return parsed;
}

// The text must be NVIDIA's cuDNN manifest of `release` (three parts): its cudnn.version begins
// with them (the file of 9.15.0 says 9.15.0.57).
util::Result<format::RedistribRelease> accept_cudnn(const std::string& text, const model::Version& release, const std::string& where) {
  auto parsed = format::parse_redistrib(text, where);
  if (!parsed) return parsed.error();
  if (parsed->version.prefix(3) != release.text())
    return Error(ErrorCode::invalid,
                 where + " is not NVIDIA's manifest of cuDNN " + release.text() + ": it lists cuDNN " + parsed->version.text())
        .with_hint(std::string(k_base_hint) + " (" + k_nvidia_base + ", the folder above cudnn/redist/)");
  return parsed;
}

// Every archive path of a manifest read from `url` that climbs out of the redist tree (into a pool
// of that host) stays on the host: a manifest whose path leaves it is refused before it is kept.
util::Status stays_on_host(const std::string& url, const std::string& relative) {
  if (relative.rfind("../", 0) != 0) return {};
  auto resolved = format::archive_url(url, relative, url);
  if (!resolved)
    return std::move(resolved).error().with_context(url + " is not a manifest stackpin can use").with_hint("use NVIDIA's own manifest");
  return {};
}
util::Status stays_on_host(const std::string& url, const format::RedistribRelease& r) {
  for (const auto& a : r.archives) SP_TRY(stays_on_host(url, a.relative_path));
  return {};
}
util::Status stays_on_host(const std::string& url, const format::CudaRedistribRelease& r) {
  for (const auto& c : r.components)
    for (const auto& a : c.archives) SP_TRY(stays_on_host(url, a.relative_path));
  return {};
}

// The body at `url`, at most `limit` bytes (`too_large` says when it was longer).
util::Result<std::string> download_text(const std::string& url, std::uint64_t limit, const util::Env* env, bool& too_large) {
  std::string body;
  net::Sink sink;
  sink.start = [&](const net::Response& head) {
    too_large = head.length && *head.length > limit;
    return !too_large;
  };
  sink.data = [&](const char* data, std::size_t size) {
    if (body.size() + size > limit) {
      too_large = true;
      return false;
    }
    body.append(data, size);
    return true;
  };
  auto got = net::download(detail::request_through_env(url, env), sink);
  if (!got) return std::move(got).error();
  return body;
}

// PRODUCT's redistrib_RELEASE.json, from the cache or downloaded; `accept(text, where)` parses and
// validates it before it is used or kept.
template <typename Release, typename Accept>
util::Result<Fetched<Release>> read_manifest(const std::string& product, const std::string& label, const std::string& release,
                                             const NvidiaManifestOptions& o, Accept accept) {
  const std::string name = "redistrib_" + release + ".json";
  const std::string url = nvidia_base(o.env, o.base) + product + "/redist/" + name;
  const fs::path cached = o.cache_dir.empty() ? fs::path() : o.cache_dir / "nvidia" / product / name;
  std::error_code ec;
  if (!cached.empty() && fs::is_regular_file(cached, ec)) {
    auto text = util::read_file(cached);
    if (!text) return std::move(text).error().with_context("reading the cached NVIDIA manifest");
    auto parsed = accept(*text, cached.string());
    if (!parsed) return std::move(parsed).error().with_hint("remove " + cached.string() + " to read NVIDIA's manifest again");
    auto from = util::read_file(fs::path(cached.string() + ".url"));
    SP_TRY(stays_on_host(from ? *from : url, *parsed));
    return Fetched<Release>{std::move(*parsed), from ? *from : url, crypto::to_hex(crypto::sha256_of(*text))};
  }
  if (o.offline)
    return Error(ErrorCode::not_found, "stackpin has no NVIDIA manifest of " + label + " " + release + " and runs offline")
        .with_hint("run once without --offline to keep " + url + " in the cache, or pass that file with --redistrib");

  bool too_large = false;
  auto got = download_text(url, k_max_manifest_bytes, o.env, too_large);
  if (too_large)
    return Error(ErrorCode::invalid,
                 url + " is larger than " + std::to_string(k_max_manifest_bytes >> 20) + " MiB: not one of NVIDIA's manifests")
        .with_hint("check STACKPIN_NVIDIA_BASE or [nvidia] base, or pass NVIDIA's file with --redistrib");
  if (!got)
    return std::move(got)
        .error()
        .with_context("reading NVIDIA's manifest of " + label + " " + release)
        .with_hint("pass " + name + " with --redistrib, or point STACKPIN_NVIDIA_BASE or [nvidia] base at a copy of " +
                   std::string(k_nvidia_base));
  auto parsed = accept(*got, url);
  if (!parsed) return parsed.error();
  SP_TRY(stays_on_host(url, *parsed));
  if (!cached.empty()) {
    fs::create_directories(cached.parent_path(), ec);
    if (ec) return Error(ErrorCode::io, "cannot create " + cached.parent_path().string() + ": " + ec.message());
    if (auto st = util::write_file_atomic(fs::path(cached.string() + ".url"), url); !st) return st.error();
    if (auto st = util::write_file_atomic(cached, *got); !st) return st.error();
  }
  return Fetched<Release>{std::move(*parsed), url, crypto::to_hex(crypto::sha256_of(*got))};
}

}  // namespace

std::string nvidia_base(const util::Env* env, const std::string& configured) {
  std::string base = configured.empty() ? k_nvidia_base : configured;
  if (env)
    if (auto b = env->get("STACKPIN_NVIDIA_BASE"); b && !b->empty()) base = *b;
  if (base.back() != '/') base += '/';
  return base;
}

util::Result<FetchedManifest> nvidia_cuda_manifest(const model::Version& release, const NvidiaManifestOptions& o) {
  return read_manifest<format::CudaRedistribRelease>(
      "cuda", "CUDA", release.text(), o,
      [&](const std::string& text, const std::string& where) { return accept_cuda(text, release, where); });
}

util::Result<FetchedCudnnManifest> nvidia_cudnn_manifest(const model::Version& release, const NvidiaManifestOptions& o) {
  return read_manifest<format::RedistribRelease>(
      "cudnn", "cuDNN", release.text(), o,
      [&](const std::string& text, const std::string& where) { return accept_cudnn(text, release, where); });
}

util::Result<std::vector<model::CudnnArchiveFact>> cudnn_facts_of(const FetchedCudnnManifest& got, const std::string& official_base) {
  std::vector<model::CudnnArchiveFact> out;
  for (const auto& a : got.release.archives) {
    auto url = format::archive_url(got.url, a.relative_path, official_base);
    if (!url) return std::move(url).error().with_context(got.url);
    model::CudnnArchiveFact f;
    f.version = a.build;  // the parser holds it to the release
    f.cuda = a.cuda;
    f.platform = a.platform;
    f.file = a.relative_path.substr(a.relative_path.rfind('/') + 1);
    f.url = *url;
    f.sha256 = a.sha256;
    f.md5 = a.md5;
    f.size = a.size;
    f.released = got.release.release_date;
    f.source = {"NVIDIA redistrib_" + got.release.version.prefix(3) + ".json, read from " + got.url + " (sha256 " + got.sha256 + ")"};
    out.push_back(std::move(f));
  }
  return out;
}

util::Result<std::vector<model::Version>> nvidia_releases(const std::string& product, const NvidiaManifestOptions& o) {
  const std::string url = nvidia_base(o.env, o.base) + product + "/redist/";
  if (o.offline) return Error(ErrorCode::not_found, "NVIDIA's list of " + product + " releases (" + url + ") is not read offline");
  bool too_large = false;
  auto got = download_text(url, 4u << 20, o.env, too_large);
  if (too_large) return Error(ErrorCode::invalid, url + " is larger than 4 MiB: not the listing of NVIDIA's redist folder");
  if (!got) return std::move(got).error().with_context("reading NVIDIA's list of " + product + " releases");
  auto found = format::listed_releases(*got);
  if (found.empty())
    return Error(ErrorCode::invalid, url + " names no redistrib_<release>.json: not the listing of NVIDIA's redist folder")
        .with_hint(std::string(k_base_hint) + " (" + k_nvidia_base + ")");
  return found;
}

net::Request http_request(const std::string& url, const util::Env* env) { return detail::request_through_env(url, env); }

util::Result<std::string> http_text(const std::string& url, std::uint64_t limit, const util::Env* env) {
  bool too_large = false;
  auto got = download_text(url, limit, env, too_large);
  if (too_large) return Error(ErrorCode::invalid, url + " is larger than " + std::to_string(limit) + " bytes");
  return got;
}

}  // namespace core
