// Fatbin reader: where a library's containers are (fatbin_container.cpp reads one). They live in
// the section nvcc made for them (.nv_fatbin in a shared object, __nv_relfatbin in an object file,
// .nv_fatb in a PE file), back to back with zero padding; that section is walked strictly, and
// anything that does not frame exactly is refused. A shared object also lists its containers in a
// wrapper table (.nvFatBinSegment: 24-byte records, magic 0x466243B1, then the container's
// address); those are read all at once, in rounds of batched reads, and the rest of the section
// is then walked as above so that the table is only ever a shortcut. The reading threads and
// io_uring's rings are kept for the next library. Libraries that load their own
// modules at run time (cuFFT) keep further containers in ordinary data sections; those are
// searched for the magic, on a second thread, and a candidate counts only when it frames exactly
// (the search then jumps over it, so payloads are not read). Only headers are read: on a 234 MiB
// cuDNN library, about 5,400 of them.
#include "probe/fatbin.hpp"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <tuple>
#include <vector>

#include "batch_read.hpp"
#include "fatbin_container.hpp"
#include "fatbin_sections.hpp"
#include "fatbin_source.hpp"
#include "util/file_io.hpp"

namespace probe {

namespace {

using detail::ByteReader;
using detail::ByteSource;
using detail::CodeSection;
using detail::ContainerParse;
using detail::elf_sections;
using detail::FatEntry;
using detail::FileSource;
using detail::hex_offset;
using detail::k_container_magic;
using detail::k_flag_family;
using detail::k_flag_lz4;
using detail::k_flag_specific;
using detail::k_flag_zstd;
using detail::le;
using detail::listed_starts;
using detail::MemorySource;
using detail::pe_sections;
using detail::Role;

// Threads kept for run_beside between calls: a directory of libraries (or a benchmark's rounds)
// would otherwise start and stop two threads per library, which on the CI machine's VM costs a
// good part of reading a small one. A helper runs one task at a time; at most eight exist.
class Helpers {
 public:
  class Helper {
   public:
    Helper() : m_thread([this] { loop(); }) {}
    ~Helper() {
      {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stop = true;
      }
      m_wake.notify_all();
      m_thread.join();
    }
    Helper(const Helper&) = delete;
    Helper& operator=(const Helper&) = delete;
    void start(const std::function<void()>& task) {
      {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_task = &task;
      }
      m_wake.notify_all();
    }
    void wait() {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_wake.wait(lock, [this] { return m_task == nullptr; });
    }

   private:
    void loop() {
      std::unique_lock<std::mutex> lock(m_mutex);
      for (;;) {
        m_wake.wait(lock, [this] { return m_task != nullptr || m_stop; });
        if (!m_task) return;
        lock.unlock();
        (*m_task)();  // does not throw: run_beside hands in a task that catches
        lock.lock();
        m_task = nullptr;
        m_wake.notify_all();
      }
    }
    std::mutex m_mutex;
    std::condition_variable m_wake;
    const std::function<void()>* m_task = nullptr;
    bool m_stop = false;
    std::thread m_thread;  // last: it starts once the rest is ready
  };

  // An idle helper, or a new one; nullptr when eight are busy or no thread can be started.
  Helper* take() {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_idle.empty()) {
      Helper* h = m_idle.back();
      m_idle.pop_back();
      return h;
    }
    if (m_all.size() >= 8) return nullptr;
    try {
      m_all.push_back(std::make_unique<Helper>());
    } catch (const std::system_error&) {
      return nullptr;  // no thread to be had (a pids limit)
    }
    return m_all.back().get();
  }
  void give(Helper* h) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_idle.push_back(h);
  }

 private:
  std::mutex m_mutex;
  std::vector<std::unique_ptr<Helper>> m_all;
  std::vector<Helper*> m_idle;
};

// Never destroyed: a thread still reading at exit must not find its pool gone (the idle helpers
// end with the process).
Helpers& helpers() {
  static auto* h = new Helpers;
  return *h;
}

