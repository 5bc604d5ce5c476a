// Advisory whole-file locks (flock, LockFileEx) that serialise stage, apply and fetch on one DEST or cache.
#include "util/file_lock.hpp"

#include <cerrno>

#include "util/fs.hpp"

#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace util {

Result<FileLock> FileLock::acquire(const std::filesystem::path& path, void (*on_wait)(void*), void* ctx) {
#ifdef _WIN32
  int fd = _wopen(path.c_str(), _O_RDWR | _O_CREAT, 0644);
  if (fd < 0) return Error(ErrorCode::io, "cannot open lock " + path.string());
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
  int fd = _wopen(path.c_str(), _O_WRONLY | _O_CREAT | _O_APPEND | _O_BINARY, 0644);
#else
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
#endif
  if (fd < 0) return Error(ErrorCode::io, "cannot open " + path.string() + ": " + os_error_text(errno));
  return DurableAppender(fd);
}

DurableAppender::~DurableAppender() {
#ifdef _WIN32
  if (m_fd >= 0) _close(m_fd);
#else
  if (m_fd >= 0) ::close(m_fd);
#endif
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
#ifndef _WIN32
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error(ErrorCode::io, "cannot open " + file.string() + ": " + os_error_text(errno));
  int r = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (r != 0) return Error(ErrorCode::io, "cannot flush " + file.string() + " to disk: " + os_error_text(err));
#else
  (void)file;
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

int start_writeback(std::FILE* file) {
  if (std::fflush(file) != 0) return errno ? errno : EIO;
#ifdef __linux__
  ::sync_file_range(::fileno(file), 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
  return 0;
}

}  // namespace util
