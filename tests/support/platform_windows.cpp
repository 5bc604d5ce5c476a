// The Windows side of the test helpers, for the unit tests cross-built as a Windows program:
// processes through CreateProcessW (stdout and stderr into temporary files, like the POSIX side),
// programs found on PATH with SearchPathW, SHA-256 through CNG's BCrypt calls (an oracle of its
// own, not stackpin's digest code), and no mounts: the tests that need one skip.
#include <windows.h>

#include <bcrypt.h>  // after windows.h, whose types it uses

#include <array>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "test_support.hpp"
#include "tree.hpp"

namespace testing_support {
namespace fs = std::filesystem;

namespace {

std::wstring wide(const std::string& s) {
  if (s.empty()) return {};
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), static_cast<int>(s.size()), nullptr, 0);
  if (n <= 0) throw std::runtime_error("not UTF-8: " + s);
  std::wstring w(static_cast<std::size_t>(n), L'\0');
  MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), static_cast<int>(s.size()), w.data(), n);
  return w;
}

std::string narrow(const std::wstring& w) {
  if (w.empty()) return {};
  int n = WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), nullptr, 0, nullptr, nullptr);
  std::string s(static_cast<std::size_t>(n), '\0');
  WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), s.data(), n, nullptr, nullptr);
  return s;
}

// One argument of a command line as the C runtime's argv split reads it back: backslashes are
// literal except before a quote.
void append_argument(std::wstring& line, const std::wstring& arg) {
  if (!line.empty()) line += L' ';
  if (!arg.empty() && arg.find_first_of(L" \t\"") == std::wstring::npos) {
    line += arg;
    return;
  }
  line += L'"';
  std::size_t backslashes = 0;
  for (wchar_t c : arg) {
    if (c == L'\\') {
      ++backslashes;
      continue;
    }
    line.append(c == L'"' ? 2 * backslashes + 1 : backslashes, L'\\');
    backslashes = 0;
    line += c;
  }
  line.append(2 * backslashes, L'\\');
  line += L'"';
}

HANDLE inheritable_file(const fs::path& p, DWORD access, DWORD disposition) {
  SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, TRUE};
  HANDLE h = CreateFileW(p.c_str(), access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, &sa, disposition, FILE_ATTRIBUTE_NORMAL,
                         nullptr);
  if (h == INVALID_HANDLE_VALUE) throw std::runtime_error("cannot open " + p.string() + " for a child process");
  return h;
}

}  // namespace

std::string tool_path(const std::string& name) {
  std::array<wchar_t, 4096> buf{};
  DWORD n = SearchPathW(nullptr, wide(name).c_str(), L".exe", static_cast<DWORD>(buf.size()), buf.data(), nullptr);
  return n > 0 && n < buf.size() ? narrow(std::wstring(buf.data(), n)) : std::string();
}

Process::Process(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& cwd) {
  static unsigned counter = 0;
  fs::path base = fs::temp_directory_path() / ("sp-test-" + std::to_string(GetCurrentProcessId()) + "-" + std::to_string(++counter));
  m_out = (base.string() + ".out");
  m_err = (base.string() + ".err");
  HANDLE in = inheritable_file(L"NUL", GENERIC_READ, OPEN_EXISTING);
  HANDLE out = inheritable_file(fs::path(m_out), GENERIC_WRITE, CREATE_ALWAYS);
  HANDLE err = inheritable_file(fs::path(m_err), GENERIC_WRITE, CREATE_ALWAYS);

  // `env` overrides the inherited environment; Windows compares the names without case.
  auto name_of = [](const std::wstring& e) { return e.substr(0, e.find(L'=', 1)); };
  std::vector<std::wstring> overrides;
  for (const auto& e : env) overrides.push_back(wide(e));
  std::wstring block;
  if (LPWCH inherited = GetEnvironmentStringsW()) {
    for (const wchar_t* e = inherited; *e; e += wcslen(e) + 1) {
      std::wstring entry = e;
      bool overridden = false;
      for (const auto& o : overrides)
        overridden = overridden || CompareStringOrdinal(name_of(o).c_str(), -1, name_of(entry).c_str(), -1, TRUE) == CSTR_EQUAL;
      if (!overridden) block += entry + L'\0';
    }
    FreeEnvironmentStringsW(inherited);
  }
  for (const auto& o : overrides) block += o + L'\0';
  block += L'\0';

  std::wstring line;
  for (const auto& a : argv) append_argument(line, wide(a));
  STARTUPINFOW si{};
  si.cb = sizeof si;
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdInput = in;
  si.hStdOutput = out;
  si.hStdError = err;
  PROCESS_INFORMATION pi{};
  std::wstring exe = wide(argv.at(0));
  std::wstring dir = cwd.empty() ? std::wstring() : cwd.wstring();
  BOOL ok = CreateProcessW(exe.c_str(), line.data(), nullptr, nullptr, TRUE, CREATE_UNICODE_ENVIRONMENT, block.data(),
                           dir.empty() ? nullptr : dir.c_str(), &si, &pi);
  DWORD error = GetLastError();
  CloseHandle(in);
  CloseHandle(out);
  CloseHandle(err);
  if (!ok) throw std::runtime_error("CreateProcessW " + argv[0] + " failed: error " + std::to_string(error));
  CloseHandle(pi.hThread);
  m_pid = static_cast<int>(pi.dwProcessId);
  m_handle = pi.hProcess;
}

