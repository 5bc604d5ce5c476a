// Safe extraction. The archive is read once through HashedReader (hash on one thread, decode on
// this one). Every entry is validated before anything is written: its name (paths.cpp), its
// type (regular files, directories, contained symlinks and hardlinks to earlier files only;
// devices and FIFOs are refused), duplicates and case collisions, and whether any parent on its
// path is a symlink or a file (writing "through" a link is how archives escape). Files are
// created with O_EXCL|O_NOFOLLOW inside a directory tree this code created, their data size is
// checked against the header, setuid/setgid/sticky bits are dropped, and totals are bounded.
// After the last entry every symlink is resolved through the other symlinks of the tree, because
// a link that is contained on its own ("d/s -> ..") can make another one escape ("l -> d/s/../x").
#include "archive/extract.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <locale.h>

#include <cerrno>
#include <cstring>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <system_error>

#include "source.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

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

using util::Error;
using util::ErrorCode;

struct ArchiveDeleter {
  void operator()(struct archive* a) const { archive_read_free(a); }
};

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// libarchive's view of the byte source: raw chunks, or decoded xz.
struct Client {
  detail::HashedReader* reader = nullptr;
  detail::XzDecoder* xz = nullptr;
  std::string error;
};

la_ssize_t read_cb(struct archive*, void* data, const void** buf) {
  auto* c = static_cast<Client*>(data);
  if (c->xz) {
    long n = c->xz->read(buf);
    if (n < 0) {
      c->error = c->xz->error();
      return -1;
    }
    return n;
  }
  auto [p, len] = c->reader->next();
  *buf = p;
  return static_cast<la_ssize_t>(len);
}

Error unsafe(const std::string& name, const std::string& why) {
  Error e(ErrorCode::unsafe, "unsafe archive entry \"" + name + "\": " + why);
  e.hints.push_back("the archive is not NVIDIA's original or was tampered with; nothing was staged");
  return e;
}

// Writes extracted data on a thread of its own and hashes it as it goes (the content hash each
// receipt entry needs), so that the extracting thread only parses and decompresses: on two cores
// that is the difference between beating `unzip` and Python's zipfile and not. Blocks are copied
// into recycled buffers (libarchive's are only valid until its next call), at most 8 MiB in flight.
class FileWriter {
 public:
  FileWriter() : m_thread([this] { run(); }) {}
  ~FileWriter() { (void)finish(); }
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  // Queues `size` bytes for `fd` (entry `index`). Returns false once writing has failed.
  bool write(int fd, std::size_t index, const void* data, std::size_t size) {
    std::unique_lock lock(m_mutex);
    m_cv.wait(lock, [&] { return m_in_flight < k_max_in_flight || !m_error.empty(); });
    if (!m_error.empty()) return false;
    std::vector<char> buf;
    if (!m_free.empty()) {
      buf = std::move(m_free.back());
      m_free.pop_back();
    }
    buf.assign(static_cast<const char*>(data), static_cast<const char*>(data) + size);
    m_in_flight += size;
    m_jobs.push_back(Job{fd, index, std::move(buf), false, 0, {}});
    m_cv.notify_all();
    return true;
  }
  // Queues the end of a file: its mode is set, it is closed and its digest kept. Takes the fd.
  void close(int fd, std::size_t index, unsigned mode, fs::path path) {
    std::lock_guard lock(m_mutex);
    m_jobs.push_back(Job{fd, index, {}, true, mode, std::move(path)});
    m_cv.notify_all();
  }
  bool failed() {
    std::lock_guard lock(m_mutex);
    return !m_error.empty();
  }
  // Waits for every queued job; returns index -> digest, or the first error.
  util::Result<std::map<std::size_t, crypto::Digest>> finish() {
    {
      std::lock_guard lock(m_mutex);
      m_closed = true;
      m_cv.notify_all();
    }
    if (m_thread.joinable()) m_thread.join();
    if (!m_error.empty()) return Error(ErrorCode::io, m_error);
    return m_done;
  }

