#pragma once
// What `stackpin doctor` finds on a machine: the findings (one model::Finding per judgement,
// error/warning/note/ok printed as fail/warn/note/ok) and one section per view doctor took. The
// Windows section holds the DLL search orders doctor applied to a Windows tree and, for each DLL
// it asked about, every copy in search order (the first one wins). A Linux section (OS, driver,
// toolkits, cuDNN copies, the loader's view) is added beside it the same way: an optional member
// of DoctorReport, its own to_json part, its own findings in the one list.
#include <optional>
#include <string>
#include <vector>

#include "model/finding.hpp"
#include "model/machine.hpp"

namespace model {

// Why a directory is in a search order.
enum class SearchSource {
  app_dir,      // the application's directory (--app-dir, or python.exe's)
  system32,     // C:\Windows\System32 (GetSystemDirectory)
  system16,     // C:\Windows\System, the 16-bit system directory
  windows_dir,  // C:\Windows (GetWindowsDirectory)
  cwd,          // the current directory (--cwd)
  path,         // an entry of PATH (the machine part when --user-path is given)
  user_path,    // an entry of the User-scope PATH, which Windows appends to the machine PATH
  dll_dir,      // a directory added with os.add_dll_directory (--dll-dir)
};
const char* to_string(SearchSource s);

// How a Windows path was mapped onto the local tree.
enum class PathMapping {
  mapped,          // an absolute path on a mapped drive: local_path is set
  drive_unmapped,  // an absolute path on a drive without --windows-root / --drive
  unc,             // \\server\share\...: never mapped
  relative,        // relative to the current directory (mapped only against --cwd)
  variable,        // holds a %VARIABLE% doctor cannot expand
  empty,           // nothing left after quotes and blanks were removed
};
const char* to_string(PathMapping m);

struct SearchDir {
  SearchSource source = SearchSource::path;
  std::string why;           // "PATH entry 3", "System32 (searched before PATH)"
  std::string raw;           // the entry as written in PATH ("" for fixed directories)
  std::string windows_path;  // normalized: backslashes, no trailing one, variables expanded
  std::string local_path;    // the mapped directory with its real on-disk names; "" when not mapped
  PathMapping mapping = PathMapping::mapped;
  bool exists = false;                  // local_path is a directory
  bool quoted = false;                  // written in double quotes, which the DLL loader does not strip
  bool searched = true;                 // false for quoted entries and for duplicates of an earlier directory
  std::optional<int> path_index;        // 1-based position in the PATH value it came from
  std::optional<int> duplicate_of;      // index (in the order) of the first entry naming the same directory
  std::vector<std::string> unexpanded;  // variable names it could not expand
  std::string cuda_version;             // "12.4" when this is a CUDA toolkit's bin (or bin\x64) directory
};

struct DllCopy {
  int dir = 0;               // index of its directory in the search order
  std::string windows_path;  // C:\...\cudnn64_8.dll, with the file's real on-disk name
  std::string local_path;
  std::string version;       // "8.9.5" (from cudnn_version.h), "8" (from the file name), "" unknown
  std::string version_from;  // the header's Windows path, or "file name"
  std::string machine;       // PE machine: "x64", "x86", "arm64", "other"; "" when not a PE image
};

// One DLL name looked up in one search order: every copy the order reaches, first one wins.
struct DllLookup {
  std::string name;  // "cudnn64_8.dll"
  std::string why;   // what needs it ("cuDNN 8.9.5.30 (manifest)", "VC++ runtime")
  std::vector<DllCopy> copies;
  const DllCopy* winner() const { return copies.empty() ? nullptr : &copies.front(); }
};

struct SearchOrder {
  std::string kind;   // "desktop" | "python"
  std::string title;  // one line saying which loader rule this order is
  std::vector<SearchDir> dirs;
  std::vector<DllLookup> dlls;
  std::vector<std::string> notes;  // what the order cannot show (loaded modules, KnownDLLs, ...)
};

struct WindowsView {
  std::vector<std::pair<std::string, std::string>> drives;  // "C:" -> local directory
  std::string path;                                         // PATH as given (the machine value when user_path is set)
  std::optional<std::string> user_path;
  std::size_t path_length = 0;  // characters of the process PATH (machine;user)
  std::string app_dir, cwd, python;
  std::vector<std::string> dll_dirs;
  // The machine's architecture, "x64" or "arm64" (Windows on Arm), from the PE header of
  // machine_from (System32's ntdll.dll); "" when the tree has none.
  std::string machine, machine_from;
  SearchOrder desktop;                      // the standard search order (SafeDllSearchMode on)
  std::optional<SearchOrder> python_order;  // Python 3.8+ extension modules, when --python is given
};

// What doctor expects, from --manifest; empty strings when there is none.
struct DoctorExpectations {
  std::string manifest;       // path of the manifest
  std::string cudnn_version;  // "8.9.5.30"
  std::optional<int> cudnn_major;
  std::string cuda_version;       // "12.1.1"
  std::string windows_layout;     // "isolated" | "cuda-merge"
  std::string windows_cudnn_dir;  // the Windows directory the manifest's cudnn64_N.dll lives in
  std::string windows_cuda_path;  // [targets.windows] cuda_path
  std::string windows_arch;       // [targets.windows] arch: "x64" or "arm64"; "" without [targets.windows]
};

struct DoctorReport {
  DoctorExpectations expected;
  std::vector<Finding> findings;
  std::optional<WindowsView> windows;
  std::optional<MachineReport> machine;  // the running Linux/WSL2 machine, when it was inspected
};

}  // namespace model
