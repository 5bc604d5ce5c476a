#pragma once
// A schema-1 manifest as TOML text (manifest_toml.cpp), for `stackpin capture`: every value
// quoted as a TOML basic string, each section with the comments that say where its values came
// from. Pure: the spec holds every decision.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gen {

struct ManifestArchive {
  std::string platform, origin, url, file, sha256;
  std::optional<std::uint64_t> size;
  std::string comment;  // where the pin came from
};

struct ManifestSpec {
  std::vector<std::string> header;  // comment lines at the top
  std::string name, description;
  std::string cuda;  // "" = no [cuda]
  std::string cuda_comment;
  std::vector<std::string> cuda_components;  // [cuda] components (NVIDIA's names); empty = none written
  std::string cuda_components_comment;
  std::string driver_linux;  // "" = no [driver]
  std::string driver_comment;
  std::string cudnn;  // four parts; "" = no [cudnn] (then no archives either)
  int cudnn_cuda = 0;
  std::string cudnn_comment;
  std::vector<ManifestArchive> archives;
  std::vector<std::string> archive_comments;                    // comment lines after the archives (a pin that could not be completed)
  std::vector<std::pair<std::string, std::string>> frameworks;  // name, version
  std::string frameworks_comment;
  std::string python;
  std::vector<std::string> python_packages;  // [python] packages ("name==version")
  std::vector<std::string> python_comments;  // one comment line each
  std::vector<std::string> gpu_arch;         // [gpus] arch; empty = no [gpus]
  std::string gpus_comment;
  std::string linux_layout, linux_prefix;  // "" = no [targets.linux]
  std::string linux_comment;
  std::string driver_windows;                                     // [driver] windows ("" = none)
  std::string windows_layout, windows_prefix, windows_cuda_path;  // "" = no [targets.windows]
  std::string windows_arch;                                       // "arm64" for Windows on Arm; "" = x64 (not written)
  std::string windows_comment;
};

// "a \"b\" \\ \n" : a TOML basic string holding `s` exactly.
std::string toml_quote(const std::string& s);

std::string render_manifest(const ManifestSpec& s);

}  // namespace gen
