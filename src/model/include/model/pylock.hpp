#pragma once
// The Python lock: a PEP 751 `pylock.<name>.toml` beside the stack's lock. It pins every package of
// the environment the manifest's [frameworks] resolve to, each as wheels with URL, size and
// SHA-256, for every target the manifest has; a package that exists on some targets only carries a
// PEP 508 marker naming them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/manifest.hpp"
#include "model/platform.hpp"

namespace model {

struct PyWheel {
  std::string name;  // the wheel's file name: "torch-2.9.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl"
  std::string url;   // http(s):// or file://
  std::uint64_t size = 0;
  std::string sha256;  // 64 lower-case hex digits
  Pos pos;
};

struct PyPackage {
  std::string name;     // normalized (PEP 503): lower case, runs of -_. as one '-'
  std::string version;  // "2.9.0+cu130"
  std::string index;    // the index that serves it ("" when not known)
  std::string marker;   // PEP 508 environment marker: the targets it is on ("" = all of them)
  std::vector<PyWheel> wheels;
  Pos pos;
};

struct PyLock {
  std::string path;
  std::vector<std::string> lines;
  std::string lock_version = "1.0";
  std::string created_by;                 // "stackpin"
  std::string requires_python;            // "==3.12.*"
  std::vector<std::string> environments;  // one PEP 508 marker per target
  std::vector<PyPackage> packages;        // sorted by name, then version

  util::SourceLocation locate(Pos pos) const;
  // The package of that (normalized) name installed on `platform`; nullptr when none.
  const PyPackage* package_for(const std::string& name, Platform platform) const;
};

// PEP 503's normalized name: lower case, each run of '-', '_' and '.' one '-'.
std::string normalize_python_name(const std::string& name);

// The PEP 508 marker of a target platform: sys_platform and platform_machine.
std::string python_marker(Platform p);

// The targets a package's marker names (every target of `all` when the marker is empty).
std::vector<Platform> platforms_of_marker(const std::string& marker, const std::vector<Platform>& all);

// URLs as wheels are named by them (util::percent_decode undoes the %XX escapes): the last path
// component of a URL (no query or fragment), decoded ("torch-2.9.0%2Bcu130-...whl" ->
// "torch-2.9.0+cu130-...whl"); a file:// URL's local path, decoded ("" for another scheme).
std::string url_file_name(const std::string& url);
std::string file_url_path(const std::string& url);

// The wheel's distribution name and version, from its file name (PEP 427: name-version(-build)?-py-abi-plat.whl);
// nullopt when the name is not a wheel's.
struct WheelName {
  std::string name, version, python, abi, platform;
};
std::optional<WheelName> parse_wheel_name(const std::string& file);

}  // namespace model
