#pragma once
// Where a cuDNN copy came from (machine_cudnn_records.cpp): the kind of directory it sits in, the
// pip wheel whose files it holds, the Debian packages that installed cuDNN.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "machine_internal.hpp"

namespace probe::detail {

// The dist-info of an nvidia-cudnn wheel that this directory's files came from.
struct WheelMatch {
  std::string version, where, problem;
  bool verified = false;  // RECORD lists the soname with the size found
};

// The dist-info of an nvidia-cudnn wheel of `major` in one of `places` (nullopt: none). Its RECORD
// must list libcudnn.so.<major> with the size of `dir`'s file for `verified`.
std::optional<WheelMatch> find_wheel(const MachineCtx& c, const std::string& dir, int major, const std::vector<std::string>& places);
// Installed dpkg runtime packages of cuDNN (libcudnn8, libcudnn9-cuda-12): package -> upstream version.
std::vector<std::pair<std::string, std::string>> dpkg_cudnn(const MachineCtx& c);
// The kind of a cuDNN directory, first match of: staged by stackpin, pip wheel, torch/lib,
// CUDNN_PATH, conda, a toolkit, a system directory; `detail` says which.
model::CudnnKind classify(const MachineCtx& c, const std::string& dir, std::string& detail);

bool ends_with(const std::string& s, const std::string& suffix);
// `path` is `dir` or lies below it.
bool under(const std::string& path, const std::string& dir);

}  // namespace probe::detail
