#pragma once
// Area core/apply, the top of core: it orchestrates the others (archives, provision, package,
// doctor, convtest) and nothing in core includes it.
//
// `stackpin apply`: provision a machine from a manifest in one command: the archive (from a
// folder, the cache or the network), verified; staged (or packaged and installed for
// layout = "deb"); the activation scripts; then doctor and, where a GPU exists, the conv test.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "archive/extract.hpp"
#include "core/archives/fetch.hpp"
#include "core/doctor/doctor.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/apply.hpp"
#include "model/contracts.hpp"
#include "model/finding.hpp"
#include "model/manifest.hpp"
#include "model/pylock.hpp"
#include "util/env.hpp"
#include "util/result.hpp"

namespace core {

struct ApplyOptions {
  model::Target target = model::Target::linux;  // windows or linux
  std::optional<std::filesystem::path> dest;    // DEST (ARCHITECTURE); the linux default is the manifest's prefix
  std::optional<model::Platform> platform;      // default: windows-x86_64 / the host's Linux platform
  std::filesystem::path archives_dir;           // searched before the cache (may be empty)
  FetchOptions fetch;                           // cache_dir (required), mirrors, offline, retries
  std::filesystem::path deb_dir;                // layout = "deb": where the packages are written (default CACHE/debs)
  bool dry_run = false;
  bool force = false;                           // as stage --force: replace a previous staging whose files were modified
  bool remove_stale = false;                    // as stage --remove-stale (cuda-merge)
  std::optional<std::uint64_t> max_unpacked;    // as stage / deb --max-unpacked
  std::optional<std::uint64_t> decoder_memory;  // as stage --decoder-memory (bytes)
  bool doctor = true;
  bool convtest = true;
  std::string manifest_path;  // as the user gave it, for the hints
  std::string manifest_sha256;
  std::string stackpin_version;
  const util::Env* env = nullptr;  // the machine's environment (doctor, PATH for dpkg)
  // This running Windows machine (stackpin.exe sets it, with the registry's PATH values). A
  // Windows tree staged where it lives (DEST is the prefix) is then judged here by the doctor and
  // conv test steps, as a Linux tree is, instead of leaving them to the Windows machine.
  std::optional<WindowsDoctorOptions> windows_machine;
  // The Python environment (a venv) the "python" step makes hold exactly the Python lock's packages
  // (core::provision_venv); nothing when unset. A manifest that pins no system half ([cudnn], [cuda]
  // components) provisions this alone, whatever `target` says.
  std::optional<std::filesystem::path> venv;
  const model::PyLock* pylock = nullptr;  // read and verified against the stack's lock (core::load_python_lock)
  std::string pylock_sha256;
  std::function<void(const std::string& step)> on_step;  // called as each step starts
  std::function<void(const archive_io::Progress&)> progress;
};

// Runs the steps in order; the first failing step stops the run (the report says which and why,
// and the later steps are not in it). Doctor findings about the cuDNN apply put in place fail the
// run; its other findings (toolkit, driver, nvcc) go to `findings` and to report.remaining.
// With a venv, the "python" step follows activation (alone, for a manifest without a system half).
// Errors (nothing done): usage (a target other than windows/linux, no DEST for windows, no DEST
// and no prefix for linux, a Windows platform for linux or the reverse), invalid (nothing pinned
// for the platform, located in the manifest).
util::Result<model::ApplyReport> apply(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const ApplyOptions& o);

}  // namespace core
