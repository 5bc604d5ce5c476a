// Downloading one archive into the cache.
//
// Why it works this way: the cache must never hold a file that is not the pinned one, and an
// interrupted download should cost only the bytes not yet received. So bytes go to
// CACHE/partial/<sha256>.part and are hashed as they arrive; the file is renamed into
// CACHE/sha256/<sha256>/ only after its size and SHA-256 matched, and after fsync, so a crash
// leaves either no entry or a complete one. A partial is resumed (its bytes re-hashed, the rest
// requested with a Range header) from whichever URL comes next: the pinned hash decides, and bytes
// that do not hash right, or a range the server refuses, are fetched once more from byte zero
// before the server is blamed. A server that answers a range request with the whole file (200
// instead of 206) is followed from byte zero. Arriving bytes past the pinned size are refused at
// once (a mirror serving another file must not fill the disk), and free space is checked before
// the first byte is written. Transient failures (see net::Attempt) are retried with exponential
// backoff, each retry resuming from the bytes already received; permanent ones move on to the
// next URL (mirror). Hashing and writing run on a second thread, so that they overlap with
// receiving: on a fast link they cost as much as the transfer itself.
#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

#include "core/archives/cache.hpp"
#include "crypto/sha256.hpp"
#include "archives/fetch_transfer.hpp"
#include "net/download.hpp"
#include "util/file_lock.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core::detail {
namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

namespace {

// The partial file being written, with the hash of the bytes it holds. Appended bytes are
// gathered into 1 MiB blocks that a worker thread hashes and writes, at most four blocks behind.
class Partial {
 public:
  explicit Partial(fs::path path) : m_path(std::move(path)) {}
  ~Partial() { close(); }
  Partial(const Partial&) = delete;
  Partial& operator=(const Partial&) = delete;

  // Opens the partial keeping (and re-hashing) its bytes when `keep`, else empty. Errors: io.
  util::Status open(bool keep) {
    close();
    m_hash = crypto::Sha256();
    m_size = 0;
    m_unsynced = 0;
    m_error = 0;
    if (keep) {
      errno = 0;
      std::FILE* in = std::fopen(m_path.string().c_str(), "rb");
      if (!in && errno != ENOENT)  // appending to bytes that were not hashed would corrupt the download
        return Error(ErrorCode::io, "cannot read the partial download " + m_path.string() + ": " + util::os_error_text(errno));
      if (in) {
        std::vector<char> buf(1 << 20);
        std::size_t n;
        while ((n = std::fread(buf.data(), 1, buf.size(), in)) > 0) {
          m_hash.update(buf.data(), n);
          m_size += n;
        }
        int err = std::ferror(in) ? (errno ? errno : EIO) : 0;
        std::fclose(in);
        if (err) return Error(ErrorCode::io, "cannot read the partial download " + m_path.string() + ": " + util::os_error_text(err));
      }
    }
    m_file = std::fopen(m_path.string().c_str(), keep ? "ab" : "wb");
    if (!m_file) return Error(ErrorCode::io, "cannot write " + m_path.string() + ": " + util::os_error_text(errno));
    // the file must end where the hashed bytes end, or the next byte would go to the wrong place
    std::error_code ec;
    if (fs::file_size(m_path, ec) != m_size || ec) {
      std::fclose(m_file);
      m_file = nullptr;
      return Error(ErrorCode::io, m_path.string() + " changed while it was being read").with_hint("run stackpin fetch again");
    }
    std::setvbuf(m_file, nullptr, _IOFBF, 1 << 20);
    m_stop = false;
    try {
      m_worker = std::thread([this] { work(); });
    } catch (const std::system_error& e) {
      std::fclose(m_file);
      m_file = nullptr;
      return Error(ErrorCode::io, std::string("cannot start the download's writer thread: ") + e.what());
    }
    return {};
  }

