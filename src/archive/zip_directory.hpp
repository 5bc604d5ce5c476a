#pragma once
// The central directory of a zip file, read by stackpin itself before libarchive sees the file
// (zip_directory.cpp says why).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace archive_io::detail {

// Little-endian fields of zip records.
inline std::uint16_t le16(const unsigned char* p) { return static_cast<std::uint16_t>(p[0] | (p[1] << 8)); }
inline std::uint32_t le32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) | (static_cast<std::uint32_t>(p[2]) << 16) |
         (static_cast<std::uint32_t>(p[3]) << 24);
}
inline std::uint64_t le64(const unsigned char* p) {
  return static_cast<std::uint64_t>(le32(p)) | (static_cast<std::uint64_t>(le32(p + 4)) << 32);
}

// "corrupt zip: \"<entry>\" <why>" (invalid), with `hint`.
util::Error zip_entry_error(const std::string& entry, const std::string& why, const std::string& hint);

struct ZipEntry {
  std::string name;           // as stored (bytes)
  std::uint16_t made_by = 0;  // "version made by": host system in the high byte
  std::uint16_t flags = 0;
  std::uint16_t method = 0;
  std::uint64_t compressed = 0, uncompressed = 0;
  std::uint64_t local_offset = 0;
  std::uint32_t crc32 = 0;
  std::uint32_t external = 0;  // external attributes: Unix mode in the high 16 bits for Unix hosts
  std::int64_t mtime = 0;      // seconds since the epoch: the extended-timestamp field, else the DOS time read as UTC
  bool is_symlink() const;     // a Unix host and S_IFLNK in the mode
  bool is_directory() const;
  unsigned permissions() const;  // the Unix mode's permission bits for Unix hosts, else 0644 (0755 for directories)
};

struct ZipDirectory {
  std::vector<ZipEntry> entries;     // in central-directory order
  std::uint64_t declared_bytes = 0;  // sum of the uncompressed sizes
  std::uint64_t cd_offset = 0;       // where the central directory starts: every entry's data end before it
};

// Reads the end-of-central-directory record (zip64 too) and every central-directory header of a
// zip of `size` bytes through `read_at(offset, buffer, length)`, which returns false on a read
// error or short read. Errors: invalid (not a zip, truncated or inconsistent records, several
// disks), unsupported (encryption, a compression method other than stored or deflate, a name
// that is neither flagged UTF-8 nor ASCII).
util::Result<ZipDirectory> read_zip_directory(std::uint64_t size, const std::function<bool(std::uint64_t, void*, std::size_t)>& read_at);

// Parses the same from a file's bytes held in memory (the fuzz target calls this one).
util::Result<ZipDirectory> read_zip_directory(const std::string& bytes);

}  // namespace archive_io::detail
