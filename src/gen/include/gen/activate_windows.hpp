#pragma once
// Activation scripts for a Windows cuDNN tree (activate_windows.cpp): PowerShell (process or
// persistent, -WhatIf) and cmd (current process only).
#include <string>
#include <vector>

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
  std::string include_dir;  // absolute: <root>\include
  std::string import_lib;   // absolute: <root>\lib\x64\cudnn.lib
  std::string main_dll;     // cudnn64_8.dll
  bool zlibwapi_needed = false;
  std::string arch = "x64";                // the DLLs' machine: "x64" or "arm64" (Windows on Arm)
  std::string min_driver;                  // "520.06", "" when unknown
  std::vector<std::string> dlls;           // every DLL of the pinned cuDNN, main first (NVIDIA's names)
  std::string header_version;              // what include\cudnn_version.h must say: "8.8.0"
  std::vector<std::string> cuda_bin_dirs;  // the pinned CUDA's bin\ (and bin\x64\ from CUDA 13); empty when unknown
  // The bin directories of a toolkit staged in this same tree (absolute: <root>\bin, CUDA 13's
  // <root>\bin\x64): put on PATH after the cuDNN DLL directory. A tree without cuDNN has an empty
  // dll_dir, cudnn_version and dlls, and these alone.
  std::vector<std::string> toolkit_bin_dirs;
  struct File {
    std::string path;    // relative to cudnn_root, '\'-separated
    std::string sha256;  // lowercase hex
  };
  std::vector<File> files;  // every staged file, for the check script (empty: generated without a tree)
  // the PATH rule's file patterns (core::cudnn_dll_patterns, core::toolkit_dll_patterns)
  std::vector<std::string> cudnn_patterns, toolkit_patterns;
};

// The UTF-8 byte order mark every generated PowerShell script starts with: Windows PowerShell 5.1
// reads a script without one in the ANSI code page (José becomes JosÃ©, CJK becomes garbage).
inline constexpr const char* k_utf8_bom = "\xEF\xBB\xBF";

// How to run a generated script in each shell a user has: PowerShell (the execution policy,
// Restricted by default, blocks scripts: Bypass for this one run), cmd.exe and WSL's bash.
struct RunHints {
  std::string powershell, cmd, wsl;
};
// `script` is the script's Windows path; `in_session` runs it in the current PowerShell (so that
// a Process-scope change stays), else in a child powershell.exe.
RunHints run_hints(const std::string& script, bool in_session);

// The directories activation puts first on PATH, in order: cuDNN's DLL directory, then the staged
// toolkit's bin directories (each once).
std::vector<std::string> first_path_dirs(const WindowsActivation& a);

// activate.ps1 with -Scope Process|User|Machine and -WhatIf: the PATH rule of
// core/windows_path_rule.hpp (its file patterns are rendered from there), a dry run that shows the
// new value and changes nothing, and the Python line for os.add_dll_directory as a literal.
std::string render_activate_ps1(const WindowsActivation& a);
// check-cudnn.ps1: the checks of the seeds' scripts, for this manifest: the tree (every file, its
// SHA-256 when `files` has them, the version in cudnn_version.h, every DLL of this cuDNN), this
// cuDNN first on the process PATH and where it stands in the Machine and User PATH of the
// registry, no other cuDNN earlier in the DLL search order, the pinned CUDA's bin on PATH,
// zlibwapi.dll (x64) where this cuDNN needs it, the VC++ runtime, the driver against the minimum,
// and with -Process NAME the cuDNN and CUDA runtime DLLs a running process really loaded. One line
// per check and a summary (-Json: one JSON document); exits 1 when a check fails.
std::string render_check_ps1(const WindowsActivation& a);

// activate.cmd: the current cmd.exe only, in the UTF-8 code page while it runs (the original is
// restored). Errors (unsupported): a path cmd cannot quote.
util::Result<std::string> render_activate_cmd(const WindowsActivation& a);

}  // namespace gen
