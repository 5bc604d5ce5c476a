#pragma once
// File descriptors the same way on Linux and Windows, for the layers that write and read archives
// by descriptor (archive): each call has the POSIX call's meaning and returns -1 with errno set
// on failure. Linux: the POSIX calls themselves (file_io_posix.cpp); Windows: the C runtime's
// descriptors over Win32 handles, with wide (UTF-16) paths (file_io_windows.cpp).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "util/result.hpp"

namespace util::io {

// Creates `path` for writing; fails (EEXIST) when anything, a link included, has that name, so a
// planted link is never followed. Not inherited by child processes. Mode 0600 until set_mode.
int create_new(const std::filesystem::path& path);
// Opens an existing file for reading, not inherited; a FIFO does not block the open.
int open_read(const std::filesystem::path& path);
// pread(2): up to `size` bytes at `offset` (0 at the end of the file).
std::int64_t read_at(int fd, void* buf, std::size_t size, std::uint64_t offset);
// read_at until `size` bytes are read or the file ends: the bytes read (fewer only at the end of
// the file), -1 with errno on failure.
inline std::int64_t read_full_at(int fd, void* buf, std::size_t size, std::uint64_t offset) {
  std::size_t got = 0;
  while (got < size) {
    auto r = read_at(fd, static_cast<char*>(buf) + got, size - got, offset + got);
    if (r < 0) return -1;
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return static_cast<std::int64_t>(got);
}
// write(2) at the descriptor's position.
std::int64_t write_some(int fd, const void* buf, std::size_t size);
int close(int fd);
// fchmod(2). Windows has no POSIX modes: succeeds and does nothing.
int set_mode(int fd, unsigned mode);

struct FileInfo {
  bool regular = false;
  std::uint64_t device = 0;  // with `file`, the file's identity (st_dev/st_ino; volume serial/file index)
  std::uint64_t file = 0;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
};
// fstat(2). -1 with errno on failure.
int stat_fd(int fd, FileInfo& out);

// A symbolic link at `at` whose target text is `target` ('/'-separated, relative). Errors: io,
// with what to do where the platform needs a privilege for it (Windows: Developer Mode).
Status make_symlink(const std::string& target, const std::filesystem::path& at);
// A hard link at `at` to the existing file `existing`. Errors: io.
Status make_hardlink(const std::filesystem::path& existing, const std::filesystem::path& at);

// A directory at `path`, mode 0755 (less what the umask takes: a umask of 0 in a container must
// not make a staged tree writable by every user). An existing directory is fine; anything else of
// that name, a symlink to a directory included, is an error (io), so a planted link is never
// written through.
Status make_directory(const std::filesystem::path& path);

// Removes `path` when it is an empty directory (not a link to one); anything else, a file or a
// link included, stays. The removal of a folder some record says stackpin made: a record that
// names a file must not make that file go. False when nothing was removed.
bool remove_empty_directory(const std::filesystem::path& path);

// Whether `path` itself (not followed) is a link: a symbolic link, or on Windows a name-surrogate
// reparse point (a symbolic link or a junction, which std::filesystem does not call a symlink; not
// the reparse points of OneDrive's files on demand or deduplication, which are folders and files).
// False when it does not exist.
bool is_link(const std::filesystem::path& path);

// `path` made absolute and normal, as a user names a DEST. On Windows a verbatim path
// (\\?\C:\..., \\?\UNC\server\share\...) is taken in its plain form, which std::filesystem
// takes apart correctly, and the rest is resolved by GetFullPathNameW, as Windows itself resolves
// a relative or drive-relative path. The plain form is past MAX_PATH only where Windows has
// LongPathsEnabled (stackpin.exe declares itself long-path aware).
std::filesystem::path absolute_path(const std::filesystem::path& path);

}  // namespace util::io
