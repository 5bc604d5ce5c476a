#pragma once
// One archive's download into the cache (fetch.cpp decides which archives and URLs).
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/archives/fetch.hpp"
#include "core/archives/registry.hpp"
#include "net/download.hpp"

namespace core::detail {

struct TransferJob {
  model::Platform platform = model::Platform::linux_x86_64;
  std::string file;               // NVIDIA's file name, kept in the cache
  std::string sha256;             // pinned, lowercase hex
  std::uint64_t size = 0;         // pinned
  std::vector<std::string> urls;  // tried in order; oci://HOST/REPO@sha256:HEX is a registry's blob
};

// The registries reached while fetching, by repository (oci://HOST/REPO): connected and
// authenticated once, for every archive pulled from them.
using RegistryClients = std::map<std::string, std::shared_ptr<RegistryClient>>;

// A registry client's options from a fetch's: its environment, retries, timeouts and sleep.
RegistryOptions registry_options(const FetchOptions& o);

class Committer;

// Downloads `job` into CACHE/sha256/<hex>/<file> (or this boot's unsynced folder there, see
// cache.hpp) through CACHE/partial/<hex>.part, filling
// `out` (url, tried, attempts, bytes_downloaded, status downloaded|resumed, path).
// Errors: mismatch (more bytes than pinned, fewer, another SHA-256: the partial is deleted), not_found
// (HTTP 404/410 or a missing file:// on every URL), io (network failures after the retries, TLS,
// not enough free space — checked before anything is written — or a write failing: disk full).
// With a committer, the verified download is handed to it (index `index`) instead of committed
// before the call returns: `out` then says downloaded, and the committer's failures correct it.
util::Status transfer_archive(const TransferJob& job, const FetchOptions& o, model::FetchedArchive& out, RegistryClients& registries,
                              Committer* committer = nullptr, std::size_t index = 0);

// Where verified downloads are renamed into the cache (made durable with fsync first where the
// kernel names no boot, see cache.hpp), on a thread of its own and in order, so that the next
// archive downloads while the disk catches up with the last.
class Committer {
 public:
  Committer();
  ~Committer();  // waits for what was handed over
  Committer(const Committer&) = delete;
  Committer& operator=(const Committer&) = delete;
  // Runs `commit` on the committer's thread; a failure is kept for `index`.
  void add(std::size_t index, std::function<util::Status()> commit);
  // Waits for every commit handed over; the failures, by index.
  std::vector<std::pair<std::size_t, util::Error>> finish();

 private:
  struct State;
  std::unique_ptr<State> m_state;
};

// A request for `url` through the proxy the environment names for it (proxy_for), with its
// no_proxy (else NO_PROXY) list; no environment, no proxy.
net::Request request_through_env(const std::string& url, const util::Env* env);

}  // namespace core::detail
