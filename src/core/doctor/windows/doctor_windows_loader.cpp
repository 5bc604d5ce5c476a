// On a live Windows machine, the loader itself is asked. The search order doctor builds from the
// files predicts which copy of each DLL a program loads; LoadLibraryExW, the way an application
// calls it, says which one it really loads, or why none loads: a copy that is there but fails
// (a DLL it imports is missing, such as zlibwapi.dll or the VC++ runtime, or it is a 32-bit
// build) is the CUDNN_STATUS_NOT_INITIALIZED of the seeds, found before any framework runs.
// The loader also searches what the order cannot see (stackpin.exe's own folder, DLLs already
// loaded, KnownDLLs, this terminal's PATH when it differs from the registry's), so a different
// answer is reported, not hidden. With --python, the loader is asked again the way Python 3.8+
// loads an extension module's dependencies (PATH not searched). The driver is read from nvml.dll
// and judged by the rule doctor on Linux uses (driver_judgement.hpp).
#include <set>

#include "core/windows/windows_search.hpp"
#include "doctor/driver_judgement.hpp"
#include "doctor/windows/doctor_windows_rules.hpp"
#include "probe/windows_loader.hpp"
#include "util/strings.hpp"

namespace core::winrules {

using model::Severity;

namespace {

// One DLL as the loader answered it, against the first copy `order` predicts.
void judge(Ctx& c, const std::string& rule, const model::DllLookup& l, const probe::LoaderAnswer& a, const std::string& how) {
  const model::DllCopy* w = l.winner();
  if (a.loaded) {
    if (w && same_windows_path(a.path, w->windows_path)) {
      auto& f = c.add(rule, Severity::ok, l.name);
      f.seen = "the Windows loader loads " + a.path + how + ", the first copy in the search order";
      f.source = k_src_search_order;
      return;
    }
    auto& f = c.add(rule, Severity::warning, l.name);
    f.seen = "the Windows loader loads " + a.path + how;
    f.expected = w ? w->windows_path + " (the first copy in the search order above)" : std::string("no copy in the search order above");
    f.fix =
        "the loader also searched what the order does not show: stackpin.exe's own folder, DLLs already loaded, KnownDLLs, or "
        "this terminal's PATH where it differs from the registry's (open a new terminal after changing PATH)";
    f.source = k_src_search_order;
    return;
  }
  if (!w) return;  // no copy anywhere: the rules above report it
  auto& f = c.add(rule, Severity::error, l.name);
  f.seen = w->windows_path + " is found, but the Windows loader cannot load it" + how + ": " + a.error;
  f.expected = l.name + " loads";
  f.fix = a.missing ? "a DLL it imports is missing: see the zlibwapi.dll and VC++ runtime findings, or run `dumpbin /dependents` on it"
                    : "it is damaged or built for another architecture (a 32-bit copy): replace it with the staged tree's";
  f.source = k_src_search_order;
}

}  // namespace

void real_loader(Ctx& c, const std::vector<std::string>& path_first) {
  std::set<std::string> asked;
  std::vector<model::DllLookup> lookups = c.view.desktop.dlls;  // copies: the rules below add none
  for (const auto& l : lookups) {
    if (!asked.insert(util::to_lower(l.name)).second) continue;
    auto a = probe::load_as_application(l.name, path_first);
    if (!a.supported) return;
    judge(c, "windows.loader", l, a, "");
  }
  if (!c.view.python_order) return;
  // Python 3.8+: python.exe's folder and the os.add_dll_directory ones, never PATH
  std::vector<std::string> dirs;
  if (!c.view.app_dir.empty()) dirs.push_back(c.view.app_dir);
  dirs.insert(dirs.end(), c.view.dll_dirs.begin(), c.view.dll_dirs.end());
  asked.clear();
  std::vector<model::DllLookup> python = c.view.python_order->dlls;
  for (const auto& l : python) {
    if (!asked.insert(util::to_lower(l.name)).second) continue;
    judge(c, "windows.loader.python", l, probe::load_as_python_extension(l.name, dirs), " as Python 3.8+ loads it");
  }
}

void driver(Ctx& c, const std::string& version, const model::Manifest* m) {
  if (version.empty()) {
    auto& f = c.add("windows.driver", Severity::note, "NVIDIA driver");
    f.seen = "no NVIDIA driver answered (no nvml.dll in System32 or in NVIDIA Corporation\\NVSMI)";
    if (c.cuda)
      f.expected = "a driver for CUDA " + c.cuda->text() + " (" + c.kb.driver_minimum(*c.cuda, model::Os::windows).effective + " or newer)";
    f.fix = "install the NVIDIA driver (a machine without an NVIDIA GPU has none)";
    return;
  }
  auto have = model::Version::parse(version);
  std::string have_text = version + " (from nvml.dll)";
  if (!have || !c.cuda) {
    auto& f = c.add("windows.driver", have ? Severity::ok : Severity::note, "NVIDIA driver");
    f.seen = have ? have_text : have_text + ": not a version stackpin can compare";
    if (have) f.expected = "no manifest with [cuda] to hold it against";
    return;
  }
  std::optional<model::Located<model::Version>> pin;
  if (m && m->driver) pin = m->driver->windows;
  auto j = doctor_rules::judge_driver(c.kb, model::Os::windows, false, *have, *c.cuda, pin ? std::optional(pin->value) : std::nullopt);
  auto& f = c.add("windows.driver", j.severity, "NVIDIA driver for the manifest's CUDA " + c.cuda->text());
  f.seen = have_text;
  f.expected = j.expected;
  f.fix = j.fix;
  f.source = j.source;
  if (j.against_pin && pin->pos.line > 0) f.where = m->locate(pin->pos);
}

}  // namespace core::winrules
