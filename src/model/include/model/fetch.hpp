#pragma once
// The value of `stackpin fetch`: for each pinned archive, where it came from, where it lies in the
// cache and what happened to it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/finding.hpp"
#include "model/platform.hpp"
#include "util/result.hpp"

namespace model {

enum class FetchStatus {
  cached,      // already in the cache (size checked; hash too with --verify-cached)
  downloaded,  // downloaded from byte zero
  resumed,     // completed from a partial download left by an earlier run or attempt
  missing,     // --offline and not in the cache
  failed,      // could not be downloaded (error says why)
};

const char* to_string(FetchStatus s);

struct FetchedArchive {
  Platform platform = Platform::linux_x86_64;
  std::string file;                // NVIDIA's file name, kept in the cache
  std::string url;                 // the URL the bytes came from (or were last tried), "" if none
  std::vector<std::string> tried;  // every URL tried, in order
  std::string path;                // path in the cache ("" unless cached/downloaded/resumed)
  std::string sha256;              // pinned, lowercase hex
  std::uint64_t size = 0;          // pinned
  FetchStatus status = FetchStatus::failed;
  int attempts = 0;                    // transfers started
  std::uint64_t bytes_downloaded = 0;  // over the network in this run
  std::optional<util::Error> error;    // status failed / missing
};

struct FetchReport {
  std::vector<Finding> findings;  // one per archive: its outcome
  std::string cache_dir;
  bool offline = false;
  std::vector<std::string> mirrors;  // in the order they are tried
  std::vector<FetchedArchive> archives;
};

}  // namespace model
