// Safe extraction of a PinnedFile (pinned_file.cpp: nothing is decoded before the file matches its
// pin). Tars are read by libarchive with its tar format alone enabled, and no libarchive filter:
// .xz and .gz are decoded by source.cpp; they are read once, in order, each chunk checked against
// the keyed tag taken when the file was hashed (source.hpp). Zips are read by stackpin itself: the central directory first
// (zip_directory.cpp: bounds, methods, names, and which entries are symlinks, which only the directory says), then every local header
// against it (zip_reader.cpp), then the entries, admitted in file order on one thread and inflated on several, every byte read through a
// chunk checked against the keyed tag taken when the file was hashed.
//
// Every entry is validated before anything is written: its name (paths.cpp; names that are not
// valid UTF-8 are refused, since they cannot be recorded in a receipt nor mean the same file on
// another machine), its type (regular files, directories, contained symlinks and hardlinks to
// earlier files only; devices and FIFOs are refused), duplicates and case collisions, and whether
// any parent on its path is a symlink or a file (writing "through" a link is how archives
// escape). Sizes are bounded before bytes are written: an entry's declared size (a sparse file's
// holes included) must fit the remaining budget, and every block is counted before it is queued.
// Files are created with O_EXCL|O_NOFOLLOW inside a directory tree this code created, their data
// size is checked against the header, setuid/setgid/sticky bits are dropped. After the last entry
// every symlink is resolved through the other symlinks of the tree, because a link that is
// contained on its own ("d/s -> ..") can make another one escape ("l -> d/s/../x").
#include "archive/extract.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "file_writer.hpp"
#include "source.hpp"
#include "tar_scan.hpp"
#include "unsafe_entry.hpp"
#include "utf8_locale.hpp"
#include "util/file_io.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "zip_directory.hpp"
#include "zip_reader.hpp"

namespace archive_io {
namespace fs = std::filesystem;

const char* to_string(EntryType t) {
  switch (t) {
    case EntryType::file: return "file";
    case EntryType::dir: return "directory";
    case EntryType::symlink: return "symlink";
    case EntryType::hardlink: return "hardlink";
  }
  return "?";
}

namespace {

using detail::FileWriter;
using util::Error;
using util::ErrorCode;

struct ArchiveDeleter {
  void operator()(struct archive* a) const { archive_read_free(a); }
};

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) util::io::close(fd);
  }
};

// libarchive's view of the byte source: raw chunks of a tar, or a decoder's output. Every chunk is
// read by the header scan (tar_scan.cpp) before libarchive gets it, so that an archive whose
// entries tar readers read differently is refused before libarchive has read one of its headers.
struct StreamClient {
  detail::SealedStream* reader = nullptr;
  detail::Decoder* decoder = nullptr;
  std::string error;
  detail::TarHeaderScan scan;
  std::optional<Error> refused;  // the scan's refusal, reported as it is
};

la_ssize_t stream_read(struct archive*, void* data, const void** buf) {
  auto* c = static_cast<StreamClient*>(data);
  if (c->refused) return -1;
  la_ssize_t n = 0;
  if (c->decoder) {
    n = c->decoder->read(buf);
    if (n < 0) {
      c->error = c->decoder->error();
      return -1;
    }
  } else {
    auto [p, len] = c->reader->next();
    *buf = p;
    n = static_cast<la_ssize_t>(len);
  }
  if (n > 0)
    if (auto scanned = c->scan.feed(*buf, static_cast<std::size_t>(n)); !scanned) {
      c->refused = std::move(scanned).error();
      c->error = c->refused->message;
      return -1;
    }
  return n;
}

Error too_big(std::uint64_t bound, const std::string& rel, const std::string& how) {
  Error err(ErrorCode::unsafe, "the archive expands past " + util::format_bytes(bound) + " (" + how + " \"" + util::printable(rel) + "\")");
  err.hints.push_back("an archive bomb or the wrong file; raise the bound with --max-unpacked BYTES if this archive is genuine");
  return err;
}

std::string la_error(struct archive* a) {
  const char* s = archive_error_string(a);
  if (s && *s) return s;
  int e = archive_errno(a);
  if (e > 0) return util::os_error_text(e);
  return {};
}

// The mode a file of the archive is staged with: its owner can read and write it, the execute
// bits are kept, and nothing else: no setuid/setgid/sticky bit, and no group or world write (a
// repack made on Windows or with 7-Zip says 0777 or 0666; staged as root into /usr/local, any user
// could then replace a library every program loads). CPython's tarfile "data" filter does the same.
unsigned staged_mode(unsigned archive_mode) { return (archive_mode & 0755u) | 0600u; }

class Extractor {
 public:
  Extractor(const fs::path& into, const ExtractOptions& o) : m_into(into), m_opts(o), m_list_only(into.empty()) {}

  // A tar entry: checked, then written (its data read from libarchive).
  util::Status entry(struct archive* a, struct archive_entry* ae, Extracted& out);
  // A zip entry (the central directory says what it is): checked, then its directory or symlink
  // made; a file is only admitted (its name, its declared size against the bound), and written
  // later by a ZipWorker. `link`: a symlink's target, read by the caller.
  util::Status zip_entry(const detail::ZipEntry& z, const std::optional<std::string>& link, Extracted& out);
  util::Status check_links(const Extracted& out) const;
  util::Status finish_hashes(Extracted& out);
  std::uint64_t bytes() const { return m_bytes; }
  void add_written(std::uint64_t files, std::uint64_t bytes) {
    m_files += files;
    m_bytes += bytes;
    m_claimed -= std::min(m_claimed, bytes);
  }
  const std::string& last_name() const { return m_last; }
  std::function<std::uint64_t()> consumed;  // archive bytes read so far
  std::uint64_t archive_total = 0;
  void progress(bool force = false) {
    if (!m_opts.progress || (!force && m_bytes < m_next_progress)) return;
    m_next_progress = m_bytes + (1u << 20);
    m_opts.progress(Progress{consumed ? consumed() : 0, archive_total, m_files, m_bytes});
  }

