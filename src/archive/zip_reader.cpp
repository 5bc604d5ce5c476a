// stackpin reads zips itself rather than through libarchive's stream reader, for two reasons: the
// central directory is the authority on what a zip holds (zip_directory.cpp), and a zip's entries
// are independent deflate streams that can be inflated on several cores, which a stream reader
// cannot do. The price is checking here what a stream reader checks as it goes: each local header
// against the directory, and no two entries sharing bytes (the "overlapping files" zip bomb).
#include "zip_reader.hpp"

#include <algorithm>
#include <cstring>

#if STACKPIN_HAVE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

#include "util/strings.hpp"

namespace archive_io::detail {

namespace {

constexpr std::uint32_t k_local = 0x04034b50, k_descriptor = 0x08074b50;

util::Error bad(const ZipEntry& z, const std::string& why) {
  return zip_entry_error(z.name, why,
                         "the archive matches its pin, so this is how it was made: a zip whose local headers disagree with its directory "
                         "is unpacked differently by different tools; repack it, or pin NVIDIA's original; nothing was staged");
}

}  // namespace

SealedReader::SealedReader(const PinnedFile& f) : m_f(f), m_buf(new char[PinnedFile::k_seal_chunk]) {}

util::Status SealedReader::load(std::uint64_t index) {
  if (index == m_index) return {};
  m_index = ~std::uint64_t{0};
  SP_TRY_ASSIGN(auto n, m_f.read_sealed_chunk(index, m_buf.get()));
  m_index = index;
  m_len = n;
  return {};
}

util::Result<std::pair<const char*, std::size_t>> SealedReader::view(std::uint64_t at, std::size_t max) {
  if (at >= m_f.size()) return util::Error(util::ErrorCode::invalid, "corrupt zip: a record runs past the end of the file");
  const std::uint64_t index = at / PinnedFile::k_seal_chunk;
  SP_TRY(load(index));
  const std::size_t off = static_cast<std::size_t>(at - index * PinnedFile::k_seal_chunk);
  return std::pair<const char*, std::size_t>{m_buf.get() + off, std::min(max, m_len - off)};
}

util::Status SealedReader::read(std::uint64_t at, void* buf, std::size_t len) {
  if (at > m_f.size() || len > m_f.size() - at)
    return util::Error(util::ErrorCode::invalid, "corrupt zip: a record runs past the end of the file");
  auto* out = static_cast<char*>(buf);
  while (len > 0) {
    SP_TRY_ASSIGN(auto v, view(at, len));
    std::memcpy(out, v.first, v.second);
    out += v.second;
    at += v.second;
    len -= v.second;
  }
  return {};
}

util::Result<std::vector<std::uint64_t>> locate_zip_entries(const ZipDirectory& dir, const std::vector<std::size_t>& order,
                                                            SealedReader& r) {
  std::vector<std::uint64_t> data_at_of(dir.entries.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    const ZipEntry& z = dir.entries[order[k]];
    const std::uint64_t limit = k + 1 < order.size() ? dir.entries[order[k + 1]].local_offset : dir.cd_offset;
    unsigned char h[30];
    if (limit < z.local_offset || limit - z.local_offset < 30) return bad(z, "has no room for its local header (entries overlap)");
    SP_TRY(r.read(z.local_offset, h, sizeof h));
    if (le32(h) != k_local) return bad(z, "has no local header where the central directory says it starts");
    const std::uint16_t flags = le16(h + 6), method = le16(h + 8);
    const std::size_t name_len = le16(h + 26), extra_len = le16(h + 28);
    if (limit - z.local_offset - 30 < name_len + extra_len) return bad(z, "has a local header that runs into the next entry");
    std::string header(name_len + extra_len, '\0');
    SP_TRY(r.read(z.local_offset + 30, header.data(), header.size()));
    if (header.compare(0, name_len, z.name) != 0)
      return bad(z,
                 "is named \"" + util::printable(header.substr(0, name_len)) + "\" in its local header (tools would disagree on its name)");
    if (method != z.method) return bad(z, "has another compression method in its local header than in the central directory");
    if ((flags & 0x0041u) != (z.flags & 0x0041u) || (flags & 0x0800u) != (z.flags & 0x0800u))
      return bad(z, "has other flags in its local header than in the central directory");
    // the local zip64 field, if any: its sizes, and 8-byte sizes in a data descriptor
    bool local_zip64 = false;
    std::uint64_t lcomp = le32(h + 18), lun = le32(h + 22);
    const auto* x = reinterpret_cast<const unsigned char*>(header.data()) + name_len;
    for (std::size_t xp = 0; xp + 4 <= extra_len;) {
      std::uint16_t id = le16(x + xp), len = le16(x + xp + 2);
      if (xp + 4 + len > extra_len) return bad(z, "has an extra field that runs past its local header");
      if (id == 0x0001) {
        local_zip64 = true;
        std::size_t f = xp + 4, end = xp + 4 + len;
        if (lun == 0xFFFFFFFFu && f + 8 <= end) {
          lun = le64(x + f);
          f += 8;
        }
        if (lcomp == 0xFFFFFFFFu && f + 8 <= end) lcomp = le64(x + f);
      }
      xp += 4 + len;
    }
    const std::uint64_t data_at = z.local_offset + 30 + name_len + extra_len;
    if (z.compressed > limit - data_at) return bad(z, "has data that run into the next entry or the central directory (entries overlap)");
    std::uint64_t end = data_at + z.compressed;
    if (flags & 0x0008u) {
      // sizes and CRC in a data descriptor after the data: an optional signature, the CRC, then
      // 4-byte sizes (8 with a zip64 local field); the one that matches the directory is it
      unsigned char d[24] = {};
      const std::size_t room = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof d, limit - end));
      if (room) SP_TRY(r.read(end, d, room));
      std::size_t at = room >= 4 && le32(d) == k_descriptor ? 4 : 0;
      auto matches = [&](bool wide) {
        std::size_t need = at + 4 + (wide ? 16 : 8);
        if (need > room || le32(d + at) != z.crc32) return std::size_t{0};
        std::uint64_t c = wide ? le64(d + at + 4) : le32(d + at + 4), u = wide ? le64(d + at + 12) : le32(d + at + 8);
        return c == z.compressed && u == z.uncompressed ? need : std::size_t{0};
      };
      std::size_t used = matches(local_zip64);
      if (!used) used = matches(!local_zip64);
      if (!used) return bad(z, "has no data descriptor that agrees with the central directory (CRC-32 and sizes)");
      end += used;
    } else if (le32(h + 14) != z.crc32 || lcomp != z.compressed || lun != z.uncompressed) {
      return bad(z, "has another CRC-32 or size in its local header than in the central directory");
    }
    if (end > limit) return bad(z, "runs into the next entry (entries overlap)");
    data_at_of[order[k]] = data_at;
  }
  return data_at_of;
}

