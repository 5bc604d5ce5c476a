// Downloading one archive into the cache.
//
// Why it works this way: the cache must never hold a file that is not the pinned one, and an
// interrupted download should cost only the bytes not yet received. So bytes go to
// CACHE/partial/<sha256>.part and are hashed as they arrive; the file is renamed into
// CACHE/sha256/<sha256>/ only after its size and SHA-256 matched. Where the kernel names its boot
// and the cache is on a local file system (Linux), the name is this boot's unsynced folder and
// nothing is fsynced: a crash of the machine is a new boot, whose first lookup re-hashes the entry
// (see cache.hpp); elsewhere the file is fsynced first. Either way a crash leaves no entry, a
// complete one, or one that is re-hashed before any use, and a fetch costs what writing to the
// page cache costs. A partial is resumed (its bytes re-hashed, the rest requested with a Range
// header) from whichever URL comes next: the pinned hash decides, and bytes
// that do not hash right, or a range the server refuses, are fetched once more from byte zero
// before the server is blamed. A server that answers a range request with the whole file (200
// instead of 206) is followed from byte zero. Arriving bytes past the pinned size are refused at
// once (a mirror serving another file must not fill the disk), and free space is checked before
// the first byte is written. Transient failures (see net::Attempt) are retried with exponential
// backoff, each retry resuming from the bytes already received; permanent ones move on to the
// next URL (mirror). Hashing and writing run on two more threads, so that they overlap with
// receiving and with each other: on a fast link each costs as much as the transfer itself.
//
// Retries alone cannot bound a download: a server that drips a byte every two seconds never
// stalls, and each retry resumes it. net cuts an attempt whose rate window falls below min_rate,
// and each URL gets a deadline, fixed when its first attempt starts and scaled by what is still
// missing (the pinned size is known before the first byte), that bounds its attempts and backoff
// together; once it has passed, the next URL is tried and the partial kept for the next run.
#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