 private:
  static constexpr std::size_t k_max_in_flight = 8u << 20;
  struct Job {
    int fd;
    std::size_t index;
    std::vector<char> data;
    bool close;
    unsigned mode;
    fs::path path;
  };
  void run() {
    crypto::Sha256 hash;
    while (true) {
      Job job;
      {
        std::unique_lock lock(m_mutex);
        m_cv.wait(lock, [&] { return m_closed || !m_jobs.empty(); });
        if (m_jobs.empty()) return;
        job = std::move(m_jobs.front());
        m_jobs.pop_front();
      }
      std::string error;
      if (job.close) {
        if (!failed() && ::fchmod(job.fd, job.mode) != 0) error = "cannot set mode of " + job.path.string() + ": " + util::os_error_text(errno);
        ::close(job.fd);
        crypto::Digest d = hash.finish();
        std::lock_guard lock(m_mutex);
        if (error.empty()) m_done[job.index] = d;
      } else {
        const char* q = job.data.data();
        std::size_t left = job.data.size();
        while (left > 0 && !failed()) {
          ssize_t n = ::write(job.fd, q, left);
          if (n < 0) {
            if (errno == EINTR) continue;
            error = "cannot write an extracted file: " + util::os_error_text(errno);
            break;
          }
          q += n;
          left -= static_cast<std::size_t>(n);
        }
        hash.update(job.data.data(), job.data.size());
      }
      std::lock_guard lock(m_mutex);
      if (!error.empty() && m_error.empty()) m_error = error;
      if (!job.close) {
        m_in_flight -= job.data.size();
        if (m_free.size() < 8) m_free.push_back(std::move(job.data));
      }
      m_cv.notify_all();
    }
  }

  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<Job> m_jobs;
  std::vector<std::vector<char>> m_free;
  std::size_t m_in_flight = 0;
  std::map<std::size_t, crypto::Digest> m_done;
  std::string m_error;
  bool m_closed = false;
  std::thread m_thread;
};

class Extractor {
 public:
  Extractor(const fs::path& into, const ExtractOptions& o) : m_into(into), m_opts(o), m_list_only(into.empty()) {}

  util::Status entry(struct archive* a, struct archive_entry* ae, Extracted& out);
  util::Status check_links(const Extracted& out) const;
  std::uint64_t bytes() const { return m_bytes; }

 private:
  struct Known {
    EntryType type;
    std::string link;
  };
  util::Status ensure_parents(const std::vector<std::string>& parts, const std::string& name);
  util::Status write_file(struct archive* a, struct archive_entry* ae, const std::string& rel, Entry& e, std::size_t index);
  bool resolves_inside(std::vector<std::string> dir, const std::string& target, int depth) const;

  fs::path m_into;
  const ExtractOptions& m_opts;
  bool m_list_only;
  std::map<std::string, Known> m_entries;       // exact path -> what it is
  std::map<std::string, std::string> m_keys;    // collision key -> exact path
  std::uint64_t m_bytes = 0, m_next_progress = 0;
  std::uint64_t m_files = 0;
  std::unique_ptr<char[]> m_zero;
  FileWriter m_writer;

 public:
  // Fills every file's (and hardlink's) content hash once the hashing thread is done.
  util::Status finish_hashes(Extracted& out) {
    auto done = m_writer.finish();
    if (!done) return std::move(done).error();
    std::map<std::string, crypto::Digest> by_path;
    for (std::size_t i = 0; i < out.entries.size(); ++i) {
      auto it = done->find(i);
      if (it != done->end()) {
        out.entries[i].sha256 = it->second;
        by_path[out.entries[i].path] = it->second;
      }
    }
    for (auto& e : out.entries)
      if (e.type == EntryType::hardlink && by_path.count(e.link)) e.sha256 = by_path[e.link];
    return {};
  }
  detail::HashedReader* reader = nullptr;
  std::uint64_t archive_total = 0;
  void progress(bool force = false) {
    if (!m_opts.progress || (!force && m_bytes < m_next_progress)) return;
    m_next_progress = m_bytes + (1u << 20);
    m_opts.progress(Progress{reader ? reader->bytes_consumed() : 0, archive_total, m_files, m_bytes});
  }
};

util::Status Extractor::ensure_parents(const std::vector<std::string>& parts, const std::string& name) {
  std::string prefix;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    prefix += (i ? "/" : "") + parts[i];
    auto it = m_entries.find(prefix);
    if (it != m_entries.end() && it->second.type != EntryType::dir)
      return unsafe(name, "its parent \"" + prefix + "\" is a " + to_string(it->second.type) +
                              (it->second.type == EntryType::symlink ? " (writing through a link)" : ""));
    if (it == m_entries.end()) {
      // an implicit directory: claim it so that a later file or link of that name is a conflict
      auto key = collision_key(prefix, m_opts.rules);
      auto k = m_keys.find(key);
      if (k != m_keys.end() && k->second != prefix)
        return unsafe(name, "\"" + prefix + "\" and \"" + k->second + "\" are the same name on Windows");
      m_entries[prefix] = Known{EntryType::dir, {}};
      m_keys[key] = prefix;
    }
  }
  if (!m_list_only && parts.size() > 1) {
    std::error_code ec;
    fs::path dir = m_into / fs::path(join_path({parts.begin(), parts.end() - 1}));
    fs::create_directories(dir, ec);
    if (ec) return Error(ErrorCode::io, "cannot create " + dir.string() + ": " + ec.message());
  }
  return {};
}