 private:
  struct Known {
    EntryType type;
    std::string link;
  };
  // The checks every entry passes whatever its format: the entry bound, its name, duplicates and
  // case collisions, its parents (created). Sets e.path; false for a directory named again.
  util::Result<bool> admit(const std::string& name, Entry& e, std::vector<std::string>& parts, const Extracted& out);
  util::Status make_dir(Entry& e);
  util::Status make_symlink(const std::string& name, const std::vector<std::string>& parts, Entry& e,
                            const std::optional<std::string>& target);
  util::Status ensure_parents(const std::vector<std::string>& parts, const std::string& name);
  util::Status write_file(struct archive* a, struct archive_entry* ae, const std::string& rel, Entry& e, std::size_t index);
  util::Status budget(std::uint64_t more, const std::string& rel, const char* how) const;
  bool resolves_inside(std::vector<std::string> dir, const std::string& target, int depth) const;

  fs::path m_into;
  const ExtractOptions& m_opts;
  bool m_list_only;
  std::map<std::string, Known> m_entries;     // exact path -> what it is
  std::map<std::string, std::string> m_keys;  // collision key -> exact path
  std::uint64_t m_bytes = 0, m_next_progress = 0;
  std::uint64_t m_linked = 0;   // bytes hardlinks repeat: counted against the bound, not written
  std::uint64_t m_claimed = 0;  // zip files admitted whose data a worker has still to write
  std::uint64_t m_files = 0;
  std::string m_last;
  std::unique_ptr<char[]> m_zero;
  FileWriter m_writer;
};

util::Status Extractor::budget(std::uint64_t more, const std::string& rel, const char* how) const {
  std::uint64_t used = m_bytes + m_linked + m_claimed;
  if (m_opts.max_total_bytes && (more > m_opts.max_total_bytes || used > m_opts.max_total_bytes - more))
    return too_big(m_opts.max_total_bytes, rel, how);
  return {};
}

util::Status Extractor::finish_hashes(Extracted& out) {
  SP_TRY_ASSIGN(auto done, m_writer.finish());
  std::map<std::string, crypto::Digest> by_path;
  for (std::size_t i = 0; i < out.entries.size(); ++i) {
    auto it = done.find(i);
    if (it != done.end()) {
      out.entries[i].sha256 = it->second;
      by_path[out.entries[i].path] = it->second;
    }
  }
  for (auto& e : out.entries)
    if (e.type == EntryType::hardlink && by_path.count(e.link)) e.sha256 = by_path[e.link];
  return {};
}

util::Status Extractor::ensure_parents(const std::vector<std::string>& parts, const std::string& name) {
  // Every directory claimed has had its own parents claimed before it, so a parent that is a
  // known directory vouches for the whole path above it: the common case costs one lookup.
  const std::string parent = parts.size() > 1 ? join_path({parts.begin(), parts.end() - 1}) : std::string();
  if (parts.size() > 1) {
    auto it = m_entries.find(parent);
    if (it != m_entries.end() && it->second.type == EntryType::dir) return {};
  }
  std::string prefix;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    prefix += (i ? "/" : "") + parts[i];
    auto it = m_entries.find(prefix);
    if (it != m_entries.end() && it->second.type != EntryType::dir)
      return detail::unsafe_entry(name, "its parent \"" + prefix + "\" is a " + to_string(it->second.type) +
                                            (it->second.type == EntryType::symlink ? " (writing through a link)" : ""));
    if (it == m_entries.end()) {
      // an implicit directory: claim it so that a later file or link of that name is a conflict
      auto key = collision_key(prefix, m_opts.rules);
      auto k = m_keys.find(key);
      if (k != m_keys.end() && k->second != prefix)
        return detail::unsafe_entry(name, "\"" + prefix + "\" and \"" + k->second + "\" are the same name on Windows");
      m_entries[prefix] = Known{EntryType::dir, {}};
      m_keys[key] = prefix;
    }
  }
  if (!m_list_only && parts.size() > 1) {
    fs::path dir = m_into;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      dir /= parts[i];
      if (auto made = util::io::make_directory(dir); !made) return made;
    }
  }
  return {};
}

