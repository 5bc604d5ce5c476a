#pragma once
// Writing Debian binary packages (deb.cpp): the compressed tar members and the outer `ar`
// container, both with libarchive, byte-for-byte reproducible (fixed order, owners and times).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "archive/extract.hpp"
#include "util/result.hpp"

namespace archive_io {

enum class Compression { xz, gzip, none };
const char* to_string(Compression c);
// ".xz", ".gz" or "" (the suffix after ".tar").
const char* suffix(Compression c);

struct TarMember {
  std::string path;                  // stored name: "./usr/lib/x86_64-linux-gnu/libcudnn.so.9"; "./" for the root
  EntryType type = EntryType::file;  // file, dir or symlink
  unsigned mode = 0644;
  std::string link;              // symlink target
  std::filesystem::path source;  // file contents: this file, or
  std::string data;              // these bytes when source is empty
  std::string shown;             // how errors name the member (the archive entry it comes from); default: path
};

struct TarOptions {
  Compression compression = Compression::xz;
  std::int64_t mtime = 0;  // every member's modification time
  int threads = 0;         // xz: worker threads (0 = up to 4 by the machine). Any value >= 1 gives the same bytes.
  std::string label;       // how errors name the output (default: its path, which may be a temporary file)
};

struct TarWritten {
  std::map<std::string, std::string> md5;  // file member path (without "./") -> lowercase hex MD5
  std::uint64_t installed_bytes = 0;       // sum of file sizes
};

// Writes `members` in the given order to `out` as a tar (ustar, pax only where a name needs it;
// owner and group root, 0/0) compressed with `o.compression`. File data is read from `source`
// while it is written, and its MD5 computed on the way. Errors: io (reading a source, writing
// `out`: the partial file is left for the caller to remove), invalid (a member libarchive refuses).
util::Result<TarWritten> write_tar(const std::filesystem::path& out, const std::vector<TarMember>& members, const TarOptions& o);

// Writes a Debian binary package to `out`: an `ar` archive holding "debian-binary" ("2.0\n"),
// then the control and data tars under the names Debian expects ("control.tar.xz", ...), all with
// mode 0644, owner 0/0 and time `mtime`. Errors: io.
util::Status write_deb(const std::filesystem::path& out, const std::filesystem::path& control_tar, const std::filesystem::path& data_tar,
                       Compression compression, std::int64_t mtime);

// `data` compressed as a gzip stream at level 9 with no name and no timestamp (same bytes for the
// same input). Errors: internal (libarchive refused).
util::Result<std::string> gzip_bytes(const std::string& data);

}  // namespace archive_io
