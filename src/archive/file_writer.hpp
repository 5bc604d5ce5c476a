#pragma once
// The writing side of extraction (file_writer.cpp).
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "crypto/sha256.hpp"
#include "util/result.hpp"

namespace archive_io::detail {

// Writes extracted data on a thread of its own and hashes it as it goes (the content hash each
// receipt entry needs), so that the extracting thread only parses and decompresses.
class FileWriter {
 public:
  FileWriter();
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  // Queues `size` bytes for `fd` (entry `index`). Returns false once writing has failed.
  bool write(int fd, std::size_t index, const void* data, std::size_t size);
  // Queues the end of a file: its mode is set, it is closed and its digest kept. Takes the fd.
  void close(int fd, std::size_t index, unsigned mode, std::filesystem::path path);
  bool failed();
  // Waits for every queued job; returns index -> digest, or the first error.
  util::Result<std::map<std::size_t, crypto::Digest>> finish();

 private:
  static constexpr std::size_t k_max_in_flight = 8u << 20;
  struct Job {
    int fd;
    std::size_t index;
    std::vector<char> data;
    bool close;
    unsigned mode;
    std::filesystem::path path;
  };
  void run();

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

}  // namespace archive_io::detail