  // Appends bytes; returns the errno of a failed write (this one or an earlier block's), 0 otherwise.
  int append(const char* data, std::size_t n) noexcept {
    if (int e = error()) return e;
    try {  // runs inside libcurl's callback: nothing may be thrown through it
      while (n > 0) {
        if (m_block.capacity() < k_block) m_block.reserve(k_block);
        std::size_t take = std::min(n, k_block - m_block.size());
        m_block.insert(m_block.end(), data, data + take);
        m_size += take;
        data += take;
        n -= take;
        if (m_block.size() == k_block) hand_over();
      }
    } catch (const std::bad_alloc&) {
      return ENOMEM;
    }
    return error();
  }

  // Writes what is pending and closes the file; returns the errno of a failed write or close, 0
  // on success.
  int close() {
    if (!m_file) return 0;
    if (!m_block.empty()) hand_over();
    {
      std::lock_guard<std::mutex> l(m_mutex);
      m_stop = true;
    }
    m_wake.notify_all();
    if (m_worker.joinable()) m_worker.join();
    int rc = std::fclose(m_file);
    int err = errno;
    m_file = nullptr;
    if (int e = error()) return e;
    return rc == 0 ? 0 : (err ? err : EIO);
  }

  std::uint64_t size() const { return m_size; }
  // The hash of every byte appended (after close()).
  std::string finish_hex() { return crypto::to_hex(m_hash.finish()); }

 private:
  static constexpr std::size_t k_block = 1u << 20;
  static constexpr std::size_t k_queue = 4;

  int error() noexcept {
    std::lock_guard<std::mutex> l(m_mutex);
    return m_error;
  }

  void hand_over() {
    std::unique_lock<std::mutex> l(m_mutex);
    m_room.wait(l, [this] { return m_queue.size() < k_queue || m_error; });
    if (m_error) {
      m_block.clear();
      return;
    }
    m_queue.push_back(std::move(m_block));
    m_block = std::vector<char>();
    l.unlock();
    m_wake.notify_one();
  }

  void work() {
    for (;;) {
      std::vector<char> block;
      {
        std::unique_lock<std::mutex> l(m_mutex);
        m_wake.wait(l, [this] { return !m_queue.empty() || m_stop; });
        if (m_queue.empty()) return;  // stopped, and everything written
        block = std::move(m_queue.front());
        m_queue.pop_front();
      }
      m_room.notify_one();
      int e = 0;
      errno = 0;
      if (std::fwrite(block.data(), 1, block.size(), m_file) != block.size()) e = errno ? errno : EIO;
      m_hash.update(block.data(), block.size());
      // every 32 MiB, start writing to disk: the fsync before the rename then has little left
      if (!e && (m_unsynced += block.size()) >= (32u << 20)) {
        m_unsynced = 0;
        e = util::start_writeback(m_file);
      }
      if (e) {
        std::lock_guard<std::mutex> l(m_mutex);
        if (!m_error) m_error = e;
        m_queue.clear();
        m_room.notify_all();
      }
    }
  }

  fs::path m_path;
  std::FILE* m_file = nullptr;
  crypto::Sha256 m_hash;      // the worker's while the file is open
  std::uint64_t m_size = 0;   // bytes appended (written or queued)
  std::uint64_t m_unsynced = 0;
  std::vector<char> m_block;  // being filled
  std::deque<std::vector<char>> m_queue;
  std::mutex m_mutex;
  std::condition_variable m_wake, m_room;
  bool m_stop = false;
  int m_error = 0;
  std::thread m_worker;
};

std::optional<std::uint64_t> free_space(const fs::path& dir) {
  fs::path p = dir;
  std::error_code ec;
  while (!p.empty() && !fs::exists(p, ec)) {
    if (p == p.parent_path()) break;
    p = p.parent_path();
  }
  auto info = fs::space(p.empty() ? fs::path(".") : p, ec);
  if (ec) return std::nullopt;
  return info.available;
}

void remove_partial(const fs::path& part, const fs::path& sidecar) {
  std::error_code ec;
  fs::remove(part, ec);
  fs::remove(sidecar, ec);
}

Error disk_full(const fs::path& cache, const fs::path& part, int err, const TransferJob& job) {
  bool full = err == ENOSPC
#ifdef EDQUOT
              || err == EDQUOT
#endif
      ;
  return Error(ErrorCode::io, (full ? "disk full while downloading " : "cannot write the download of ") + job.file + " to " +
                                  part.string() + ": " + util::os_error_text(err) + "; the partial download was removed")
      .with_hint("free space or choose another cache with --cache-dir DIR (" + util::format_bytes(job.size) + " needed)")
      .with_context("downloading into " + cache.string());
}

Error mismatch(const std::string& url, const TransferJob& job, const std::string& what) {
  return Error(ErrorCode::mismatch, "the download of " + url + " is not the pinned " + job.file + ": " + what +
                                        "; the partial download was removed")
      .with_hint("the server (or a mirror) serves another file under this name, or a proxy rewrote the response")
      .with_hint("use --mirror URL with a trusted copy of NVIDIA's tree, or check the manifest's sha256 and size");
}

}  // namespace