util::Status Extractor::write_file(struct archive* a, struct archive_entry* ae, const std::string& rel, Entry& e, std::size_t index) {
  const bool declared = archive_entry_size_is_set(ae) != 0;
  const std::uint64_t declared_size = declared ? static_cast<std::uint64_t>(archive_entry_size(ae)) : 0;
  if (declared && archive_entry_size(ae) < 0)
    return Error(ErrorCode::invalid, "corrupt archive: \"" + util::printable(rel) + "\" declares a negative size");
  // the declared size (holes of a sparse file included) must fit before a byte is written
  if (declared) SP_TRY(budget(declared_size, rel, "stopped before"));
  const bool sparse = archive_entry_sparse_count(ae) > 0;

  Fd fd;
  fs::path p = m_into / fs::path(rel);
  if (!m_list_only) {
    fd.fd = util::io::create_new(p);
    if (fd.fd < 0) return Error(ErrorCode::io, "cannot create " + p.string() + ": " + util::os_error_text(errno));
  }
  // On an error before the descriptor is handed to the writer, the writer is drained first: it may
  // still hold blocks for this descriptor, which must not outlive it (its number could be reused).
  struct DrainOnError {
    FileWriter& writer;
    Fd& fd;
    ~DrainOnError() {
      if (fd.fd >= 0) (void)writer.finish();
    }
  } drain{m_writer, fd};
  auto writer_error = [&]() -> util::Status {
    auto done = m_writer.finish();
    return done ? Error(ErrorCode::io, "cannot write " + p.string()) : std::move(done).error();
  };
  std::uint64_t written = 0;
  // zeros for a hole: hashed like any other bytes, counted against the bound before they are queued
  auto zeros = [&](std::uint64_t hole) -> util::Status {
    SP_TRY(budget(hole, rel, "stopped in a hole of"));
    while (hole > 0) {
      if (!m_zero) m_zero.reset(new char[1 << 16]());
      std::size_t n = hole > (1u << 16) ? (1u << 16) : static_cast<std::size_t>(hole);
      if (!m_list_only && !m_writer.write(fd.fd, index, m_zero.get(), n)) return writer_error();
      hole -= n;
      written += n;
      m_bytes += n;
    }
    return {};
  };
  const void* buf = nullptr;
  size_t size = 0;
  la_int64_t offset = 0;
  while (true) {
    int r = archive_read_data_block(a, &buf, &size, &offset);
    if (r == ARCHIVE_EOF) break;
    // Any status but OK is a failure here, ARCHIVE_WARN included: it is how libarchive reports a
    // zip entry whose data fail their CRC-32 ("ZIP bad CRC"), i.e. corrupt bytes.
    if (r != ARCHIVE_OK) {
      std::string why = la_error(a);
      Error err(ErrorCode::invalid,
                "corrupt or truncated archive while reading \"" + util::printable(rel) + "\": " +
                    (why.empty() ? "the data end before the " + std::to_string(declared_size) + " bytes its header declares" : why));
      err.hints.push_back(
          "the archive matches its pin, so this is how it was made: repack it, or pin NVIDIA's original; nothing was staged");
      return err;
    }
    if (offset < 0 || static_cast<std::uint64_t>(offset) < written)
      return Error(ErrorCode::invalid, "corrupt archive: data of \"" + util::printable(rel) + "\" goes backwards");
    SP_TRY(zeros(static_cast<std::uint64_t>(offset) - written));
    SP_TRY(budget(size, rel, "stopped in"));
    if (declared && size > declared_size - std::min(written, declared_size))
      return Error(ErrorCode::invalid, "corrupt archive: \"" + util::printable(rel) + "\" holds more than the " +
                                           std::to_string(declared_size) + " bytes its header declares");
    if (!m_list_only && size > 0 && !m_writer.write(fd.fd, index, buf, size)) return writer_error();
    written += size;
    m_bytes += size;
    progress();
  }
  // a sparse file may end in a hole: its data blocks stop short of the declared size (GNU tar
  // writes such files; extracting them gives the full size)
  if (sparse && declared && written < declared_size) SP_TRY(zeros(declared_size - written));
  if (declared && declared_size != written)
    return Error(ErrorCode::invalid, "corrupt archive: \"" + util::printable(rel) + "\" declares " + std::to_string(declared_size) +
                                         " bytes but holds " + std::to_string(written));
  if (!m_list_only) {
    unsigned mode = staged_mode(static_cast<unsigned>(archive_entry_perm(ae)));
    m_writer.close(fd.fd, index, mode, p);  // the writer owns the descriptor from here
    fd.fd = -1;
    e.mode = mode;
  }
  e.size = written;
  return {};
}

// The entry's name (or link target) as UTF-8; nullopt when it is not valid UTF-8.
std::optional<std::string> utf8_of(const char* utf8, const char* raw) {
  if (!utf8 && !raw) return std::string();
  if (!utf8) return std::nullopt;  // libarchive could not convert it
  std::string s = utf8;
  if (!util::is_valid_utf8(s)) return std::nullopt;
  return s;
}

util::Result<bool> Extractor::admit(const std::string& name, Entry& e, std::vector<std::string>& parts, const Extracted& out) {
  m_last = name;
  if (out.entries.size() >= m_opts.max_entries)
    return Error(ErrorCode::unsafe, "the archive has more than " + std::to_string(m_opts.max_entries) + " entries");
  SP_TRY_ASSIGN(auto split, split_entry_path(name, m_opts.rules));
  parts = std::move(split);
  std::string rel = join_path(parts);
  e.path = rel;
  // duplicates and (on Windows) case collisions
  auto key = collision_key(rel, m_opts.rules);
  if (auto k = m_keys.find(key); k != m_keys.end()) {
    auto prev = m_entries.at(k->second);
    bool both_dirs = prev.type == EntryType::dir && e.type == EntryType::dir && k->second == rel;
    if (!both_dirs) {
      if (k->second == rel) return detail::unsafe_entry(name, "duplicate entry (the archive holds \"" + rel + "\" twice)");
      return detail::unsafe_entry(name, "\"" + rel + "\" and \"" + k->second + "\" are the same name on Windows");
    }
    return false;
  }
  SP_TRY(ensure_parents(parts, name));
  m_entries[rel] = Known{e.type, {}};
  m_keys[key] = rel;
  return true;
}

util::Status Extractor::make_dir(Entry& e) {
  e.mode = 0755;
  if (m_list_only) return {};
  return util::io::make_directory(m_into / fs::path(e.path));
}

