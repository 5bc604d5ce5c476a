// Which files are held, and by whom, on Windows.
//
// Held: opening the file for DELETE and FILE_WRITE_DATA, sharing everything, fails with a sharing
// or lock violation when another handle denies delete sharing (so the rename to a backup would
// fail) or when the file is mapped as a loaded image (so the later delete would fail).
//
// By whom: the Restart Manager names every process with a handle on the file or the file loaded as
// a module (what installers use to say "close these programs"). Where it names none (a service it
// may not query, or a system whose Restart Manager does not answer, as Wine's does not), the
// modules of each running process are compared with the held files by volume and file index, so
// that a DLL a process has loaded is still named. A process this process may not inspect is
// skipped; the file is then reported as held by an unnamed program.
#include <windows.h>

#include <restartmanager.h>
#include <tlhelp32.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "probe/files_in_use.hpp"
#include "util/strings.hpp"
#include "windows_internal.hpp"

namespace probe {

namespace fs = std::filesystem;

namespace {

using windows::utf8;

constexpr DWORD share_all = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;

bool held(const fs::path& p) {
  windows::Handle f(
      CreateFileW(p.c_str(), DELETE | FILE_WRITE_DATA, share_all, nullptr, OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT, nullptr));
  if (f.ok()) return false;
  DWORD e = GetLastError();
  return e == ERROR_SHARING_VIOLATION || e == ERROR_LOCK_VIOLATION || e == ERROR_USER_MAPPED_FILE;
}

using Identity = std::tuple<DWORD, DWORD, DWORD>;  // volume serial, file index high, low

std::optional<Identity> identity(const wchar_t* path) {
  windows::Handle f(CreateFileW(path, FILE_READ_ATTRIBUTES, share_all, nullptr, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr));
  BY_HANDLE_FILE_INFORMATION info;
  if (!f.ok() || !GetFileInformationByHandle(f.h, &info)) return std::nullopt;
  return Identity{info.dwVolumeSerialNumber, info.nFileIndexHigh, info.nFileIndexLow};
}

std::wstring lower(std::wstring s) {
  if (!s.empty()) CharLowerBuffW(s.data(), static_cast<DWORD>(s.size()));
  return s;
}

std::map<DWORD, std::string> process_names() {
  std::map<DWORD, std::string> names;
  windows::Handle snap(CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0));
  if (!snap.ok()) return names;
  PROCESSENTRY32W pe{};
  pe.dwSize = sizeof pe;
  for (BOOL more = Process32FirstW(snap.h, &pe); more; more = Process32NextW(snap.h, &pe)) names[pe.th32ProcessID] = utf8(pe.szExeFile);
  return names;
}

void add_holder(std::vector<FileHolder>& holders, DWORD pid, std::string process) {
  for (const auto& h : holders)
    if (h.pid == pid) return;
  holders.push_back({pid, std::move(process)});
}

// The processes the Restart Manager says use `path`.
void ask_restart_manager(const fs::path& path, const std::map<DWORD, std::string>& names, std::vector<FileHolder>& holders) {
  DWORD session = 0;
  WCHAR key[CCH_RM_SESSION_KEY + 1] = {};
  if (RmStartSession(&session, 0, key) != ERROR_SUCCESS) return;
  LPCWSTR files[] = {path.c_str()};
  if (RmRegisterResources(session, 1, files, 0, nullptr, 0, nullptr) == ERROR_SUCCESS) {
    std::vector<RM_PROCESS_INFO> info;
    DWORD r = ERROR_MORE_DATA;
    UINT needed = 0, got = 0;
    for (int tries = 0; tries < 4 && r == ERROR_MORE_DATA; ++tries) {  // the list may grow between calls
      info.resize(needed);
      got = needed;
      DWORD reasons = 0;
      r = RmGetList(session, &needed, &got, info.empty() ? nullptr : info.data(), &reasons);
    }
    if (r == ERROR_SUCCESS)
      for (UINT i = 0; i < got && i < info.size(); ++i) {
        DWORD pid = info[i].Process.dwProcessId;
        auto n = names.find(pid);
        add_holder(holders, pid, n != names.end() ? n->second : utf8(info[i].strAppName));
      }
  }
  RmEndSession(session);
}

// Every process that has one of `unnamed` loaded as a module.
void scan_modules(std::vector<FileInUse>& unnamed, const std::map<DWORD, std::string>& names) {
  std::vector<std::pair<std::wstring, std::optional<Identity>>> want;  // lower-case file name, identity
  for (const auto& f : unnamed) want.emplace_back(lower(f.path.filename().wstring()), identity(f.path.c_str()));
  for (const auto& [pid, process] : names) {
    if (pid == 0) continue;
    windows::Handle snap(CreateToolhelp32Snapshot(TH32CS_SNAPMODULE, pid));
    if (!snap.ok() && GetLastError() == ERROR_BAD_LENGTH) snap.h = CreateToolhelp32Snapshot(TH32CS_SNAPMODULE, pid);  // retry once
    if (!snap.ok()) continue;  // exited, protected or another session's: not ours to inspect
    MODULEENTRY32W me{};
    me.dwSize = sizeof me;
    for (BOOL more = Module32FirstW(snap.h, &me); more; more = Module32NextW(snap.h, &me)) {
      std::wstring name = lower(me.szModule);
      bool short_name = name.find(L'~') != std::wstring::npos;  // an 8.3 alias of a long name
      for (std::size_t i = 0; i < want.size(); ++i) {
        if (!want[i].second || (!short_name && name != want[i].first)) continue;
        if (identity(me.szExePath) == want[i].second) add_holder(unnamed[i].holders, pid, process);
      }
    }
  }
}

}  // namespace

std::vector<FileInUse> files_in_use(const std::vector<fs::path>& paths) {
  std::vector<FileInUse> out;
  for (const auto& p : paths)
    if (held(p)) out.push_back({p, {}});
  if (out.empty()) return out;
  auto names = process_names();
  for (auto& f : out) ask_restart_manager(f.path, names, f.holders);
  std::vector<std::size_t> nameless;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i].holders.empty()) nameless.push_back(i);
  if (!nameless.empty()) {
    std::vector<FileInUse> scan;
    for (auto i : nameless) scan.push_back({out[i].path, {}});
    scan_modules(scan, names);
    for (std::size_t k = 0; k < nameless.size(); ++k) out[nameless[k]].holders = std::move(scan[k].holders);
  }
  for (auto& f : out) std::sort(f.holders.begin(), f.holders.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
  return out;
}

}  // namespace probe