// Runs `beside` on a helper thread (when given) while `here` runs on this one, and always waits
// for it. An exception on either side is rethrown here after the wait; with no helper to be had,
// `beside` runs here after `here`.
void run_beside(const std::function<void()>& beside, const std::function<void()>& here) {
  std::exception_ptr failed;
  const std::function<void()> task = [&] {
    try {
      beside();
    } catch (...) {
      failed = std::current_exception();
    }
  };
  Helpers::Helper* h = beside ? helpers().take() : nullptr;
  if (h) h->start(task);
  try {
    here();
  } catch (...) {
    if (h) {
      h->wait();
      helpers().give(h);
    }
    throw;
  }
  if (h) {
    h->wait();
    helpers().give(h);
  } else if (beside) {
    beside();
  }
  if (failed) std::rethrow_exception(failed);
}

class FatbinBytes : public ByteReader {
 public:
  FatbinBytes(ByteSource& src, const std::string& name) : ByteReader(src, name) {}

  // "file offset 0x1a2b (.nv_fatbin+0x40)"
  static std::string where(const CodeSection& s, std::uint64_t at) {
    return "file offset " + hex_offset(at) + " (" + s.name + "+" + hex_offset(at - s.offset) + ")";
  }

  // The container at `off` of section `s`, which must end by `limit`, read header by header: its
  // entries appended to `out`, its size returned. `reached`: the furthest header looked at.
  util::Result<std::uint64_t> container(std::uint64_t off, std::uint64_t limit, const CodeSection& s, std::vector<FatEntry>& out,
                                        std::uint64_t* reached = nullptr) const {
    ContainerParse c(off, limit, m_name, s.name, s.offset);
    while (!c.finished()) {
      if (reached) *reached = c.next();
      const char* p = m_src.at(c.next(), c.need());
      if (!p) return m_src.error() ? *m_src.error() : bad("unreadable");
      c.feed(p, c.next(), c.need());
    }
    if (c.error()) return *c.error();
    out.insert(out.end(), c.entries().begin(), c.entries().end());
    return c.end() - off;
  }

  // The containers of [from, to) of a fatbin section, one after the other with zero padding.
  util::Status walk_range(const CodeSection& s, std::uint64_t from, std::uint64_t to, std::vector<FatEntry>& out,
                          std::uint64_t& containers) const {
    for (std::uint64_t p = from; p < to;) {
      const std::uint64_t byte = u(p, 1);
      if (m_src.error()) return *m_src.error();  // a failed read is not padding
      if (byte == 0) {                           // padding: zeros up to the next container or the end
        ++p;
        continue;
      }
      if (to - p < 4 || u(p, 4) != k_container_magic)
        return bad("unexpected bytes at " + where(s, p) + " (neither padding nor a fatbin container)");
      SP_TRY_ASSIGN(auto n, container(p, to, s, out));
      ++containers;
      p += n;
    }
    return {};
  }

  // Reads the containers cs[begin, end) from `src`, 256 at a time: one header of each per round,
  // each round's reads in one batch (and one small buffer, reused).
  util::Status read_listed(ByteSource& src, std::vector<ContainerParse>& cs, std::size_t begin, std::size_t end) const {
    constexpr std::size_t k_group = 256;
    std::vector<char> arena;
    std::vector<detail::ReadRequest> reqs;
    std::vector<std::size_t> active;
    for (std::size_t group = begin; group < end; group += k_group) {
      SP_TRY(read_group(src, cs, group, std::min(end, group + k_group), arena, reqs, active));
    }
    return {};
  }