util::Status transfer_archive(const TransferJob& job, const FetchOptions& o, model::FetchedArchive& out) {
  const fs::path cache = o.cache_dir;
  const fs::path part = partial_path(cache, job.sha256), sidecar = partial_url_path(cache, job.sha256);
  const fs::path final_path = cache_entry_path(cache, job.sha256, job.file);
  std::error_code ec;

  // Space first, before anything is created: what is missing from a partial we may resume.
  std::uint64_t have = 0;
  if (fs::is_regular_file(part, ec)) {
    have = fs::file_size(part, ec);
    if (ec) have = 0;
  }
  std::uint64_t needed = job.size > have ? job.size - have : 0;
  if (auto avail = free_space(cache); avail && *avail < needed)
    return Error(ErrorCode::io, "not enough free space in " + cache.string() + " to download " + job.file + ": needs " +
                                    util::format_bytes(needed) + " (" + std::to_string(needed) + " bytes), " +
                                    util::format_bytes(*avail) + " free")
        .with_hint("free space there, or choose another cache with --cache-dir DIR (or STACKPIN_CACHE_DIR)");

  for (const fs::path& d : {part.parent_path(), final_path.parent_path()}) {
    fs::create_directories(d, ec);
    if (ec) return Error(ErrorCode::io, "cannot create " + d.string() + ": " + ec.message()).with_hint("choose another cache with --cache-dir DIR");
  }
  // Two runs fetching the same archive into one cache take turns.
  SP_TRY_ASSIGN(auto lock, util::FileLock::acquire(cache / "partial" / (job.sha256 + ".lock")));
  if (auto done = find_in_cache(cache, ArchiveExpectation{job.platform, job.file, job.sha256, job.size})) {
    out.status = model::FetchStatus::cached;
    out.path = done->string();
    return {};
  }

  std::function<void(std::chrono::milliseconds)> sleep = o.sleep;
  if (!sleep) sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  Partial file(part);
  std::optional<Error> last;
  // A partial download is resumed from whichever URL comes next: the pinned SHA-256 decides in
  // the end, and bytes that do not hash right are fetched once more from byte zero.
  bool fresh_done = false;  // a resumed partial was already dropped and fetched again from zero
  for (std::size_t u = 0; u < job.urls.size(); ++u) {
    const std::string& url = job.urls[u];
    out.url = url;
    if (out.tried.empty() || out.tried.back() != url) out.tried.push_back(url);
    SP_TRY(file.open(fs::is_regular_file(part, ec)));
    if (file.size() > job.size) {
      SP_TRY(file.open(false));
    }
    SP_TRY(util::write_file_atomic(sidecar, url + "\n"));
    bool resumed = file.size() > 0;  // bytes kept from an earlier run or URL
    const bool had_bytes = resumed;
    std::chrono::milliseconds delay = std::min<std::chrono::milliseconds>(o.retry_delay, std::chrono::seconds(30));
    std::optional<Error> sink_error;
    bool next_url = false;

    for (int retry = 0; !next_url; ++retry) {
      if (file.size() == job.size) break;  // everything is here already
      ++out.attempts;
      enum class Stop { none, too_many, write_failed } stop = Stop::none;
      int write_errno = 0;
      net::Request req;
      req.url = url;
      req.offset = file.size();
      req.connect_timeout_s = o.connect_timeout_s;
      req.stall_timeout_s = o.stall_timeout_s;
      req.user_agent = o.user_agent;
      req.proxy = proxy_for(url, o.env);
      if (o.env) req.no_proxy = o.env->get("no_proxy").value_or(o.env->get("NO_PROXY").value_or(""));
      net::Sink sink;
      sink.start = [&](const net::Response& head) {
        if (req.offset > 0 && !head.range_honoured) {  // the whole file again: start over
          resumed = false;
          if (auto st = file.open(false); !st) {
            sink_error = st.error();
            return false;
          }
        } else if (req.offset > 0) {
          resumed = true;
        }
        return true;
      };
      sink.data = [&](const char* data, std::size_t n) {
        if (file.size() + n > job.size) {
          stop = Stop::too_many;
          return false;
        }
        if ((write_errno = file.append(data, n)) != 0) {
          stop = Stop::write_failed;
          return false;
        }
        out.bytes_downloaded += n;
        if (o.progress) o.progress({job.platform, job.file, file.size(), job.size});
        return true;
      };
      auto a = net::attempt(req, sink);
      if (sink_error) return std::move(*sink_error);
      if (stop == Stop::write_failed) {
        file.close();
        remove_partial(part, sidecar);
        return disk_full(cache, part, write_errno, job);
      }
      if (stop == Stop::too_many) {
        file.close();
        remove_partial(part, sidecar);
        last = mismatch(url, job, "the server sent more than the pinned " + std::to_string(job.size) + " bytes");
        next_url = true;
        break;
      }
      if (!a.error) {
        if (file.size() < job.size) {
          file.close();
          remove_partial(part, sidecar);
          last = mismatch(url, job, "the server sent " + std::to_string(file.size()) + " bytes, the pin says " +
                                        std::to_string(job.size));
          next_url = true;
        }
        break;
      }
      last = *a.error;
      if (!a.transient && req.offset > 0 && !fresh_done && a.error->code != ErrorCode::not_found) {
        // a range the server refuses (416: the partial is longer than its file, or another file
        // now): the partial cannot be completed, so drop it and ask for the whole file once
        fresh_done = true;
        resumed = false;
        SP_TRY(file.open(false));
        continue;
      }
      if (!a.transient) {
        next_url = true;
        break;
      }
      if (retry >= o.retries) {
        last->message += " (gave up after " + std::to_string(retry + 1) + " attempts)";
        last->hints.push_back("run `stackpin fetch` again to resume from the " + std::to_string(file.size()) +
                              " bytes already downloaded, or raise --retries");
        next_url = true;
        break;
      }
      sleep(delay);
      delay = std::min<std::chrono::milliseconds>(delay * 2, std::chrono::seconds(30));
    }
    if (next_url) continue;

    // All bytes are here: the hash decides.
    if (int e = file.close(); e != 0) {
      remove_partial(part, sidecar);
      return disk_full(cache, part, e, job);
    }
    std::string actual = file.finish_hex();
    if (actual != job.sha256) {
      remove_partial(part, sidecar);
      if (had_bytes && !fresh_done) {
        // the bytes kept from before may be the wrong ones (a corrupt partial, another server's
        // file): fetch this URL once more from byte zero before blaming the server
        fresh_done = true;
        --u;
        continue;
      }
      last = mismatch(url, job, "expected sha256 " + job.sha256 + ", got " + actual);
      continue;
    }
    SP_TRY(util::sync_file(part));
    fs::rename(part, final_path, ec);
    if (ec) return Error(ErrorCode::io, "cannot move " + part.string() + " to " + final_path.string() + ": " + ec.message());
    util::sync_directory(final_path.parent_path());
    fs::remove(sidecar, ec);
    out.status = resumed ? model::FetchStatus::resumed : model::FetchStatus::downloaded;
    out.path = final_path.string();
    return {};
  }
  // Keep a partial worth resuming; an empty one (a refused request) is not.
  file.close();
  if (!fs::is_regular_file(part, ec) || fs::file_size(part, ec) == 0) remove_partial(part, sidecar);
  if (!last) last = Error(ErrorCode::invalid, "no URL to download " + job.file + " from");
  if (job.urls.size() > 1) last->hints.push_back("tried, in order: " + util::join(job.urls, ", "));
  return std::move(*last);
}

}  // namespace core::detail
