// The wheels of a Python lock one platform installs: every package whose marker names the platform
// (or that has none), each with the one wheel whose platform tag runs there. PEP 751 leaves the
// choice among a package's wheels to the installer; stackpin makes it once, here, so that a venv,
// an image and an environment file install the same files.
#include <algorithm>

#include "core/python/python_env.hpp"
#include "util/strings.hpp"

namespace core {
namespace {

using util::Error;
using util::ErrorCode;

// Whether a wheel's platform tag (possibly compressed: "manylinux_2_17_x86_64.manylinux2014_x86_64")
// runs on `p`.
bool wheel_runs_on(const std::string& file, model::Platform p) {
  auto w = model::parse_wheel_name(file);
  if (!w) return false;
  auto linux_tag = [](const std::string& tag, const std::string& arch) {
    return (tag.rfind("manylinux", 0) == 0 || tag.rfind("musllinux", 0) == 0 || tag.rfind("linux", 0) == 0) && tag.size() > arch.size() &&
           tag.compare(tag.size() - arch.size(), arch.size(), arch) == 0;
  };
  for (const auto& tag : util::split(w->platform, '.')) {
    if (tag == "any") return true;
    switch (p) {
      case model::Platform::linux_x86_64:
        if (linux_tag(tag, "_x86_64")) return true;
        break;
      case model::Platform::linux_sbsa:
      case model::Platform::linux_aarch64:
        if (linux_tag(tag, "_aarch64")) return true;
        break;
      case model::Platform::windows_x86_64:
        if (tag == "win_amd64") return true;
        break;
      case model::Platform::windows_arm64:
        if (tag == "win_arm64") return true;
        break;
    }
  }
  return false;
}

bool is_pure(const std::string& file) {
  auto w = model::parse_wheel_name(file);
  return w && w->platform == "any";
}

}  // namespace

util::Result<std::vector<PinnedWheel>> pinned_wheels(const model::PyLock& lock, model::Platform p) {
  const std::string marker = model::python_marker(p);
  if (!lock.environments.empty() && std::find(lock.environments.begin(), lock.environments.end(), marker) == lock.environments.end())
    return Error(ErrorCode::unsupported, lock.path + " has no wheels for " + model::to_string(p) + " (" + marker + ")")
        .with_hint("add that platform to the manifest's targets and lock again");
  std::vector<PinnedWheel> out;
  for (const auto& pkg : lock.packages) {
    if (!pkg.marker.empty() && pkg.marker.find(marker) == std::string::npos) continue;
    // a wheel built for the platform before a pure one ("any"), as pip ranks them
    const model::PyWheel* pick = nullptr;
    for (const auto& w : pkg.wheels)
      if (wheel_runs_on(w.name, p) && (!pick || (is_pure(pick->name) && !is_pure(w.name)))) pick = &w;
    if (!pick)
      return Error(ErrorCode::unsupported, pkg.name + " " + pkg.version + " has no wheel for " + model::to_string(p) + " in " + lock.path)
          .at(lock.locate(pkg.pos))
          .with_hint("lock again: `stackpin lock MANIFEST` resolves a wheel for every target");
    PinnedWheel w;
    w.name = pkg.name;
    w.version = pkg.version;
    w.wheel = pick;
    w.requirement = pkg.name + " @ " + pick->url + " --hash=sha256:" + pick->sha256;
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace core
