#pragma once
// Area core/windows: Windows paths and the DLL loader, from any OS: mapping paths onto a mounted or
// fake tree (windows_paths.cpp), the search orders (windows_search.cpp) and the PATH rule of
// activation (windows_path_rule.hpp), shared by doctor, capture and the activation scripts.
//
// Windows paths mapped onto a local tree, and the loader's DLL search order applied to them
// (windows_paths.cpp, windows_search.cpp). Pure: no Windows API, so it runs on any OS against a
// mounted Windows disk, a copy of one, or a test fixture.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/doctor.hpp"
#include "model/version.hpp"

namespace core {

// Drive letters mapped onto local directories, and the variables %NAME% entries expand with.
struct WindowsTree {
  std::map<char, std::filesystem::path> drives;  // upper-case letter -> local directory ('C' = --windows-root)
  std::map<std::string, std::string> vars;       // upper-case name -> value

  // The Windows directory (%SystemRoot%, default C:\Windows), normalized.
  std::string system_root() const;
};

// The variables every Windows installation defines, at their default values (SystemRoot and
// windir = C:\Windows, SystemDrive = C:, ProgramFiles = C:\Program Files, ...), with `overrides`
// (names compared case-insensitively) taking precedence.
std::map<std::string, std::string> windows_default_vars(const std::map<std::string, std::string>& overrides = {});

// One entry of a PATH value.
struct WinPathEntry {
  std::string raw;   // as written, quotes included
  std::string path;  // quotes removed, variables expanded, normalized
  bool quoted = false;
  std::vector<std::string> unexpanded;  // %NAME% left as written (unknown variable)
  int index = 0;                        // 1-based position among the value's entries
};

// Splits a PATH value at ';' (a ';' inside double quotes does not split, as cmd.exe reads it),
// trims blanks around each entry, drops empty entries (not counted in `index`), expands %NAME%
// from `vars` (case-insensitively) and normalizes what is left (normalize_windows_path).
std::vector<WinPathEntry> parse_windows_path_list(std::string_view value, const std::map<std::string, std::string>& vars);
// The %NAME% variables a PATH value names, in order (a live machine's values for them are read
// from the process environment).
std::vector<std::string> windows_path_variables(std::string_view value);

// '/' becomes '\', repeated separators collapse (the leading "\\" of a UNC path stays), "." and
// ".." components are resolved lexically, trailing dots and spaces of each component are dropped
// (as Win32 does), the drive letter is upper-cased, and a trailing '\' is removed except after
// "C:". A "\\?\C:\..." prefix is removed. Returns "" for an empty path.
std::string normalize_windows_path(std::string_view path);

// Case-insensitive equality of two Windows paths after normalization (NTFS compares names
// without case; see names_equal_nocase).
bool same_windows_path(std::string_view a, std::string_view b);

// Equality of two file names the way NTFS compares them: case-insensitively for ASCII and for the
// Latin-1, Latin Extended-A, Greek and Cyrillic letters; other characters byte for byte.
bool names_equal_nocase(std::string_view a, std::string_view b);

// The entry of `dir` whose name equals `name` case-insensitively: the exact name when present,
// else the first match in sorted order. nullopt when there is none or `dir` is unreadable.
std::optional<std::filesystem::path> find_child_nocase(const std::filesystem::path& dir, std::string_view name);

struct MappedPath {
  model::PathMapping mapping = model::PathMapping::empty;
  std::string windows_path;  // normalized (absolute when resolved against the current directory)
  std::string local_path;    // real on-disk names as far as they exist, the rest as written
  bool exists = false;       // a directory is there
};

// Maps a Windows path onto the tree. A relative path ("bin", "C:bin", "\bin") is resolved
// against `cwd` (an absolute Windows path) when one is given, else reported as relative. A
// path holding '%' after expansion is reported as `variable`.
MappedPath map_windows_path(const WindowsTree& tree, std::string_view windows_path, std::string_view cwd = {});

// What the search orders are built from (all Windows paths).
struct SearchInputs {
  std::string path;                      // PATH: the process's, or the machine value when user_path is set
  std::optional<std::string> user_path;  // the User-scope value, which Windows appends to the machine's
  std::string app_dir;                   // the application's directory ("" when unknown)
  bool app_dir_from_python = false;      // app_dir is python.exe's directory
  std::string cwd;                       // the current directory ("" when unknown)
  std::vector<std::string> dll_dirs;     // os.add_dll_directory() directories
  std::string cuda_path;                 // the manifest's CUDA root: its bin directories count as that CUDA
  std::string cuda_version;              // "12.1" for cuda_path
};

// The standard search order of a desktop application with SafeDllSearchMode on: the
// application's directory, System32, the 16-bit System directory, the Windows directory, the
// current directory, then PATH (machine entries, then user entries). Later entries naming a
// directory already in the order are marked searched = false with duplicate_of set.
model::SearchOrder desktop_search_order(const WindowsTree& tree, const SearchInputs& in);

// What Python 3.8+ searches for the DLLs an extension module depends on
// (LOAD_LIBRARY_SEARCH_DEFAULT_DIRS): the application's directory (python.exe's), System32 and
// the os.add_dll_directory() directories; not PATH, not the current directory.
model::SearchOrder python_search_order(const WindowsTree& tree, const SearchInputs& in);

// Every copy of `name` (case-insensitively) in the order's searched directories, in search
// order, each with its version when it can be told (cudnn*64_N.dll: N from the name, the full
// version from a cudnn_version.h in the include directory beside bin\ or bin\x64\) and its PE
// machine type.
model::DllLookup find_dll(const model::SearchOrder& order, std::string_view name, std::string why);

// The names (lower-case, sorted, unique) of the files in the order's searched directories that
// start with `prefix` and end with `suffix`, case-insensitively ("cudnn64_", ".dll").
std::vector<std::string> dll_names_in_order(const model::SearchOrder& order, std::string_view prefix, std::string_view suffix);

// CUDNN_MAJOR.CUDNN_MINOR.CUDNN_PATCHLEVEL of a cudnn_version.h; nullopt when the file is
// missing or does not define all three.
std::optional<model::Version> read_cudnn_header_version(const std::filesystem::path& header);

// "x64", "x86", "arm64" or "other" for a PE image; "" when the file is not one (or unreadable).
std::string pe_machine(const std::filesystem::path& file);
// The same for the first bytes of a file (the DOS header, and the PE header it points to).
std::string pe_machine_of(std::string_view bytes);

}  // namespace core
