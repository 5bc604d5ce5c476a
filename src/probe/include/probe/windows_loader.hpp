#pragma once
// What the Windows loader really loads for a DLL name (loader_windows.cpp): the check behind
// `doctor` on a live Windows machine, beside the search order it predicts from the files.
#include <string>
#include <vector>

#include "model/machine.hpp"

namespace probe {

struct LoaderAnswer {
  bool supported = false;  // false off Windows: nothing was tried
  bool loaded = false;
  std::string path;      // the file the loader mapped (GetModuleFileNameW), when loaded
  std::string error;     // why it did not load ("The specified module could not be found. (Windows error 126)")
  bool missing = false;  // the loader found no file of that name (as opposed to one that failed to load)
};

// Loads `dll_name` (a bare name, no directory) by the standard search order of a desktop
// application (LoadLibraryExW without flags), reads back the file that was mapped and unloads it
// again. No error dialog is shown for a missing dependency. `path_first`: folders put first on
// this process's PATH while the loader searches (a program started after an activation that
// puts them there), then taken off again.
LoaderAnswer load_as_application(const std::string& dll_name, const std::vector<std::string>& path_first = {});
// The same, as Python 3.8+ loads an extension module's dependencies: LOAD_LIBRARY_SEARCH_DEFAULT_DIRS,
// PATH not searched, with `dirs` (python.exe's folder, the os.add_dll_directory ones) added by
// AddDllDirectory for this call only. A directory that cannot be added is named in `error`.
LoaderAnswer load_as_python_extension(const std::string& dll_name, const std::vector<std::string>& dirs);

// The NVIDIA driver version nvml.dll reports (System32, else NVSMI under Program Files), "" when
// no NVIDIA driver answers; "" off Windows (the Linux machine probe reads it its own way).
std::string windows_driver_version();
// The GPUs nvml.dll lists (index, name, compute capability); empty when no NVIDIA driver answers,
// and off Windows.
std::vector<model::GpuDevice> windows_gpus();

}  // namespace probe
