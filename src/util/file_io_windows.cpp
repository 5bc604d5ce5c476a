// File descriptors on Windows: the C runtime's descriptors (_wopen, _write, _close), so that the
// archive layer keeps one code path, over the Win32 handles they wrap where the C runtime has no
// call (ReadFile at an offset for pread, GetFileInformationByHandle for fstat's identity).
// Paths are wide, so names outside the ANSI code page work. Windows has no POSIX modes; links
// are created with the unprivileged flag Developer Mode honours.
#include <windows.h>
// after windows.h
#include <fcntl.h>
#include <io.h>
#include <sys/stat.h>

#include <cerrno>

#include "util/file_io.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace util::io {

namespace {

int errno_of(DWORD code) {
  switch (code) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND: return ENOENT;
    case ERROR_ACCESS_DENIED: return EACCES;
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION: return EBUSY;
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS: return EEXIST;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL: return ENOSPC;
    case ERROR_INVALID_HANDLE: return EBADF;
    default: return EIO;
  }
}

std::string win_error(DWORD code) {
  wchar_t* text = nullptr;
  DWORD n = FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code, 0,
                           reinterpret_cast<wchar_t*>(&text), 0, nullptr);
  std::string out = n ? utf16_to_utf8(std::u16string(text, text + n)) : std::string();
  if (text) LocalFree(text);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == '.' || out.back() == ' ')) out.pop_back();
  return out + " (Windows error " + std::to_string(code) + ")";
}

HANDLE handle_of(int fd) { return reinterpret_cast<HANDLE>(::_get_osfhandle(fd)); }

}  // namespace

int create_new(const std::filesystem::path& path) {
  // CREATE_NEW under the hood: an existing name, a reparse point included, is never opened
  return ::_wopen(path.c_str(), _O_WRONLY | _O_CREAT | _O_EXCL | _O_BINARY | _O_NOINHERIT, _S_IREAD | _S_IWRITE);
}

int open_read(const std::filesystem::path& path) { return ::_wopen(path.c_str(), _O_RDONLY | _O_BINARY | _O_NOINHERIT); }

std::int64_t read_at(int fd, void* buf, std::size_t size, std::uint64_t offset) {
  HANDLE h = handle_of(fd);
  if (h == INVALID_HANDLE_VALUE) {
    errno = EBADF;
    return -1;
  }
  OVERLAPPED ov{};
  ov.Offset = static_cast<DWORD>(offset & 0xffffffffu);
  ov.OffsetHigh = static_cast<DWORD>(offset >> 32);
  DWORD want = size > (1u << 30) ? (1u << 30) : static_cast<DWORD>(size);
  DWORD got = 0;
  if (!ReadFile(h, buf, want, &got, &ov)) {
    DWORD e = GetLastError();
    if (e == ERROR_HANDLE_EOF) return 0;
    errno = errno_of(e);
    return -1;
  }
  return got;
}

std::int64_t write_some(int fd, const void* buf, std::size_t size) {
  unsigned n = size > (1u << 30) ? (1u << 30) : static_cast<unsigned>(size);
  return ::_write(fd, buf, n);
}

int close(int fd) { return ::_close(fd); }

int set_mode(int, unsigned) { return 0; }

int stat_fd(int fd, FileInfo& out) {
  HANDLE h = handle_of(fd);
  BY_HANDLE_FILE_INFORMATION info{};
  if (h == INVALID_HANDLE_VALUE || !GetFileInformationByHandle(h, &info)) {
    errno = h == INVALID_HANDLE_VALUE ? EBADF : errno_of(GetLastError());
    return -1;
  }
  out.regular = GetFileType(h) == FILE_TYPE_DISK && !(info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY);
  out.device = info.dwVolumeSerialNumber;
  out.file = static_cast<std::uint64_t>(info.nFileIndexHigh) << 32 | info.nFileIndexLow;
  out.size = static_cast<std::uint64_t>(info.nFileSizeHigh) << 32 | info.nFileSizeLow;
  // FILETIME counts 100 ns intervals
  out.mtime_ns = static_cast<std::int64_t>(static_cast<std::uint64_t>(info.ftLastWriteTime.dwHighDateTime) << 32 |
                                           info.ftLastWriteTime.dwLowDateTime) *
                 100;
  return 0;
}

