// stackpin's own zip reader: zips written byte by byte here (stored and deflate entries, data
// descriptors with and without their signature, 4- and 8-byte sizes), each hostile variant a zip
// that some tool would unpack differently from another: local headers that disagree with the
// central directory, entries that share bytes, data that inflate to more or less than declared,
// bytes after the end of a deflate stream. The layout is checked before anything is written;
// what the threads write does not depend on how many there are.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "archive/extract.hpp"
#include "crypto/sha256.hpp"
#include "test_support.hpp"
#include "tree.hpp"

namespace zip_reader_test {

namespace {
namespace fs = std::filesystem;
using archive_io::PinnedFile;
using testing_support::ScratchDir;
using util::ErrorCode;

void put16(std::string& s, unsigned v) {
  s += static_cast<char>(v & 0xFF);
  s += static_cast<char>((v >> 8) & 0xFF);
}
void put32(std::string& s, std::uint32_t v) {
  put16(s, v & 0xFFFF);
  put16(s, v >> 16);
}
void put64(std::string& s, std::uint64_t v) {
  put32(s, static_cast<std::uint32_t>(v));
  put32(s, static_cast<std::uint32_t>(v >> 32));
}

std::string raw_deflate(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()) + 16, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::uint32_t crc_of(const std::string& s) {
  return static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

struct ZEntry {
  std::string name, data;
  std::uint16_t method = 8;
  unsigned mode = 0100644;  // Unix mode in the central directory's external attributes
  bool descriptor = false;  // sizes and CRC after the data (flag bit 3)
  bool descriptor_signature = true;
  bool zip64_descriptor = false;  // 8-byte sizes in the descriptor (with a zip64 local field)
  // tampering
  std::string local_name;               // another name in the local header
  std::uint32_t local_crc_xor = 0;      // another CRC in the local header
  std::uint32_t central_crc_xor = 0;    // another CRC in the central directory (and the local header)
  std::int64_t central_size_delta = 0;  // another uncompressed size in both headers
  std::uint16_t local_method = 0xFFFF;  // another method in the local header
  std::string trailing;                 // bytes inside the compressed range, after the deflate stream
  std::uint32_t descriptor_crc_xor = 0;
};

struct ZipOptions {
  bool overlap = false;  // the second central entry points at the first entry's local header
};

std::string build_zip(const std::vector<ZEntry>& es, ZipOptions o = {}) {
  std::string out, central;
  std::vector<std::uint32_t> offsets;
  for (const auto& e : es) {
    std::string body = e.method == 8 ? raw_deflate(e.data) : e.data;
    body += e.trailing;
    const std::uint32_t crc = crc_of(e.data) ^ e.central_crc_xor;
    const std::uint64_t usize = static_cast<std::uint64_t>(static_cast<std::int64_t>(e.data.size()) + e.central_size_delta);
    const std::uint16_t flags = 0x0800 | (e.descriptor ? 0x0008 : 0);
    const std::string lname = e.local_name.empty() ? e.name : e.local_name;
    offsets.push_back(static_cast<std::uint32_t>(out.size()));
    std::string extra;
    if (e.zip64_descriptor) {  // a zip64 local field: 8-byte sizes in the descriptor
      put16(extra, 0x0001);
      put16(extra, 16);
      put64(extra, 0);
      put64(extra, 0);
    }
    put32(out, 0x04034b50);
    put16(out, 20);
    put16(out, flags);
    put16(out, e.local_method == 0xFFFF ? e.method : e.local_method);
    put16(out, (10u << 11) | (20u << 5) | 15u);           // 10:20:30
    put16(out, ((2024u - 1980u) << 9) | (3u << 5) | 5u);  // 2024-03-05
    put32(out, e.descriptor ? 0 : crc ^ e.local_crc_xor);
    put32(out, e.descriptor ? 0 : (e.zip64_descriptor ? 0xFFFFFFFFu : static_cast<std::uint32_t>(body.size())));
    put32(out, e.descriptor ? 0 : (e.zip64_descriptor ? 0xFFFFFFFFu : static_cast<std::uint32_t>(usize)));
    put16(out, static_cast<unsigned>(lname.size()));
    put16(out, static_cast<unsigned>(extra.size()));
    out += lname + extra + body;
    if (e.descriptor) {
      if (e.descriptor_signature) put32(out, 0x08074b50);
      put32(out, crc ^ e.descriptor_crc_xor);
      if (e.zip64_descriptor) {
        put64(out, body.size());
        put64(out, usize);
      } else {
        put32(out, static_cast<std::uint32_t>(body.size()));
        put32(out, static_cast<std::uint32_t>(usize));
      }
    }
    put32(central, 0x02014b50);
    put16(central, (3u << 8) | 20u);  // made by Unix
    put16(central, 20);
    put16(central, flags);
    put16(central, e.method);
    put16(central, (10u << 11) | (20u << 5) | 15u);
    put16(central, ((2024u - 1980u) << 9) | (3u << 5) | 5u);
    put32(central, crc);
    put32(central, static_cast<std::uint32_t>(body.size()));
    put32(central, static_cast<std::uint32_t>(usize));
    put16(central, static_cast<unsigned>(e.name.size()));
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put32(central, static_cast<std::uint32_t>(e.mode) << 16);
    put32(central, o.overlap && offsets.size() == 2 ? offsets[0] : offsets.back());
    central += e.name;
  }
  const auto cd_at = static_cast<std::uint32_t>(out.size());
  out += central;
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<unsigned>(es.size()));
  put16(out, static_cast<unsigned>(es.size()));
  put32(out, static_cast<std::uint32_t>(central.size()));
  put32(out, cd_at);
  put16(out, 0);
  return out;
}

crypto::Digest digest_of(const std::string& bytes) { return crypto::sha256_of(bytes); }

struct Run {
  util::Result<archive_io::Extracted> result;
  bool wrote_nothing;
};

Run extract_bytes(const ScratchDir& d, const std::string& bytes, unsigned threads = 0, const std::string& tag = "z") {
  auto z = d.path() / (tag + ".zip");
  testing_support::write_file(z, bytes);
  auto f = PinnedFile::open(z, digest_of(bytes), bytes.size());
  if (!f) return {std::move(f).error(), true};
  auto out = d.path() / ("out-" + tag);
  fs::remove_all(out);
  fs::create_directories(out);
  archive_io::ExtractOptions o;
  o.decode_threads = threads;
  auto x = archive_io::extract(*f, out, o);
  return {std::move(x), fs::is_empty(out)};
}

std::string pattern(std::size_t n, unsigned seed) {
  std::string s(n, '\0');
  std::uint32_t x = seed * 2654435761u + 1;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    // half compressible, half noise
    s[i] = static_cast<char>((i / 64) % 2 ? (x >> 16) : 'a' + (i % 26));
  }
  return s;
}

std::string hex(const crypto::Digest& d) { return crypto::to_hex(d); }

TEST(ZipReader, StoredDeflatedAndDescriptorEntriesAreUnpackedExactly) {
  ScratchDir d;
  std::vector<ZEntry> es;
  es.push_back({"top/", "", 0, 040755});
  es.push_back({"top/stored.bin", pattern(70000, 1), 0});
  es.push_back({"top/deflated.dll", pattern(3 << 20, 2), 8, 0100755});
  ZEntry desc{"top/desc.h", pattern(50000, 3)};
  desc.descriptor = true;
  es.push_back(desc);
  ZEntry nosig{"top/nosig.h", pattern(4000, 4)};
  nosig.descriptor = true;
  nosig.descriptor_signature = false;
  es.push_back(nosig);
  ZEntry wide{"top/wide.h", pattern(9000, 5)};
  wide.descriptor = true;
  wide.zip64_descriptor = true;
  es.push_back(wide);
  es.push_back({"top/empty.txt", "", 8});
  auto run = extract_bytes(d, build_zip(es));
  ASSERT_TRUE(run.result.ok()) << run.result.error().message;
  const auto& x = *run.result;
  ASSERT_EQ(x.entries.size(), es.size());
  EXPECT_EQ(x.archive_sha256, digest_of(build_zip(es)));
  for (std::size_t i = 0; i < es.size(); ++i) {
    SCOPED_TRACE(es[i].name);
    const auto& e = x.entries[i];
    EXPECT_EQ(e.path + (e.type == archive_io::EntryType::dir ? "/" : ""), es[i].name);
    if (e.type != archive_io::EntryType::file) continue;
    EXPECT_EQ(testing_support::read_text(d.path() / "out-z" / e.path), es[i].data);
    EXPECT_EQ(e.size, es[i].data.size());
    EXPECT_EQ(hex(e.sha256), hex(crypto::sha256_of(es[i].data)));
    EXPECT_EQ(e.mode, es[i].mode & 0777u);
    EXPECT_EQ(e.mtime, 1709634030);  // 2024-03-05 10:20:30, the DOS time read as UTC
  }
  STACKPIN_SKIP_ON_WINDOWS("POSIX mode bits");
  EXPECT_EQ(fs::status(d.path() / "out-z" / "top" / "deflated.dll").permissions() & fs::perms::owner_exec, fs::perms::owner_exec);
}

TEST(ZipReader, TheThreadCountChangesNothingExtracted) {
  ScratchDir d;
  std::vector<ZEntry> es;
  for (unsigned i = 0; i < 12; ++i) es.push_back({"lib/part" + std::to_string(i) + ".dll", pattern((i % 4 + 1) * 300000, i)});
  const std::string zip = build_zip(es);
  std::vector<std::vector<std::string>> seen;
  for (unsigned threads : {1u, 2u, 5u}) {
    auto run = extract_bytes(d, zip, threads, "t" + std::to_string(threads));
    ASSERT_TRUE(run.result.ok()) << run.result.error().message;
    std::vector<std::string> rows;
    for (const auto& e : run.result->entries) rows.push_back(e.path + " " + std::to_string(e.size) + " " + hex(e.sha256));
    seen.push_back(rows);
    EXPECT_EQ(run.result->bytes_written, 12u / 4 * (300000u * (1 + 2 + 3 + 4)));
  }
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[0], seen[2]);
}

