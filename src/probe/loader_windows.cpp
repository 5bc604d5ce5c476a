// Libraries are opened with LoadLibraryExW exactly as named (a bare DLL name, so that the loader's
// own search decides: the application's folder, System32, the Windows folder, then PATH, as it does
// for the program being debugged), and the file the loader really mapped is read back with
// GetModuleFileNameW, because "which cudnn64_8.dll did it load?" is the question the seeds could
// not answer. The driver's version comes from NVML (nvml.dll, in System32 since driver 470 and in
// the NVSMI folder before it).
#include <windows.h>

#include <algorithm>

#include "loader.hpp"
#include "model/contracts.hpp"
#include "probe/windows_loader.hpp"
#include "util/strings.hpp"
#include "windows_internal.hpp"

namespace probe::detail {

namespace {

std::wstring wide(std::string_view s) {
  auto u = util::utf8_to_utf16(s);
  return std::wstring(u.begin(), u.end());
}

using windows::utf8;

std::string module_path(HMODULE h) {
  std::wstring buf(1024, L'\0');
  for (;;) {
    DWORD n = GetModuleFileNameW(h, buf.data(), static_cast<DWORD>(buf.size()));
    if (n == 0) return {};
    if (n < buf.size()) return utf8(std::wstring_view(buf.data(), n));
    buf.resize(buf.size() * 2);
  }
}

std::string load_error(DWORD code) {
  wchar_t* text = nullptr;
  DWORD n = FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code, 0,
                           reinterpret_cast<wchar_t*>(&text), 0, nullptr);
  std::string out = n ? utf8(std::wstring_view(text, n)) : std::string();
  if (text) LocalFree(text);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ')) out.pop_back();
  return out + " (Windows error " + std::to_string(code) + ")";
}

}  // namespace

std::wstring wide_name(std::string_view s) { return wide(s); }
std::string load_error_text(unsigned long code) { return load_error(static_cast<DWORD>(code)); }
std::string module_file(void* module) { return module_path(static_cast<HMODULE>(module)); }

Loaded open_library(const std::string& what, const std::string& path, const std::vector<std::string>& sonames) {
  Loaded out;
  out.info.what = what;
  std::vector<std::string> names = path.empty() ? sonames : std::vector<std::string>{path};
  // no "cannot find the DLL" dialog box: a missing DLL is an answer, not a prompt
  UINT old_mode = SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX);
  for (const auto& n : names) {
    out.info.tried.push_back(n);
    HMODULE h = LoadLibraryExW(wide(n).c_str(), nullptr, 0);
    if (h) {
      out.handle = reinterpret_cast<void*>(h);
      out.info.requested = n;
      out.info.path = module_path(h);
      out.info.error.clear();
      break;
    }
    DWORD code = GetLastError();
    // keep the most telling message: a DLL that exists but cannot load (a missing dependency,
    // the wrong architecture) beats "not found"
    if (out.info.error.empty() || code != ERROR_MOD_NOT_FOUND) out.info.error = load_error(code);
    if (!path.empty()) out.info.requested = n;
  }
  SetErrorMode(old_mode);
  return out;
}

std::vector<std::string> cudnn_library_names() { return {model::cudnn_library_name(9, true), model::cudnn_library_name(8, true)}; }

std::vector<std::string> cudart_library_names(int preferred_major) {
  std::vector<std::string> runtimes{"cudart64_13.dll", "cudart64_12.dll", "cudart64_110.dll"};
  std::string preferred = preferred_major == 11 ? "cudart64_110.dll" : "cudart64_" + std::to_string(preferred_major) + ".dll";
  auto it = std::find(runtimes.begin(), runtimes.end(), preferred);
  if (it != runtimes.end()) std::rotate(runtimes.begin(), it, it + 1);
  return runtimes;
}

void* find_symbol(void* handle, const char* name) { return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(handle), name)); }

std::string kernel_driver_version() { return nvml_driver_version(); }

