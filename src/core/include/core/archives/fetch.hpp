#pragma once
// Area core/archives: NVIDIA's archives as files: the content-addressed download cache
// (cache.hpp), downloads into it (fetch.hpp, fetch_transfer.cpp over net/), verifying a file
// against its pin (verify.hpp), the lock that pins archives, drivers and framework builds
// (lock.hpp), and OCI registries as mirrors (registry.hpp; mirror.hpp pushes and pulls a stack).
//
// `stackpin fetch`: downloads the archives a manifest pins into the content-addressed cache
// (core/cache.hpp), resuming partial downloads, retrying transient failures, cutting transfers
// that stall or drip below a minimum rate, bounding each URL by a deadline that scales with the
// pinned size, and renaming a file into the cache only once its size and SHA-256 match the pin.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "knowledge/knowledge_base.hpp"
#include "model/fetch.hpp"
#include "model/finding.hpp"
#include "model/manifest.hpp"
#include "util/env.hpp"
#include "util/result.hpp"

namespace core {

struct FetchProgress {
  model::Platform platform = model::Platform::linux_x86_64;
  std::string file;
  std::uint64_t done = 0;   // bytes of the archive on disk (a resumed download starts above 0)
  std::uint64_t total = 0;  // the pinned size
};

struct FetchOptions {
  std::filesystem::path cache_dir;          // required (default_cache_dir() computes the usual one)
  std::optional<model::Platform> platform;  // only this platform's archive; all when unset
  // Replace NVIDIA's cuDNN base URL (KnowledgeBase cudnn_base_url()) by each of these, in
  // order; when set, NVIDIA's server is not contacted for URLs under that base. Other URLs are
  // fetched as they are. An oci:// (or oci+http://) mirror is a registry repository: every
  // archive is pulled from it by its SHA-256 (the blob's digest), whatever its URL.
  std::vector<std::string> mirrors;
  // Without mirrors: the settings file's [nvidia] base, a copy of NVIDIA's whole
  // https://developer.download.nvidia.com/compute/ tree that NVIDIA's URLs of CUDA and cuDNN
  // archives are read from instead; STACKPIN_NVIDIA_BASE in `env` wins (core::nvidia_base).
  std::string nvidia_base;
  // Only the archives with these SHA-256 (empty: every archive chosen as above): what `apply`
  // did not find in its --archives folder.
  std::vector<std::string> only_sha256;
  bool offline = false;                         // use the cache only; report what is missing
  bool verify_cached = false;                   // re-hash cached files (size is always checked)
  int retries = 5;                              // extra attempts per URL after a transient failure
  std::chrono::milliseconds retry_delay{1000};  // first backoff; doubled each retry, at most 30 s
  long stall_timeout_s = 60;                    // a transfer receiving nothing for this long is retried
  // A server that drips bytes never stalls: from its first body byte, each rate_window_s of a
  // transfer must bring min_rate bytes a second on average, else it is retried (resuming). 0 turns
  // the check off, and with it the derived deadline.
  std::uint64_t min_rate = 10240;
  long rate_window_s = 60;
  // How long one archive may take from one URL, counted from its first attempt there, retries and
  // backoff included; then the next URL is tried. 0 = derived from the pinned size:
  // 2 * rate_window_s + the bytes still missing / min_rate, rounded up (none when min_rate is 0).
  std::uint64_t deadline_s = 0;
  long connect_timeout_s = 30;
  std::string user_agent = "stackpin";
  std::function<void(const FetchProgress&)> progress;
  std::function<void(std::chrono::milliseconds)> sleep;  // default: std::this_thread::sleep_for
  // The proxy variables (http_proxy, https_proxy / HTTPS_PROXY, ftp_proxy, ALL_PROXY / all_proxy,
  // no_proxy / NO_PROXY) are read from here, as curl reads them; nullptr = no proxy.
  const util::Env* env = nullptr;
};

// Fetches every archive the manifest pins (or only o.platform's) into o.cache_dir; of the archives
// the manifest does not write itself (implied by its lock or the knowledge base), only those of
// its targets' platforms (windows-x86_64 for [targets.windows], this machine's Linux platform for
// [targets.linux] / [targets.docker] or when it has no target). Per-archive
// failures do not stop the others: they are in the report (status failed or missing, with the
// error: mismatch for bytes that are not the pin, not_found for HTTP 404/410 or --offline, io for
// network, TLS, disk-full and space failures) and in `findings` as errors.
// Errors (nothing fetched): invalid (no [[cudnn.archives]], nothing pinned for the platform, an
// archive without SHA-256, size or URL, located at its [[cudnn.archives]] entry), io (the cache
// cannot be created).
util::Result<model::FetchReport> fetch(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const FetchOptions& o);

// The proxy for `url` from the environment, as curl chooses it: <scheme>_proxy (http_proxy only in
// lower case, as curl insists), then ALL_PROXY / all_proxy; "" when none applies.
std::string proxy_for(const std::string& url, const util::Env* env);

// The URLs to try for the archive at `url` whose SHA-256 is `sha256`, mirrors in order: an
// oci:// mirror gives its blob (oci://HOST/REPO@sha256:HEX) for any archive; another mirror takes
// the place of `base` when `url` is under `base` (a '/' is added to a mirror that lacks it).
// Without a mirror that applies, `url` itself; with only oci:// mirrors, `url` follows them when
// it is not under `base` (an archive that is not NVIDIA's).
std::vector<std::string> candidate_urls(const std::string& url, const std::string& sha256, const std::vector<std::string>& mirrors,
                                        const std::string& base);

// Errors: usage for a mirror that is an oci:// reference stackpin cannot use (parse_oci_reference).
util::Status check_mirrors(const std::vector<std::string>& mirrors);

}  // namespace core
