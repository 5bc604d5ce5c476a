#pragma once
// The judgements of `stackpin doctor --windows-root`, grouped by what they judge. Each appends
// findings to the report and, where it looked DLLs up, the lookups to the view's search orders.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/windows/windows_search.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/doctor.hpp"
#include "model/manifest.hpp"
#include "model/version.hpp"

namespace core::winrules {

inline constexpr const char* k_src_search_order = "https://learn.microsoft.com/windows/win32/dlls/dynamic-link-library-search-order";
inline constexpr const char* k_src_python = "https://docs.python.org/3/library/os.html#os.add_dll_directory";
inline constexpr const char* k_src_env_length = "https://devblogs.microsoft.com/oldnewthing/20100203-00/?p=15083";

struct Ctx {
  const knowledge::KnowledgeBase& kb;
  const model::DoctorExpectations& exp;
  model::WindowsView& view;
  std::vector<model::Finding>& findings;
  std::optional<model::Version> pinned;               // [cudnn] version
  std::optional<model::Version> cuda;                 // [cuda] version
  std::string cudnn_dir;                              // where cuDNN should load from: the manifest's directory, else the winner's
  std::vector<int> majors;                            // cuDNN majors judged (the manifest's, else every one found)
  std::optional<model::Version> cudnn_seen;           // full version of the winning cudnn64_N.dll, when told
  std::optional<int> cudnn_seen_major;                // its major, when only that is known
  std::pair<std::string, std::string> cudnn_machine;  // the winning cudnn64_N.dll and its PE machine ("x64", "arm64")
  // The GPUs the DLLs' code is judged for (compute capability, subject: "GPU 0 NVIDIA RTX A4000",
  // "[gpus] compute capability 8.6 (Ampere)"),
  // and the driver that would compile their PTX, when known.
  std::vector<std::pair<model::Version, std::string>> gpus;
  std::optional<model::Version> driver;

  model::Finding& add(std::string rule, model::Severity severity, std::string subject);
};

// Helpers (doctor_windows.cpp).
// Index of the first directory of `order` naming `windows_dir` (searched ones only, unless
// `any`); -1 when none does.
int position(const model::SearchOrder& order, const std::string& windows_dir, bool any = false);
// The directory of a Windows file path ("C:\a\b.dll" -> "C:\a").
std::string dir_of(const std::string& windows_file);
// "C:\...\cudnn64_8.dll (cuDNN 8.9.5, from C:\...\cudnn_version.h)".
std::string describe(const model::DllCopy& copy);
// The version of a copy when all three parts are known.
std::optional<model::Version> full_version(const model::DllCopy& copy);
// Names of the cudnn*.dll files in one directory of the order (lower-case, sorted).
std::vector<std::string> cudnn_files_in(const model::SearchDir& dir);

// PATH itself: quoted, relative, unmapped, missing and duplicate entries; its length
// (doctor_windows.cpp).
void path_entries(Ctx& c);
void path_length(Ctx& c);
// Which cudnn64_N.dll wins, stale copies, sub-libraries, the GPU code of the winner's DLLs,
// zlibwapi.dll, the VC++ runtime (doctor_windows_dlls.cpp). cudnn_dlls sets cudnn_dir, majors and cudnn_seen for the others.
void cudnn_dlls(Ctx& c);
void zlibwapi(Ctx& c);
void vc_runtime(Ctx& c);
// The machine's architecture against the manifest's and the winning cuDNN DLL's.
void architecture(Ctx& c);
// The order of CUDA bin directories and the cuDNN directory, User-scope entries, and what
// Python 3.8+ really searches (doctor_windows_order.cpp).
void cuda_bin_order(Ctx& c);
void path_scope(Ctx& c);
void python_dirs(Ctx& c);
// Conda environments on the tree (those of --python, and where the installers put them) and the
// cuDNN each carries in Library\bin, against the staged one (doctor_windows_conda.cpp).
void conda_envs(Ctx& c, const WindowsTree& tree, const std::string& python);
// On a live Windows machine: what LoadLibraryExW really loads for each DLL the rules looked up,
// against the copy the search order predicts (doctor_windows_loader.cpp).
void real_loader(Ctx& c, const std::vector<std::string>& path_first);
// On a live Windows machine: the driver nvml.dll reports ("" when none answered) against the
// minimum for the manifest's CUDA, or its [driver] windows pin (doctor_windows_loader.cpp).
void driver(Ctx& c, const std::string& version, const model::Manifest* m);

}  // namespace core::winrules
