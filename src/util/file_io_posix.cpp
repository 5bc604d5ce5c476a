// File descriptors on Linux: the POSIX calls, with O_CLOEXEC and O_NOFOLLOW where file_io.hpp
// promises them.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "util/file_io.hpp"
#include "util/fs.hpp"

namespace util::io {

int create_new(const std::filesystem::path& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

int open_read(const std::filesystem::path& path) { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK); }

std::int64_t read_at(int fd, void* buf, std::size_t size, std::uint64_t offset) {
  for (;;) {
    ssize_t n = ::pread(fd, buf, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    return n;
  }
}

std::int64_t write_some(int fd, const void* buf, std::size_t size) {
  for (;;) {
    ssize_t n = ::write(fd, buf, size);
    if (n < 0 && errno == EINTR) continue;
    return n;
  }
}

int close(int fd) { return ::close(fd); }

int set_mode(int fd, unsigned mode) { return ::fchmod(fd, static_cast<mode_t>(mode)); }

int stat_fd(int fd, FileInfo& out) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return -1;
  out.regular = S_ISREG(st.st_mode);
  out.device = static_cast<std::uint64_t>(st.st_dev);
  out.file = static_cast<std::uint64_t>(st.st_ino);
  out.size = static_cast<std::uint64_t>(st.st_size);
  out.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return 0;
}

Status make_symlink(const std::string& target, const std::filesystem::path& at) {
  if (::symlink(target.c_str(), at.c_str()) != 0)
    return Error(ErrorCode::io, "cannot create symlink " + at.string() + ": " + os_error_text(errno));
  return {};
}

Status make_hardlink(const std::filesystem::path& existing, const std::filesystem::path& at) {
  if (::link(existing.c_str(), at.c_str()) != 0)
    return Error(ErrorCode::io, "cannot create hardlink " + at.string() + ": " + os_error_text(errno));
  return {};
}

Status make_directory(const std::filesystem::path& path) {
  if (::mkdir(path.c_str(), 0755) == 0) return {};
  const int err = errno;
  struct stat st {};
  if (err == EEXIST && ::lstat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return {};
    return Error(ErrorCode::io, "cannot create the directory " + path.string() + ": " +
                                    (S_ISLNK(st.st_mode) ? "a symbolic link has that name" : "a file has that name"));
  }
  return Error(ErrorCode::io, "cannot create the directory " + path.string() + ": " + os_error_text(err));
}

bool remove_empty_directory(const std::filesystem::path& path) { return ::rmdir(path.c_str()) == 0; }

bool is_link(const std::filesystem::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

std::filesystem::path absolute_path(const std::filesystem::path& path) { return std::filesystem::absolute(path).lexically_normal(); }

}  // namespace util::io
