#pragma once
// The PATH rule of activation (windows_path_rule.cpp): which entries activate.ps1 drops, which
// it keeps and reports, and the new value. One decision, used by doctor's fix texts, by
// `stackpin activate` and mirrored by the PowerShell script, whose file lists are rendered from
// the constants here so the two cannot drift.
#include <string>
#include <string_view>
#include <vector>

#include "core/windows/windows_search.hpp"

namespace core {

// What a PATH entry's directory holds, as the rule sees it.
enum class PathEntryKind {
  ours,                // the cuDNN directory being activated (put first; any other copy of it goes)
  cudnn_only,          // cuDNN DLLs and no CUDA toolkit DLL: another cuDNN tree, dropped
  toolkit_with_cudnn,  // a CUDA toolkit (or other) directory that also holds a cuDNN DLL: kept, the DLL reported
  other,               // everything else: kept as it is
};
const char* to_string(PathEntryKind k);

// File-name patterns (lower case; '*' stands for any characters) the rule looks for. A directory
// with a cuDNN DLL is a cuDNN-only tree unless it also holds one of the toolkit patterns: the CUDA
// installer's bin\ always holds cudart64_*.dll, a conda environment's Library\bin too.
const std::vector<std::string>& cudnn_dll_patterns();
const std::vector<std::string>& toolkit_dll_patterns();
// '*' matches any run of characters; names compare without case.
bool matches_pattern(std::string_view name, std::string_view pattern);

struct PathEntryDecision {
  std::string raw;           // as written in the value
  std::string windows_path;  // expanded and normalized
  PathEntryKind kind = PathEntryKind::other;
  std::vector<std::string> cudnn_dlls;  // the cuDNN DLLs found there (lower case)
  bool duplicate = false;               // the same directory came earlier: dropped
};

struct PathDecision {
  std::string value;                       // the new PATH value: the cuDNN directory first, then the kept entries
  std::vector<PathEntryDecision> entries;  // every entry of the old value, in order
  std::vector<std::string> removed;        // raw entries dropped (cuDNN-only trees, duplicates, other copies of ours)
  std::vector<std::string> stale;          // cuDNN DLLs kept on PATH inside toolkit directories ("C:\...\bin\cudnn64_7.dll")
};

// Applies the rule to `path_value` (a PATH value, %VARS% as written) for the cuDNN directory
// `cudnn_bin` (an absolute Windows path), looking at the directories through `tree` (a mounted
// or fake Windows disk; an entry that maps to nothing is `other` and kept).
PathDecision decide_path(const WindowsTree& tree, std::string_view path_value, std::string_view cudnn_bin);
// The same with several directories put first, in order (cuDNN's DLL directory, then a staged
// toolkit's bin directories: gen::first_path_dirs), as activate.ps1's Get-NewPath does.
PathDecision decide_path(const WindowsTree& tree, std::string_view path_value, const std::vector<std::string>& first_dirs);

// Classifies one directory's file names (lower case) the same way.
PathEntryKind classify_dir(const std::vector<std::string>& names, std::vector<std::string>* cudnn_dlls = nullptr);

}  // namespace core