Status make_symlink(const std::string& target, const std::filesystem::path& at) {
  std::string native = target;
  for (auto& c : native)
    if (c == '/') c = '\\';
  auto wtarget = utf8_to_utf16(native);
  std::error_code ec;
  bool dir = std::filesystem::is_directory(at.parent_path() / std::filesystem::path(std::wstring(wtarget.begin(), wtarget.end())), ec);
  DWORD flags = SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE | (dir ? SYMBOLIC_LINK_FLAG_DIRECTORY : 0);
  if (!CreateSymbolicLinkW(at.c_str(), reinterpret_cast<const wchar_t*>(wtarget.c_str()), flags)) {
    DWORD e = GetLastError();
    Error err(ErrorCode::io, "cannot create symlink " + at.string() + ": " + win_error(e));
    if (e == ERROR_PRIVILEGE_NOT_HELD)
      return std::move(err).with_hint(
          "Windows creates symbolic links only with Developer Mode on (Settings > System > For developers) "
          "or from an elevated prompt; the Windows layout itself needs none");
    return err;
  }
  return {};
}

Status make_hardlink(const std::filesystem::path& existing, const std::filesystem::path& at) {
  if (!CreateHardLinkW(at.c_str(), existing.c_str(), nullptr))
    return Error(ErrorCode::io, "cannot create hardlink " + at.string() + ": " + win_error(GetLastError()));
  return {};
}

bool is_link(const std::filesystem::path& path) {
  // the reparse tag, without opening the file: FindFirstFileW gives it in dwReserved0
  WIN32_FIND_DATAW found{};
  HANDLE h = FindFirstFileW(path.c_str(), &found);
  if (h == INVALID_HANDLE_VALUE) return false;
  FindClose(h);
  return (found.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) && IsReparseTagNameSurrogate(found.dwReserved0);
}

Status make_directory(const std::filesystem::path& path) {
  if (CreateDirectoryW(path.c_str(), nullptr)) return {};
  DWORD e = GetLastError();
  if (e == ERROR_ALREADY_EXISTS) {
    DWORD attrs = GetFileAttributesW(path.c_str());
    const bool link = is_link(path);
    if (attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_DIRECTORY) && !link) return {};
    return Error(ErrorCode::io, "cannot create the directory " + path.string() + ": " +
                                    (link ? "a link (symbolic link or junction) has that name" : "a file has that name"));
  }
  return Error(ErrorCode::io, "cannot create the directory " + path.string() + ": " + win_error(e));
}

bool remove_empty_directory(const std::filesystem::path& path) {
  DWORD attrs = GetFileAttributesW(path.c_str());
  if (attrs == INVALID_FILE_ATTRIBUTES || !(attrs & FILE_ATTRIBUTE_DIRECTORY) || is_link(path)) return false;
  return RemoveDirectoryW(path.c_str()) != 0;  // fails on a folder that is not empty
}

std::filesystem::path absolute_path(const std::filesystem::path& path) {
  std::wstring w = path.wstring();
  auto starts = [&](const wchar_t* prefix) { return _wcsnicmp(w.c_str(), prefix, wcslen(prefix)) == 0; };
  if (starts(L"\\\\?\\UNC\\") || starts(L"\\??\\UNC\\"))
    w = L"\\\\" + w.substr(8);
  else if (starts(L"\\\\?\\") || starts(L"\\??\\"))
    w = w.substr(4);
  DWORD n = GetFullPathNameW(w.c_str(), 0, nullptr, nullptr);
  std::wstring full(n, L'\0');
  if (n > 0) n = GetFullPathNameW(w.c_str(), n, full.data(), nullptr);
  if (n == 0 || n >= full.size()) return std::filesystem::absolute(std::filesystem::path(w)).lexically_normal();
  full.resize(n);
  return std::filesystem::path(full);
}

}  // namespace util::io
