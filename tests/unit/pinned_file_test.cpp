// archive_io::PinnedFile and what reaches a decoder: no byte before the size and SHA-256 match
// the pin, the bytes decoded are the bytes verified (a file swapped or rewritten after the check
// is not used), only the formats NVIDIA ships are read (chosen by content, not by name), and in a
// zip only stored and deflate entries. Also the tar cases that libarchive's writer cannot make:
// sparse holes past the bound, sparse files ending in a hole, names that are not valid UTF-8.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "archive/extract.hpp"
#include "crypto/sha256.hpp"
#include "fixtures.hpp"
#include "test_support.hpp"
#include "tree.hpp"
#include "util/env.hpp"

namespace pinned_file_test {

namespace {
namespace fs = std::filesystem;
using archive_io::ArchiveKind;
using archive_io::PinnedFile;
using fixtures::Entry;
using fixtures::Format;
using fixtures::Kind;
using fixtures::RawTarEntry;
using testing_support::ScratchDir;
using util::ErrorCode;

crypto::Digest digest_of(const fs::path& p) {
  auto h = crypto::hash_file(p);
  EXPECT_TRUE(h.ok());
  return h ? h->digest : crypto::Digest{};
}

std::string read_bytes(const fs::path& p) { return testing_support::read_text(p); }

void expect_words(const util::Error& e, const std::vector<std::string>& words) {
  for (const auto& w : words) EXPECT_NE(e.message.find(w), std::string::npos) << "\"" << w << "\" not in: " << e.message;
}

TEST(PinnedFile, AMismatchIsFoundBeforeAnyDecoderRuns) {
  ScratchDir d;
  auto good = d.path() / "good.tar.gz";
  fixtures::write_archive(good, Format::tar_gz, {Entry{"a", Kind::file, "payload", {}, 0644}});
  auto pin = digest_of(good);
  auto size = fs::file_size(good);
  // the tampered download: a gzip stream that is corrupt after its header, padded to the pinned
  // size. Decoding it would fail ("corrupt gzip data"); it must fail on its hash instead.
  std::string evil = std::string("\x1F\x8B\x08\x00\x00\x00\x00\x00\x00\x03", 10) + std::string(static_cast<std::size_t>(size) - 10, '\xFF');
  auto bad = d.path() / "bad.tar.gz";
  testing_support::write_file(bad, evil);
  auto p = PinnedFile::open(bad, pin, size);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::mismatch);
  expect_words(p.error(), {"SHA-256 mismatch", crypto::to_hex(pin), "got " + crypto::to_hex(digest_of(bad))});
  EXPECT_EQ(p.error().message.find("gzip"), std::string::npos) << p.error().message;
  // the size is checked first, before a byte is read
  auto q = PinnedFile::open(good, pin, size + 1);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().code, ErrorCode::mismatch);
  expect_words(q.error(), {"size mismatch"});
  auto ok = PinnedFile::open(good, pin, size);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->kind(), ArchiveKind::tar_gz);
}

TEST(PinnedFile, AFileSwappedInAfterTheCheckIsNotUsed) {
  ScratchDir d;
  auto a = d.path() / "a.tar";
  fixtures::write_archive(a, Format::tar, {Entry{"real.txt", Kind::file, "the verified bytes", {}, 0644}});
  auto p = PinnedFile::open(a, digest_of(a), fs::file_size(a));
  ASSERT_TRUE(p.ok()) << p.error().message;
  // another file renamed over the path (a new inode): extraction still reads the verified one
  auto other = d.path() / "other.tar";
  fixtures::write_archive(other, Format::tar, {Entry{"evil.txt", Kind::file, "swapped in", {}, 0644}});
  std::error_code ec;
  fs::rename(other, a, ec);  // Windows does not replace a file that is open at all
  EXPECT_TRUE(!ec || util::host_is_windows()) << ec.message();
  fs::create_directories(d.path() / "out");
  auto x = archive_io::extract(*p, d.path() / "out", {});
  ASSERT_TRUE(x.ok()) << x.error().message;
  ASSERT_EQ(x->entries.size(), 1u);
  EXPECT_EQ(x->entries[0].path, "real.txt");
  EXPECT_FALSE(fs::exists(d.path() / "out" / "evil.txt"));
  EXPECT_EQ(read_bytes(d.path() / "out" / "real.txt"), "the verified bytes");
}

