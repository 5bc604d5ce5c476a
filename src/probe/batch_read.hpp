#pragma once
// Many small reads of one file at once (batch_read_linux.cpp: io_uring; elsewhere: one pread
// each). The fatbin reader needs a few thousand headers scattered over a large library; issued
// one pread at a time, the system-call cost is most of the work (on the CI machine's VM, about 3 µs
// a read), while io_uring submits hundreds in one call.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace probe::detail {

struct ReadRequest {
  std::uint64_t offset = 0;
  std::size_t length = 0;
  char* into = nullptr;
  std::int64_t result = 0;  // bytes read (fewer only at the end of the file), or -errno
};

class BatchReader {
 public:
  // A reader of `fd` (not owned). Uses io_uring where the kernel offers it (Linux 5.6+, not
  // refused by a seccomp profile), set up at the first batch of more than a few reads; else reads
  // one request at a time.
  explicit BatchReader(int fd);
  ~BatchReader();
  BatchReader(const BatchReader&) = delete;
  BatchReader& operator=(const BatchReader&) = delete;
  // Reads every request, filling `result`.
  void read(std::vector<ReadRequest>& requests);
  bool batched() const { return m_ring != nullptr; }
  struct Ring;  // io_uring's rings, kept for the next reader when this one is done (batch_read_linux.cpp)

 private:
  int m_fd;
  bool m_tried = false;  // the ring is set up at the first batch worth it
  std::unique_ptr<Ring> m_ring;
};

}  // namespace probe::detail
