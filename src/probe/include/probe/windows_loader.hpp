#pragma once
// What the Windows loader really loads for a DLL name (loader_windows.cpp): the check behind
// `doctor` on a live Windows machine, beside the search order it predicts from the files.
#include <string>

namespace probe {

struct LoaderAnswer {
  bool supported = false;  // false off Windows: nothing was tried
  bool loaded = false;
  std::string path;      // the file the loader mapped (GetModuleFileNameW), when loaded
  std::string error;     // why it did not load ("The specified module could not be found. (Windows error 126)")
  bool missing = false;  // the loader found no file of that name (as opposed to one that failed to load)
};

// Loads `dll_name` (a bare name, no directory) by the standard search order of a desktop
// application (LoadLibraryExW without flags) or, with `python_search`, as Python 3.8+ loads an
// extension module's dependencies (LOAD_LIBRARY_SEARCH_DEFAULT_DIRS), reads back the file that was
// mapped and unloads it again. No error dialog is shown for a missing dependency.
LoaderAnswer load_as_application(const std::string& dll_name, bool python_search);

}  // namespace probe