#if STACKPIN_HAVE_ISAL

struct Inflater::State {
  inflate_state s;
};

Inflater::Inflater() : m_state(std::make_unique<State>()) { reset(); }
Inflater::~Inflater() = default;
void Inflater::reset() {
  isal_inflate_init(&m_state->s);
  m_state->s.crc_flag = ISAL_DEFLATE;
  m_error.clear();
}
// ISA-L reads its input up to 8 bytes at a time into a bit buffer: what is left there at the
// end, in whole bytes, came after the stream
std::size_t Inflater::read_ahead() const {
  return m_state->s.read_in_length > 0 ? static_cast<std::size_t>(m_state->s.read_in_length) / 8 : 0;
}

bool Inflater::run(const unsigned char* in, std::size_t in_len, unsigned char* out, std::size_t cap, std::size_t& used,
                   std::size_t& produced, bool& end) {
  auto& s = m_state->s;
  s.next_in = const_cast<unsigned char*>(in);
  s.avail_in = static_cast<std::uint32_t>(in_len);
  s.next_out = out;
  s.avail_out = static_cast<std::uint32_t>(cap);
  int rc = isal_inflate(&s);
  used = in_len - s.avail_in;
  produced = cap - s.avail_out;
  end = s.block_state == ISAL_BLOCK_FINISH;
  if (rc < 0) {
    m_error = rc == ISAL_INVALID_BLOCK      ? "invalid deflate block"
              : rc == ISAL_INVALID_SYMBOL   ? "invalid deflate symbol"
              : rc == ISAL_INVALID_LOOKBACK ? "a back-reference before the start of the data"
                                            : "deflate error " + std::to_string(rc);
    return false;
  }
  return true;
}

std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t len) {
  return crc32_gzip_refl(crc, static_cast<const unsigned char*>(data), len);
}

#else

struct Inflater::State {
  z_stream s{};
  bool open = false;
};

Inflater::Inflater() : m_state(std::make_unique<State>()) { reset(); }
Inflater::~Inflater() {
  if (m_state->open) inflateEnd(&m_state->s);
}
void Inflater::reset() {
  if (m_state->open) inflateEnd(&m_state->s);
  m_state->s = z_stream{};
  m_state->open = inflateInit2(&m_state->s, -15) == Z_OK;
  m_error.clear();
}
std::size_t Inflater::read_ahead() const { return 0; }  // zlib stops at the stream's last byte

bool Inflater::run(const unsigned char* in, std::size_t in_len, unsigned char* out, std::size_t cap, std::size_t& used,
                   std::size_t& produced, bool& end) {
  auto& s = m_state->s;
  used = produced = 0;
  end = false;
  if (!m_state->open) {
    m_error = "zlib could not start";
    return false;
  }
  s.next_in = const_cast<unsigned char*>(in);
  s.avail_in = static_cast<uInt>(in_len);
  s.next_out = out;
  s.avail_out = static_cast<uInt>(cap);
  int rc = inflate(&s, Z_NO_FLUSH);
  used = in_len - s.avail_in;
  produced = cap - s.avail_out;
  end = rc == Z_STREAM_END;
  if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
    m_error = s.msg ? s.msg : "inflate error " + std::to_string(rc);
    return false;
  }
  return true;
}

std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t len) {
  return static_cast<std::uint32_t>(crc32(crc, static_cast<const Bytef*>(data), static_cast<uInt>(len)));
}

#endif

}  // namespace archive_io::detail