  util::Status read_group(ByteSource& src, std::vector<ContainerParse>& cs, std::size_t begin, std::size_t end, std::vector<char>& arena,
                          std::vector<detail::ReadRequest>& reqs, std::vector<std::size_t>& active) const {
    constexpr std::size_t k_window = 512;  // a header and, often, the next ones of small kernels
    for (;;) {
      active.clear();
      for (std::size_t i = begin; i < end; ++i)
        if (!cs[i].finished()) active.push_back(i);
      if (active.empty()) return {};
      arena.resize(active.size() * k_window);
      reqs.assign(active.size(), {});
      for (std::size_t k = 0; k < active.size(); ++k) {
        const auto& c = cs[active[k]];
        reqs[k] = {c.next(), static_cast<std::size_t>(std::min<std::uint64_t>(k_window, size() - c.next())), arena.data() + k * k_window,
                   0};
      }
      src.read_many(reqs);
      for (std::size_t k = 0; k < active.size(); ++k) {
        auto& c = cs[active[k]];
        if (reqs[k].result < 0)
          return util::Error(util::ErrorCode::io, "cannot read " + m_name + " at file offset " + hex_offset(reqs[k].offset) + ": " +
                                                      std::generic_category().message(static_cast<int>(-reqs[k].result)));
        if (reqs[k].result < static_cast<std::int64_t>(c.need()))
          return util::Error(util::ErrorCode::io, "cannot read " + m_name + " (it changed or shrank while it was read)");
        c.feed(reqs[k].into, c.next(), static_cast<std::size_t>(reqs[k].result));
        if (c.error()) return *c.error();  // the first bad container ends the walk
      }
    }
  }

  // Every container of a fatbin section. The containers the wrapper table lists (`starts`) are
  // read all at once, one header of each per round and each round's reads in one batch; then
  // what lies between them is walked one by one as above, so that the section is covered exactly
  // as the plain walk would cover it (a container the table does not list is still read, garbage
  // still refused, and two listed containers that overlap are an error).
  util::Status walk(const CodeSection& s, const std::vector<std::uint64_t>& starts, std::vector<FatEntry>& out, std::uint64_t& containers,
                    ByteSource* helper) const {
    std::vector<ContainerParse> cs;
    cs.reserve(starts.size());
    // each listed container must end before the next listed one starts: listed ranges are
    // disjoint, so no byte is parsed twice whatever the table says
    for (std::size_t k = 0; k < starts.size(); ++k)
      cs.emplace_back(starts[k], k + 1 < starts.size() ? starts[k + 1] : s.end(), m_name, s.name, s.offset);
    // a large table is read in two halves, the first on a second thread with its own source
    const std::size_t half = helper && cs.size() >= 64 ? cs.size() / 2 : 0;
    util::Status first, second;
    std::function<void()> beside;
    if (half) beside = [&] { first = read_listed(*helper, cs, 0, half); };
    run_beside(beside, [&] { second = read_listed(m_src, cs, half, cs.size()); });
    SP_TRY(std::move(first));
    SP_TRY(std::move(second));
    std::uint64_t pos = s.offset;
    for (auto& c : cs) {
      if (c.error()) return *c.error();
      if (c.start() < pos)
        return bad("fatbin containers overlap at " + where(s, c.start()) + " (the wrapper table lists one inside another)");
      SP_TRY(walk_range(s, pos, c.start(), out, containers));
      out.insert(out.end(), c.entries().begin(), c.entries().end());
      ++containers;
      pos = c.end();
    }
    return walk_range(s, pos, s.end(), out, containers);
  }

