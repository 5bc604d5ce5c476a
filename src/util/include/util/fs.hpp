#pragma once
// File helpers shared by every layer: whole-file reads, atomic writes, temporary directories.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "util/file_lock.hpp"
#include "util/result.hpp"

namespace util {

// Reads a whole file. Errors: not_found (absent), io (unreadable, a directory).
Result<std::string> read_file(const std::filesystem::path& path);

// Writes `content` to `path` atomically: a temporary file in the same directory is written,
// flushed to disk and renamed over `path`, so readers see the old or the new file, never half.
// Errors: io (with the OS reason: read-only file system, no space left, ...).
Status write_file_atomic(const std::filesystem::path& path, std::string_view content);

// A directory removed (recursively) when the object goes out of scope, unless released.
class TempDir {
 public:
  // Creates a fresh directory named `<prefix>XXXXXX` inside `parent`. Errors: io.
  static Result<TempDir> create(const std::filesystem::path& parent, std::string_view prefix);
  // The same, holding a lock on a file `.owner` inside it for as long as the object lives, so that
  // remove_abandoned() can tell a directory a running process uses from one a killed run left.
  static Result<TempDir> create_owned(const std::filesystem::path& parent, std::string_view prefix);
  // Removes the `<prefix>*` directories in `parent` that no process owns: their `.owner` lock can
  // be taken, or they have none (killed between creating the directory and locking) and were last
  // modified over ten minutes ago. Returns how many were removed; never fails (what cannot be
  // removed stays for a later run).
  static std::size_t remove_abandoned(const std::filesystem::path& parent, std::string_view prefix);
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  const std::filesystem::path& path() const { return m_path; }
  std::filesystem::path release();

 private:
  explicit TempDir(std::filesystem::path p) : m_path(std::move(p)) {}
  std::filesystem::path m_path;
  std::optional<FileLock> m_owner;
};

// std::fopen for a path, with the path's own encoding (UTF-16 on Windows, so that names outside the
// ANSI code page open too). Returns null with errno set, like std::fopen.
std::FILE* open_file(const std::filesystem::path& path, const char* mode);

// Moves `f` to byte `offset` from its start (beyond 2 GiB too); 0 on success, like fseek.
int seek_file(std::FILE* f, std::uint64_t offset);

// Text of the OS error `errno_value` ("No space left on device").
std::string os_error_text(int errno_value);

}  // namespace util