util::Status Extractor::make_symlink(const std::string& name, const std::vector<std::string>& parts, Entry& e,
                                     const std::optional<std::string>& target) {
  if (m_opts.rules == NameRules::windows)
    return detail::unsafe_entry(name, "symbolic link in a tree for Windows (a copied Windows tree cannot hold it)");
  if (!target) return detail::unsafe_entry(name, "its link target is not valid UTF-8");
  e.link = *target;
  if (e.link.empty()) return detail::unsafe_entry(name, "symlink with an empty target");
  for (char c : e.link)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return detail::unsafe_entry(name, "control character in the link target");
  std::vector<std::string> dir(parts.begin(), parts.end() - 1);
  if (!resolve_link_lexically(dir, e.link))
    return detail::unsafe_entry(name, "symlink to \"" + util::printable(e.link) + "\" points outside the archive");
  m_entries[e.path].link = e.link;
  fs::path p = m_into / fs::path(e.path);
  if (!m_list_only) SP_TRY(util::io::make_symlink(e.link, p));
  e.mode = 0777;
  return {};
}

util::Status Extractor::entry(struct archive* a, struct archive_entry* ae, Extracted& out) {
  const char* raw = archive_entry_pathname(ae);
  auto decoded = utf8_of(archive_entry_pathname_utf8(ae), raw);
  if (!decoded)
    return detail::unsafe_entry(raw ? raw : "",
                                "its name is not valid UTF-8 (another code page?): a receipt cannot record it and it would name "
                                "a different file on another machine");
  std::string name = *decoded;

  Entry e;
  if (archive_entry_mtime_is_set(ae)) e.mtime = static_cast<std::int64_t>(archive_entry_mtime(ae));
  const char* hardlink = archive_entry_hardlink(ae);
  mode_t type = archive_entry_filetype(ae);
  m_last = name;
  if (hardlink)
    e.type = EntryType::hardlink;
  else if (type == AE_IFREG)
    e.type = EntryType::file;
  else if (type == AE_IFDIR)
    e.type = EntryType::dir;
  else if (type == AE_IFLNK)
    e.type = EntryType::symlink;
  else if (type == AE_IFCHR || type == AE_IFBLK)
    return detail::unsafe_entry(name, "device file");
  else if (type == AE_IFIFO)
    return detail::unsafe_entry(name, "FIFO (named pipe)");
  else if (type == AE_IFSOCK)
    return detail::unsafe_entry(name, "socket");
  else
    return detail::unsafe_entry(name, "unknown entry type");
  std::vector<std::string> parts;
  SP_TRY_ASSIGN(bool fresh, admit(name, e, parts, out));
  if (!fresh) return {};  // a directory the archive names twice
  const std::string rel = e.path;
  switch (e.type) {
    case EntryType::dir: SP_TRY(make_dir(e)); break;
    case EntryType::file:
      SP_TRY(write_file(a, ae, rel, e, out.entries.size()));
      ++m_files;
      break;
    case EntryType::symlink:
      SP_TRY(make_symlink(name, parts, e, utf8_of(archive_entry_symlink_utf8(ae), archive_entry_symlink(ae))));
      break;
    case EntryType::hardlink: {
      auto target_name = utf8_of(archive_entry_hardlink_utf8(ae), hardlink);
      if (!target_name) return detail::unsafe_entry(name, "its hardlink target is not valid UTF-8");
      auto target = split_entry_path(*target_name, m_opts.rules);
      if (!target)
        return detail::unsafe_entry(name, "hardlink to \"" + util::printable(*target_name) + "\" is not a path inside the archive");
      std::string t = join_path(*target);
      auto it = m_entries.find(t);
      if (it == m_entries.end() || it->second.type != EntryType::file)
        return detail::unsafe_entry(name, "hardlink to \"" + t + "\", which is not an earlier regular file of the archive");
      e.link = t;
      const Entry* src = nullptr;
      for (const auto& x : out.entries)
        if (x.path == t) src = &x;
      if (src) {
        SP_TRY(budget(src->size, rel, "stopped at the hardlink"));
        e.size = src->size;
        e.mode = src->mode;
        m_linked += src->size;  // a copy of the tree (to Windows, into a package) holds those bytes twice
      }
      fs::path p = m_into / fs::path(rel);
      if (!m_list_only) SP_TRY(util::io::make_hardlink(m_into / fs::path(t), p));
      ++m_files;
      break;
    }
  }
  out.entries.push_back(std::move(e));
  progress();
  return {};
}

util::Status Extractor::zip_entry(const detail::ZipEntry& z, const std::optional<std::string>& link, Extracted& out) {
  // the directory's parser has refused names that are neither flagged UTF-8 (and valid) nor ASCII
  std::string name = z.name;
  Entry e;
  e.mtime = z.mtime;
  e.type = z.is_symlink() ? EntryType::symlink : z.is_directory() ? EntryType::dir : EntryType::file;
  std::vector<std::string> parts;
  SP_TRY_ASSIGN(bool fresh, admit(name, e, parts, out));
  if (!fresh) return {};
  switch (e.type) {
    case EntryType::dir: SP_TRY(make_dir(e)); break;
    case EntryType::symlink: SP_TRY(make_symlink(name, parts, e, link && util::is_valid_utf8(*link) ? link : std::nullopt)); break;
    case EntryType::file:
      SP_TRY(budget(z.uncompressed, e.path, "stopped before"));
      e.mode = staged_mode(z.permissions());
      e.size = z.uncompressed;
      m_claimed += z.uncompressed;  // claimed now, written by a worker
      break;
    case EntryType::hardlink: break;  // zips have none
  }
  out.entries.push_back(std::move(e));
  return {};
}

