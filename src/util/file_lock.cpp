// Advisory whole-file locks (flock, LockFileEx) that serialise stage, apply and fetch on one DEST or cache.
#include "util/file_lock.hpp"

#include <cerrno>
#include <cstdio>

#include "util/fs.hpp"

#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#include <sys/stat.h>
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#endif
#endif

namespace util {

Result<FileLock> FileLock::acquire(const std::filesystem::path& path, void (*on_wait)(void*), void* ctx) {
#ifdef _WIN32
  // The holder may remove the lock file and its folder (unstage leaves no trace) just before this
  // open: the folder is then ours to recreate. The file itself cannot go while this process holds
  // it open (release_and_remove), so the lock taken is on the file at `path`.
  // A file or folder being deleted refuses opens (EACCES) until its last handle closes: a
  // finishing run's, or a scanner's; that is waited out for a while too.
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    fd = _wopen(path.c_str(), _O_RDWR | _O_CREAT | _O_NOINHERIT, _S_IREAD | _S_IWRITE);
    if (fd >= 0 || (errno != ENOENT && errno != EACCES) || attempt >= 100) break;
    std::error_code ec;
    if (errno == ENOENT)
      std::filesystem::create_directories(path.parent_path(), ec);
    else
      Sleep(20);
  }
  if (fd < 0) return Error(ErrorCode::io, "cannot open lock " + path.string() + ": " + os_error_text(errno));
  HANDLE h = reinterpret_cast<HANDLE>(_get_osfhandle(fd));
  OVERLAPPED ov{};
  if (!LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ov)) {
    if (on_wait) on_wait(ctx);
    if (!LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ov)) {
      _close(fd);
      return Error(ErrorCode::io, "cannot lock " + path.string());
    }
  }
  return FileLock(fd);
#else
  // The lock file may be removed by the holder (unstage leaves no trace) while we wait on it: a
  // lock on an unlinked file protects nothing, so after locking, check that the path still names
  // the file we locked, and start over when it does not.
  bool told = false;
  for (int attempt = 0;; ++attempt) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 && errno == ENOENT && attempt < 100) {
      // its directory went with it (the holder removed .stackpin/): it is ours to recreate
      std::error_code ec;
      std::filesystem::create_directories(path.parent_path(), ec);
      continue;
    }
    if (fd < 0) return Error(ErrorCode::io, "cannot open lock " + path.string() + ": " + os_error_text(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK) {
        int e = errno;
        ::close(fd);
        return Error(ErrorCode::io, "cannot lock " + path.string() + ": " + os_error_text(e));
      }
      if (on_wait && !told) on_wait(ctx);
      told = true;
      while (::flock(fd, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        int e = errno;
        ::close(fd);
        return Error(ErrorCode::io, "cannot lock " + path.string() + ": " + os_error_text(e));
      }
    }
    struct stat held {
    }, now{};
    if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &now) == 0 && held.st_ino == now.st_ino && held.st_dev == now.st_dev)
      return FileLock(fd);
    ::close(fd);  // removed or replaced while we waited: lock the file that is there now
  }
#endif
}

Result<std::optional<FileLock>> FileLock::try_acquire(const std::filesystem::path& path) {
#ifdef _WIN32
  int fd = _wopen(path.c_str(), _O_RDWR);
  if (fd < 0) return std::optional<FileLock>();
  HANDLE h = reinterpret_cast<HANDLE>(_get_osfhandle(fd));
  OVERLAPPED ov{};
  if (!LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ov)) {
    _close(fd);
    return std::optional<FileLock>();
  }
  return std::optional<FileLock>(FileLock(fd));
#else
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<FileLock>();
    return Error(ErrorCode::io, "cannot open lock " + path.string() + ": " + os_error_text(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    ::close(fd);
    if (e == EWOULDBLOCK) return std::optional<FileLock>();
    return Error(ErrorCode::io, "cannot lock " + path.string() + ": " + os_error_text(e));
  }
  return std::optional<FileLock>(FileLock(fd));
#endif
}

void FileLock::release_and_remove(FileLock lock, const std::filesystem::path& path) {
  std::error_code ec;
#ifdef _WIN32
  { FileLock released = std::move(lock); }
  std::filesystem::remove(path, ec);
#else
  std::filesystem::remove(path, ec);
  { FileLock released = std::move(lock); }
#endif
}

FileLock& FileLock::operator=(FileLock&& o) noexcept {
  if (this != &o) {
    this->~FileLock();
    m_fd = o.m_fd;
    o.m_fd = -1;
  }
  return *this;
}

FileLock::~FileLock() {
#ifdef _WIN32
  if (m_fd >= 0) _close(m_fd);
#else
  if (m_fd >= 0) ::close(m_fd);  // closing releases the flock
#endif
  m_fd = -1;
}

