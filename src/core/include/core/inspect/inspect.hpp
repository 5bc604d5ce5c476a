#pragma once
// stackpin inspect: the GPU code libraries carry, read from their fatbin containers
// (probe/fatbin.hpp), and what it means for given GPUs: native kernels, kernels the driver
// compiles from PTX at first use (and the driver that needs), or none at all.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "knowledge/knowledge_base.hpp"
#include "model/finding.hpp"
#include "model/kernels.hpp"
#include "model/platform.hpp"
#include "util/result.hpp"

namespace core {

struct InspectOptions {
  // Libraries (ELF or PE), directory trees, or archives (wheels, NVIDIA's .tar.xz and .zip). An
  // archive is unpacked into a temporary directory under `temp_parent` after its bytes are proven:
  // against the knowledge base's SHA-256 and size when it is NVIDIA's, else against the hash
  // taken here before reading it.
  std::vector<std::filesystem::path> paths;
  std::vector<model::Version> gpus;      // compute capabilities to judge the code against
  std::optional<model::Version> driver;  // the driver that would compile PTX (judged when given)
  model::Os driver_os = model::Os::linux;
  std::filesystem::path temp_parent;  // "" = the system's temporary directory
};

// Reads every library under the given paths and judges it. A path named directly that cannot be
// read is an error (not_found, io, invalid, unsupported, mismatch for an archive that is not the
// pinned one, unsafe for a hostile archive); a library inside a tree or an archive that cannot be
// read becomes an error finding and the rest is still read.
util::Result<model::InspectReport> inspect(const InspectOptions& o, const knowledge::KnowledgeBase& kb);

// How code with `targets` runs on a GPU of compute capability `gpu` (no PTX-to-driver lookups).
model::GpuFit fit_for(const model::Version& gpu, const std::vector<model::TargetImages>& targets);

}  // namespace core
