// Running programs on Windows. CreateProcessW takes one command line, which the child's C runtime
// splits back into argv, so each argument is quoted by the rules of that split (backslashes count
// only before a quote). The child writes into an anonymous pipe whose read end this process polls
// with PeekNamedPipe, so one thread enforces both the deadline and the output cap; the child runs
// in a job object, so a timeout kills what it started too. Programs are found on PATH the way
// cmd.exe does: each directory in order, the name as given and then with each PATHEXT extension.
#include <windows.h>

#include <chrono>
#include <filesystem>

#include "probe/program.hpp"
#include "process.hpp"
#include "util/strings.hpp"
#include "windows_internal.hpp"

namespace probe::detail {

namespace {

std::wstring wide(std::string_view s) {
  auto u = util::utf8_to_utf16(s);
  return std::wstring(u.begin(), u.end());
}

std::string os_error(DWORD code) {
  wchar_t* text = nullptr;
  DWORD n = FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code, 0,
                           reinterpret_cast<wchar_t*>(&text), 0, nullptr);
  std::string out = n ? util::utf16_to_utf8(std::u16string(text, text + n)) : "Windows error " + std::to_string(code);
  if (text) LocalFree(text);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == '.')) out.pop_back();
  return out;
}

// One argument as the C runtime's argv split reads it back.
void append_quoted(std::wstring& line, const std::wstring& arg) {
  if (!arg.empty() && arg.find_first_of(L" \t\n\v\"") == std::wstring::npos) {
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
    // backslashes before a quote are doubled, and the quote escaped
    line.append(c == L'"' ? 2 * backslashes + 1 : backslashes, L'\\');
    backslashes = 0;
    line += c;
  }
  line.append(2 * backslashes, L'\\');  // before the closing quote
  line += L'"';
}

// Reads what the pipe holds now, without blocking. False at the end of the stream.
bool drain(HANDLE pipe, Captured& c, std::size_t max_output) {
  char buf[4096];
  for (;;) {
    DWORD avail = 0;
    if (!PeekNamedPipe(pipe, nullptr, 0, nullptr, &avail, nullptr)) return false;  // broken: the writers are gone
    if (avail == 0) return true;
    DWORD got = 0;
    if (!ReadFile(pipe, buf, std::min<DWORD>(avail, sizeof buf), &got, nullptr) || got == 0) return false;
    if (c.out.size() < max_output) c.out.append(buf, std::min<std::size_t>(got, max_output - c.out.size()));
  }
}

}  // namespace