  // Containers inside an ordinary data section: only those that frame exactly count. nvcc aligns
  // every container to 8 bytes in the file, so only those offsets are looked at (one load per 8
  // bytes), and the search jumps over each container it accepts.
  void search(const CodeSection& s, std::vector<FatEntry>& out, std::uint64_t& containers) const {
    static const char magic[4] = {'\x50', '\xed', '\x55', '\xba'};
    // Read in chunks that start small after a container (the next one usually follows at once)
    // and double while nothing is found, up to 64 KiB (a buffer the allocator keeps: a larger one
    // is mapped afresh, and its page faults cost more than the extra reads).
    constexpr std::uint64_t k_first_chunk = 4096, k_max_chunk = 256 << 10;
    const std::uint64_t end = s.offset + s.size;
    std::vector<FatEntry> found;
    std::uint64_t p = (s.offset + 7) & ~std::uint64_t{7}, chunk_size = k_first_chunk;
    while (p + 16 <= end) {
      const std::uint64_t len = std::min(chunk_size, end - p) & ~std::uint64_t{7};
      const char* chunk = m_src.at(p, static_cast<std::size_t>(len));
      if (!chunk) return;
      std::uint64_t hit = len;
      for (std::uint64_t i = 0; i + 4 <= len; i += 8)
        if (std::memcmp(chunk + i, magic, 4) == 0) {
          hit = i;
          break;
        }
      if (hit == len) {
        p += len;
        chunk_size = std::min(chunk_size * 2, k_max_chunk);
        continue;
      }
      chunk_size = k_first_chunk;
      found.clear();
      std::uint64_t reached = p + hit;
      auto n = container(p + hit, end, s, found, &reached);  // moves the window: `chunk` is read again
      if (n) {
        out.insert(out.end(), found.begin(), found.end());
        ++containers;
        p = (p + hit + *n + 7) & ~std::uint64_t{7};
      } else {
        // past every header the failed candidate looked at: candidates nested inside one another
        // would otherwise be parsed over and over
        p = std::max(p + hit + 8, (reached + 7) & ~std::uint64_t{7});
      }
    }
  }
};

// Entries summed per target with plain integers first (a cuDNN library has thousands), then
// turned into the model's values once per target.
void add_entries(model::LibraryKernels& lib, const std::vector<FatEntry>& entries) {
  struct Sum {
    std::uint64_t images = 0, stored = 0, uncompressed = 0, lz4 = 0, zstd = 0;
    std::uint32_t isa = 0;  // major << 16 | minor, the newest
  };
  std::map<std::tuple<int, std::uint32_t, int, std::uint16_t>, Sum> sums;
  for (const auto& e : entries) {
    int kind = e.kind == 2 ? 0 : e.kind == 1 ? 1 : e.kind == 8 ? 2 : 3;  // the order of model::CodeKind
    int variant = (e.flags & k_flag_specific) ? 1 : (e.flags & k_flag_family) ? 2 : 0;
    auto& x = sums[{kind, e.arch, variant, kind == 3 ? e.kind : std::uint16_t{0}}];
    ++x.images;
    x.stored += e.stored;
    x.uncompressed += e.uncompressed;
    x.zstd += (e.flags & k_flag_zstd) ? 1 : 0;
    x.lz4 += (e.flags & k_flag_zstd) ? 0 : (e.flags & k_flag_lz4) ? 1 : 0;
    if (kind == 1) x.isa = std::max(x.isa, std::uint32_t{e.ptx_major} << 16 | e.ptx_minor);
  }
  std::map<model::GpuTarget, model::TargetImages> by;
  for (auto& t : lib.targets) by[t.target] = t;
  for (const auto& [key, x] : sums) {
    const auto& [kind, arch, variant, raw] = key;
    model::GpuTarget t;
    t.kind = static_cast<model::CodeKind>(kind);
    t.raw_kind = raw;
    t.arch = *model::Version::parse(std::to_string(arch / 10) + "." + std::to_string(arch % 10));
    t.variant = static_cast<model::ArchVariant>(variant);
    auto& ti = by[t];
    ti.target = t;
    ti.images += x.images;
    ti.stored_bytes += x.stored;
    ti.uncompressed_bytes += x.uncompressed;
    ti.lz4 += x.lz4;
    ti.zstd += x.zstd;
    if (kind == 1) {
      auto isa = model::Version::parse(std::to_string(x.isa >> 16) + "." + std::to_string(x.isa & 0xffff));
      if (isa && (!ti.ptx_isa || *ti.ptx_isa < *isa)) ti.ptx_isa = isa;
    }
  }
  lib.targets.clear();
  for (auto& [_, t] : by) lib.targets.push_back(std::move(t));
}

}  // namespace

bool looks_like_binary(std::string_view head) {
  return head.substr(0, 4) == std::string_view(
                                  "\x7f"
                                  "ELF",
                                  4) ||
         head.substr(0, 2) == "MZ";
}

