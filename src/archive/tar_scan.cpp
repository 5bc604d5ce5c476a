// The tar headers of an archive, read a second time, before libarchive reads them. stackpin stages
// an archive's files with libarchive, lists them in the receipt and the image's SBOM, and the
// Dockerfiles it generates unpack the same archive with GNU tar inside the image build. Tar has
// several places for one entry's name (the name field and the ustar prefix, a GNU long name
// record, a pax path record, a GNU sparse name), for its link target and for its size, and tar
// readers settle a conflict between them differently; where they do, the image holds another file
// than the one stackpin checked. So an archive is accepted only when every entry means the same
// thing to every reader, and refused when it does not:
//   - one GNU long name (L), one long link (K) and one pax header (x) at most before an entry, one
//     path=, linkpath=, size= and GNU.sparse.name= at most in that header, none of them empty;
//     an L and a path= (a K and a linkpath=, a GNU.sparse.name= and either) only when they are
//     the same bytes; a link target only for a link;
//   - pax global headers (g) that say nothing but comment= (path=, size= and the rest would apply
//     to every later entry for some readers and to none for others), and no hdrcharset=;
//   - pax records exactly "LEN KEY=VALUE\n" end to end (a reader may skip the rest of a header
//     after a malformed one while another reads on);
//   - a ustar prefix field only under the POSIX magic "ustar\0" "00";
//   - no data for a hardlink, symlink, device, directory or FIFO, nor for a file whose name ends
//     in '/' (taken for a directory), and old GNU sparse maps laid out the one way every reader
//     reads them;
//   - only the entry types every reader knows, headers whose checksum and numeric fields parse
//     the one way, and nothing but zeros after the end-of-archive marker.
// The scan keeps one header block, the body of one extended header (bounded) and the names of the
// entries fed ahead of libarchive; file data are passed by counting. For every entry it queues the
// name all readers agree on, which extract.cpp compares with the name libarchive returns.
#include "tar_scan.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "unsafe_entry.hpp"
#include "util/strings.hpp"