Captured run_captured(const std::vector<std::string>& argv, int timeout_ms, std::size_t max_output, bool merge_stderr,
                      const std::string& input) {
  Captured c;
  if (argv.empty()) {
    c.error = "nothing to run";
    return c;
  }
  if (input.size() > k_max_input) {
    c.error = "the input for " + argv[0] + " is longer than " + std::to_string(k_max_input) + " bytes";
    return c;
  }
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  HANDLE rd = nullptr, wr = nullptr;
  if (!CreatePipe(&rd, &wr, &inherit, 0)) {
    c.error = "pipe: " + os_error(GetLastError());
    return c;
  }
  windows::Handle read_end(rd), write_end(wr);
  SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
  // stdin: NUL, or a pipe that already holds the input (far below its capacity: writing never blocks)
  windows::Handle stdin_read;
  if (!input.empty()) {
    HANDLE in_rd = nullptr, in_wr = nullptr;
    if (!CreatePipe(&in_rd, &in_wr, &inherit, 0)) {
      c.error = "pipe: " + os_error(GetLastError());
      return c;
    }
    stdin_read.h = in_rd;
    windows::Handle in_write(in_wr);
    SetHandleInformation(in_wr, HANDLE_FLAG_INHERIT, 0);
    DWORD put = 0;
    if (!WriteFile(in_wr, input.data(), static_cast<DWORD>(input.size()), &put, nullptr) || put != input.size()) {
      c.error = "cannot write the input of " + argv[0];
      return c;
    }
  }
  windows::Handle null_in(
      input.empty() ? CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit, OPEN_EXISTING, 0, nullptr) : nullptr);
  windows::Handle null_err(
      merge_stderr ? nullptr : CreateFileW(L"NUL", GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit, OPEN_EXISTING, 0, nullptr));

  STARTUPINFOW si{};
  si.cb = sizeof si;
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdInput = input.empty() ? null_in.h : stdin_read.h;
  si.hStdOutput = wr;
  si.hStdError = merge_stderr ? wr : null_err.h;
  std::wstring line;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (i) line += L' ';
    append_quoted(line, wide(argv[i]));
  }
  std::wstring exe = wide(argv[0]);
  windows::Handle job(CreateJobObjectW(nullptr, nullptr));
  if (job.h) {
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    SetInformationJobObject(job.h, JobObjectExtendedLimitInformation, &limits, sizeof limits);
  }
  PROCESS_INFORMATION pi{};
  if (!CreateProcessW(exe.c_str(), line.data(), nullptr, nullptr, TRUE, CREATE_NO_WINDOW | CREATE_SUSPENDED, nullptr, nullptr, &si, &pi)) {
    c.error = argv[0] + ": " + os_error(GetLastError());
    return c;
  }
  windows::Handle process(pi.hProcess), thread(pi.hThread);
  if (job.h) AssignProcessToJobObject(job.h, pi.hProcess);
  ResumeThread(pi.hThread);
  write_end.reset();  // the child holds the only write end now: its exit ends the stream
  c.started = true;

  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool open = true;
  for (;;) {
    if (open) open = drain(rd, c, max_output);
    bool exited = WaitForSingleObject(pi.hProcess, 0) == WAIT_OBJECT_0;
    if (exited && open) open = drain(rd, c, max_output);  // what it wrote just before exiting
    if (exited) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      c.timed_out = true;
      break;
    }
    Sleep(open ? 1 : 5);
  }
  if (c.timed_out) {
    if (!job.h || !TerminateJobObject(job.h, 128 + 9)) TerminateProcess(pi.hProcess, 128 + 9);
    WaitForSingleObject(pi.hProcess, 5000);
    c.error = argv[0] + ": no answer within " + std::to_string(timeout_ms) + " ms (killed)";
    c.exit_code = 128 + 9;
    return c;
  }
  DWORD code = 0;
  GetExitCodeProcess(pi.hProcess, &code);
  c.exit_code = static_cast<int>(code);
  return c;
}

}  // namespace probe::detail

namespace probe {

std::optional<std::string> find_program(const std::string& name, const util::Env& env) {
  namespace fs = std::filesystem;
  if (name.find_first_of("/\\:") != std::string::npos) return name;
  auto path = env.get("PATH");
  auto pathext = env.get("PATHEXT");
  std::vector<std::string> exts{""};
  for (const auto& e : util::split(pathext ? *pathext : ".COM;.EXE;.BAT;.CMD", ';'))
    if (!e.empty()) exts.push_back(e);
  for (const auto& dir : util::split(path ? *path : "", ';')) {
    if (dir.empty()) continue;
    for (const auto& ext : exts) {
      auto u = util::utf8_to_utf16(dir + "\\" + name + ext);
      fs::path p(std::wstring(u.begin(), u.end()));
      std::error_code ec;
      if (fs::is_regular_file(p, ec)) return util::utf16_to_utf8(std::u16string(p.native().begin(), p.native().end()));
    }
  }
  return std::nullopt;
}

// Whether the process token is elevated (what writing under C:\Program Files and HKLM needs).
bool running_as_root() {
  HANDLE token = nullptr;
  if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) return false;
  TOKEN_ELEVATION elevation{};
  DWORD size = 0;
  bool elevated = GetTokenInformation(token, TokenElevation, &elevation, sizeof elevation, &size) && elevation.TokenIsElevated;
  CloseHandle(token);
  return elevated;
}

}  // namespace probe