Result<DurableAppender> DurableAppender::open(const std::filesystem::path& path) {
#ifdef _WIN32
  // Shared for deletion, like a POSIX file: the journal is removed once the operation is done.
  HANDLE h = CreateFileW(path.c_str(), FILE_APPEND_DATA, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_ALWAYS,
                         FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE)
    return Error(ErrorCode::io, "cannot open " + path.string() + ": " + os_error_text(static_cast<int>(GetLastError())));
  int fd = _open_osfhandle(reinterpret_cast<intptr_t>(h), _O_WRONLY | _O_APPEND | _O_BINARY);
  if (fd < 0) CloseHandle(h);
#else
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
#endif
  if (fd < 0) return Error(ErrorCode::io, "cannot open " + path.string() + ": " + os_error_text(errno));
  return DurableAppender(fd);
}

DurableAppender::~DurableAppender() { close(); }

void DurableAppender::close() {
#ifdef _WIN32
  if (m_fd >= 0) _close(m_fd);
#else
  if (m_fd >= 0) ::close(m_fd);
#endif
  m_fd = -1;
}

Status DurableAppender::append_line(std::string_view line) {
  std::string s(line);
  s += '\n';
  const char* p = s.data();
  std::size_t left = s.size();
  while (left > 0) {
#ifdef _WIN32
    int n = _write(m_fd, p, static_cast<unsigned>(left));
#else
    ssize_t n = ::write(m_fd, p, left);
#endif
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error(ErrorCode::io, "cannot write the journal: " + os_error_text(errno));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
#ifdef _WIN32
  if (_commit(m_fd) != 0) return Error(ErrorCode::io, "cannot flush the journal");
#else
  if (::fsync(m_fd) != 0) return Error(ErrorCode::io, "cannot flush the journal: " + os_error_text(errno));
#endif
  return {};
}

Status sync_file(const std::filesystem::path& file) {
#ifdef _WIN32
  // _commit is FlushFileBuffers, which needs a handle open for writing
  int fd = _wopen(file.c_str(), _O_RDWR | _O_BINARY | _O_NOINHERIT);
  if (fd < 0) return Error(ErrorCode::io, "cannot open " + file.string() + ": " + os_error_text(errno));
  int r = _commit(fd);
  int err = errno;
  _close(fd);
  if (r != 0) return Error(ErrorCode::io, "cannot flush " + file.string() + " to disk: " + os_error_text(err));
#else
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error(ErrorCode::io, "cannot open " + file.string() + ": " + os_error_text(errno));
  int r = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (r != 0) return Error(ErrorCode::io, "cannot flush " + file.string() + " to disk: " + os_error_text(err));
#endif
  return {};
}

void sync_directory(const std::filesystem::path& dir) {
#ifndef _WIN32
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
#else
  (void)dir;
#endif
}

bool local_file_system(const std::filesystem::path& path) {
#ifdef __linux__
  std::filesystem::path p = path;
  std::error_code ec;
  while (!p.empty() && !std::filesystem::exists(p, ec) && p != p.parent_path()) p = p.parent_path();
  struct statfs s {};
  if (::statfs(p.empty() ? "." : p.c_str(), &s) != 0) return false;
  switch (static_cast<unsigned long>(s.f_type)) {
    case 0x6969UL:      // NFS
    case 0x517BUL:      // SMB
    case 0xFF534D42UL:  // CIFS
    case 0xFE534D42UL:  // SMB2
    case 0x65735546UL:  // FUSE (sshfs, virtiofs, Docker Desktop's shares, ...)
    case 0x01021997UL:  // 9p (WSL's Windows drives, QEMU shares)
    case 0x00C36400UL:  // Ceph
    case 0x0BD00BD0UL:  // Lustre
    case 0x47504653UL:  // GPFS
    case 0x19830326UL:  // BeeGFS
    case 0x5346414FUL:  // AFS
    case 0x6B414653UL:  // kAFS
    case 0xAAD7AAEAUL:  // PanFS
      return false;
    default: return true;
  }
#else
  (void)path;
  return false;
#endif
}

std::optional<std::string> parse_boot_id(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  // a UUID in lower case: 8-4-4-4-12 hex digits, nothing else (it becomes a folder's name)
  if (text.size() != 36) return std::nullopt;
  for (std::size_t i = 0; i < text.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    char c = text[i];
    if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  }
  return std::string(text);
}

std::optional<std::string> boot_identity() {
  static const std::optional<std::string> k_boot = []() -> std::optional<std::string> {
#ifdef __linux__
    std::FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "rbe");  // e: close-on-exec
    if (!f) return std::nullopt;
    char buf[64] = {};
    std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    return parse_boot_id(std::string_view(buf, n));
#else
    return std::nullopt;
#endif
  }();
  return k_boot;
}

int start_writeback(std::FILE* file) {
  if (std::fflush(file) != 0) return errno ? errno : EIO;
#ifdef __linux__
  ::sync_file_range(::fileno(file), 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
  return 0;
}

}  // namespace util