#include "archives/fetch_transfer.hpp"
#include "core/archives/cache.hpp"
#include "crypto/sha256.hpp"
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
// gathered into 1 MiB blocks that two worker threads take in turn, one hashing and one writing
// (each at most four blocks behind), so that on a fast link receiving, hashing and writing each
// have a core: one thread doing both was the slowest of the three.
class Partial {
 public:
  // `writeback`: start writing to disk every 32 MiB, for a download that is fsynced once complete.
  Partial(fs::path path, bool writeback) : m_path(std::move(path)), m_writeback(writeback) {}
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
      m_writer = std::thread([this] { work(m_to_write, true); });
      m_hasher = std::thread([this] { work(m_to_hash, false); });
    } catch (const std::system_error& e) {
      stop_workers();
      std::fclose(m_file);
      m_file = nullptr;
      return Error(ErrorCode::io, std::string("cannot start the download's writer threads: ") + e.what());
    }
    return {};
  }

  // Appends bytes; returns the errno of a failed write (this one or an earlier block's), 0 otherwise.
  int append(const char* data, std::size_t n) noexcept {
    if (int e = error()) return e;
    try {  // runs inside libcurl's callback: nothing may be thrown through it
      while (n > 0) {
        if (!m_block) m_block = take_block();
        std::size_t take = std::min(n, k_block - m_block->size());
        m_block->insert(m_block->end(), data, data + take);
        m_size += take;
        data += take;
        n -= take;
        if (m_block->size() == k_block) hand_over();
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
    if (m_block && !m_block->empty()) hand_over();
    stop_workers();
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

  using Block = std::shared_ptr<const std::vector<char>>;

  // An empty block, one that both workers are done with when there is one: a fresh 1 MiB block for
  // every MiB received cost a page fault per 4 KiB (over a quarter of a fetch's system time).
  std::shared_ptr<std::vector<char>> take_block() {
    std::unique_ptr<std::vector<char>> b;
    {
      std::lock_guard<std::mutex> l(m_pool_mutex);
      if (!m_pool.empty()) {
        b = std::move(m_pool.back());
        m_pool.pop_back();
      }
    }
    if (!b) {
      b = std::make_unique<std::vector<char>>();
      b->reserve(k_block);
    }
    b->clear();
    return std::shared_ptr<std::vector<char>>(b.release(), [this](std::vector<char>* done) noexcept {
      std::unique_ptr<std::vector<char>> own(done);
      std::lock_guard<std::mutex> l(m_pool_mutex);
      try {
        m_pool.push_back(std::move(own));
      } catch (const std::bad_alloc&) {  // not kept: freed
      }
    });
  }

  int error() noexcept {
    std::lock_guard<std::mutex> l(m_mutex);
    return m_error;
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> l(m_mutex);
      m_stop = true;
    }
    m_wake.notify_all();
    if (m_writer.joinable()) m_writer.join();
    if (m_hasher.joinable()) m_hasher.join();
  }

  // The block goes to both workers, once each has room for it.
  void hand_over() {
    Block block = std::move(m_block);
    m_block.reset();
    std::unique_lock<std::mutex> l(m_mutex);
    m_room.wait(l, [this] { return (m_to_write.size() < k_queue && m_to_hash.size() < k_queue) || m_error; });
    if (m_error) return;
    m_to_write.push_back(block);
    m_to_hash.push_back(std::move(block));
    l.unlock();
    m_wake.notify_all();
  }

  // One worker: writes (`writes`) or hashes the blocks of its queue, in order, until stopped with
  // its queue empty.
  void work(std::deque<Block>& queue, bool writes) {
    for (;;) {
      Block block;
      {
        std::unique_lock<std::mutex> l(m_mutex);
        m_wake.wait(l, [&] { return !queue.empty() || m_stop; });
        if (queue.empty()) return;  // stopped, and everything done
        block = std::move(queue.front());
        queue.pop_front();
      }
      m_room.notify_all();
      if (!writes) {
        m_hash.update(block->data(), block->size());
        continue;
      }
      int e = 0;
      errno = 0;
      if (std::fwrite(block->data(), 1, block->size(), m_file) != block->size()) e = errno ? errno : EIO;
      // every 32 MiB, start writing to disk: the fsync before the rename then has little left
      if (!e && m_writeback && (m_unsynced += block->size()) >= (32u << 20)) {
        m_unsynced = 0;
        e = util::start_writeback(m_file);
      }
      if (e) {
        std::lock_guard<std::mutex> l(m_mutex);
        if (!m_error) m_error = e;
        m_to_write.clear();
        m_room.notify_all();
      }
    }
  }

  fs::path m_path;
  std::FILE* m_file = nullptr;
  crypto::Sha256 m_hash;     // the hasher's while the file is open
  std::uint64_t m_size = 0;  // bytes appended (written or queued)
  bool m_writeback = true;
  std::uint64_t m_unsynced = 0;
  std::mutex m_pool_mutex;  // the pool outlives every block (declared before them)
  std::vector<std::unique_ptr<std::vector<char>>> m_pool;
  std::shared_ptr<std::vector<char>> m_block;  // being filled
  std::deque<Block> m_to_write, m_to_hash;
  std::mutex m_mutex;
  std::condition_variable m_wake, m_room;
  bool m_stop = false;
  int m_error = 0;
  std::thread m_writer, m_hasher;
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

// Creates a folder of the cache. Errors: io, naming it.
util::Status make_folder(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return Error(ErrorCode::io, "cannot create " + dir.string() + ": " + ec.message())
        .with_hint("choose another cache with --cache-dir DIR");
  return {};
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
  return Error(ErrorCode::mismatch,
               "the download of " + url + " is not the pinned " + job.file + ": " + what + "; the partial download was removed")
      .with_hint("the server (or a mirror) serves another file under this name, or a proxy rewrote the response")
      .with_hint("use --mirror URL with a trusted copy of NVIDIA's tree, or check the manifest's sha256 and size");
}

}  // namespace

namespace {

// One archive's download, as its steps: room and folders first, then each URL in turn (attempts
// with retries, resuming), then the hash decides and the file is committed into the cache.
class Transfer {
 public:
  Transfer(const TransferJob& job, const FetchOptions& o, model::FetchedArchive& out, RegistryClients& registries, Committer* committer,
           std::size_t index)
      : m_job(job),
        m_o(o),
        m_out(out),
        m_registries(registries),
        m_committer(committer),
        m_index(index),
        m_cache(o.cache_dir),
        m_part(partial_path(m_cache, job.sha256)),
        m_sidecar(partial_url_path(m_cache, job.sha256)),
        m_boot(unsynced_boot(m_cache)),
        m_final(m_boot ? unsynced_entry_path(m_cache, job.sha256, *m_boot, job.file) : cache_entry_path(m_cache, job.sha256, job.file)),
        m_file(m_part, !m_boot) {
    m_sleep = o.sleep ? o.sleep : [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  }

  util::Status run() {
    SP_TRY(make_room());
    // Two runs fetching the same archive into one cache take turns.
    SP_TRY_ASSIGN(auto lock, util::FileLock::acquire(archive_lock_path(m_cache, m_job.sha256)));
    m_lock = std::make_shared<util::FileLock>(std::move(lock));  // until the file is in the cache
    const ArchiveExpectation expect{m_job.platform, m_job.file, m_job.sha256, m_job.size};
    settle_cache_entry(m_cache, expect);
    if (auto done = find_settled(m_cache, expect)) {
      m_out.status = model::FetchStatus::cached;
      m_out.path = done->string();
      return {};
    }
    // A partial download is resumed from whichever URL comes next: the pinned SHA-256 decides in
    // the end, and bytes that do not hash right are fetched once more from byte zero.
    for (std::size_t u = 0; u < m_job.urls.size(); ++u) {
      const std::string& url = m_job.urls[u];
      SP_TRY_ASSIGN(bool had_bytes, start_url(url));
      SP_TRY_ASSIGN(bool complete, receive(url));
      if (!complete) continue;
      SP_TRY_ASSIGN(Verdict v, check_and_commit(url, had_bytes));
      if (v == Verdict::committed) return {};
      if (v == Verdict::again_from_zero) --u;
    }
    return give_up();
  }

 private:
  enum class Verdict { committed, again_from_zero, mismatch };

  // Space first, before anything is created: what is missing from a partial we may resume.
  util::Status make_room() {
    std::error_code ec;
    std::uint64_t have = 0;
    if (fs::is_regular_file(m_part, ec)) {
      have = fs::file_size(m_part, ec);
      if (ec) have = 0;
    }
    std::uint64_t needed = m_job.size > have ? m_job.size - have : 0;
    if (auto avail = free_space(m_cache); avail && *avail < needed)
      return Error(ErrorCode::io, "not enough free space in " + m_cache.string() + " to download " + m_job.file + ": needs " +
                                      util::format_bytes(needed) + " (" + std::to_string(needed) + " bytes), " +
                                      util::format_bytes(*avail) + " free")
          .with_hint("free space there, or choose another cache with --cache-dir DIR (or STACKPIN_CACHE_DIR)");
    // (the entry's folder is made when the download is committed, under the archive's lock: a
    // settling of the entry removes folders it emptied)
    return make_folder(m_part.parent_path());
  }

  // Opens the partial for `url` (keeping its bytes unless it is longer than the pin) and records
  // the URL beside it. Returns whether bytes from before were kept.
  util::Result<bool> start_url(const std::string& url) {
    std::error_code ec;
    m_out.url = url;
    if (m_out.tried.empty() || m_out.tried.back() != url) m_out.tried.push_back(url);
    SP_TRY(m_file.open(fs::is_regular_file(m_part, ec)));
    if (m_file.size() > m_job.size) SP_TRY(m_file.open(false));
    // which URL the partial's bytes came from, for the reader of the cache: a note, not a commit, so
    // it is not fsynced (while the last archive is written back, an fsync here waits for it)
    {
      std::unique_ptr<std::FILE, int (*)(std::FILE*)> note(util::open_file(m_sidecar, "wb"), &std::fclose);
      if (!note || std::fputs((url + "\n").c_str(), note.get()) < 0)
        return Error(ErrorCode::io, "cannot write " + m_sidecar.string() + ": " + util::os_error_text(errno));
    }
    m_resumed = m_file.size() > 0;
    return m_resumed;
  }

  // The bound on one URL's attempts, backoff included: FetchOptions::deadline_s, else derived from
  // the bytes still missing when the URL's first attempt starts.
  struct UrlDeadline {
    std::optional<std::chrono::steady_clock::time_point> at;  // none: no bound
    std::uint64_t seconds = 0;
    std::uint64_t missing = 0;  // the bytes it was derived from
    bool derived = false;
  };

  UrlDeadline deadline_from_now() const {
    UrlDeadline d;
    if (m_o.deadline_s > 0) {
      d.seconds = m_o.deadline_s;
    } else if (m_o.min_rate > 0) {
      // the missing bytes at the slowest rate the check lets through, and as slack two rate windows
      // and one stall (an attempt cut as too slow only when its window ended, a slow response head
      // or a stalled attempt, a retry)
      d.derived = true;
      d.missing = m_job.size > m_file.size() ? m_job.size - m_file.size() : 0;
      d.seconds = 2 * static_cast<std::uint64_t>(std::max(m_o.rate_window_s, 1L)) +
                  static_cast<std::uint64_t>(std::max(m_o.stall_timeout_s, 0L)) + d.missing / m_o.min_rate +
                  (d.missing % m_o.min_rate != 0 ? 1 : 0);
    } else {
      return d;
    }
    // a bound of centuries is none (and would overflow the clock)
    constexpr std::uint64_t k_longest_s = 100ull * 365 * 24 * 3600;
    if (d.seconds <= k_longest_s) d.at = std::chrono::steady_clock::now() + std::chrono::seconds(d.seconds);
    return d;
  }

  // The deadline passed (or would pass during the next backoff) after `attempts` on `url`;
  // `last`, when given, is how the last attempt that ended before it failed (too slow, say).
  Error deadline_passed(const std::string& url, const UrlDeadline& d, int attempts, const std::optional<Error>& last) const {
    std::string why = d.derived ? "2 x --rate-window " + std::to_string(m_o.rate_window_s) + " s + --stall-timeout " +
                                      std::to_string(m_o.stall_timeout_s) + " s + " + std::to_string(d.missing) + " bytes at --min-rate " +
                                      std::to_string(m_o.min_rate) + " B/s"
                                : "--deadline " + std::to_string(d.seconds);
    Error e(ErrorCode::io, "download of " + url + " failed: not finished within its deadline of " + std::to_string(d.seconds) + " s (" +
                               why + "): " + std::to_string(m_file.size()) + " of " + std::to_string(m_job.size) + " bytes after " +
                               std::to_string(attempts) + (attempts == 1 ? " attempt" : " attempts"));
    e.with_hint("raise --deadline SECONDS or lower --min-rate; run `stackpin fetch` again to resume from the bytes already downloaded");
    if (last) e.with_hint("the last attempt before the deadline: " + last->message);
    return e;
  }

  // The request for `url`: a registry's blob (oci://HOST/REPO@sha256:HEX) through that registry's
  // client, which connects and authenticates the first time; any other URL as it is.
  util::Result<net::Request> request_for(const std::string& url, const UrlDeadline& deadline) const {
    net::Request req;
    if (is_oci_url(url)) {
      SP_TRY_ASSIGN(OciReference blob, parse_oci_reference(url));
      SP_TRY_ASSIGN(auto client, registry_for(blob));
      SP_TRY_ASSIGN(req, client->blob_request(blob.digest));
    } else {
      req = request_through_env(url, m_o.env);
    }
    req.offset = m_file.size();
    req.connect_timeout_s = m_o.connect_timeout_s;
    req.stall_timeout_s = m_o.stall_timeout_s;
    req.min_rate = m_o.min_rate;
    req.rate_window_s = m_o.rate_window_s;
    req.deadline = deadline.at;
    req.user_agent = m_o.user_agent;
    return req;
  }

  // The client of the blob's repository: connected (and authenticated) the first time.
  util::Result<std::shared_ptr<RegistryClient>> registry_for(const OciReference& blob) const {
    const std::string key = blob.repository_url();
    auto it = m_registries.find(key);
    if (it == m_registries.end()) {
      RegistryOptions ro = registry_options(m_o);
      ro.sleep = m_sleep;
      SP_TRY_ASSIGN(auto client, RegistryClient::connect(blob, ro, false));
      it = m_registries.emplace(key, std::move(client)).first;
    }
    return it->second;
  }

  // Attempts on one URL until every pinned byte is in the partial (true), or the URL is given up
  // (false, with the reason in m_last): a permanent failure, the retries spent, or its deadline
  // passed. Errors: what stops the whole download (a full disk).
  util::Result<bool> receive(const std::string& url) {
    std::chrono::milliseconds delay = std::min<std::chrono::milliseconds>(m_o.retry_delay, std::chrono::seconds(30));
    const UrlDeadline deadline = deadline_from_now();
    int attempts = 0;                  // on this URL
    std::optional<Error> failed_here;  // the last attempt's failure on this URL
    for (int retry = 0;; ++retry) {
      if (m_file.size() == m_job.size) return true;  // everything is here already
      if (deadline.at && std::chrono::steady_clock::now() >= *deadline.at) {
        m_last = deadline_passed(url, deadline, attempts, failed_here);
        return false;
      }
      ++m_out.attempts;
      ++attempts;
      enum class Stop { none, too_many, write_failed } stop = Stop::none;
      int write_errno = 0;
      std::optional<Error> sink_error;
      auto made = request_for(url, deadline);
      if (!made) {  // a registry that cannot be reached or refuses the credentials: the next URL
        m_last = std::move(made).error();
        return false;
      }
      net::Request req = std::move(*made);
      net::Sink sink;
      sink.start = [&](const net::Response& head) {
        if (req.offset > 0 && !head.range_honoured) {  // the whole file again: start over
          m_resumed = false;
          if (auto st = m_file.open(false); !st) {
            sink_error = st.error();
            return false;
          }
        } else if (req.offset > 0) {
          m_resumed = true;
        }
        return true;
      };
      sink.data = [&](const char* data, std::size_t n) {
        if (m_file.size() + n > m_job.size) {
          stop = Stop::too_many;
          return false;
        }
        if ((write_errno = m_file.append(data, n)) != 0) {
          stop = Stop::write_failed;
          return false;
        }
        m_out.bytes_downloaded += n;
        if (m_o.progress) m_o.progress({m_job.platform, m_job.file, m_file.size(), m_job.size});
        return true;
      };
      auto a = net::attempt(req, sink);
      if (sink_error) return std::move(*sink_error);
      if (stop == Stop::write_failed) {
        drop_partial();
        return disk_full(m_cache, m_part, write_errno, m_job);
      }
      if (stop == Stop::too_many) {
        drop_partial();
        m_last = mismatch(url, m_job, "the server sent more than the pinned " + std::to_string(m_job.size) + " bytes");
        return false;
      }
      if (!a.error) {
        if (m_file.size() == m_job.size) return true;
        drop_partial();
        m_last =
            mismatch(url, m_job, "the server sent " + std::to_string(m_file.size()) + " bytes, the pin says " + std::to_string(m_job.size));
        return false;
      }
      if (a.limit == net::Limit::deadline) {           // not this URL again: the next one, if any
        if (m_file.size() == m_job.size) return true;  // the last byte came just in time: the hash decides
        m_last = deadline_passed(url, deadline, attempts, failed_here);
        return false;
      }
      m_last = failed_here = *a.error;
      if (a.response.status == 401 && is_oci_url(url) && !m_reauthorized) {  // a token expired: ask for a new one, once
        m_reauthorized = true;
        if (auto client = registry_for(*parse_oci_reference(url))) (*client)->authorization_refused();
        continue;
      }
      if (!a.transient && req.offset > 0 && !m_fresh_done && a.error->code != ErrorCode::not_found) {
        // a range the server refuses (416: the partial is longer than its file, or another file
        // now): the partial cannot be completed, so drop it and ask for the whole file once
        m_fresh_done = true;
        m_resumed = false;
        SP_TRY(m_file.open(false));
        continue;
      }
      if (!a.transient) return false;
      if (retry >= m_o.retries) {
        m_last->message += " (gave up after " + std::to_string(retry + 1) + " attempts)";
        m_last->hints.push_back("run `stackpin fetch` again to resume from the " + std::to_string(m_file.size()) +
                                " bytes already downloaded, or raise --retries");
        return false;
      }
      if (deadline.at && std::chrono::steady_clock::now() + delay >= *deadline.at) {
        m_last = deadline_passed(url, deadline, attempts, failed_here);
        return false;
      }
      m_sleep(std::max(delay, retry_after(a.response)));
      delay = std::min<std::chrono::milliseconds>(delay * 2, std::chrono::seconds(30));
    }
  }

  // What a 429 or 503's Retry-After asks for, at most a minute (0 when it says nothing).
  static std::chrono::milliseconds retry_after(const net::Response& r) {
    auto v = r.header("retry-after");
    if (!v) return std::chrono::milliseconds(0);
    auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    auto s = net::retry_after_seconds(*v, now);
    return std::chrono::seconds(s ? std::min(*s, 60L) : 0L);
  }

  // All bytes are here: the hash decides. A mismatch after resuming kept bytes is fetched once
  // more from byte zero before the server is blamed.
  util::Result<Verdict> check_and_commit(const std::string& url, bool had_bytes) {
    if (int e = m_file.close(); e != 0) {
      remove_partial(m_part, m_sidecar);
      return disk_full(m_cache, m_part, e, m_job);
    }
    std::string actual = m_file.finish_hex();
    if (actual != m_job.sha256) {
      remove_partial(m_part, m_sidecar);
      if (had_bytes && !m_fresh_done) {
        // the bytes kept from before may be the wrong ones (a corrupt partial, another server's file)
        m_fresh_done = true;
        return Verdict::again_from_zero;
      }
      m_last = mismatch(url, m_job, "expected sha256 " + m_job.sha256 + ", got " + actual);
      return Verdict::mismatch;
    }
    // renamed into this boot's unsynced folder, or made durable first where no boot is named: a
    // crash leaves no entry, a complete one, or one re-hashed before use (with the lock held until then)
    auto commit = [part = m_part, final = m_final, sidecar = m_sidecar, lock = m_lock, durable = !m_boot]() -> util::Status {
      if (durable) SP_TRY(util::sync_file(part));
      SP_TRY(make_folder(final.parent_path()));
      std::error_code ec;
      fs::rename(part, final, ec);
      if (ec) return Error(ErrorCode::io, "cannot move " + part.string() + " to " + final.string() + ": " + ec.message());
      if (durable) util::sync_directory(final.parent_path());
      fs::remove(sidecar, ec);
      return {};
    };
    if (m_committer)
      m_committer->add(m_index, std::move(commit));
    else
      SP_TRY(commit());
    m_out.status = m_resumed ? model::FetchStatus::resumed : model::FetchStatus::downloaded;
    m_out.path = m_final.string();
    return Verdict::committed;
  }

  // Every URL failed: keep a partial worth resuming (an empty one, from a refused request, is not).
  util::Status give_up() {
    std::error_code ec;
    m_file.close();
    if (!fs::is_regular_file(m_part, ec) || fs::file_size(m_part, ec) == 0) remove_partial(m_part, m_sidecar);
    if (!m_last) m_last = Error(ErrorCode::invalid, "no URL to download " + m_job.file + " from");
    if (m_job.urls.size() > 1) m_last->hints.push_back("tried, in order: " + util::join(m_job.urls, ", "));
    return std::move(*m_last);
  }

  void drop_partial() {
    m_file.close();
    remove_partial(m_part, m_sidecar);
  }

  const TransferJob& m_job;
  const FetchOptions& m_o;
  model::FetchedArchive& m_out;
  RegistryClients& m_registries;
  Committer* m_committer = nullptr;
  std::size_t m_index = 0;
  std::shared_ptr<util::FileLock> m_lock;
  bool m_reauthorized = false;  // a 401 from a registry was answered with a new token once
  const fs::path m_cache, m_part, m_sidecar;
  const std::optional<std::string> m_boot;  // this boot's name: downloads are committed unsynced
  const fs::path m_final;
  Partial m_file;
  std::function<void(std::chrono::milliseconds)> m_sleep;
  std::optional<Error> m_last;
  bool m_fresh_done = false;  // a resumed partial was already dropped and fetched again from zero
  bool m_resumed = false;     // the bytes of this download did not all come in one response
};

}  // namespace

RegistryOptions registry_options(const FetchOptions& o) {
  RegistryOptions ro;
  ro.env = o.env;
  ro.user_agent = o.user_agent;
  ro.retries = o.retries;
  ro.retry_delay = o.retry_delay;
  ro.connect_timeout_s = o.connect_timeout_s;
  ro.stall_timeout_s = o.stall_timeout_s;
  ro.sleep = o.sleep;
  return ro;
}

net::Request request_through_env(const std::string& url, const util::Env* env) {
  net::Request req;
  req.url = url;
  req.proxy = proxy_for(url, env);
  if (env) req.no_proxy = env->get("no_proxy").value_or(env->get("NO_PROXY").value_or(""));
  return req;
}

util::Status transfer_archive(const TransferJob& job, const FetchOptions& o, model::FetchedArchive& out, RegistryClients& registries,
                              Committer* committer, std::size_t index) {
  return Transfer(job, o, out, registries, committer, index).run();
}

struct Committer::State {
  std::mutex mutex;
  std::condition_variable wake, idle;
  std::deque<std::pair<std::size_t, std::function<util::Status()>>> queue;
  std::vector<std::pair<std::size_t, util::Error>> failures;
  bool busy = false, stop = false;
  std::thread worker;
};

Committer::Committer() : m_state(std::make_unique<State>()) {
  State& st = *m_state;
  st.worker = std::thread([&st] {
    for (;;) {
      std::pair<std::size_t, std::function<util::Status()>> job;
      {
        std::unique_lock<std::mutex> l(st.mutex);
        st.wake.wait(l, [&] { return !st.queue.empty() || st.stop; });
        if (st.queue.empty()) return;
        job = std::move(st.queue.front());
        st.queue.pop_front();
        st.busy = true;
      }
      util::Status done = job.second();
      job.second = nullptr;  // the partial's lock goes with it
      std::lock_guard<std::mutex> l(st.mutex);
      if (!done) st.failures.emplace_back(job.first, std::move(done).error());
      st.busy = false;
      st.idle.notify_all();
    }
  });
}

Committer::~Committer() {
  {
    std::lock_guard<std::mutex> l(m_state->mutex);
    m_state->stop = true;
  }
  m_state->wake.notify_all();
  if (m_state->worker.joinable()) m_state->worker.join();
}

void Committer::add(std::size_t index, std::function<util::Status()> commit) {
  {
    std::lock_guard<std::mutex> l(m_state->mutex);
    m_state->queue.emplace_back(index, std::move(commit));
  }
  m_state->wake.notify_all();
}

std::vector<std::pair<std::size_t, util::Error>> Committer::finish() {
  std::unique_lock<std::mutex> l(m_state->mutex);
  m_state->idle.wait(l, [&] { return m_state->queue.empty() && !m_state->busy; });
  return std::move(m_state->failures);
}

}  // namespace core::detail
