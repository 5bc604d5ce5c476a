// The persistent environment on Windows: the registry values Explorer builds a new program's
// environment from. User: HKCU\Environment. Machine: the Environment key under HKLM's
// SYSTEM\CurrentControlSet\Control\Session Manager, writable only from an elevated prompt. Values keep their type
// (REG_EXPAND_SZ keeps %SystemRoot%-style entries working) and are written whole through the
// registry API, never through setx, which cuts them at 1024 characters. WM_SETTINGCHANGE with
// "Environment" tells Explorer and other listeners to re-read them.
#include <windows.h>

#include "util/persistent_env.hpp"
#include "util/strings.hpp"

namespace util {

namespace {

std::wstring wide(std::string_view s) {
  auto u = utf8_to_utf16(s);
  return std::wstring(u.begin(), u.end());
}

std::string narrow(std::wstring_view s) { return utf16_to_utf8(std::u16string(s.begin(), s.end())); }

std::string win_text(LSTATUS code) {
  wchar_t* text = nullptr;
  DWORD n = FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr,
                           static_cast<DWORD>(code), 0, reinterpret_cast<wchar_t*>(&text), 0, nullptr);
  std::string out = n ? narrow(std::wstring_view(text, n)) : std::string();
  if (text) LocalFree(text);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == '.' || out.back() == ' ')) out.pop_back();
  return out + " (Windows error " + std::to_string(code) + ")";
}

const wchar_t* k_machine_key = L"SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment";

struct Key {
  HKEY h = nullptr;
  ~Key() {
    if (h) RegCloseKey(h);
  }
};

class RegistryEnv final : public PersistentEnv {
 public:
  Result<std::optional<PersistentValue>> get(EnvScope scope, const std::string& name) const override {
    Key k;
    LSTATUS st = open(scope, KEY_QUERY_VALUE, k);
    if (st == ERROR_FILE_NOT_FOUND) return std::optional<PersistentValue>();
    if (st != ERROR_SUCCESS) return Error(ErrorCode::io, "cannot read " + where(scope) + ": " + win_text(st));
    std::wstring wname = wide(name);
    for (int attempt = 0; attempt < 4; ++attempt) {
      DWORD type = 0, bytes = 0;
      st = RegQueryValueExW(k.h, wname.c_str(), nullptr, &type, nullptr, &bytes);
      if (st == ERROR_FILE_NOT_FOUND) return std::optional<PersistentValue>();
      if (st != ERROR_SUCCESS) return Error(ErrorCode::io, "cannot read " + name + " in " + where(scope) + ": " + win_text(st));
      if (type != REG_SZ && type != REG_EXPAND_SZ)
        return Error(ErrorCode::invalid,
                     name + " in " + where(scope) + " is not a string value (registry type " + std::to_string(type) + ")")
            .with_hint("fix or delete the value with regedit, then run again; stackpin leaves a value it cannot read alone");
      std::wstring buf(bytes / sizeof(wchar_t) + 1, L'\0');
      DWORD got = static_cast<DWORD>(buf.size() * sizeof(wchar_t));
      st = RegQueryValueExW(k.h, wname.c_str(), nullptr, &type, reinterpret_cast<BYTE*>(buf.data()), &got);
      if (st == ERROR_MORE_DATA) continue;  // it grew in between
      if (st != ERROR_SUCCESS) return Error(ErrorCode::io, "cannot read " + name + " in " + where(scope) + ": " + win_text(st));
      buf.resize(got / sizeof(wchar_t));
      while (!buf.empty() && buf.back() == L'\0') buf.pop_back();
      return std::optional<PersistentValue>(PersistentValue{narrow(buf), type == REG_EXPAND_SZ});
    }
    return Error(ErrorCode::conflict, name + " in " + where(scope) + " kept changing while it was read").with_hint("run again");
  }

  Status set(EnvScope scope, const std::string& name, const PersistentValue& v) override {
    Key k;
    LSTATUS st = open(scope, KEY_SET_VALUE, k, true);
    if (st != ERROR_SUCCESS) return write_error(scope, name, st);
    std::wstring data = wide(v.value);
    st = RegSetValueExW(k.h, wide(name).c_str(), 0, v.expandable ? REG_EXPAND_SZ : REG_SZ, reinterpret_cast<const BYTE*>(data.c_str()),
                        static_cast<DWORD>((data.size() + 1) * sizeof(wchar_t)));
    if (st != ERROR_SUCCESS) return write_error(scope, name, st);
    return {};
  }

  Status remove(EnvScope scope, const std::string& name) override {
    Key k;
    LSTATUS st = open(scope, KEY_SET_VALUE, k);
    if (st == ERROR_FILE_NOT_FOUND) return {};
    if (st == ERROR_SUCCESS) st = RegDeleteValueW(k.h, wide(name).c_str());
    if (st == ERROR_SUCCESS || st == ERROR_FILE_NOT_FOUND) return {};
    return write_error(scope, name, st);
  }

  void announce() override {
    DWORD_PTR result = 0;
    SendMessageTimeoutW(HWND_BROADCAST, WM_SETTINGCHANGE, 0, reinterpret_cast<LPARAM>(L"Environment"), SMTO_ABORTIFHUNG, 5000, &result);
  }

  std::string where(EnvScope scope) const override {
    return scope == EnvScope::user ? "HKCU\\Environment" : "HKLM\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment";
  }

 private:
  static LSTATUS open(EnvScope scope, REGSAM access, Key& k, bool create = false) {
    HKEY root = scope == EnvScope::user ? HKEY_CURRENT_USER : HKEY_LOCAL_MACHINE;
    const wchar_t* path = scope == EnvScope::user ? L"Environment" : k_machine_key;
    if (create) return RegCreateKeyExW(root, path, 0, nullptr, 0, access, nullptr, &k.h, nullptr);
    return RegOpenKeyExW(root, path, 0, access, &k.h);
  }

  Status write_error(EnvScope scope, const std::string& name, LSTATUS st) const {
    Error e(ErrorCode::io, "cannot write " + name + " in " + where(scope) + ": " + win_text(st));
    if (st == ERROR_ACCESS_DENIED)
      return std::move(e).with_hint(scope == EnvScope::machine
                                        ? "the Machine environment needs an elevated prompt: open PowerShell with \"Run as administrator\" "
                                          "and run the same command, or use --scope user"
                                        : "the user's own environment refused the change: check the account's registry permissions");
    return e;
  }
};

}  // namespace

Result<std::unique_ptr<PersistentEnv>> system_persistent_env() { return std::unique_ptr<PersistentEnv>(new RegistryEnv()); }

}  // namespace util
