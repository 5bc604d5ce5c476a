// A zip's central directory is the authority on what the zip holds: which entries are symlinks
// (only the central directory's external attributes say so, which is why a zip read as a stream
// turns `passwd -> /etc/passwd` into a regular file), how each entry is compressed and how big it
// will be. stackpin reads it itself, before libarchive's seekable zip reader runs, to refuse what
// NVIDIA's zips never contain (encryption, compression methods other than stored and deflate,
// several disks, names of unknown encoding) and to know the unpacked size and the entry count
// before a byte is inflated. Offsets are checked against the file's size; a record that does not
// fit is an error, never read past.
#include "zip_directory.hpp"

#include <cstring>
#include <set>

#include "util/strings.hpp"

namespace archive_io::detail {

namespace {

constexpr std::uint32_t k_eocd = 0x06054b50, k_zip64_locator = 0x07064b50, k_zip64_eocd = 0x06064b50, k_central = 0x02014b50;

util::Error bad(const std::string& why) {
  util::Error e(util::ErrorCode::invalid, "corrupt zip: " + why);
  e.hints.push_back("NVIDIA's Windows archives are plain zips; this file is damaged or is not one of them");
  return e;
}

const char* method_name(std::uint16_t m) {
  switch (m) {
    case 1: return "shrink";
    case 6: return "implode";
    case 9: return "deflate64";
    case 12: return "bzip2";
    case 14: return "lzma";
    case 93: return "zstd";
    case 95: return "xz";
    case 98: return "ppmd";
    case 99: return "AES encryption";
    default: return nullptr;
  }
}

}  // namespace

util::Error zip_entry_error(const std::string& entry, const std::string& why, const std::string& hint) {
  util::Error e(util::ErrorCode::invalid, "corrupt zip: \"" + util::printable(entry) + "\" " + why);
  e.hints.push_back(hint);
  return e;
}

bool ZipEntry::is_symlink() const {
  unsigned host = made_by >> 8;
  return (host == 3 || host == 19) && ((external >> 16) & 0170000u) == 0120000u;
}

bool ZipEntry::is_directory() const { return !name.empty() && name.back() == '/'; }

unsigned ZipEntry::permissions() const {
  unsigned host = made_by >> 8;
  unsigned mode = (host == 3 || host == 19) ? (external >> 16) & 0777u : 0u;
  if (mode) return mode;
  return is_directory() ? 0755u : 0644u;
}

namespace {
// A DOS date and time (local time of the machine that made the zip, which the zip does not say)
// read as UTC, so that the same zip gives the same times everywhere.
std::int64_t dos_time(std::uint16_t time, std::uint16_t date) {
  int y = 1980 + (date >> 9), m = (date >> 5) & 15, d = date & 31;
  if (m < 1 || m > 12 || d < 1) return 0;
  // days from 1970-01-01 (the civil-from-days algorithm run backwards)
  y -= m <= 2;
  const int era = y / 400, yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const std::int64_t days = static_cast<std::int64_t>(era) * 146097 + doe - 719468;
  return days * 86400 + (time >> 11) * 3600 + ((time >> 5) & 63) * 60 + (time & 31) * 2;
}
}  // namespace

util::Result<ZipDirectory> read_zip_directory(std::uint64_t size, const std::function<bool(std::uint64_t, void*, std::size_t)>& read_at) {
  if (size < 22) return bad("the file is too short to hold an end-of-central-directory record");
  // the record is in the last 22 + 65535 bytes (its comment is at most 65535 bytes)
  std::size_t tail_len = static_cast<std::size_t>(std::min<std::uint64_t>(size, 22 + 65535));
  std::vector<unsigned char> tail(tail_len);
  std::uint64_t tail_at = size - tail_len;
  if (!read_at(tail_at, tail.data(), tail_len)) return bad("cannot read the end of the file");
  std::size_t eocd = std::string::npos;
  for (std::size_t i = tail_len - 22 + 1; i-- > 0;) {
    if (le32(&tail[i]) == k_eocd && i + 22 + le16(&tail[i + 20]) <= tail_len) {
      eocd = i;
      break;
    }
  }
  if (eocd == std::string::npos) return bad("no end-of-central-directory record (truncated, or not a zip)");
  const unsigned char* e = &tail[eocd];
  std::uint64_t eocd_at = tail_at + eocd;
  std::uint64_t disk = le16(e + 4), cd_disk = le16(e + 6), count_disk = le16(e + 8), count = le16(e + 10);
  std::uint64_t cd_size = le32(e + 12), cd_offset = le32(e + 16);
  if (count == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_offset == 0xFFFFFFFFu || disk == 0xFFFF) {
    // zip64: the locator sits just before the record
    if (eocd_at < 20) return bad("a zip64 archive without its zip64 locator");
    unsigned char loc[20];
    if (!read_at(eocd_at - 20, loc, 20) || le32(loc) != k_zip64_locator) return bad("a zip64 archive without its zip64 locator");
    std::uint64_t z_at = le64(loc + 8);
    if (le32(loc + 16) > 1) return bad("a zip spanning several disks");
    if (z_at > eocd_at - 20 || eocd_at - 20 - z_at < 56) return bad("the zip64 end record lies outside the file");
    unsigned char z[56];
    if (!read_at(z_at, z, 56) || le32(z) != k_zip64_eocd) return bad("the zip64 locator points at no zip64 end record");
    disk = le32(z + 16);
    cd_disk = le32(z + 20);
    count_disk = le64(z + 24);
    count = le64(z + 32);
    cd_size = le64(z + 40);
    cd_offset = le64(z + 48);
    eocd_at = z_at;
  }
  if (disk != 0 || cd_disk != 0 || count_disk != count) return bad("a zip spanning several disks");
  if (cd_offset > eocd_at || cd_size > eocd_at - cd_offset)
    return bad("the central directory (" + std::to_string(cd_size) + " bytes at " + std::to_string(cd_offset) + ") lies outside the file");
  // each header is at least 46 bytes: a count the directory cannot hold is a lie
  if (count > cd_size / 46) return bad("the end record claims " + std::to_string(count) + " entries, more than the directory can hold");

  ZipDirectory out;
  out.cd_offset = cd_offset;
  std::vector<unsigned char> cd(static_cast<std::size_t>(cd_size));
  if (cd_size && !read_at(cd_offset, cd.data(), cd.size())) return bad("cannot read the central directory");
  std::size_t pos = 0;
  std::set<std::string> names;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (cd.size() - pos < 46 || le32(&cd[pos]) != k_central)
      return bad("central-directory header " + std::to_string(i + 1) + " of " + std::to_string(count) + " is missing or damaged");
    const unsigned char* h = &cd[pos];
    ZipEntry z;
    z.made_by = le16(h + 4);
    z.flags = le16(h + 8);
    z.method = le16(h + 10);
    z.mtime = dos_time(le16(h + 12), le16(h + 14));
    z.crc32 = le32(h + 16);
    z.compressed = le32(h + 20);
    z.uncompressed = le32(h + 24);
    std::size_t name_len = le16(h + 28), extra_len = le16(h + 30), comment_len = le16(h + 32);
    std::uint32_t start_disk = le16(h + 34);
    z.external = le32(h + 38);
    z.local_offset = le32(h + 42);
    if (cd.size() - pos - 46 < name_len + extra_len + comment_len)
      return bad("central-directory header " + std::to_string(i + 1) + " runs past the directory");
    z.name.assign(reinterpret_cast<const char*>(h + 46), name_len);
    // zip64 extended information: the fields whose 32-bit value is all ones, in this order
    const unsigned char* x = h + 46 + name_len;
    for (std::size_t xp = 0; xp + 4 <= extra_len;) {
      std::uint16_t id = le16(x + xp), len = le16(x + xp + 2);
      if (xp + 4 + len > extra_len) return bad("an extra field of \"" + util::printable(z.name) + "\" runs past its header");
      if (id == 0x0001) {
        std::size_t f = xp + 4, end = xp + 4 + len;
        auto take = [&](std::uint64_t& v) -> bool {
          if (f + 8 > end) return false;
          v = le64(x + f);
          f += 8;
          return true;
        };
        std::uint64_t disk64 = 0;
        if (z.uncompressed == 0xFFFFFFFFu && !take(z.uncompressed))
          return bad("a zip64 field of \"" + util::printable(z.name) + "\" is short");
        if (z.compressed == 0xFFFFFFFFu && !take(z.compressed)) return bad("a zip64 field of \"" + util::printable(z.name) + "\" is short");
        if (z.local_offset == 0xFFFFFFFFu && !take(z.local_offset))
          return bad("a zip64 field of \"" + util::printable(z.name) + "\" is short");
        if (start_disk == 0xFFFF && take(disk64)) start_disk = static_cast<std::uint32_t>(disk64 ? 1 : 0);
      } else if (id == 0x5455 && len >= 5 && (x[xp + 4] & 1)) {
        // extended timestamp: flags, then the modification time (Unix seconds, 32 bits)
        z.mtime = static_cast<std::int32_t>(le32(x + xp + 5));
      }
      xp += 4 + len;
    }
    pos += 46 + name_len + extra_len + comment_len;
    std::string shown = util::printable(z.name);
    if (start_disk != 0 && start_disk != 0xFFFF) return bad("\"" + shown + "\" starts on another disk");
    if (z.local_offset >= cd_offset) return bad("\"" + shown + "\" has its data outside the file's data area");
    if (z.compressed > cd_offset - z.local_offset) return bad("\"" + shown + "\" declares more compressed bytes than the file holds");
    if (z.flags & 0x0041u)
      return util::Error(util::ErrorCode::unsupported, "\"" + shown + "\" in the zip is encrypted")
          .with_hint("NVIDIA's archives are not encrypted; this is not the pinned archive's content");
    if (z.method != 0 && z.method != 8) {
      const char* m = method_name(z.method);
      return util::Error(util::ErrorCode::unsupported, "\"" + shown + "\" in the zip is compressed with " +
                                                           (m ? std::string(m) : "method " + std::to_string(z.method)) +
                                                           "; stackpin reads only stored and deflate entries")
          .with_hint("NVIDIA's zips use deflate; repack with `zip` (deflate) if this is your own archive");
    }
    if (z.flags & 0x0800u) {
      if (!util::is_valid_utf8(z.name))
        return util::Error(util::ErrorCode::unsafe, "zip entry \"" + shown + "\" is flagged UTF-8 but its name is not valid UTF-8")
            .with_hint("the archive is not NVIDIA's original or was tampered with; nothing was unpacked");
    } else if (!util::is_ascii(z.name)) {
      return util::Error(util::ErrorCode::unsafe,
                         "zip entry \"" + shown + "\" has a non-ASCII name in an unknown code page (the zip does not flag it UTF-8)")
          .with_hint(
              "a name whose bytes mean different files on different machines cannot be staged reproducibly; "
              "repack the archive with UTF-8 names (Info-ZIP `zip` 3 or 7-Zip with -mcu=on)");
    }
    if (!names.insert(z.name).second)
      return util::Error(util::ErrorCode::unsafe,
                         "unsafe archive entry \"" + shown + "\": duplicate entry (the zip's directory lists it twice)")
          .with_hint("the archive is not NVIDIA's original or was tampered with; nothing was unpacked");
    out.declared_bytes += z.uncompressed;
    if (out.declared_bytes < z.uncompressed) return bad("the entries' sizes overflow");
    out.entries.push_back(std::move(z));
  }
  return out;
}

util::Result<ZipDirectory> read_zip_directory(const std::string& bytes) {
  return read_zip_directory(bytes.size(), [&](std::uint64_t at, void* buf, std::size_t len) {
    if (at > bytes.size() || len > bytes.size() - at) return false;
    std::memcpy(buf, bytes.data() + at, len);
    return true;
  });
}

}  // namespace archive_io::detail