bool Extractor::resolves_inside(std::vector<std::string> dir, const std::string& target, int depth) const {
  if (depth > 40) return false;  // a loop is as bad as an escape
  if (target.empty() || target.front() == '/') return false;
  for (auto& part : util::split(target, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (dir.empty()) return false;
      dir.pop_back();
      continue;
    }
    dir.push_back(part);
    auto it = m_entries.find(join_path(dir));
    if (it != m_entries.end() && it->second.type == EntryType::symlink) {
      dir.pop_back();
      std::vector<std::string> resolved = dir;
      if (!resolves_inside(resolved, it->second.link, depth + 1)) return false;
      auto r = resolve_link_lexically(resolved, it->second.link);
      if (!r) return false;
      dir = *r;
    }
  }
  return true;
}

util::Status Extractor::check_links(const Extracted& out) const {
  for (const auto& e : out.entries) {
    if (e.type != EntryType::symlink) continue;
    auto parts = util::split(e.path, '/');
    std::vector<std::string> dir(parts.begin(), parts.end() - 1);
    if (!resolves_inside(dir, e.link, 0))
      return detail::unsafe_entry(e.path,
                                  "symlink to \"" + util::printable(e.link) + "\" leaves the archive through another symlink (or loops)");
  }
  return {};
}

Error corrupt(const PinnedFile& f, const std::string& why) {
  Error e(ErrorCode::invalid, "corrupt or truncated archive " + f.path().string() + ": " + why);
  e.hints.push_back("the archive matches its pin, so this is how it was made: repack it, or pin NVIDIA's original; nothing was staged");
  return e;
}

// The header scan's refusal: an entry that tar readers read differently as it is (unsafe), a
// corrupt header as a corrupt archive.
Error scan_refusal(const PinnedFile& f, const Error& e) { return e.code == ErrorCode::invalid ? corrupt(f, e.message) : e; }

// Reads every entry of an opened libarchive handle, each checked against the header scan of the
// same bytes (`client`): libarchive must return the entries the scan found, in order, under the
// names the scan resolved.
util::Status read_entries(const PinnedFile& f, struct archive* a, Extractor& ex, Extracted& out, StreamClient& client) {
  const std::string* source_error = &client.error;
  struct archive_entry* ae = nullptr;
  while (true) {
    int r = archive_read_next_header(a, &ae);
    if (client.refused) return scan_refusal(f, *client.refused);
    if (r == ARCHIVE_EOF) {
      if (auto missed = client.scan.take_name())
        return detail::unsafe_entry(*missed, "libarchive ends the archive before this entry, which other tar readers read");
      break;
    }
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
      std::string why = source_error && !source_error->empty() ? *source_error : la_error(a);
      if (why.empty())
        why = out.entries.empty() ? std::string("no valid ") + to_string(f.kind()) + " header at the start"
                                  : "the " + std::string(to_string(f.kind())) + " stream is damaged after entry " +
                                        std::to_string(out.entries.size()) + " (\"" + util::printable(ex.last_name()) + "\")";
      return corrupt(f, why);
    }
    if (r == ARCHIVE_WARN) {
      // A name that is not UTF-8 comes back as a warning (on Windows, where names are decoded as
      // UTF-8 by the option set in read_stream, with an empty name), so the refusal is made from
      // the warning. Owners are not used: a warning about them is let pass. Any other warning is
      // libarchive reading past something it could not parse, where another tar reader may not.
      std::string warning = la_error(a);
      bool name = warning.rfind("Pathname", 0) == 0, link = warning.rfind("Linkname", 0) == 0;
      bool owner = warning.rfind("Uname", 0) == 0 || warning.rfind("Gname", 0) == 0;
      const std::string which = "unsafe archive entry " + std::to_string(out.entries.size() + 1) + " of " + f.path().string();
      if ((name || link) && warning.find("can't be converted") != std::string::npos)
        return Error(ErrorCode::unsafe, which + ": its " + (link ? "link target" : "name") +
                                            " is not valid UTF-8 (another code page?): a receipt cannot record it and it would "
                                            "name a different file on another machine");
      if (!owner) {
        Error err(ErrorCode::unsafe, which + ": libarchive reads its headers with the warning \"" + util::printable(warning) +
                                         "\"; other tar readers (GNU tar, in the image build) may read them differently");
        err.hints.push_back("the archive is not NVIDIA's original or was tampered with; nothing was staged");
        return err;
      }
    }
    // libarchive's name for the entry is the one the scan resolved (a name that is not UTF-8 is
    // refused by Extractor::entry)
    auto agreed = client.scan.take_name();
    auto named = utf8_of(archive_entry_pathname_utf8(ae), archive_entry_pathname(ae));
    if (!agreed)
      return detail::unsafe_entry(named ? *named : std::string(),
                                  "libarchive reads an entry here where the tar headers hold none for other tar readers");
    if (named && *named != *agreed)
      return detail::unsafe_entry(*named, "libarchive reads this name where other tar readers read \"" + util::printable(*agreed) + "\"");
    if (auto s = ex.entry(a, ae, out); !s) {
      if (client.refused) return scan_refusal(f, *client.refused);
      auto err = std::move(s).error();
      if (source_error && !source_error->empty() && err.code == ErrorCode::invalid) err.message += " (" + *source_error + ")";
      return err;
    }
  }
  return {};
}

