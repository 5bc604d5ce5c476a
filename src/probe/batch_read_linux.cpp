// io_uring through its three system calls (no liburing): one submission queue of read requests,
// handed to the kernel in batches, each batch waited for completely. The rings are shared with the
// kernel: the tail of the submission ring is published with a release store after the entries are
// written, and completions are read after an acquire load of the completion ring's tail. A kernel
// without io_uring, or a sandbox that refuses it, leaves m_ring empty and each request is read by
// pread; so is a request the ring answers with an error, or a short read. A ring is not tied to a
// file (each request names its descriptor), so a reader done with one hands it to the next: the
// set-up and tear-down (a system call and three mappings each way, and on a VM an unmap costs
// tens of microseconds) are paid once per process, not once per library of a directory walk.
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "batch_read.hpp"
#include "util/file_io.hpp"

namespace probe::detail {

namespace {

constexpr unsigned k_entries = 256;

void read_one(int fd, ReadRequest& r) {
  std::size_t got = 0;
  while (got < r.length) {
    auto n = util::io::read_at(fd, r.into + got, r.length - got, r.offset + got);
    if (n < 0) {
      r.result = -errno;
      return;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  r.result = static_cast<std::int64_t>(got);
}

template <class T>
T* at(void* base, std::uint32_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
}

}  // namespace

struct BatchReader::Ring {
  int fd = -1;
  void* sq = MAP_FAILED;
  void* cq = MAP_FAILED;
  io_uring_sqe* sqes = static_cast<io_uring_sqe*>(MAP_FAILED);
  std::size_t sq_size = 0, cq_size = 0, sqes_size = 0;
  unsigned *sq_head = nullptr, *sq_tail = nullptr, *sq_mask = nullptr, *sq_array = nullptr;
  unsigned *cq_head = nullptr, *cq_tail = nullptr, *cq_mask = nullptr;
  io_uring_cqe* cqes = nullptr;
  unsigned entries = 0;

  ~Ring() {
    if (sqes != MAP_FAILED) ::munmap(sqes, sqes_size);
    if (cq != MAP_FAILED && cq != sq) ::munmap(cq, cq_size);
    if (sq != MAP_FAILED) ::munmap(sq, sq_size);
    if (fd >= 0) ::close(fd);
  }

  bool open() {
    io_uring_params p{};
    fd = static_cast<int>(::syscall(__NR_io_uring_setup, k_entries, &p));
    if (fd < 0) return false;
    entries = p.sq_entries;
    sq_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    cq_size = p.cq_off.cqes + p.cq_entries * sizeof(io_uring_cqe);
    const bool single = (p.features & IORING_FEAT_SINGLE_MMAP) != 0;
    if (single) sq_size = cq_size = std::max(sq_size, cq_size);
    sq = ::mmap(nullptr, sq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
    if (sq == MAP_FAILED) return false;
    cq = single ? sq : ::mmap(nullptr, cq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_CQ_RING);
    if (cq == MAP_FAILED) return false;
    sqes_size = p.sq_entries * sizeof(io_uring_sqe);
    sqes = static_cast<io_uring_sqe*>(::mmap(nullptr, sqes_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES));
    if (sqes == MAP_FAILED) return false;
    sq_head = at<unsigned>(sq, p.sq_off.head);
    sq_tail = at<unsigned>(sq, p.sq_off.tail);
    sq_mask = at<unsigned>(sq, p.sq_off.ring_mask);
    sq_array = at<unsigned>(sq, p.sq_off.array);
    cq_head = at<unsigned>(cq, p.cq_off.head);
    cq_tail = at<unsigned>(cq, p.cq_off.tail);
    cq_mask = at<unsigned>(cq, p.cq_off.ring_mask);
    cqes = at<io_uring_cqe>(cq, p.cq_off.cqes);
    return true;
  }

  // Submits requests [first, first + n) (n <= entries) and waits for all of them. False when the
  // kernel refused the submission itself (the caller reads them one by one).
  bool run(int file, std::vector<ReadRequest>& reqs, std::size_t first, unsigned n) {
    unsigned tail = *sq_tail;
    for (unsigned i = 0; i < n; ++i) {
      const unsigned idx = tail & *sq_mask;
      io_uring_sqe& e = sqes[idx];
      std::memset(&e, 0, sizeof e);
      ReadRequest& r = reqs[first + i];
      e.opcode = IORING_OP_READ;
      e.fd = file;
      e.addr = reinterpret_cast<std::uint64_t>(r.into);
      e.len = static_cast<std::uint32_t>(r.length);
      e.off = r.offset;
      e.user_data = first + i;
      sq_array[idx] = idx;
      ++tail;
    }
    __atomic_store_n(sq_tail, tail, __ATOMIC_RELEASE);
    unsigned submitted = 0, done = 0;
    while (done < n) {
      const unsigned to_submit = n - submitted;
      long r = ::syscall(__NR_io_uring_enter, fd, to_submit, n - done, IORING_ENTER_GETEVENTS, nullptr, 0);
      if (r < 0) {
        const int e = errno;
        if (submitted == 0 && e != EINTR) return false;  // nothing went in: the caller reads them itself
        if (e == EINTR || e == EAGAIN || e == EBUSY) {
          done += reap(reqs);  // make room, then wait again
          continue;
        }
        // Reads are in flight into the caller's buffers: returning now would let them land in
        // freed memory. The kernel does not fail a wait for submitted reads; if it ever did,
        // this is a bug to stop at.
        std::abort();
      } else {
        submitted += static_cast<unsigned>(r);
      }
      done += reap(reqs);
    }
    return true;
  }

  // Takes every completion the kernel has posted; returns how many.
  unsigned reap(std::vector<ReadRequest>& reqs) {
    unsigned head = *cq_head, n = 0;
    const unsigned ctail = __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE);
    for (; head != ctail; ++head, ++n) {
      const io_uring_cqe& c = cqes[head & *cq_mask];
      reqs[static_cast<std::size_t>(c.user_data)].result = c.res;
    }
    __atomic_store_n(cq_head, head, __ATOMIC_RELEASE);
    return n;
  }
};

namespace {

// Rings no reader holds, each with nothing in flight. A handful at most: one per thread that
// reads at once.
class RingPool {
 public:
  std::unique_ptr<BatchReader::Ring> take() {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_idle.empty()) return nullptr;
    auto r = std::move(m_idle.back());
    m_idle.pop_back();
    return r;
  }
  void give(std::unique_ptr<BatchReader::Ring> r) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_idle.size() < 8) m_idle.push_back(std::move(r));
  }