TEST(PinnedFile, AFileRewrittenInPlaceAfterTheCheckIsRefused) {
  for (Format f : {Format::tar, Format::tar_xz, Format::zip}) {
    ScratchDir d;
    auto a = d.path() / "a.bin";
    fixtures::write_archive(a, f, {Entry{"x.txt", Kind::file, std::string(5000, 'x'), {}, 0644}});
    auto p = PinnedFile::open(a, digest_of(a), fs::file_size(a));
    ASSERT_TRUE(p.ok()) << p.error().message;
    // the same inode, other bytes (same size), and the modification time set back as it was, so
    // that only the chunks' seals, checked while decoding, can tell
    auto mtime = fs::last_write_time(a);
    std::string bytes = read_bytes(a);
    bytes[bytes.size() / 2] ^= 0x01;
    testing_support::overwrite_in_place(a, bytes);
    fs::last_write_time(a, mtime);
    fs::create_directories(d.path() / "out");
    for (bool listing : {false, true}) {
      auto x = listing ? archive_io::list(*p, {}) : archive_io::extract(*p, d.path() / "out", {});
      ASSERT_FALSE(x.ok()) << static_cast<int>(f);
      // the chunk's tag, before the chunk is decoded: reported as such, not as the truncated
      // stream the decoder is left with
      EXPECT_EQ(x.error().code, ErrorCode::conflict) << x.error().message;
      EXPECT_TRUE(testing_support::refused_as_rewritten(x.error().message)) << x.error().message;
    }
    // a write that moves the modification time is refused before a byte is decoded
    fs::last_write_time(a, mtime + std::chrono::seconds(5));
    auto l = archive_io::list(*p, {});
    ASSERT_FALSE(l.ok());
    EXPECT_EQ(l.error().code, ErrorCode::conflict) << l.error().message;
  }
}

TEST(PinnedFile, TheFormatComesFromTheBytesAndForeignOnesAreNamed) {
  ScratchDir d;
  struct Case {
    std::string bytes, words;
  };
  const std::vector<Case> cases{
      {std::string("Rar!\x1A\x07\x01\x00", 8) + std::string(600, 'r'), "a RAR archive"},
      {std::string("7z\xBC\xAF\x27\x1C\x00\x04", 8) + std::string(600, 's'), "a 7-Zip archive"},
      {"BZh91AY&SY" + std::string(600, 'b'), "a bzip2 stream"},
      {std::string("\x28\xB5\x2F\xFD", 4) + std::string(600, 'z'), "a Zstandard stream"},
      {"<!DOCTYPE html><html>Access denied</html>" + std::string(600, ' '), "an HTML or XML page"},
      {"MZ\x90" + std::string(600, '\0'), "a Windows executable"},
  };
  for (const auto& c : cases) {
    auto p = d.path() / "cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip";  // NVIDIA's name, another format
    testing_support::write_file(p, c.bytes);
    auto f = PinnedFile::open(p, digest_of(p), c.bytes.size());
    ASSERT_FALSE(f.ok()) << c.words;
    EXPECT_EQ(f.error().code, ErrorCode::unsupported) << f.error().message;
    expect_words(f.error(), {c.words, "not an archive format stackpin unpacks"});
    ASSERT_FALSE(f.error().hints.empty());
    EXPECT_EQ(f.error().hints[0].find("download"), std::string::npos) << "a file that matches its pin is not fixed by downloading it again";
  }
  // a tar named .zip is read as the tar it is
  auto t = d.path() / "named.zip";
  fixtures::write_archive(t, Format::tar, {Entry{"a", Kind::file, "x", {}, 0644}});
  auto f = PinnedFile::open(t, digest_of(t), std::nullopt);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->kind(), ArchiveKind::tar);
  fs::create_directories(d.path() / "out");
  EXPECT_TRUE(archive_io::extract(*f, d.path() / "out", {}).ok());
}