// A zip's directory, read before anything is inflated (bounds, methods, names, which entries are
// symlinks), through the chunks sealed when the file was hashed.
util::Result<detail::ZipDirectory> zip_directory(const PinnedFile& f, detail::SealedReader& r, const ExtractOptions& opts) {
  util::Status read_error;
  auto dir = detail::read_zip_directory(f.size(), [&](std::uint64_t at, void* buf, std::size_t len) {
    auto st = r.read(at, buf, len);
    const bool ok = static_cast<bool>(st);
    if (!ok && read_error) read_error = std::move(st);
    return ok;
  });
  if (!read_error && read_error.error().code != ErrorCode::invalid) return std::move(read_error).error();  // changed since hashed, or io
  if (!dir) {
    auto e = std::move(dir).error();
    e.message = f.path().string() + ": " + e.message;
    return e;
  }
  if (dir->entries.size() > opts.max_entries)
    return Error(ErrorCode::unsafe, "the archive has more than " + std::to_string(opts.max_entries) + " entries (its directory lists " +
                                        std::to_string(dir->entries.size()) + ")");
  if (opts.max_total_bytes && dir->declared_bytes > opts.max_total_bytes) {
    Error err(ErrorCode::unsafe, "the archive expands past " + util::format_bytes(opts.max_total_bytes) + " (its directory declares " +
                                     util::format_bytes(dir->declared_bytes) + ")");
    err.hints.push_back("an archive bomb or the wrong file; raise the bound with --max-unpacked BYTES if this archive is genuine");
    return err;
  }
  return dir;
}

util::Error zip_bad(const detail::ZipEntry& z, const std::string& why) {
  return detail::zip_entry_error(
      z.name, why, "the archive matches its pin, so this is how it was made: repack it, or pin NVIDIA's original; nothing was staged");
}

// Inflates (or copies) zip entries' data out of the sealed file and checks them against the
// central directory (never more bytes than it declares, then the size and the CRC-32). One per
// thread: it holds a chunk of the file, an output block and a deflate state (about 2 MiB).
class ZipWorker {
 public:
  static constexpr std::size_t k_out = 1 << 20;
  explicit ZipWorker(const PinnedFile& f) : m_reader(f), m_out(new unsigned char[k_out]) {}
  using Sink = std::function<util::Status(const unsigned char*, std::size_t)>;

  // Every byte of the entry, in blocks, to `sink`. `stop` asks it to give up (it then returns an
  // internal error that nobody reports); `in_done` counts the archive bytes consumed.
  util::Status decode(const detail::ZipEntry& z, std::uint64_t data_at, const Sink& sink, const std::atomic<bool>* stop = nullptr,
                      std::atomic<std::uint64_t>* in_done = nullptr);

 private:
  detail::SealedReader m_reader;
  detail::Inflater m_inflater;
  std::unique_ptr<unsigned char[]> m_out;
};

Error cancelled() { return Error(ErrorCode::internal, "cancelled"); }
bool is_cancelled(const Error& e) { return e.code == ErrorCode::internal && e.message == "cancelled"; }

util::Status ZipWorker::decode(const detail::ZipEntry& z, std::uint64_t data_at, const Sink& sink, const std::atomic<bool>* stop,
                               std::atomic<std::uint64_t>* in_done) {
  std::uint64_t written = 0;
  std::uint32_t crc = 0;
  auto emit = [&](const unsigned char* p, std::size_t n) -> util::Status {
    if (n > z.uncompressed - written)
      return zip_bad(z, "inflates to more than the " + std::to_string(z.uncompressed) + " bytes its central directory declares");
    crc = detail::crc32_update(crc, p, n);
    written += n;
    return sink(p, n);
  };
  std::uint64_t at = data_at, remaining = z.compressed;
  // the next piece of the entry's compressed bytes, within one sealed chunk
  auto next_in = [&]() -> util::Result<std::pair<const unsigned char*, std::size_t>> {
    SP_TRY_ASSIGN(auto v, m_reader.view(at, static_cast<std::size_t>(std::min<std::uint64_t>(remaining, PinnedFile::k_seal_chunk))));
    at += v.second;
    remaining -= v.second;
    if (in_done) in_done->fetch_add(v.second, std::memory_order_relaxed);
    return std::pair<const unsigned char*, std::size_t>{reinterpret_cast<const unsigned char*>(v.first), v.second};
  };
  if (z.method == 0) {
    if (z.compressed != z.uncompressed)
      return zip_bad(z, "is stored uncompressed but declares " + std::to_string(z.compressed) + " bytes stored and " +
                            std::to_string(z.uncompressed) + " unpacked");
    while (remaining > 0) {
      if (stop && stop->load(std::memory_order_relaxed)) return cancelled();
      SP_TRY_ASSIGN(auto v, next_in());
      SP_TRY(emit(v.first, v.second));
    }
  } else {
    m_inflater.reset();
    const unsigned char* in = nullptr;
    std::size_t in_len = 0;
    bool end = false;
    while (!end) {
      if (stop && stop->load(std::memory_order_relaxed)) return cancelled();
      if (in_len == 0 && remaining > 0) {
        SP_TRY_ASSIGN(auto v, next_in());
        in = v.first;
        in_len = v.second;
      }
      std::size_t used = 0, produced = 0;
      if (!m_inflater.run(in, in_len, m_out.get(), k_out, used, produced, end))
        return zip_bad(z, "has corrupt deflate data (" + m_inflater.error() + ")");
      in += used;
      in_len -= used;
      if (produced) SP_TRY(emit(m_out.get(), produced));
      if (!end && !produced && !used)
        return zip_bad(z, in_len == 0 && remaining == 0 ? "has deflate data that stop before the end of the stream (truncated)"
                                                        : "has deflate data that make no progress");
    }
    if (in_len != 0 || remaining != 0 || m_inflater.read_ahead() != 0) return zip_bad(z, "has bytes after the end of its deflate stream");
  }
  if (written != z.uncompressed)
    return zip_bad(z, "holds " + std::to_string(written) + " bytes, its central directory says " + std::to_string(z.uncompressed));
  if (crc != z.crc32) return zip_bad(z, "fails its CRC-32 check (the data are damaged)");
  return {};
}

