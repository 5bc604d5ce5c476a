#pragma once
// The Python half of a stack: the Python lock resolved by pip's own resolver, checked against the
// index it came from, and installed into a virtual environment by pip with every hash required.
// Nothing here resolves a requirement itself: pip does, and stackpin pins what pip chose.
#include <filesystem>
#include <string>
#include <vector>

#include "model/lock.hpp"
#include "model/manifest.hpp"
#include "model/pylock.hpp"
#include "util/env.hpp"
#include "util/result.hpp"

namespace core {

// The targets the Python lock covers: the platforms of the manifest's archives and targets (a
// Linux target is this machine's platform, a Docker image linux-x86_64), one per PEP 508
// environment (linux-sbsa and linux-aarch64 are both `aarch64`); this machine's when it names none.
std::vector<model::Platform> python_platforms(const model::Manifest& m);

// Where pip looks: an index URL and extra ones, or (`find_links`) a directory of wheels with no index.
struct PythonIndexes {
  std::string index_url;
  std::vector<std::string> extra_index_urls;
  std::string find_links;  // a local directory; index_url is then unused
};

// The indexes of a manifest: [python] index (a URL; a local directory holding wheels, or a PEP 503
// tree as file://; relative to the manifest), else the locked frameworks' own (the CUDA variant's
// index first, PyPI as an extra one when a framework comes from it).
// Errors: not_found (a local index that does not exist).
util::Result<PythonIndexes> python_indexes(const model::Manifest& m, const model::Lock& lock);

struct PythonToolOptions {
  const util::Env* env = nullptr;
  std::string python;               // the interpreter that runs pip ("" = python3 on PATH, or STACKPIN_PYTHON)
  std::filesystem::path work_dir;   // where pip's reports and the like go (a temporary directory is made inside)
  int timeout_ms = 20 * 60 * 1000;  // per pip run
};

// Resolves the locked frameworks (their exact requirements) with pip for each platform of
// python_platforms: `pip install --dry-run --ignore-installed --report` with that platform's tags,
// the manifest's Python version and binary wheels only. Each wheel's size comes from its server and
// its SHA-256 from the index; a wheel whose index gives no hash or size is downloaded and hashed.
// Errors: usage (no [python] version, neither frameworks nor [python] packages), not_found (no
// python3 or pip), invalid (pip could not resolve, its message kept; pip's report is not what pip
// writes; a wheel URL that is not http(s) or file), io (a wheel's size or bytes could not be read),
// mismatch (a local wheel whose bytes are not the index's hash).
util::Result<model::PyLock> resolve_pylock(const model::Manifest& m, const model::Lock& lock, const PythonToolOptions& o);

// One wheel of a Python lock as its index serves it now (lock --check).
struct WheelRecheck {
  std::string package, wheel, index;
  enum class State { same, missing, changed, unreadable } state = State::same;
  std::string detail;  // what the index says instead
  model::Pos pos;
};

// Re-reads each package's page of its index (PEP 503) and compares every pinned wheel with what the
// page lists: missing (no longer listed, or the project's page is gone), changed (another SHA-256,
// or listed at another URL), unreadable (the page could not be read; `detail` says why). A wheel the
// page lists without a hash, or of a package that names no index, is downloaded and hashed; one
// with a file:// URL is hashed where it is.
std::vector<WheelRecheck> recheck_pylock(const model::PyLock& lock, const PythonToolOptions& o);

// One package of a Python lock as a platform installs it: its wheel for that platform, and the pip
// requirement that installs exactly that file ("torch @ URL --hash=sha256:HEX").
struct PinnedWheel {
  std::string name, version;
  const model::PyWheel* wheel = nullptr;  // into the lock
  std::string requirement;
};

// The packages of `lock` that `p` installs (the marker names it, or there is none), each with its
// wheel for `p`. Errors: unsupported (the lock has no wheels for `p`; a package without a wheel
// for it, located in the lock).
util::Result<std::vector<PinnedWheel>> pinned_wheels(const model::PyLock& lock, model::Platform p);

// What provision_venv did.
struct VenvResult {
  std::filesystem::path venv;
  bool created = false;                // the environment did not exist
  bool changed = false;                // packages were installed or removed
  bool unchanged = false;              // it already held exactly the lock's packages: nothing was done
  std::vector<std::string> installed;  // "torch 2.9.0+cu130"
  std::string python_version;          // of the environment's interpreter ("3.11.2")
};

// Makes `venv` hold exactly the Python lock's packages for this machine's platform, all or nothing:
// the previous environment is moved aside to `<venv>.stackpin-previous`, a fresh one is made at
// `venv` (python -m venv, then pip install --require-hashes --no-deps --no-index of the lock's wheels
// by URL), and the previous one is deleted only once pip succeeded; on failure it is moved back. A
// `.stackpin-previous` a killed run left is moved back first. An environment that already matches the
// lock (stackpin's record of the lock's SHA-256 in it, and pip's list of what is installed) is left
// alone.
// Errors: usage (the interpreter is not the lock's Python; the directory exists and is not a venv),
// unsupported (no wheels for this machine), not_found (no python3, no venv module), mismatch (pip
// refused a wheel's hash), io (pip failed otherwise: a wheel not reachable; moving directories).
util::Result<VenvResult> provision_venv(const model::PyLock& lock, const std::string& lock_sha256, const std::filesystem::path& venv,
                                        const PythonToolOptions& o);

}  // namespace core
