// Extracted data is written on a thread of its own and hashed as it goes, so that the extracting
// thread only parses and decompresses: on two cores that is the difference between beating
// `unzip` and Python's zipfile and not. Blocks are copied into recycled buffers (libarchive's are
// only valid until its next call), at most 8 MiB in flight, which bounds memory whatever the
// archive.
#include "file_writer.hpp"

#include <cerrno>

#include "util/file_io.hpp"
#include "util/fs.hpp"

namespace archive_io::detail {

FileWriter::FileWriter() : m_thread([this] { run(); }) {}

FileWriter::~FileWriter() { (void)finish(); }

bool FileWriter::write(int fd, std::size_t index, const void* data, std::size_t size) {
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

void FileWriter::close(int fd, std::size_t index, unsigned mode, std::filesystem::path path) {
  std::lock_guard lock(m_mutex);
  m_jobs.push_back(Job{fd, index, {}, true, mode, std::move(path)});
  m_cv.notify_all();
}

bool FileWriter::failed() {
  std::lock_guard lock(m_mutex);
  return !m_error.empty();
}

util::Result<std::map<std::size_t, crypto::Digest>> FileWriter::finish() {
  {
    std::lock_guard lock(m_mutex);
    m_closed = true;
    m_cv.notify_all();
  }
  if (m_thread.joinable()) m_thread.join();
  if (!m_error.empty()) return util::Error(util::ErrorCode::io, m_error);
  return m_done;
}

void FileWriter::run() {
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
      if (!failed() && util::io::set_mode(job.fd, job.mode) != 0)
        error = "cannot set mode of " + job.path.string() + ": " + util::os_error_text(errno);
      util::io::close(job.fd);
      crypto::Digest d = hash.finish();
      std::lock_guard lock(m_mutex);
      if (error.empty()) m_done[job.index] = d;
    } else {
      const char* q = job.data.data();
      std::size_t left = job.data.size();
      while (left > 0 && !failed()) {
        std::int64_t n = util::io::write_some(job.fd, q, left);
        if (n < 0) {
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

}  // namespace archive_io::detail