unsigned decode_threads(const ExtractOptions& opts) {
  unsigned hw = std::thread::hardware_concurrency();
  unsigned n = opts.decode_threads ? opts.decode_threads : (hw ? hw : 1);
  return std::min(n, 8u);
}

// A zip: its directory, every local header, then every entry checked and admitted in file order
// on this thread (names, types, bounds, directories and symlinks made), then the files' data
// inflated on several threads, the largest first, each straight into its own file.
util::Result<Extracted> run_zip(const PinnedFile& f, const fs::path& into, const ExtractOptions& opts) {
  if (!f.sealed()) return Error(ErrorCode::internal, f.path().string() + " was not sealed when it was hashed");
  detail::SealedReader reader(f);
  SP_TRY_ASSIGN(auto dir, zip_directory(f, reader, opts));
  std::vector<std::size_t> order(dir.entries.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return dir.entries[a].local_offset < dir.entries[b].local_offset; });
  auto located = detail::locate_zip_entries(dir, order, reader);
  if (!located) {
    auto e = std::move(located).error();
    if (e.code == ErrorCode::invalid) e.message = f.path().string() + ": " + e.message;
    return e;
  }
  const auto& data_at = *located;

  Extracted out;
  out.archive_sha256 = f.sha256();
  out.archive_size = f.size();
  Extractor ex(into, opts);
  ex.archive_total = f.size();
  std::atomic<std::uint64_t> in_done{0};
  ex.consumed = [&] { return in_done.load(std::memory_order_relaxed); };
  struct Job {
    std::size_t entry;  // in out.entries
    const detail::ZipEntry* z;
    std::uint64_t data_at;
  };
  std::vector<Job> jobs;
  ZipWorker first(f);
  for (std::size_t i : order) {
    const auto& z = dir.entries[i];
    std::optional<std::string> link;
    if (z.is_symlink()) {
      // a zip symlink's data are its target
      if (z.uncompressed > 4095) return detail::unsafe_entry(z.name, "symlink target longer than 4095 bytes");
      link.emplace();
      SP_TRY(first.decode(z, data_at[i], [&](const unsigned char* p, std::size_t n) -> util::Status {
        link->append(reinterpret_cast<const char*>(p), n);
        return {};
      }));
    }
    const std::size_t before = out.entries.size();
    SP_TRY(ex.zip_entry(z, link, out));
    if (out.entries.size() > before && out.entries.back().type == EntryType::file) jobs.push_back({before, &z, data_at[i]});
  }
  SP_TRY(ex.check_links(out));

  // the largest first, so that the threads finish together
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.z->compressed > b.z->compressed; });
  const bool list_only = into.empty();
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> files_done{0}, bytes_done{0};
  std::mutex error_mutex;
  std::optional<std::pair<std::size_t, Error>> first_error;  // the failing entry that comes first in the archive
  auto fail = [&](std::size_t entry, Error e) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!first_error || entry < first_error->first) first_error.emplace(entry, std::move(e));
    stop.store(true);
  };
  std::uint64_t reported = 0;
  auto work = [&](ZipWorker& w, bool reporter) {
    crypto::Sha256 w_hash;
    std::function<void(std::uint64_t)> tick;
    if (reporter && opts.progress)
      tick = [&](std::uint64_t) {
        std::uint64_t b = bytes_done.load(std::memory_order_relaxed);
        if (b < reported + (1u << 20)) return;
        reported = b;
        opts.progress(Progress{in_done.load(std::memory_order_relaxed), f.size(), files_done.load(std::memory_order_relaxed), b});
      };
    std::function<void(std::uint64_t)> count = [&](std::uint64_t n) {
      bytes_done.fetch_add(n, std::memory_order_relaxed);
      if (tick) tick(n);
    };
    while (!stop.load()) {
      std::size_t j = next.fetch_add(1);
      if (j >= jobs.size()) break;
      const Job& job = jobs[j];
      Entry& e = out.entries[job.entry];
      fs::path p = list_only ? fs::path() : into / fs::path(e.path);
      Fd fd;
      if (!list_only) {
        fd.fd = util::io::create_new(p);
        if (fd.fd < 0) {
          fail(job.entry, Error(ErrorCode::io, "cannot create " + p.string() + ": " + util::os_error_text(errno)));
          break;
        }
      }
      crypto::Sha256& hash = w_hash;
      std::uint64_t written = 0;
      auto st = w.decode(
          *job.z, job.data_at,
          [&](const unsigned char* b, std::size_t len) -> util::Status {
            if (fd.fd >= 0) {
              hash.update(b, len);
              for (std::size_t off = 0; off < len;) {
                std::int64_t r = util::io::write_some(fd.fd, b + off, len - off);
                if (r <= 0) return Error(ErrorCode::io, "cannot write " + p.string() + ": " + util::os_error_text(r < 0 ? errno : ENOSPC));
                off += static_cast<std::size_t>(r);
              }
            }
            written += len;
            count(len);
            return {};
          },
          &stop, &in_done);
      if (!st) {
        auto err = std::move(st).error();
        if (!is_cancelled(err)) fail(job.entry, std::move(err));
        break;
      }
      if (!list_only) {
        if (util::io::set_mode(fd.fd, e.mode) != 0) {
          fail(job.entry, Error(ErrorCode::io, "cannot set the mode of " + p.string() + ": " + util::os_error_text(errno)));
          break;
        }
        int rc = util::io::close(fd.fd);
        fd.fd = -1;
        if (rc != 0) {
          fail(job.entry, Error(ErrorCode::io, "cannot write " + p.string() + ": " + util::os_error_text(errno)));
          break;
        }
        e.sha256 = hash.finish();
      }
      e.size = written;
      files_done.fetch_add(1, std::memory_order_relaxed);
    }
  };
  const std::size_t n = std::min<std::size_t>(decode_threads(opts), std::max<std::size_t>(1, jobs.size()));
  {
    std::vector<std::unique_ptr<ZipWorker>> workers;
    std::vector<std::thread> threads;
    for (std::size_t t = 1; t < n; ++t) {
      workers.push_back(std::make_unique<ZipWorker>(f));
      threads.emplace_back(work, std::ref(*workers.back()), false);
    }
    work(first, true);
    for (auto& t : threads) t.join();
  }
  if (first_error) return std::move(first_error->second);
  ex.add_written(files_done.load(), bytes_done.load());
  SP_TRY(f.unchanged());
  out.bytes_written = ex.bytes();
  ex.progress(true);
  return out;
}

