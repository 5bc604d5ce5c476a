#pragma once
// A second reading of the headers of the plain tar stream libarchive extracts (tar_scan.cpp says
// why): every entry must mean the same file to libarchive, which stages it, and to GNU tar, which
// unpacks the same archive inside the image a generated Dockerfile builds.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "util/result.hpp"

namespace archive_io::detail {

class TarHeaderScan {
 public:
  // Bounds on what is held in memory: a GNU long name or long link record (L, K), twice the longest
  // name paths.cpp accepts; a pax header (x, g), 1 MiB, so that a path= record too long for
  // paths.cpp (400 KB of "a/a/...") is refused there, by its length, as every other name is.
  static constexpr std::size_t k_max_long_name = 8192;
  static constexpr std::size_t k_max_extended = 1 << 20;
  static constexpr int k_max_special = 16;  // extended headers before one entry

  // The next bytes of the tar stream, in order, in chunks of any size. Errors: unsafe
  // (unsafe_entry: an entry that tar readers read differently), invalid (a header that is corrupt:
  // its checksum, a numeric field). After an error every later call returns it again.
  util::Status feed(const void* data, std::size_t len);
  // The end of the stream. Errors: invalid (it stops inside a header or an entry's data), unsafe
  // (extended headers with no entry after them).
  util::Status finish();

  // The name of the oldest entry not taken yet, as every reader resolves it (the pax path, the GNU
  // long name, the ustar prefix): nullopt when none is waiting. The caller takes one for every
  // entry libarchive reads, so the queue holds only the entries of the bytes fed ahead of it.
  std::optional<std::string> take_name();
  std::size_t names_waiting() const { return m_names.size(); }
  std::uint64_t entries() const { return m_entries; }
  bool ended() const { return m_state == State::end; }

 private:
  enum class State { header, body, skip, sparse, end, failed };
  // What the extended headers before an entry said, until the entry's own header comes.
  struct Pending {
    std::optional<std::string> long_name, long_link;         // L, K
    bool pax = false;                                        // an x header was read
    std::optional<std::string> path, linkpath, sparse_name;  // its path=, linkpath=, GNU.sparse.name=
    std::optional<std::uint64_t> size;                       // its size=
    int headers = 0;                                         // L, K, x and g headers read
  };

  util::Status on_header();
  util::Status on_body();
  util::Status on_entry(const unsigned char* h, std::uint64_t header_size);
  util::Status on_sparse_block();
  util::Status sparse_pairs(const unsigned char* p, int count, bool extended);
  util::Status sparse_end();
  util::Status pax_records(unsigned char type);
  std::string known_name() const;
  void data_then_header(std::uint64_t bytes);

  State m_state = State::header;
  unsigned char m_block[512] = {};
  std::size_t m_have = 0;        // bytes of m_block filled
  std::uint64_t m_offset = 0;    // stream bytes read
  std::uint64_t m_block_at = 0;  // where the block in m_block began
  std::uint64_t m_end_at = 0;    // where the end-of-archive marker began
  char m_body_type = 0;          // L, K, x or g: the body being read
  std::string m_body;
  std::uint64_t m_body_left = 0, m_body_padding = 0;
  std::uint64_t m_skip = 0;   // data and padding still to pass
  std::string m_header_name;  // the name field of the header being read (messages)
  Pending m_pending;
  // an old GNU sparse entry whose extension blocks are being read
  std::string m_entry_name;
  std::uint64_t m_sparse_size = 0, m_sparse_sum = 0;
  bool m_sparse_closed = false, m_sparse_partial = false;
  std::deque<std::string> m_names;
  std::uint64_t m_entries = 0;
  std::optional<util::Error> m_error;
};

}  // namespace archive_io::detail
