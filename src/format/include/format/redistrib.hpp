#pragma once
// NVIDIA's redistrib_*.json, the manifest NVIDIA publishes beside its redistributable archives:
// per component and platform a relative_path, sha256, md5 and size. Only the "cudnn" component is
// read. Two shapes exist: per platform one archive (older files named redistrib_X.Y.Z.B.json, one
// CUDA variant), or per platform one archive per CUDA variant ("cuda11", "cuda12", ...).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/platform.hpp"
#include "model/version.hpp"
#include "util/result.hpp"

namespace format {

struct RedistribArchive {
  model::Platform platform = model::Platform::linux_x86_64;
  int cuda = 0;               // CUDA major of the build
  std::string relative_path;  // relative to NVIDIA's cudnn/redist/ base URL
  std::string sha256, md5;
  std::uint64_t size = 0;
};

struct RedistribRelease {
  std::string path;          // the file it was read from
  std::string release_date;  // "2024-04-12"
  std::string release_label;
  model::Version version;  // cudnn.version, four parts
  std::vector<RedistribArchive> archives;
  std::vector<std::string> skipped;  // platforms stackpin does not provision ("linux-ppc64le")
};

// Parses a redistrib JSON document. Errors: parse (not JSON, with line:col), invalid (no "cudnn"
// component, a version that is not four parts, an archive without relative_path / a 64-digit
// sha256 / a size, a CUDA variant that cannot be told), each naming the JSON path of the value.
util::Result<RedistribRelease> parse_redistrib(std::string_view text, const std::string& path);

}  // namespace format
