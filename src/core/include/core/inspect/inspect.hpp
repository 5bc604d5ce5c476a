#pragma once
// stackpin inspect: the GPU code libraries carry, read from their fatbin containers
// (probe/fatbin.hpp), and what it means for given GPUs: native kernels, kernels the driver
// compiles from PTX at first use (and the driver that needs), or none at all.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "archive/extract.hpp"
#include "core/gpu_code.hpp"
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

// The GPU code of the libraries inside an archive whose bytes are already proven to be the pinned
// ones (core::open_pinned), unpacked like inspect's archives under `temp_parent` ("" = the
// system's temporary directory) and removed again. Libraries are named by their path inside the
// archive; one that cannot be read is left out and named, with why, in `unreadable`. `name` names
// the archive in errors. Errors: those of unpacking (unsafe, io, ...).
struct ArchiveKernels {
  std::vector<model::LibraryKernels> libraries;
  std::vector<std::string> unreadable;
};
util::Result<ArchiveKernels> archive_kernels(archive_io::PinnedFile& pinned, const std::string& name,
                                             const std::filesystem::path& temp_parent = {});

}  // namespace core
