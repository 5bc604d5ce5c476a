// Environment variables: the real environment and a map for tests.
#include "util/env.hpp"

#include "util/strings.hpp"

#include <cstdlib>

#ifdef _WIN32
#include <windows.h>
#else
#include <sys/utsname.h>
#endif

namespace util {

std::optional<std::string> SystemEnv::get(const std::string& name) const {
#ifdef _WIN32
  // the wide environment, as UTF-8: getenv would give the ANSI code page's rendering
  auto wname = utf8_to_utf16(name);
  const wchar_t* v = ::_wgetenv(reinterpret_cast<const wchar_t*>(wname.c_str()));
  if (!v) return std::nullopt;
  return utf16_to_utf8(reinterpret_cast<const char16_t*>(v));
#else
  const char* v = std::getenv(name.c_str());
  if (!v) return std::nullopt;
  return std::string(v);
#endif
}

std::optional<std::string> MapEnv::get(const std::string& name) const {
  auto it = m_vars.find(name);
  if (it == m_vars.end()) return std::nullopt;
  return it->second;
}

bool host_is_windows() {
#ifdef _WIN32
  return true;
#else
  return false;
#endif
}

std::string host_arch() {
#ifdef _WIN32
  SYSTEM_INFO si{};
  GetNativeSystemInfo(&si);
  switch (si.wProcessorArchitecture) {
    case PROCESSOR_ARCHITECTURE_AMD64: return "x86_64";
    case PROCESSOR_ARCHITECTURE_ARM64: return "aarch64";
    case PROCESSOR_ARCHITECTURE_INTEL: return "i686";
    default: return "";
  }
#else
  utsname u{};
  return uname(&u) == 0 ? std::string(u.machine) : std::string();
#endif
}

std::optional<std::filesystem::path> executable_path() {
#if defined(_WIN32)
  std::wstring buf(1024, L'\0');
  for (;;) {
    DWORD n = GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size()));
    if (n == 0) return std::nullopt;
    if (n < buf.size()) return std::filesystem::path(buf.substr(0, n));
    buf.resize(buf.size() * 2);
  }
#elif defined(__linux__)
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) return p;
#endif
  return std::nullopt;
}

}  // namespace util
