#pragma once
// NVIDIA's redistrib_*.json, the manifest NVIDIA publishes beside its redistributable archives:
// per component and platform a relative_path, sha256, md5 and size.
//
// cuDNN's (parse_redistrib) has one component, "cudnn", in two shapes: per platform one archive
// (older files named redistrib_X.Y.Z.B.json, one CUDA variant), or per platform one archive per
// CUDA variant ("cuda11", "cuda12", ...).
//
// CUDA's (parse_cuda_redistrib) has one object per toolkit component ("cuda_cudart",
// "libcublas", ...), each with its own version (CUDA 12.4.1 ships cudart 12.4.127) and one archive
// per platform NVIDIA builds it for; some components exist only for some platforms, and a few are
// platform-independent ("linux-all", or a source archive).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/platform.hpp"
#include "model/version.hpp"
#include "util/result.hpp"

namespace format {

struct RedistribArchive {
  model::Platform platform = model::Platform::linux_x86_64;
  model::Version build;       // the build its file name gives ("9.15.0.58": one file may hold two builds of its release)
  int cuda = 0;               // CUDA major of the build
  std::string cuda_release;   // "13.4" when the file is built for one CUDA release only (_cuda13.4-archive), else ""
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
  // Archives built for one CUDA release only, listed beside the CUDA major's own archive of the
  // same platform (9.27.0's windows-arm64 has _cuda13 and _cuda13.4): the major's archive is the
  // one stackpin pins; these are named here ("windows-arm64: cudnn/...-archive.zip").
  std::vector<std::string> release_builds;
};

// A relative_path as NVIDIA's manifests write them: a path inside the redist tree
// ("cudnn/linux-x86_64/cudnn-...tar.xz"), or, on the host that keeps archives in a pool, one that
// first climbs out of it ("../../../pool/linux-x86_64/<id>/cudnn-...tar.xz"): leading "../"
// only, then plain names (no "." or empty name, no ".." anywhere, no backslash, leading '/', or
// '%', '?', '#' that a server would decode or cut).
bool is_redist_relative_path(std::string_view path);
// The URL of an archive at `relative` (as above) in a manifest whose relative paths start from
// `base` (a URL of a directory, ending in '/': "https://host/compute/cudnn/redist/"): each
// leading "../" takes one directory off `base`. Errors: invalid (a path that climbs above the
// root of the host, or a base that is not scheme://host/...).
util::Result<std::string> redist_url(const std::string& base, std::string_view relative);
// The URL of an archive of a manifest read from `manifest` (a URL, or a local file's path): a path
// inside the redist tree from NVIDIA's `official` redist directory (the manifest may have been
// read from a mirror of it); a path that climbs out of it (a pool on the host the manifest came
// from) from the manifest's own directory. Errors: invalid (such a path in a local file, whose
// host stackpin cannot know; a path that climbs above the host's root).
util::Result<std::string> archive_url(const std::string& manifest, std::string_view relative, const std::string& official);

// The releases an HTML listing of NVIDIA's redist folder names: every "redistrib_<X.Y.Z>.json"
// in it (one to three digits a part; any other text is ignored), ascending and each once.
std::vector<model::Version> listed_releases(std::string_view listing);

// Parses a redistrib JSON document. Errors: parse (not JSON, with line:col), invalid (no "cudnn"
// component, a version that is not four parts, an archive without relative_path / a 64-digit
// sha256 / a size, a CUDA variant that cannot be told), each naming the JSON path of the value.
util::Result<RedistribRelease> parse_redistrib(std::string_view text, const std::string& path);

// One archive of a CUDA component, under the platform key NVIDIA gives it ("linux-x86_64",
// "linux-ppc64le", "linux-all"). A component NVIDIA builds per CUDA release (cuda_compat from 13.1:
// a "cuda_variant" list, and one archive per variant under each platform) names its variant.
struct CudaComponentArchive {
  std::string platform_key;
  std::string variant;                      // "cuda13.1" for a variant build; empty for the others
  std::optional<model::Platform> platform;  // set for the platforms stackpin provisions
  std::string relative_path;                // relative to NVIDIA's cuda/redist/ base URL
  std::string sha256, md5;
  std::uint64_t size = 0;
};

struct CudaComponent {
  std::string id;            // NVIDIA's key: "cuda_cudart"
  std::string name;          // "CUDA Runtime (cudart)"
  std::string license;       // "CUDA Toolkit"
  std::string license_path;  // "cuda_cudart/LICENSE.txt"
  model::Version version;    // the component's own version: "12.4.127"
  std::string version_text;  // as NVIDIA writes it
  std::vector<CudaComponentArchive> archives;
};

struct CudaRedistribRelease {
  std::string path;
  std::string release_date;   // "2024-04-12"
  std::string release_label;  // "12.4.1" (absent from NVIDIA's oldest files)
  std::string release_product;
  std::vector<CudaComponent> components;  // in the file's order
};

// Parses a CUDA redistrib JSON document. Errors: parse (not JSON, with line:col), invalid (a
// cuDNN file, a component without a version, an archive without a relative_path inside the
// component's own folder, a 64-digit sha256 or a size; no component at all), each naming the JSON
// path of the value.
util::Result<CudaRedistribRelease> parse_cuda_redistrib(std::string_view text, const std::string& path);

// Which product's manifest a document is: cuDNN's (a "cudnn" component), CUDA's (release_product
// "cuda", or no "cudnn" component but some other), or unknown (not a JSON object); the readers
// then say what is wrong with it.
enum class RedistribProduct { cudnn, cuda, unknown };
RedistribProduct redistrib_product(std::string_view text);

}  // namespace format
