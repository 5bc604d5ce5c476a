#pragma once
// Area core/capture: a machine's stack written as a manifest, from what probe saw on Linux
// (capture.cpp) or from a mounted Windows tree (capture_windows.cpp).
//
// `stackpin capture`: this machine's stack as a manifest a teammate can reproduce.
#include <functional>
#include <string>
#include <vector>

#include "core/doctor/doctor.hpp"
#include "gen/manifest_toml.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/machine.hpp"
#include "util/result.hpp"

namespace core {

struct CaptureOptions {
  std::string name;  // the manifest's name; "" = derived from the OS and the stack
  // NVIDIA's archives of a cuDNN release (X.Y.Z) the knowledge base has none of, from NVIDIA's
  // manifest of it (the download cache, or NVIDIA with `capture --online`); unset: none is read.
  std::function<util::Result<std::vector<model::CudnnArchiveFact>>(const model::Version& three)> read_release;
};

struct Capture {
  gen::ManifestSpec spec;
  std::vector<std::string> notes;  // what could not be pinned, and why
};

// Decides the manifest from what probe::inspect_machine found: the cuDNN the loader really
// resolves (libcudnn.so.9, else .so.8), its exact build (a receipt, wheel or package metadata;
// else the knowledge base when only one build of that X.Y.Z exists), the CUDA major it was built
// for, the archive that reproduces it (stackpin's receipt, else NVIDIA's archive from the
// knowledge base), the default CUDA toolkit, the driver as the minimum, the frameworks of the
// Python environment (package metadata, no imports) and [targets.linux] where the copy is a
// staged tree. Errors: not_found (no cuDNN the loader finds), invalid (a build that cannot be
// told: two builds of one X.Y.Z and no metadata saying which).
util::Result<Capture> capture(const model::MachineReport& machine, const knowledge::KnowledgeBase& kb, const CaptureOptions& o);

// The same for a Windows machine mounted at `w.root` (capture_windows.cpp): the first
// cudnn64_N.dll of the DLL search order for `w.path` is pinned at its build (stackpin's receipt in
// its tree, else the knowledge base's only Windows build of that X.Y.Z), with [targets.windows]
// (isolated, or cuda-merge when the DLL sits in a CUDA toolkit's bin), the CUDA release from the
// toolkit's version.json and the frameworks beside `w.python`. Errors: usage (no such root),
// not_found (no cuDNN DLL on the search path), invalid (its version or build cannot be told).
util::Result<Capture> capture_windows(const WindowsDoctorOptions& w, const knowledge::KnowledgeBase& kb, const CaptureOptions& o);

}  // namespace core
