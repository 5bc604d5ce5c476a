// Windows has no io_uring: each request is read on its own (ReadFile at an offset).
#include <cerrno>

#include "batch_read.hpp"
#include "util/file_io.hpp"

namespace probe::detail {

struct BatchReader::Ring {};

BatchReader::BatchReader(int fd) : m_fd(fd) {}

BatchReader::~BatchReader() = default;

void BatchReader::read(std::vector<ReadRequest>& requests) {
  for (auto& r : requests) {
    std::size_t got = 0;
    r.result = 0;
    while (got < r.length) {
      auto n = util::io::read_at(m_fd, r.into + got, r.length - got, r.offset + got);
      if (n < 0) {
        r.result = -errno;
        break;
      }
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    if (r.result == 0) r.result = static_cast<std::int64_t>(got);
  }
}

}  // namespace probe::detail