namespace archive_io::detail {

namespace {

using util::Error;
using util::ErrorCode;

constexpr std::size_t k_block = 512;
// ustar header fields
constexpr std::size_t k_name = 0, k_size = 124, k_checksum = 148, k_type = 156, k_magic = 257, k_version = 263, k_prefix = 345;
// old GNU header fields (in the place of the prefix): four sparse pairs of 12-byte offset and
// length, the "more pairs follow" flag, the file's full size; an extension block holds 21 pairs
// and its own flag
constexpr std::size_t k_gnu_sparse = 386, k_gnu_extended = 482, k_gnu_realsize = 483, k_ext_extended = 504;

std::uint64_t padding(std::uint64_t n) { return (k_block - n % k_block) % k_block; }

// A NUL-terminated field (or all of it).
std::string text_field(const unsigned char* p, std::size_t n) {
  const void* nul = std::memchr(p, 0, n);
  std::size_t len = nul ? static_cast<std::size_t>(static_cast<const unsigned char*>(nul) - p) : n;
  return std::string(reinterpret_cast<const char*>(p), len);
}

// A numeric header field in the forms every reader takes the same way: octal digits after
// leading spaces, then only NULs and spaces to the end of the field; or base-256 with a first
// byte of 0x80 (positive). Values past INT64_MAX are refused too.
std::optional<std::uint64_t> number_field(const unsigned char* p, std::size_t n) {
  if (p[0] == 0x80) {
    std::uint64_t v = 0;
    for (std::size_t i = 1; i < n; ++i) {
      if (v >> 55) return std::nullopt;
      v = (v << 8) | p[i];
    }
    if (v >= static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    return v;
  }
  std::size_t i = 0;
  while (i < n && p[i] == ' ') ++i;
  const std::size_t first = i;
  std::uint64_t v = 0;
  for (; i < n && p[i] >= '0' && p[i] <= '7'; ++i) v = v * 8 + (p[i] - '0');  // 12 digits: 36 bits
  if (i == first) return std::nullopt;
  for (; i < n; ++i)
    if (p[i] != ' ' && p[i] != 0) return std::nullopt;
  return v;
}

// The header's checksum: the sum of its bytes with the checksum field as spaces, taken as unsigned
// bytes (POSIX) or as signed ones (old tars); either one matching is a valid header.
bool checksum_ok(const unsigned char* h) {
  if (h[k_checksum] == 0x80) return false;
  auto recorded = number_field(h + k_checksum, 8);
  if (!recorded) return false;
  std::int64_t unsigned_sum = 0, signed_sum = 0;
  for (std::size_t i = 0; i < k_block; ++i) {
    unsigned char c = i >= k_checksum && i < k_checksum + 8 ? ' ' : h[i];
    unsigned_sum += c;
    signed_sum += static_cast<signed char>(c);
  }
  return static_cast<std::int64_t>(*recorded) == unsigned_sum || static_cast<std::int64_t>(*recorded) == signed_sum;
}

std::string type_text(unsigned char t) {
  char buf[16];
  if (t >= 0x20 && t < 0x7f)
    std::snprintf(buf, sizeof buf, "'%c'", static_cast<char>(t));
  else
    std::snprintf(buf, sizeof buf, "0x%02X", static_cast<unsigned>(t));
  return buf;
}

std::string record_text(unsigned char t, bool plural = false) {
  const char* what = t == 'L'   ? "GNU long name record"
                     : t == 'K' ? "GNU long link record"
                     : t == 'x' ? "pax extended header"
                                : "pax global header";
  return std::string(what) + (plural ? "s" : "") + " (" + static_cast<char>(t) + ")";
}

const char* kind_text(unsigned char t) {
  switch (t) {
    case '1': return "hardlink";
    case '2': return "symlink";
    case '3': return "character device";
    case '4': return "block device";
    case '5': return "directory";
    default: return "FIFO";
  }
}

std::string in_quotes(std::string_view s) { return "\"" + util::printable(s) + "\""; }

std::optional<std::uint64_t> decimal(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

}  // namespace

util::Status TarHeaderScan::feed(const void* data, std::size_t len) {
  if (m_error) return *m_error;
  const auto* p = static_cast<const unsigned char*>(data);
  auto advance = [&](std::size_t n) {
    p += n;
    len -= n;
    m_offset += n;
  };
  util::Status st;
  while (len > 0 && st) {
    switch (m_state) {
      case State::skip: {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(m_skip, len));
        m_skip -= n;
        advance(n);
        if (m_skip == 0) m_state = State::header;
        break;
      }
      case State::body: {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(m_body_left, len));
        m_body.append(reinterpret_cast<const char*>(p), n);
        m_body_left -= n;
        advance(n);
        if (m_body_left == 0) st = on_body();
        break;
      }
      case State::header:
      case State::sparse: {
        const std::size_t n = std::min(k_block - m_have, len);
        std::memcpy(m_block + m_have, p, n);
        m_have += n;
        advance(n);
        if (m_have == k_block) {
          m_have = 0;
          m_block_at = m_offset - k_block;
          st = m_state == State::header ? on_header() : on_sparse_block();
        }
        break;
      }
      case State::end: {
        const unsigned char* nonzero = std::find_if(p, p + len, [](unsigned char c) { return c != 0; });
        if (nonzero != p + len) {
          Error e(ErrorCode::unsafe, "the archive holds data at byte " + std::to_string(m_offset + (nonzero - p)) +
                                         " of its tar stream, after its end-of-archive marker (byte " + std::to_string(m_end_at) +
                                         "): a tar reader that reads on past the marker finds other entries there");
          e.hints.push_back("the archive is not NVIDIA's original or was tampered with; nothing was staged");
          st = std::move(e);
        }
        advance(len);
        break;
      }
      case State::failed: return *m_error;
    }
  }
  if (!st) {
    m_error = st.error();
    m_state = State::failed;
    return st;
  }
  return {};
}

util::Status TarHeaderScan::finish() {
  if (m_error) return *m_error;
  util::Status st;
  const std::string at = " (byte " + std::to_string(m_offset) + ")";
  switch (m_state) {
    case State::end:
    case State::failed: break;
    case State::header:
      if (m_have == 0) {
        // a stream may stop at a block boundary without the marker; not after an entry's extended headers
        if (m_pending.long_name || m_pending.long_link || m_pending.pax)
          st = unsafe_entry(known_name(), "its extended headers are followed by the end of the tar stream, not by an entry");
        break;
      }
      st = Error(ErrorCode::invalid, "the tar stream ends inside a header" + at);
      break;
    case State::body: st = Error(ErrorCode::invalid, std::string("the tar stream ends inside a ") + record_text(m_body_type) + at); break;
    case State::skip: st = Error(ErrorCode::invalid, "the tar stream ends inside the data of " + in_quotes(m_entry_name) + at); break;
    case State::sparse:
      st = Error(ErrorCode::invalid, "the tar stream ends inside the sparse map of " + in_quotes(m_entry_name) + at);
      break;
  }
  if (!st) {
    m_error = st.error();
    m_state = State::failed;
  }
  return st;
}

std::optional<std::string> TarHeaderScan::take_name() {
  if (m_names.empty()) return std::nullopt;
  std::string name = std::move(m_names.front());
  m_names.pop_front();
  return name;
}

std::string TarHeaderScan::known_name() const {
  if (m_pending.sparse_name) return *m_pending.sparse_name;
  if (m_pending.path) return *m_pending.path;
  if (m_pending.long_name) return *m_pending.long_name;
  return m_header_name;
}

void TarHeaderScan::data_then_header(std::uint64_t bytes) {
  m_skip = bytes;
  m_state = bytes ? State::skip : State::header;
}

util::Status TarHeaderScan::on_header() {
  const unsigned char* h = m_block;
  if (std::all_of(h, h + k_block, [](unsigned char c) { return c == 0; })) {
    if (m_pending.long_name || m_pending.long_link || m_pending.pax)
      return unsafe_entry(known_name(), "its extended headers are followed by the end-of-archive marker, not by an entry");
    m_state = State::end;
    m_end_at = m_block_at;
    return {};
  }
  m_header_name = text_field(h + k_name, 100);
  const std::string at = " at byte " + std::to_string(m_block_at) + " (named " + in_quotes(m_header_name) + ")";
  if (!checksum_ok(h)) return Error(ErrorCode::invalid, "the tar header" + at + " fails its checksum");
  auto size = number_field(h + k_size, 12);
  if (!size) return Error(ErrorCode::invalid, "the tar header" + at + " has a size field that is not a number");
  const unsigned char t = h[k_type];
  if (t == 0 || (t >= '0' && t <= '7') || t == 'S') return on_entry(h, *size);
  if (t != 'L' && t != 'K' && t != 'x' && t != 'g')
    return unsafe_entry(known_name(), "its header has the type flag " + type_text(t) +
                                          ", which tar readers handle differently (as a regular file, as metadata, or not at all)");
  if (++m_pending.headers > k_max_special)
    return unsafe_entry(known_name(), "more than " + std::to_string(k_max_special) + " extended headers before one entry");
  if ((t == 'L' && m_pending.long_name) || (t == 'K' && m_pending.long_link) || (t == 'x' && m_pending.pax))
    return unsafe_entry(known_name(),
                        "two " + record_text(t, true) + " before one entry: tar readers keep the first, keep the last, or stop");
  if (t == 'g' && (m_pending.long_name || m_pending.long_link || m_pending.pax))
    return unsafe_entry(known_name(), "a pax global header (g) between an entry's extended headers and the entry");
  const bool name_record = t == 'L' || t == 'K';
  const std::size_t bound = name_record ? k_max_long_name : k_max_extended;
  if (*size > bound)
    return unsafe_entry(known_name(), std::string("its ") + record_text(t) + " is " + std::to_string(*size) +
                                          " bytes long; stackpin reads at most " + std::to_string(bound));
  if (name_record && *size == 0) return unsafe_entry(known_name(), std::string("an empty ") + record_text(t));
  m_body_type = static_cast<char>(t);
  m_body.clear();
  m_body.reserve(static_cast<std::size_t>(*size));
  m_body_left = *size;
  m_body_padding = padding(*size);
  if (*size == 0) return on_body();
  m_state = State::body;
  return {};
}

util::Status TarHeaderScan::on_body() {
  data_then_header(m_body_padding);
  if (m_body_type == 'L' || m_body_type == 'K') {
    // the record is one NUL-terminated name: nothing may follow the NUL
    const std::size_t nul = m_body.find('\0');
    std::string name = m_body.substr(0, nul);
    if (name.empty()) return unsafe_entry(known_name(), std::string("an empty ") + record_text(static_cast<unsigned char>(m_body_type)));
    if (nul != std::string::npos && m_body.find_first_not_of('\0', nul) != std::string::npos)
      return unsafe_entry(name, std::string("its ") + record_text(static_cast<unsigned char>(m_body_type)) +
                                    " holds more bytes after the NUL that ends the name");
    (m_body_type == 'L' ? m_pending.long_name : m_pending.long_link) = std::move(name);
    return {};
  }
  if (m_body_type == 'x') m_pending.pax = true;
  return pax_records(static_cast<unsigned char>(m_body_type));
}

util::Status TarHeaderScan::pax_records(unsigned char type) {
  std::string_view body(m_body);
  std::size_t at = 0;  // in the body, for messages
  auto malformed = [&](const std::string& why) {
    return unsafe_entry(known_name(), std::string("a malformed record at byte ") + std::to_string(at) + " of its " + record_text(type) +
                                          " (" + why + "): tar readers skip it, skip the rest of the header, or read on differently");
  };
  while (!body.empty()) {
    // "LEN KEY=VALUE\n", LEN the decimal length of the whole record, one space after it
    std::size_t digits = 0, len = 0;
    while (digits < body.size() && digits < 7 && body[digits] >= '0' && body[digits] <= '9') len = len * 10 + (body[digits++] - '0');
    if (digits == 0) return malformed("it does not start with its length");
    if (digits >= body.size() || body[digits] != ' ') return malformed("its length is not followed by one space");
    if (len > body.size()) return malformed("its length runs past the end of the header");
    if (len < digits + 3 || body[len - 1] != '\n') return malformed("its length does not end on its newline");
    std::string_view record = body.substr(digits + 1, len - digits - 2);
    const std::size_t eq = record.find('=');
    if (eq == std::string_view::npos) return malformed("it has no '='");
    std::string_view key = record.substr(0, eq), value = record.substr(eq + 1);
    if (key.empty() || key.front() == ' ' || key.find('\0') != std::string_view::npos)
      return malformed("its keyword is empty, starts with a space or holds a NUL");
    body.remove_prefix(len);
    at += len;

    if (type == 'g') {
      if (key == "comment") continue;
      return unsafe_entry(
          known_name(), "a pax global header (g) sets " + in_quotes(key) + ": GNU tar applies it to every later entry, libarchive to none");
    }
    if (key == "path" || key == "linkpath" || key == "GNU.sparse.name") {
      auto& slot = key == "path" ? m_pending.path : key == "linkpath" ? m_pending.linkpath : m_pending.sparse_name;
      const std::string what = std::string(key) + "=";
      if (slot)
        return unsafe_entry(known_name(), "its pax header holds " + what + " twice (" + in_quotes(*slot) + " and " + in_quotes(value) +
                                              "): tar readers take one or the other");
      if (value.empty())
        return unsafe_entry(known_name(), "its pax header holds an empty " + what + " (ignored by some tar readers, not by others)");
      if (value.find('\0') != std::string_view::npos)
        return unsafe_entry(known_name(), "its pax header's " + what + " holds a NUL (tar readers cut the name there or not)");
      slot = std::string(value);
    } else if (key == "size") {
      if (m_pending.size) return unsafe_entry(known_name(), "its pax header holds size= twice");
      auto v = decimal(value);
      if (!v) return unsafe_entry(known_name(), "its pax header's size=" + util::printable(value) + " is not a decimal number");
      m_pending.size = *v;
    } else if (key == "hdrcharset") {
      return unsafe_entry(known_name(),
                          "its pax header sets hdrcharset=" + util::printable(value) + ": tar readers then decode its names differently");
    } else if (key == "GNU.dumpdir" || key.substr(0, 11) == "GNU.volume.") {
      return unsafe_entry(known_name(), "its pax header holds " + in_quotes(key) + ", which GNU tar acts on and libarchive ignores");
    }
  }
  return {};
}

util::Status TarHeaderScan::on_entry(const unsigned char* h, std::uint64_t header_size) {
  const unsigned char t = h[k_type];
  const Pending p = std::move(m_pending);
  m_pending = Pending{};
  // The name from the header: the name field, after the prefix field and a '/' under a magic that
  // starts with "ustar" (not the old GNU magic, whose prefix area holds other fields). A prefix is
  // accepted only under POSIX's "ustar\0" "00", the one magic under which every reader joins it.
  const bool gnu = std::memcmp(h + k_magic, "ustar  \0", 8) == 0;
  const bool ustar = !gnu && std::memcmp(h + k_magic, "ustar", 5) == 0;
  const bool posix = std::memcmp(h + k_magic, "ustar\0", 6) == 0 && h[k_version] == '0' && h[k_version + 1] == '0';
  const std::string prefix = ustar ? text_field(h + k_prefix, 155) : std::string();
  std::string name = text_field(h + k_name, 100);
  if (!prefix.empty()) name = prefix + (prefix.back() == '/' ? "" : "/") + name;
  const std::string resolved = p.sparse_name ? *p.sparse_name : p.path ? *p.path : p.long_name ? *p.long_name : name;
  m_entry_name = resolved;

  if (p.long_name && p.path && *p.long_name != *p.path)
    return unsafe_entry(resolved, "its GNU long name record (L) says " + in_quotes(*p.long_name) +
                                      " and its pax header path=" + in_quotes(*p.path) +
                                      ": tar readers take one or the other, so the image would not hold the file stackpin staged");
  if (p.sparse_name && (p.path || p.long_name) && *p.sparse_name != (p.path ? *p.path : *p.long_name))
    return unsafe_entry(resolved, "its pax header's GNU.sparse.name=" + in_quotes(*p.sparse_name) + " and its " +
                                      (p.path ? "path=" : "GNU long name record (L) ") + in_quotes(p.path ? *p.path : *p.long_name) +
                                      " name different files");
  if (p.long_link && p.linkpath && *p.long_link != *p.linkpath)
    return unsafe_entry(resolved, "its GNU long link record (K) says " + in_quotes(*p.long_link) +
                                      " and its pax header linkpath=" + in_quotes(*p.linkpath) + ": tar readers take one or the other");
  if ((p.long_link || p.linkpath) && t != '1' && t != '2')
    return unsafe_entry(resolved, std::string("a link target (") + (p.long_link ? "a GNU long link record" : "a pax linkpath=") +
                                      ") for an entry that is not a link: tar readers make it a hardlink or a regular file");
  if (!prefix.empty() && !posix)
    return unsafe_entry(resolved, "its header's prefix field " + in_quotes(prefix) +
                                      " is part of its name for some tar readers and not for others (its magic is " +
                                      in_quotes(std::string(reinterpret_cast<const char*>(h + k_magic), 8)) + ", not \"ustar\\0\" \"00\")");
  if (gnu && t != 'S' && (h[k_gnu_sparse] || h[k_gnu_extended] || h[k_gnu_realsize]))
    return unsafe_entry(resolved, "its header holds old GNU sparse fields but its type is " + type_text(t) +
                                      ": tar readers disagree on where its data end");
  const std::uint64_t data = p.size ? *p.size : header_size;
  if (t >= '1' && t <= '6' && (header_size || data))
    return unsafe_entry(resolved, std::string("a ") + kind_text(t) + " that declares " + std::to_string(std::max(header_size, data)) +
                                      " bytes of data: tar readers read them or not, and then read the entries after it differently");
  if (!resolved.empty() && resolved.back() == '/' && t != '5' && (data || t == 'S'))
    return unsafe_entry(resolved, "a file whose name ends in '/', with " + std::to_string(data) +
                                      " bytes of data: a tar reader that takes it for a directory reads its data as headers");
  m_names.push_back(resolved);
  ++m_entries;
  if (t != 'S') {
    data_then_header(data + padding(data));
    return {};
  }
  // old GNU sparse: the map in the header, then in extension blocks while each says more follow,
  // then the data regions one after the other
  if (!gnu) return unsafe_entry(resolved, "an old GNU sparse entry ('S') without GNU's magic: tar readers disagree on where its data are");
  if (p.pax) return unsafe_entry(resolved, "a pax header before an old GNU sparse entry ('S'): tar readers disagree on which size counts");
  m_sparse_size = header_size;
  m_sparse_sum = 0;
  m_sparse_closed = m_sparse_partial = false;
  SP_TRY(sparse_pairs(h + k_gnu_sparse, 4, h[k_gnu_extended] != 0));
  if (h[k_gnu_extended]) {
    m_state = State::sparse;
    return {};
  }
  return sparse_end();
}

util::Status TarHeaderScan::on_sparse_block() {
  SP_TRY(sparse_pairs(m_block, 21, m_block[k_ext_extended] != 0));
  if (m_block[k_ext_extended]) return {};
  return sparse_end();
}

// Every reader takes the same regions from a map whose pairs are all set up to its first empty one
// and empty after it (one reader stops at an empty offset, another at an empty length), that is
// full when the block says more pairs follow (one reader stops at an empty pair, another reads the
// next block anyway), whose regions but the last are whole blocks (one reader starts each region
// on a block, another reads them one after the other) and whose regions add up to the data the
// header declares.
util::Status TarHeaderScan::sparse_pairs(const unsigned char* pairs, int count, bool extended) {
  for (int i = 0; i < count; ++i, pairs += 24) {
    const bool has_offset = pairs[0] != 0, has_length = pairs[12] != 0;
    if (!has_offset && !has_length) {
      m_sparse_closed = true;
      continue;
    }
    if (has_offset != has_length || m_sparse_closed)
      return unsafe_entry(
          m_entry_name,
          "its old GNU sparse map has a pair with one field empty, or a pair after an empty one: tar readers stop at different pairs");
    auto offset = number_field(pairs, 12), length = number_field(pairs + 12, 12);
    if (!offset || !length)
      return Error(ErrorCode::invalid, "the sparse map of " + in_quotes(m_entry_name) + " holds a field that is not a number (byte " +
                                           std::to_string(m_block_at) + ")");
    if (m_sparse_partial)
      return unsafe_entry(m_entry_name,
                          "a region of its sparse map other than the last is not a whole number of 512-byte blocks: tar readers place the "
                          "data after it differently");
    m_sparse_partial = *length % k_block != 0;
    m_sparse_sum += *length;  // both below 2^63
    if (m_sparse_sum > m_sparse_size)
      return unsafe_entry(m_entry_name,
                          "its sparse map's regions hold more than the " + std::to_string(m_sparse_size) + " bytes its header stores");
  }
  if (extended && m_sparse_closed)
    return unsafe_entry(m_entry_name,
                        "its old GNU sparse map says more pairs follow after an empty one: tar readers stop at different pairs");
  return {};
}

util::Status TarHeaderScan::sparse_end() {
  if (m_sparse_sum != m_sparse_size)
    return unsafe_entry(m_entry_name, "its sparse map's regions hold " + std::to_string(m_sparse_sum) + " bytes but its header stores " +
                                          std::to_string(m_sparse_size) + ": tar readers read the rest as data or as headers");
  data_then_header(m_sparse_size + padding(m_sparse_size));
  return {};
}

}  // namespace archive_io::detail