Process::~Process() {
  if (!m_done && m_handle) {
    TerminateProcess(m_handle, 137);
    WaitForSingleObject(m_handle, INFINITE);
  }
  if (m_handle) CloseHandle(m_handle);
  std::error_code ec;
  fs::remove(fs::path(m_out), ec);
  fs::remove(fs::path(m_err), ec);
}

void Process::kill(int signal) {
  if (!m_done && m_handle) TerminateProcess(m_handle, static_cast<UINT>(128 + signal));
}

bool Process::running() { return !m_done && m_handle && WaitForSingleObject(m_handle, 0) == WAIT_TIMEOUT; }

RunResult Process::wait() {
  if (m_done) throw std::runtime_error("Process::wait called twice");
  WaitForSingleObject(m_handle, INFINITE);
  DWORD code = 0;
  GetExitCodeProcess(m_handle, &code);
  m_done = true;
  RunResult r;
  r.exit_code = static_cast<int>(code);
  r.out = read_text(fs::path(m_out));
  r.err = read_text(fs::path(m_err));
  return r;
}

std::string sha256_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  BCRYPT_ALG_HANDLE alg = nullptr;
  BCRYPT_HASH_HANDLE hash = nullptr;
  if (!BCRYPT_SUCCESS(BCryptOpenAlgorithmProvider(&alg, BCRYPT_SHA256_ALGORITHM, nullptr, 0)) ||
      !BCRYPT_SUCCESS(BCryptCreateHash(alg, &hash, nullptr, 0, nullptr, 0, 0)))
    throw std::runtime_error("SHA-256 through BCrypt is not available");
  std::array<char, 1 << 16> buf{};
  while (in) {
    in.read(buf.data(), buf.size());
    if (in.gcount() > 0) BCryptHashData(hash, reinterpret_cast<PUCHAR>(buf.data()), static_cast<ULONG>(in.gcount()), 0);
  }
  std::array<unsigned char, 32> md{};
  BCryptFinishHash(hash, md.data(), static_cast<ULONG>(md.size()), 0);
  BCryptDestroyHash(hash);
  BCryptCloseAlgorithmProvider(alg, 0);
  std::string s;
  char hex[3];
  for (unsigned char b : md) {
    std::snprintf(hex, sizeof hex, "%02x", b);
    s += hex;
  }
  return s;
}

Mount Mount::tmpfs(const fs::path& dir, const std::string&) {
  Mount m;
  m.m_error = "no tmpfs mount on Windows for " + dir.string() + " (the Linux build runs this test)";
  return m;
}

Mount Mount::read_only_bind(const fs::path&, const fs::path& to) {
  Mount m;
  m.m_error = "no read-only bind mount on Windows for " + to.string() + " (the Linux build runs this test)";
  return m;
}

Mount::~Mount() = default;

}  // namespace testing_support