struct Hostile {
  const char* what;
  std::vector<ZEntry> entries;
  ZipOptions options;
  std::vector<std::string> words;
  bool before_writing;  // found in the layout pass, before a byte is written
};

TEST(ZipReader, ZipsThatToolsWouldUnpackDifferentlyAreRefused) {
  auto with = [](auto change) {
    ZEntry e{"lib/a.dll", pattern(20000, 7)};
    change(e);
    return std::vector<ZEntry>{ZEntry{"lib/first.h", "first"}, e};
  };
  std::vector<Hostile> cases{
      {"another name in the local header",
       with([](ZEntry& e) { e.local_name = "lib/b.dll"; }),
       {},
       {"\"lib/a.dll\"", "is named \"lib/b.dll\" in its local header"},
       true},
      {"another CRC in the local header",
       with([](ZEntry& e) { e.local_crc_xor = 1; }),
       {},
       {"\"lib/a.dll\"", "another CRC-32 or size in its local header"},
       true},
      {"another method in the local header", with([](ZEntry& e) { e.local_method = 0; }), {}, {"another compression method"}, true},
      {"a data descriptor that disagrees",
       with([](ZEntry& e) {
         e.descriptor = true;
         e.descriptor_crc_xor = 4;
       }),
       {},
       {"no data descriptor that agrees"},
       true},
      {"two entries sharing one local header",
       {ZEntry{"a.dll", pattern(5000, 1)}, ZEntry{"b.dll", pattern(5000, 1)}},
       {true},
       {"overlap"},
       true},
      {"bytes after the deflate stream",
       with([](ZEntry& e) { e.trailing = "hidden"; }),
       {},
       {"\"lib/a.dll\"", "bytes after the end of its deflate stream"},
       false},
      {"data that fail the CRC", with([](ZEntry& e) { e.central_crc_xor = 0x10; }), {}, {"\"lib/a.dll\"", "fails its CRC-32 check"}, false},
      {"data longer than declared",
       with([](ZEntry& e) { e.central_size_delta = -1; }),
       {},
       {"\"lib/a.dll\"", "inflates to more than the 19999 bytes"},
       false},
      {"data shorter than declared",
       with([](ZEntry& e) { e.central_size_delta = 5; }),
       {},
       {"\"lib/a.dll\"", "holds 20000 bytes, its central directory says 20005"},
       false},
      {"stored data of another size",
       with([](ZEntry& e) {
         e.method = 0;
         e.central_size_delta = 3;
       }),
       {},
       {"stored uncompressed but declares"},
       false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    ScratchDir d;
    auto run = extract_bytes(d, build_zip(c.entries, c.options));
    ASSERT_FALSE(run.result.ok());
    const auto& e = run.result.error();
    EXPECT_EQ(e.code, ErrorCode::invalid) << e.message;
    EXPECT_NE(e.message.find("corrupt zip"), std::string::npos) << e.message;
    for (const auto& w : c.words) EXPECT_NE(e.message.find(w), std::string::npos) << "\"" << w << "\" not in: " << e.message;
    if (c.before_writing) {
      EXPECT_TRUE(run.wrote_nothing);
    }
  }
}

TEST(ZipReader, AZipRewrittenAfterItWasHashedIsRefusedAtTheChunkThatChanged) {
  ScratchDir d;
  std::string noise(3 << 20, '\0');
  std::uint32_t x = 7;
  for (auto& c : noise) c = static_cast<char>((x = x * 1103515245u + 12345u) >> 16);
  std::vector<ZEntry> es{{"a.bin", noise}, {"b.bin", pattern(100, 3)}};
  const std::string zip = build_zip(es);
  ASSERT_GT(zip.size(), (3u << 20));  // noise does not compress: a.bin's data span four chunks
  auto z = d.path() / "r.zip";
  testing_support::write_file(z, zip);
  auto f = PinnedFile::open(z, digest_of(zip), zip.size());
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_TRUE(f->sealed());
  auto mtime = fs::last_write_time(z);
  std::string changed = zip;
  changed[(2 << 20) + 17] ^= 0x40;  // in the third chunk, the data of a.bin
  testing_support::overwrite_in_place(z, changed);
  fs::last_write_time(z, mtime);
  for (unsigned threads : {1u, 2u}) {
    fs::remove_all(d.path() / "out");
    fs::create_directories(d.path() / "out");
    archive_io::ExtractOptions o;
    o.decode_threads = threads;
    auto x = archive_io::extract(*f, d.path() / "out", o);
    ASSERT_FALSE(x.ok());
    EXPECT_EQ(x.error().code, ErrorCode::conflict) << x.error().message;
    EXPECT_TRUE(testing_support::refused_as_rewritten(x.error().message)) << x.error().message;
  }
}

}  // namespace

}  // namespace zip_reader_test