 private:
  std::mutex m_mutex;
  std::vector<std::unique_ptr<BatchReader::Ring>> m_idle;
};

// Never destroyed, like the fatbin reader's helper threads that hand rings back to it.
RingPool& ring_pool() {
  static auto* pool = new RingPool;
  return *pool;
}

}  // namespace

BatchReader::BatchReader(int fd) : m_fd(fd) {}

// A ring still held went through every batch it was given to the end (run() waits for each
// completion, and a ring that failed was dropped), so the next reader can have it.
BatchReader::~BatchReader() {
  if (m_ring) ring_pool().give(std::move(m_ring));
}

void BatchReader::read(std::vector<ReadRequest>& requests) {
  if (!m_tried && requests.size() > 4) {
    m_tried = true;
    m_ring = ring_pool().take();
    if (!m_ring) {
      auto ring = std::make_unique<Ring>();
      if (ring->open()) m_ring = std::move(ring);
    }
  }
  std::size_t first = 0;
  while (m_ring && first < requests.size()) {
    const unsigned n = static_cast<unsigned>(std::min<std::size_t>(m_ring->entries, requests.size() - first));
    if (!m_ring->run(m_fd, requests, first, n)) {
      m_ring.reset();  // refused: every later read goes one by one
      break;
    }
    // a kernel before 5.6 takes the ring but not IORING_OP_READ: every read comes back EINVAL
    const bool unsupported =
        std::all_of(requests.begin() + static_cast<std::ptrdiff_t>(first), requests.begin() + static_cast<std::ptrdiff_t>(first + n),
                    [](const ReadRequest& r) { return r.result == -EINVAL; });
    first += n;
    if (unsupported) {
      m_ring.reset();
      break;
    }
  }
  for (std::size_t i = 0; i < requests.size(); ++i) {
    ReadRequest& r = requests[i];
    // not submitted, failed in the ring, or short of the end the caller asked for: read it directly
    if (i >= first || r.result < 0 || static_cast<std::size_t>(r.result) < r.length) read_one(m_fd, r);
  }
}

}  // namespace probe::detail