// A stored zip of one entry with its method (local and central header) and flags patched.
std::string patched_zip(const fs::path& dir, std::uint16_t method, std::uint16_t flags) {
  auto z = dir / "p.zip";
  fixtures::write_archive(z, Format::zip, {Entry{"lib/x.dll", Kind::file, "MZ data", {}, 0644}});
  std::string b = read_bytes(z);
  for (std::size_t i = 0; i + 4 <= b.size(); ++i) {
    bool local = b.compare(i, 4, "PK\x03\x04") == 0, central = b.compare(i, 4, "PK\x01\x02") == 0;
    if (!local && !central) continue;
    std::size_t at = i + (local ? 6 : 8);
    b[at] = static_cast<char>(flags & 0xFF);
    b[at + 1] = static_cast<char>(flags >> 8);
    b[at + 2] = static_cast<char>(method & 0xFF);
    b[at + 3] = static_cast<char>(method >> 8);
  }
  return b;
}

TEST(PinnedFile, ZipEntriesNvidiaNeverUsesAreRefusedBeforeInflating) {
  ScratchDir d;
  struct Case {
    std::uint16_t method, flags;
    std::string words;
  };
  for (const auto& c : std::vector<Case>{{12, 0x0800, "compressed with bzip2"},
                                         {14, 0x0800, "compressed with lzma"},
                                         {93, 0x0800, "compressed with zstd"},
                                         {99, 0x0801, "encrypted"},
                                         {8, 0x0801, "encrypted"},
                                         {77, 0x0800, "method 77"}}) {
    auto p = d.path() / "z.zip";
    testing_support::write_file(p, patched_zip(d.path(), c.method, c.flags));
    auto f = PinnedFile::open(p, digest_of(p), std::nullopt);
    ASSERT_TRUE(f.ok()) << f.error().message;
    fs::remove_all(d.path() / "out");
    fs::create_directories(d.path() / "out");
    auto x = archive_io::extract(*f, d.path() / "out", {});
    ASSERT_FALSE(x.ok()) << c.words;
    EXPECT_EQ(x.error().code, ErrorCode::unsupported) << x.error().message;
    expect_words(x.error(), {"\"lib/x.dll\"", c.words});
    EXPECT_TRUE(fs::is_empty(d.path() / "out")) << c.words;
  }
}

TEST(PinnedFile, ZipNamesOfUnknownEncodingAreRefused) {
  ScratchDir d;
  auto z = d.path() / "n.zip";
  fixtures::write_archive(z, Format::zip, {Entry{"caf_.h", Kind::file, "x", {}, 0644}});
  std::string b = read_bytes(z);
  // the name's '_' becomes 0xE9 (e-acute in cp1252, theta in cp437) and the UTF-8 flag is cleared
  for (std::size_t at = b.find("caf_"); at != std::string::npos; at = b.find("caf_", at + 1)) b[at + 3] = '\xE9';
  for (std::size_t i = 0; i + 4 <= b.size(); ++i) {
    if (b.compare(i, 4, "PK\x03\x04") == 0) b[i + 7] = static_cast<char>(b[i + 7] & ~0x08);
    if (b.compare(i, 4, "PK\x01\x02") == 0) b[i + 9] = static_cast<char>(b[i + 9] & ~0x08);
  }
  testing_support::write_file(z, b);
  auto f = PinnedFile::open(z, digest_of(z), std::nullopt);
  ASSERT_TRUE(f.ok());
  fs::create_directories(d.path() / "out");
  auto x = archive_io::extract(*f, d.path() / "out", {});
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.error().code, ErrorCode::unsafe) << x.error().message;
  expect_words(x.error(), {"caf\\xE9.h", "non-ASCII name in an unknown code page"});
  EXPECT_TRUE(fs::is_empty(d.path() / "out"));
}

// ---- tar cases libarchive's writer cannot make -------------------------------------------------

util::Result<archive_io::Extracted> extract_raw(const ScratchDir& d, const std::vector<RawTarEntry>& es,
                                                const archive_io::ExtractOptions& o) {
  auto t = d.path() / "raw.tar";
  fixtures::write_raw_tar(t, es);
  auto f = PinnedFile::open(t, digest_of(t), std::nullopt);
  if (!f) return std::move(f).error();
  fs::create_directories(d.path() / "out");
  return archive_io::extract(*f, d.path() / "out", o);
}

