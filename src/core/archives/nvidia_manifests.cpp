// NVIDIA's CUDA manifests read when a command needs a release stackpin has no copy of
// (nvidia_manifests.hpp): the cache first, then one download, validated before it is kept.
#include "core/archives/nvidia_manifests.hpp"

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

// The text must be NVIDIA's CUDA manifest of `release`; `where` names it in errors.
util::Result<format::CudaRedistribRelease> accept_manifest(const std::string& text, const model::Version& release,
                                                           const std::string& where) {
  auto parsed = format::parse_cuda_redistrib(text, where);
  if (!parsed) return parsed.error();
  if (parsed->release_label != release.text())
    return Error(ErrorCode::invalid, where + " is not NVIDIA's manifest of CUDA " + release.text() + ": it says release_label \"" +
                                         parsed->release_label + "\"")
        .with_hint("STACKPIN_NVIDIA_BASE must name a mirror of " + std::string(k_nvidia_base) + " (the folder above cuda/redist/)");
  return parsed;
}

}  // namespace

std::string nvidia_cuda_redist_url(const util::Env* env) {
  std::string base = k_nvidia_base;
  if (env)
    if (auto b = env->get("STACKPIN_NVIDIA_BASE"); b && !b->empty()) base = *b;
  if (base.back() != '/') base += '/';
  return base + "cuda/redist/";
}

util::Result<FetchedManifest> nvidia_cuda_manifest(const model::Version& release, const NvidiaManifestOptions& o) {
  const std::string name = "redistrib_" + release.text() + ".json";
  const std::string url = nvidia_cuda_redist_url(o.env) + name;
  const fs::path cached = o.cache_dir.empty() ? fs::path() : o.cache_dir / "nvidia" / "cuda" / name;
  FetchedManifest out;
  if (!cached.empty()) {
    std::error_code ec;
    if (fs::is_regular_file(cached, ec)) {
      auto text = util::read_file(cached);
      if (!text) return std::move(text).error().with_context("reading the cached NVIDIA manifest");
      auto parsed = accept_manifest(*text, release, cached.string());
      if (!parsed) return std::move(parsed).error().with_hint("remove " + cached.string() + " to read NVIDIA's manifest again");
      out.release = std::move(*parsed);
      auto from = util::read_file(fs::path(cached.string() + ".url"));
      out.url = from ? *from : url;
      out.sha256 = crypto::to_hex(crypto::sha256_of(*text));
      return out;
    }
  }
  if (o.offline)
    return Error(ErrorCode::not_found, "stackpin has no NVIDIA manifest of CUDA " + release.text() + " and runs offline")
        .with_hint("run once without --offline to keep " + url + " in the cache, or pass that file with --redistrib");

  std::string body;
  bool too_large = false;
  net::Sink sink;
  sink.start = [&](const net::Response& head) {
    too_large = head.length && *head.length > k_max_manifest_bytes;
    return !too_large;
  };
  sink.data = [&](const char* data, std::size_t size) {
    if (body.size() + size > k_max_manifest_bytes) {
      too_large = true;
      return false;
    }
    body.append(data, size);
    return true;
  };
  auto got = net::download(detail::request_through_env(url, o.env), sink);
  if (too_large)
    return Error(ErrorCode::invalid,
                 url + " is larger than " + std::to_string(k_max_manifest_bytes >> 20) + " MiB: not one of NVIDIA's manifests")
        .with_hint("check STACKPIN_NVIDIA_BASE, or pass NVIDIA's file with --redistrib");
  if (!got)
    return std::move(got)
        .error()
        .with_context("reading NVIDIA's manifest of CUDA " + release.text())
        .with_hint("pass " + name + " with --redistrib, or point STACKPIN_NVIDIA_BASE at a mirror of " + std::string(k_nvidia_base));
  auto parsed = accept_manifest(body, release, url);
  if (!parsed) return parsed.error();
  out.release = std::move(*parsed);
  out.url = url;
  out.sha256 = crypto::to_hex(crypto::sha256_of(body));
  if (!cached.empty()) {
    std::error_code ec;
    fs::create_directories(cached.parent_path(), ec);
    if (ec) return Error(ErrorCode::io, "cannot create " + cached.parent_path().string() + ": " + ec.message());
    if (auto st = util::write_file_atomic(fs::path(cached.string() + ".url"), url); !st) return st.error();
    if (auto st = util::write_file_atomic(cached, body); !st) return st.error();
  }
  return out;
}

}  // namespace core
