#pragma once
// What a shared library says it is, read from its own bytes (library_identity.cpp): the name the
// loader knows it by, the libraries it needs, and, for cuDNN, the release it was built as. Used to
// tell whether the sub-libraries of a cuDNN tree belong together without trusting file names: a
// renamed file, a copy of another release and a missing sub-library all show here.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "model/version.hpp"
#include "util/result.hpp"

namespace probe {

struct LibraryIdentity {
  std::string format;               // "ELF" | "PE"
  std::string soname;               // ELF: DT_SONAME; PE: the export directory's DLL name; "" when absent
  std::vector<std::string> needed;  // ELF: DT_NEEDED; PE: the import directory's DLL names
  // The cuDNN release the bytes name, where they do: libcudnn_graph keeps the string
  // "cudnn_version_9_19_0_56_", libcudnn_ops and _adv export cudnn_<part>_version (0x091300 for
  // 9.19.0). Other sub-libraries carry no release, only their major (in the soname).
  std::optional<model::Version> cudnn_version;
  std::string version_evidence;  // "the string cudnn_version_9_19_0_56_", "cudnn_ops_infer_version = 9.19.0"
};

// Reads the identity of the ELF or PE file at `path` by small reads at its headers, its dynamic
// symbols and its read-only data (at most 64 MiB of it). A file without section headers still
// gives its soname and needs. Errors: not_found, io, invalid (not ELF/PE, truncated or
// inconsistent tables), unsupported (big-endian ELF).
util::Result<LibraryIdentity> read_library_identity(const std::filesystem::path& path);

}  // namespace probe
