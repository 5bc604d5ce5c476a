#pragma once
// An exclusive advisory lock on a file (flock on POSIX, LockFileEx on Windows), held for the
// lifetime of the object, and an append-only file whose every line is flushed to disk before
// append_line() returns (the journal of staging operations).
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace util {

class FileLock {
 public:
  // Locks `path` (created if absent). When another process holds it, `on_wait` is called once and
  // the call blocks until the lock is free. Errors: io.
  static Result<FileLock> acquire(const std::filesystem::path& path, void (*on_wait)(void*) = nullptr, void* ctx = nullptr);
  // Locks `path` if no other process holds it, without waiting and without creating it: nullopt
  // when it is held or absent. Errors: io.
  static Result<std::optional<FileLock>> try_acquire(const std::filesystem::path& path);
  // Removes the locked file `path` and releases the lock, in the order that keeps a waiting process
  // safe: on POSIX the file goes first (a waiter that then gets the lock sees that its file is gone
  // and locks the new one); on Windows, where an open file cannot be removed, the lock is released
  // first, and the file stays when a waiting process holds it open (it is that process's lock now).
  static void release_and_remove(FileLock lock, const std::filesystem::path& path);
  FileLock(FileLock&& o) noexcept : m_fd(o.m_fd) { o.m_fd = -1; }
  FileLock& operator=(FileLock&& o) noexcept;
  FileLock(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : m_fd(fd) {}
  int m_fd = -1;
};

class DurableAppender {
 public:
  // Opens (creating) `path` for appending. Errors: io.
  static Result<DurableAppender> open(const std::filesystem::path& path);
  DurableAppender(DurableAppender&& o) noexcept : m_fd(o.m_fd) { o.m_fd = -1; }
  DurableAppender(const DurableAppender&) = delete;
  ~DurableAppender();
  // Appends `line` and a newline, then fsyncs. Errors: io.
  Status append_line(std::string_view line);
  // Closes the file before it is removed (Windows keeps the name of an open file until it closes).
  void close();

 private:
  explicit DurableAppender(int fd) : m_fd(fd) {}
  int m_fd = -1;
};

// Flushes a file's data to disk (before it is renamed into place; Windows: FlushFileBuffers).
// Errors: io.
Status sync_file(const std::filesystem::path& file);

// The running kernel's boot, as it names it (Linux: /proc/sys/kernel/random/boot_id, a UUID
// drawn at every boot). A file written and closed but not flushed is intact for as long as the
// boot is the same one: only a crash of the machine (or of its kernel) loses the page cache, and
// the machine comes back under another boot. nullopt where the kernel names no boot (Windows) or
// its name cannot be read; read once.
std::optional<std::string> boot_identity();

// Whether `path` (or, while it does not exist, the nearest folder above it that does) is on a file
// system only this kernel writes back (a local disk, tmpfs, overlayfs), not one that other kernels
// share (NFS, SMB/CIFS, FUSE and virtiofs, 9p, cluster file systems). false where unknown and
// outside Linux.
bool local_file_system(const std::filesystem::path& path);

// A boot's name as the kernel writes it: a lower-case UUID, a newline after it; nullopt for
// anything else (it becomes a folder's name in the download cache).
std::optional<std::string> parse_boot_id(std::string_view text);

// Flushes `file`'s stdio buffer and asks the kernel to start writing its data to disk without
// waiting (Linux: sync_file_range), so that a later sync_file() of a large download finds little
// left to write. Returns the errno of a failed flush, 0 otherwise; a no-op where unsupported.
int start_writeback(std::FILE* file);

// Flushes a directory's entries (renames, creations) to disk; a no-op where unsupported.
void sync_directory(const std::filesystem::path& dir);

}  // namespace util