// A tar (plain, .gz or .xz): one pass in order, every chunk checked against its seal.
util::Result<Extracted> read_stream(const PinnedFile& f, detail::SealedStream& reader, const fs::path& into, const ExtractOptions& opts) {
  std::unique_ptr<detail::Decoder> decoder;
  if (f.kind() == ArchiveKind::tar_xz) decoder = std::make_unique<detail::XzDecoder>(reader, opts.decode_threads, opts.xz_memory);
  if (f.kind() == ArchiveKind::tar_gz) decoder = std::make_unique<detail::GzipDecoder>(reader);
  if (decoder && !decoder->ok()) return Error(ErrorCode::internal, decoder->error());
  StreamClient client;
  client.reader = &reader;
  client.decoder = decoder.get();
  std::unique_ptr<struct archive, ArchiveDeleter> a(archive_read_new());
  // one format, no filter: ustar, pax, GNU (sparse included) and v7 tar headers
  archive_read_support_format_tar(a.get());
#ifdef _WIN32
  // Names are read as UTF-8, as on Linux: libarchive would otherwise decode them in the ANSI code
  // page, where every byte string is some text, and a name that is not UTF-8 would pass as one.
  archive_read_set_format_option(a.get(), "tar", "hdrcharset", "UTF-8");
#endif
  if (archive_read_open(a.get(), &client, nullptr, stream_read, nullptr) != ARCHIVE_OK) {
    // (a first header that is no header is a file that is not a tar)
    if (client.refused && (client.refused->code != ErrorCode::invalid || client.scan.entries() > 0))
      return scan_refusal(f, *client.refused);
    std::string why = !client.error.empty() ? client.error : la_error(a.get());
    Error e(ErrorCode::invalid, f.path().string() + " is not a " + to_string(f.kind()) + " archive stackpin can read" +
                                    (why.empty() ? std::string() : ": " + why));
    e.hints.push_back("NVIDIA ships .zip for Windows and .tar.xz for Linux; the file matches its pin, so it was made this way");
    return e;
  }
  Extracted out;
  Extractor ex(into, opts);
  ex.consumed = [&] { return reader.bytes_consumed(); };
  ex.archive_total = f.size();
  SP_TRY(read_entries(f, a.get(), ex, out, client));
  SP_TRY(ex.check_links(out));
  SP_TRY(ex.finish_hashes(out));
  // Read the rest (tar padding; for xz/gz the end of the stream and its checks), so that every
  // byte of the file is checked against its seal, and every byte after the end of the archive
  // (zeros only) by the header scan.
  const void* rest = nullptr;
  la_ssize_t n = 0;
  while ((n = stream_read(a.get(), &client, &rest)) > 0) {
  }
  if (client.refused) return scan_refusal(f, *client.refused);
  if (n < 0) return corrupt(f, client.error);
  if (auto scanned = client.scan.finish(); !scanned) return scan_refusal(f, scanned.error());
  SP_TRY(reader.finish());
  out.archive_sha256 = f.sha256();  // every chunk decoded was the chunk hashed
  out.archive_size = f.size();
  SP_TRY(f.unchanged());
  out.bytes_written = ex.bytes();
  ex.progress(true);
  return out;
}

util::Result<Extracted> run_stream(const PinnedFile& f, const fs::path& into, const ExtractOptions& opts) {
  if (!f.sealed()) return Error(ErrorCode::internal, f.path().string() + " was not sealed when it was hashed");
  detail::SealedStream reader(f);
  auto out = read_stream(f, reader, into, opts);
  // a chunk that is not the one hashed ends the stream early: the decoder or libarchive then
  // reports a truncated archive, which is not what happened
  if (!out)
    if (auto why = reader.failure()) return *why;
  return out;
}

util::Result<Extracted> run(const PinnedFile& f, const fs::path& into, const ExtractOptions& opts) {
  detail::Utf8Locale utf8;
  if (f.fd() < 0) return Error(ErrorCode::internal, "extract() of a moved-from PinnedFile");
  SP_TRY(f.unchanged());
  if (f.kind() == ArchiveKind::zip) return run_zip(f, into, opts);
  return run_stream(f, into, opts);
}

}  // namespace

util::Result<Extracted> extract(const PinnedFile& archive, const fs::path& into, const ExtractOptions& options) {
  if (into.empty()) return Error(ErrorCode::internal, "extract() needs a destination directory");
  return run(archive, into, options);
}

util::Result<Extracted> list(const PinnedFile& archive, const ExtractOptions& options) { return run(archive, fs::path(), options); }

}  // namespace archive_io
