#pragma once
// Activation scripts for a Windows cuDNN tree (activate_windows.cpp): PowerShell (process or
// persistent, -WhatIf) and cmd (current process only).
#include <string>

#include "util/result.hpp"

namespace gen {

struct WindowsActivation {
  std::string name;           // manifest name
  std::string cudnn_version;  // 9.1.0.70
  std::string cudnn_root;     // where the tree lives on the Windows machine (prefix, or the CUDA root for cuda-merge)
  std::string dll_dir;        // absolute Windows path of the directory holding cudnn64_N.dll
  std::string cuda_path;      // the CUDA toolkit root, "" when unknown
  std::string cuda_version;   // "12.4" (for CUDA_PATH_V12_4), "" when unknown
  // for the check script
  std::string include_dir;    // absolute: <root>\include
  std::string import_lib;     // absolute: <root>\lib\x64\cudnn.lib
  std::string main_dll;       // cudnn64_8.dll
  bool zlibwapi_needed = false;
  std::string min_driver;     // "520.06", "" when unknown
};

// activate.ps1 with -Scope Process|User|Machine and -WhatIf.
std::string render_activate_ps1(const WindowsActivation& a);
// check-cudnn.ps1: the checks of the first seed's script, for this manifest: the directories and
// key files, this cuDNN first on PATH, no other cudnn64_*.dll earlier in the DLL search order
// (System32 and the Windows directory come before PATH), zlibwapi.dll where this cuDNN needs it,
// the VC++ runtime, and the driver against the minimum. Exits 1 when a check fails.
std::string render_check_ps1(const WindowsActivation& a);

// activate.cmd: the current cmd.exe only. Errors (unsupported): a path cmd cannot quote.
util::Result<std::string> render_activate_cmd(const WindowsActivation& a);

}  // namespace gen