namespace {

// nvml.dll: in System32 since driver 470, in NVSMI under Program Files before it; null when absent.
HMODULE open_nvml() {
  UINT old_mode = SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX);
  HMODULE h = LoadLibraryExW(L"nvml.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
  if (!h) {
    wchar_t dir[MAX_PATH] = {};
    DWORD n = GetEnvironmentVariableW(L"ProgramW6432", dir, MAX_PATH);
    if (n == 0 || n >= MAX_PATH) n = GetEnvironmentVariableW(L"ProgramFiles", dir, MAX_PATH);
    if (n > 0 && n < MAX_PATH) {
      std::wstring p = std::wstring(dir, n) + L"\\NVIDIA Corporation\\NVSMI\\nvml.dll";
      h = LoadLibraryExW(p.c_str(), nullptr, LOAD_WITH_ALTERED_SEARCH_PATH);
    }
  }
  SetErrorMode(old_mode);
  return h;
}

}  // namespace

std::string nvml_driver_version() {
  HMODULE h = open_nvml();
  if (!h) return {};
  std::string out = nvml_driver_version_of(h);
  FreeLibrary(h);
  return out;
}

std::vector<model::GpuDevice> nvml_gpus() {
  HMODULE h = open_nvml();
  if (!h) return {};
  auto out = nvml_gpus_of(h);
  FreeLibrary(h);
  return out;
}

}  // namespace probe::detail

namespace probe {

namespace {
LoaderAnswer load(const std::string& dll_name, DWORD flags) {
  LoaderAnswer a;
  a.supported = true;
  UINT old_mode = SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX);
  HMODULE h = LoadLibraryExW(detail::wide_name(dll_name).c_str(), nullptr, flags);
  DWORD code = h ? 0 : GetLastError();
  SetErrorMode(old_mode);
  if (!h) {
    a.error = detail::load_error_text(code);
    // 126 (ERROR_MOD_NOT_FOUND) also means "a DLL it imports is missing": the caller knows
    // whether a file of that name is on the search path
    a.missing = code == ERROR_MOD_NOT_FOUND;
    return a;
  }
  a.loaded = true;
  a.path = detail::module_file(h);
  FreeLibrary(h);
  return a;
}
}  // namespace

LoaderAnswer load_as_application(const std::string& dll_name, const std::vector<std::string>& path_first) {
  if (path_first.empty()) return load(dll_name, 0);
  std::wstring old(GetEnvironmentVariableW(L"PATH", nullptr, 0), L'\0');
  const bool had = !old.empty() && GetEnvironmentVariableW(L"PATH", old.data(), static_cast<DWORD>(old.size())) > 0;
  if (had) old.resize(wcslen(old.c_str()));
  std::wstring path;
  for (const auto& d : path_first) path += detail::wide_name(d) + L";";
  path += old;
  SetEnvironmentVariableW(L"PATH", path.c_str());
  LoaderAnswer a = load(dll_name, 0);
  SetEnvironmentVariableW(L"PATH", had ? old.c_str() : nullptr);
  return a;
}

LoaderAnswer load_as_python_extension(const std::string& dll_name, const std::vector<std::string>& dirs) {
  std::vector<DLL_DIRECTORY_COOKIE> added;
  std::string refused;
  for (const auto& d : dirs) {
    if (DLL_DIRECTORY_COOKIE c = AddDllDirectory(detail::wide_name(d).c_str()))
      added.push_back(c);
    else
      refused += (refused.empty() ? "" : ", ") + d + " (" + detail::load_error_text(GetLastError()) + ")";
  }
  LoaderAnswer a = load(dll_name, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
  for (auto c : added) RemoveDllDirectory(c);
  if (!refused.empty()) a.error += (a.error.empty() ? "" : "; ") + std::string("not added as DLL directories: ") + refused;
  return a;
}

std::string windows_driver_version() { return detail::nvml_driver_version(); }
std::vector<model::GpuDevice> windows_gpus() { return detail::nvml_gpus(); }

}  // namespace probe