util::Status Extractor::write_file(struct archive* a, struct archive_entry* ae, const std::string& rel, Entry& e,
                                   std::size_t index) {
  Fd fd;
  fs::path p = m_into / fs::path(rel);
  if (!m_list_only) {
    fd.fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
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
  const void* buf = nullptr;
  size_t size = 0;
  la_int64_t offset = 0;
  while (true) {
    int r = archive_read_data_block(a, &buf, &size, &offset);
    if (r == ARCHIVE_EOF) break;
    // Any status but OK is a failure here, ARCHIVE_WARN included: it is how libarchive reports a
    // zip entry whose data fail their CRC-32 ("ZIP bad CRC"), i.e. corrupt bytes.
    if (r != ARCHIVE_OK) {
      Error err(ErrorCode::invalid, "corrupt or truncated archive while reading \"" + rel + "\": " +
                                        (archive_error_string(a) ? archive_error_string(a) : "unknown error"));
      err.hints.push_back("download the archive again; nothing was staged");
      return err;
    }
    if (offset < 0 || static_cast<std::uint64_t>(offset) < written)
      return Error(ErrorCode::invalid, "corrupt archive: data of \"" + rel + "\" goes backwards");
    // sparse entries: zeros for the hole, hashed like any other bytes
    std::uint64_t hole = static_cast<std::uint64_t>(offset) - written;
    while (hole > 0) {
      if (!m_zero) m_zero.reset(new char[1 << 16]());
      std::size_t n = hole > (1u << 16) ? (1u << 16) : static_cast<std::size_t>(hole);
      if (!m_list_only && !m_writer.write(fd.fd, index, m_zero.get(), n)) return writer_error();
      hole -= n;
      written += n;
      m_bytes += n;
    }
    if (!m_list_only && size > 0 && !m_writer.write(fd.fd, index, buf, size)) return writer_error();
    written += size;
    m_bytes += size;
    if (m_opts.max_total_bytes && m_bytes > m_opts.max_total_bytes) {
      Error err(ErrorCode::unsafe, "the archive expands past " + util::format_bytes(m_opts.max_total_bytes) +
                                       " (stopped in \"" + rel + "\")");
      err.hints.push_back("an archive bomb or the wrong file; raise the bound with --max-unpacked BYTES if this archive is genuine");
      return err;
    }
    progress();
  }
  if (archive_entry_size_is_set(ae) && static_cast<std::uint64_t>(archive_entry_size(ae)) != written)
    return Error(ErrorCode::invalid, "corrupt archive: \"" + rel + "\" declares " + std::to_string(archive_entry_size(ae)) +
                                         " bytes but holds " + std::to_string(written));
  if (!m_list_only) {
    unsigned mode = static_cast<unsigned>(archive_entry_perm(ae)) & 0777u;
    m_writer.close(fd.fd, index, mode, p);  // the writer owns the descriptor from here
    fd.fd = -1;
    e.mode = mode;
  }
  e.size = written;
  return {};
}

util::Status Extractor::entry(struct archive* a, struct archive_entry* ae, Extracted& out) {
  const char* raw = archive_entry_pathname_utf8(ae);
  if (!raw) raw = archive_entry_pathname(ae);
  std::string name = raw ? raw : "";
  if (out.entries.size() >= m_opts.max_entries)
    return Error(ErrorCode::unsafe, "the archive has more than " + std::to_string(m_opts.max_entries) + " entries");
  auto parts = split_entry_path(name, m_opts.rules);
  if (!parts) return std::move(parts).error();
  std::string rel = join_path(*parts);

  Entry e;
  e.path = rel;
  if (archive_entry_mtime_is_set(ae)) e.mtime = static_cast<std::int64_t>(archive_entry_mtime(ae));
  const char* hardlink = archive_entry_hardlink(ae);
  mode_t type = archive_entry_filetype(ae);
  if (hardlink) e.type = EntryType::hardlink;
  else if (type == AE_IFREG) e.type = EntryType::file;
  else if (type == AE_IFDIR) e.type = EntryType::dir;
  else if (type == AE_IFLNK) e.type = EntryType::symlink;
  else if (type == AE_IFCHR || type == AE_IFBLK) return unsafe(name, "device file");
  else if (type == AE_IFIFO) return unsafe(name, "FIFO (named pipe)");
  else if (type == AE_IFSOCK) return unsafe(name, "socket");
  else return unsafe(name, "unknown entry type");

  // duplicates and (on Windows) case collisions
  auto key = collision_key(rel, m_opts.rules);
  if (auto k = m_keys.find(key); k != m_keys.end()) {
    auto prev = m_entries.at(k->second);
    bool both_dirs = prev.type == EntryType::dir && e.type == EntryType::dir && k->second == rel;
    if (!both_dirs) {
      if (k->second == rel) return unsafe(name, "duplicate entry (the archive holds \"" + rel + "\" twice)");
      return unsafe(name, "\"" + rel + "\" and \"" + k->second + "\" are the same name on Windows");
    }
    return {};
  }
  if (auto st = ensure_parents(*parts, name); !st) return st;
  m_entries[rel] = Known{e.type, {}};
  m_keys[key] = rel;

  std::error_code ec;
  fs::path p = m_into / fs::path(rel);
  switch (e.type) {
    case EntryType::dir:
      e.mode = 0755;
      if (!m_list_only) {
        fs::create_directory(p, ec);
        if (ec) return Error(ErrorCode::io, "cannot create " + p.string() + ": " + ec.message());
      }
      break;
    case EntryType::file:
      if (auto st = write_file(a, ae, rel, e, out.entries.size()); !st) return st;
      ++m_files;
      break;
    case EntryType::symlink: {
      if (m_opts.rules == NameRules::windows)
        return unsafe(name, "symbolic link in a tree for Windows (a copied Windows tree cannot hold it)");
      const char* t = archive_entry_symlink_utf8(ae);
      if (!t) t = archive_entry_symlink(ae);
      e.link = t ? t : "";
      std::vector<std::string> dir(parts->begin(), parts->end() - 1);
      if (!resolve_link_lexically(dir, e.link)) return unsafe(name, "symlink to \"" + e.link + "\" points outside the archive");
      m_entries[rel].link = e.link;
      if (!m_list_only && ::symlink(e.link.c_str(), p.c_str()) != 0)
        return Error(ErrorCode::io, "cannot create symlink " + p.string() + ": " + util::os_error_text(errno));
      e.mode = 0777;
      break;
    }
    case EntryType::hardlink: {
      auto target = split_entry_path(hardlink, m_opts.rules);
      if (!target) return unsafe(name, "hardlink to \"" + std::string(hardlink) + "\" is not a path inside the archive");
      std::string t = join_path(*target);
      auto it = m_entries.find(t);
      if (it == m_entries.end() || it->second.type != EntryType::file)
        return unsafe(name, "hardlink to \"" + t + "\", which is not an earlier regular file of the archive");
      e.link = t;
      const Entry* src = nullptr;
      for (const auto& x : out.entries)
        if (x.path == t) src = &x;
      if (src) {
        e.size = src->size;
        e.mode = src->mode;
      }
      if (!m_list_only && ::link((m_into / fs::path(t)).c_str(), p.c_str()) != 0)
        return Error(ErrorCode::io, "cannot create hardlink " + p.string() + ": " + util::os_error_text(errno));
      ++m_files;
      break;
    }
  }
  out.entries.push_back(std::move(e));
  progress();
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
      return unsafe(e.path, "symlink to \"" + e.link + "\" leaves the archive through another symlink (or loops)");
  }
  return {};
}