std::uint64_t bytes_under(const fs::path& dir) {
  std::uint64_t n = 0;
  for (auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) n += e.file_size();
  return n;
}

TEST(ExtractSparse, AHoleBeyondTheBoundIsRefusedBeforeAnythingIsWritten) {
  ScratchDir d;
  RawTarEntry bomb;
  bomb.name = "bomb.bin";
  bomb.type = 'S';
  bomb.data = std::string(512, 'd');
  bomb.sparse = {{0, 512}, {8ull << 30, 0}};
  bomb.real_size = 8ull << 30;  // 8 GiB of holes in a 2 KiB archive
  archive_io::ExtractOptions o;
  o.max_total_bytes = 1 << 20;
  auto x = extract_raw(d, {RawTarEntry{"small", '0', "x"}, bomb}, o);
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.error().code, ErrorCode::unsafe) << x.error().message;
  expect_words(x.error(), {"expands past", "\"bomb.bin\""});
  EXPECT_FALSE(fs::exists(d.path() / "out" / "bomb.bin"));
  EXPECT_LE(bytes_under(d.path() / "out"), 1u);
  // holes between data regions count too
  ScratchDir d2;
  RawTarEntry mid = bomb;
  mid.data = std::string(1024, 'd');
  mid.sparse = {{0, 512}, {4ull << 30, 512}};
  mid.real_size = (4ull << 30) + 512;
  auto y = extract_raw(d2, {mid}, o);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.error().code, ErrorCode::unsafe) << y.error().message;
  EXPECT_LE(bytes_under(d2.path() / "out"), 1u << 20);
}

TEST(ExtractSparse, ASparseFileEndingInAHoleIsExtractedToItsFullSize) {
  ScratchDir d;
  RawTarEntry s;
  s.name = "lib/libsparse.so";
  s.type = 'S';
  s.data = std::string(512, 'a') + std::string(512, 'b');
  s.sparse = {{0, 512}, {2048, 512}};
  s.real_size = 8192;  // data at 0 and 2048, then a hole to the end
  auto x = extract_raw(d, {s}, {});
  ASSERT_TRUE(x.ok()) << x.error().message;
  std::string want = std::string(512, 'a') + std::string(1536, '\0') + std::string(512, 'b') + std::string(8192 - 2560, '\0');
  EXPECT_EQ(read_bytes(d.path() / "out" / "lib" / "libsparse.so"), want);
  ASSERT_EQ(x->entries.size(), 1u);
  EXPECT_EQ(x->entries[0].size, 8192u);
  EXPECT_EQ(crypto::to_hex(x->entries[0].sha256), crypto::to_hex(crypto::sha256_of(want)));
}

TEST(ExtractNames, NamesThatAreNotUtf8AreRefusedBeforeAnythingMoves) {
  for (std::string name :
       {std::string("caf\xE9.h"), std::string("\xD0\xBF\xF0\x28.txt"), std::string("include/\xC0\xAF.h"), std::string("\xED\xA0\x80.h")}) {
    ScratchDir d;
    auto x = extract_raw(d, {RawTarEntry{"ok.h", '0', "x"}, RawTarEntry{name, '0', "latin-1"}}, {});
    ASSERT_FALSE(x.ok()) << name;
    EXPECT_EQ(x.error().code, ErrorCode::unsafe) << x.error().message;
    expect_words(x.error(), {"not valid UTF-8"});
    EXPECT_EQ(x.error().message.find(name), std::string::npos) << "the raw bytes are shown escaped";
  }
  ScratchDir d;  // a link target that is not UTF-8
  RawTarEntry link{"l", '2', ""};
  link.link = "caf\xE9";
  auto x = extract_raw(d, {RawTarEntry{"ok.h", '0', "x"}, link}, {});
  ASSERT_FALSE(x.ok());
  expect_words(x.error(), {"link target is not valid UTF-8"});
}

}  // namespace

}  // namespace pinned_file_test