namespace {

util::Result<model::LibraryKernels> read_from(ByteSource& src, const std::string& name, bool use_wrapper_table = true) {
  FatbinBytes r(src, name);
  model::LibraryKernels lib;
  lib.path = name;
  lib.file_size = src.size();
  std::vector<CodeSection> sections;
  const std::string head = r.text(0, static_cast<std::size_t>(std::min<std::uint64_t>(4, src.size())));
  if (head == std::string_view("\x7f"
                               "ELF",
                               4)) {
    lib.format = "ELF";
    SP_TRY_ASSIGN(sections, elf_sections(r, name));
  } else if (head.substr(0, 2) == "MZ") {
    lib.format = "PE";
    SP_TRY_ASSIGN(sections, pe_sections(r));
  } else {
    if (src.error()) return *src.error();
    return r.bad("not an ELF or PE file");
  }
  std::sort(sections.begin(), sections.end(), [](const CodeSection& a, const CodeSection& b) { return a.offset < b.offset; });
  for (std::size_t i = 1; i < sections.size(); ++i)
    if (sections[i].offset < sections[i - 1].offset + sections[i - 1].size)
      return util::Error(util::ErrorCode::invalid,
                         name + ": sections " + sections[i - 1].name + " and " + sections[i].name + " overlap in the file");
  // the data sections are searched on another thread (its own window over the same file) while
  // this one walks the fatbin sections, whose listed containers are read on two threads
  std::vector<std::vector<FatEntry>> found(sections.size());
  std::vector<std::uint64_t> counts(sections.size(), 0);
  std::vector<std::size_t> searched;
  for (std::size_t i = 0; i < sections.size(); ++i)
    if (sections[i].role == Role::search) searched.push_back(i);
  auto search_all = [&](ByteSource& source) {
    FatbinBytes b(source, name);
    for (auto i : searched) b.search(sections[i], found[i], counts[i]);
  };
  const bool threads = std::thread::hardware_concurrency() >= 2;
  std::unique_ptr<ByteSource> second = searched.empty() || !threads ? nullptr : src.another();
  std::unique_ptr<ByteSource> walk_helper = threads ? src.another() : nullptr;
  util::Status walked;
  std::function<void()> beside;
  if (second) beside = [&] { search_all(*second); };
  run_beside(beside, [&] {
    for (std::size_t i = 0; i < sections.size() && walked; ++i)
      if (sections[i].role == Role::fatbin)
        walked = r.walk(sections[i], use_wrapper_table ? listed_starts(r, sections, sections[i]) : std::vector<std::uint64_t>(), found[i],
                        counts[i], walk_helper.get());
  });
  if (!second && walked) search_all(src);
  if (src.error()) return *src.error();
  if (second && second->error()) return *second->error();
  if (walk_helper && walk_helper->error()) return *walk_helper->error();
  SP_TRY(std::move(walked));
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if (counts[i] == 0) continue;
    lib.containers += counts[i];
    if (std::find(lib.sections.begin(), lib.sections.end(), sections[i].name) == lib.sections.end())
      lib.sections.push_back(sections[i].name);
    add_entries(lib, found[i]);
  }
  if (src.error()) return *src.error();
  return lib;
}

}  // namespace

util::Result<model::LibraryKernels> read_gpu_code(std::string_view bytes, const std::string& name, bool use_wrapper_table) {
  MemorySource src(bytes);
  return read_from(src, name, use_wrapper_table);
}

util::Result<model::LibraryKernels> read_gpu_code(const std::filesystem::path& path) {
  int fd = util::io::open_read(path);
  if (fd < 0) {
    int e = errno;
    return util::Error(e == ENOENT ? util::ErrorCode::not_found : util::ErrorCode::io,
                       "cannot read " + path.string() + ": " + std::generic_category().message(e));
  }
  util::io::FileInfo info;
  if (util::io::stat_fd(fd, info) != 0 || !info.regular) {
    util::io::close(fd);
    return util::Error(util::ErrorCode::io, "cannot read " + path.string() + ": not a regular file");
  }
  auto r = [&] {
    FileSource src(fd, info.size, path.string());
    return read_from(src, path.string());
  }();
  util::io::close(fd);
  return r;
}

}  // namespace probe