// libarchive converts entry names through the current locale; under the C locale it cannot
// decode UTF-8 names (zip entries flagged UTF-8 come back empty). Read under C.UTF-8 on this
// thread only.
class Utf8Locale {
 public:
  Utf8Locale() {
    m_loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
    if (m_loc) m_old = uselocale(m_loc);
  }
  ~Utf8Locale() {
    if (m_loc) {
      uselocale(m_old);
      freelocale(m_loc);
    }
  }

 private:
  locale_t m_loc{}, m_old{};
};

util::Result<Extracted> run(const fs::path& archive_file, const fs::path& into, const ExtractOptions& opts) {
  Utf8Locale utf8;
  Fd fd;
  fd.fd = ::open(archive_file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd.fd < 0) {
    int e = errno;
    return Error(e == ENOENT ? ErrorCode::not_found : ErrorCode::io,
                 "cannot open archive " + archive_file.string() + ": " + util::os_error_text(e));
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0 || !S_ISREG(st.st_mode))
    return Error(ErrorCode::io, archive_file.string() + " is not a regular file");
  auto file_size = static_cast<std::uint64_t>(st.st_size);
  if (opts.expected_size && *opts.expected_size != file_size) {
    Error e(ErrorCode::mismatch, "size mismatch for " + archive_file.string() + ": expected " +
                                     std::to_string(*opts.expected_size) + " bytes, the file has " + std::to_string(file_size));
    e.hints.push_back("the download is incomplete or it is another file; nothing was staged");
    return e;
  }
  unsigned char magic[6] = {};
  bool is_xz = ::pread(fd.fd, magic, 6, 0) == 6 && std::memcmp(magic, "\xFD" "7zXZ\0", 6) == 0;

  detail::HashedReader reader(fd.fd);
  std::unique_ptr<detail::XzDecoder> xz;
  if (is_xz) {
    xz = std::make_unique<detail::XzDecoder>(reader);
    if (!xz->ok()) return Error(ErrorCode::internal, xz->error());
  }
  Client client{&reader, xz.get(), {}};
  std::unique_ptr<struct archive, ArchiveDeleter> a(archive_read_new());
  archive_read_support_format_all(a.get());
  archive_read_support_filter_all(a.get());
  if (archive_read_open(a.get(), &client, nullptr, read_cb, nullptr) != ARCHIVE_OK) {
    Error e(ErrorCode::invalid, archive_file.string() + " is not an archive stackpin can read: " +
                                    (client.error.empty() ? std::string(archive_error_string(a.get()) ? archive_error_string(a.get()) : "unknown format")
                                                          : client.error));
    e.hints.push_back("NVIDIA ships .zip for Windows and .tar.xz for Linux; check that the download completed");
    return e;
  }
  Extracted out;
  Extractor ex(into, opts);
  ex.reader = &reader;
  ex.archive_total = file_size;
  struct archive_entry* ae = nullptr;
  while (true) {
    int r = archive_read_next_header(a.get(), &ae);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
      std::string why = !client.error.empty() ? client.error
                                              : (archive_error_string(a.get()) ? archive_error_string(a.get()) : "unknown error");
      Error e(ErrorCode::invalid, "corrupt or truncated archive " + archive_file.string() + ": " + why);
      e.hints.push_back("download the archive again; nothing was staged");
      return e;
    }
    if (auto s = ex.entry(a.get(), ae, out); !s) {
      auto err = std::move(s).error();
      if (!client.error.empty() && err.code == ErrorCode::invalid) err.message += " (" + client.error + ")";
      return err;
    }
  }
  if (auto s = ex.check_links(out); !s) return std::move(s).error();
  if (auto s = ex.finish_hashes(out); !s) return std::move(s).error();
  // Read the rest (zip central directory, tar padding; for xz the end of the stream and its
  // checks), so that the hash covers every byte of the file.
  if (xz) {
    const void* buf = nullptr;
    long n = 0;
    while ((n = xz->read(&buf)) > 0) {
    }
    if (n < 0) return Error(ErrorCode::invalid, "corrupt or truncated archive " + archive_file.string() + ": " + xz->error());
  }
  std::string read_error;
  if (!reader.finish(out.archive_sha256, out.archive_size, read_error))
    return Error(ErrorCode::io, "cannot read " + archive_file.string() + ": " + read_error);
  if (out.archive_size != file_size)
    return Error(ErrorCode::conflict, archive_file.string() + " changed while it was read (" + std::to_string(file_size) +
                                          " bytes before, " + std::to_string(out.archive_size) + " read)");
  out.bytes_written = ex.bytes();
  ex.progress(true);
  return out;
}

}  // namespace

util::Result<Extracted> extract(const fs::path& archive_file, const fs::path& into, const ExtractOptions& options) {
  if (into.empty()) return Error(ErrorCode::internal, "extract() needs a destination directory");
  return run(archive_file, into, options);
}

util::Result<Extracted> list(const fs::path& archive_file, const ExtractOptions& options) {
  return run(archive_file, fs::path(), options);
}

}  // namespace archive_io
