// On a live Windows machine, the loader itself is asked. The search order doctor builds from the
// files predicts which copy of each DLL a program loads; LoadLibraryExW, the way an application
// calls it, says which one it really loads, or why none loads: a copy that is there but fails
// (a DLL it imports is missing, such as zlibwapi.dll or the VC++ runtime, or it is a 32-bit
// build) is the CUDNN_STATUS_NOT_INITIALIZED of the seeds, found before any framework runs.
// The loader also searches what the order cannot see (stackpin.exe's own folder, DLLs already
// loaded, KnownDLLs, this terminal's PATH when it differs from the registry's), so a different
// answer is reported, not hidden.
#include <set>

#include "core/windows/windows_search.hpp"
#include "doctor/windows/doctor_windows_rules.hpp"
#include "probe/windows_loader.hpp"
#include "util/strings.hpp"

namespace core::winrules {

using model::Severity;

void real_loader(Ctx& c) {
  std::set<std::string> asked;
  std::vector<model::DllLookup> lookups = c.view.desktop.dlls;  // copies: the rules below add none
  for (const auto& l : lookups) {
    if (!asked.insert(util::to_lower(l.name)).second) continue;
    auto a = probe::load_as_application(l.name, false);
    if (!a.supported) return;
    const model::DllCopy* w = l.winner();
    if (a.loaded) {
      if (w && same_windows_path(a.path, w->windows_path)) {
        auto& f = c.add("windows.loader", Severity::ok, l.name);
        f.seen = "the Windows loader loads " + a.path + ", the first copy in the search order";
        f.source = k_src_search_order;
        continue;
      }
      auto& f = c.add("windows.loader", Severity::warning, l.name);
      f.seen = "the Windows loader loads " + a.path;
      f.expected = w ? w->windows_path + " (the first copy in the search order above)" : std::string("no copy in the search order above");
      f.fix =
          "the loader also searched what the order does not show: stackpin.exe's own folder, DLLs already loaded, KnownDLLs, or "
          "this terminal's PATH where it differs from the registry's (open a new terminal after changing PATH)";
      f.source = k_src_search_order;
      continue;
    }
    if (!w) continue;  // no copy anywhere: the rules above report it
    auto& f = c.add("windows.loader", Severity::error, l.name);
    f.seen = w->windows_path + " is found, but the Windows loader cannot load it: " + a.error;
    f.expected = l.name + " loads";
    f.fix = a.missing ? "a DLL it imports is missing: see the zlibwapi.dll and VC++ runtime findings, or run `dumpbin /dependents` on it"
                      : "it is damaged or built for another architecture (a 32-bit copy): replace it with the staged tree's";
    f.source = k_src_search_order;
  }
}

}  // namespace core::winrules
