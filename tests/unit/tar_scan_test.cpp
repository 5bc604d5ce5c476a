// Tars whose entries tar readers read differently (src/archive/tar_scan.cpp), written byte by byte
// and extracted with archive_io::extract: each is refused with the entry and what disagreed named,
// before a file is written; their honest twins, archives made by GNU tar itself (GNU and pax
// formats, long names, long link targets, hardlinks, sparse files) and a .tar.xz extract as before.
// The scan itself gives the same answer whatever the chunks it is fed in.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../../src/archive/tar_scan.hpp"
#include "archive/extract.hpp"
#include "crypto/sha256.hpp"
#include "fixtures.hpp"
#include "test_support.hpp"
#include "tree.hpp"

namespace tar_scan_test {

namespace {
namespace fs = std::filesystem;
using archive_io::detail::TarHeaderScan;
using fixtures::RawTarEntry;
using testing_support::ScratchDir;
using util::ErrorCode;

// ---- raw tar pieces ------------------------------------------------------------------------------

std::string pax_record(const std::string& key, const std::string& value) {
  const std::string rest = " " + key + "=" + value + "\n";
  std::size_t len = rest.size() + 1;
  while (std::to_string(len).size() + rest.size() != len) len = std::to_string(len).size() + rest.size();
  return std::to_string(len) + rest;
}
RawTarEntry special(char type, const std::string& body, const std::string& name = "././@LongLink") {
  RawTarEntry e;
  e.name = name;
  e.type = type;
  e.data = body;
  return e;
}
RawTarEntry long_name(const std::string& name) { return special('L', name + std::string(1, '\0')); }
RawTarEntry long_link(const std::string& target) { return special('K', target + std::string(1, '\0')); }
RawTarEntry pax(const std::string& records) { return special('x', records, "PaxHeader/entry"); }
RawTarEntry file(const std::string& name, const std::string& data = "data") { return RawTarEntry{name, '0', data}; }
RawTarEntry link_entry(const std::string& name, char type, const std::string& target) {
  RawTarEntry e{name, type, ""};
  e.link = target;
  return e;
}

// The checksum of the header at `at`, after a test changed its bytes.
void reseal(std::string& tar, std::size_t at) {
  std::fill(tar.begin() + static_cast<std::ptrdiff_t>(at + 148), tar.begin() + static_cast<std::ptrdiff_t>(at + 156), ' ');
  unsigned sum = 0;
  for (std::size_t i = 0; i < 512; ++i) sum += static_cast<unsigned char>(tar[at + i]);
  char digits[8];
  std::snprintf(digits, sizeof digits, "%06o", sum);
  tar.replace(at + 148, 6, digits, 6);
  tar[at + 154] = '\0';
}

// `bytes` as one .xz stream (libarchive's raw format: the bytes themselves, no archive around them).
std::string xz_of(const std::string& bytes) {
  std::string out(bytes.size() + (1 << 16), '\0');
  std::size_t used = 0;
  archive* a = archive_write_new();
  archive_write_add_filter_xz(a);
  archive_write_set_format_raw(a);
  archive_write_set_bytes_in_last_block(a, 1);
  EXPECT_EQ(archive_write_open_memory(a, out.data(), out.size(), &used), ARCHIVE_OK);
  archive_entry* e = archive_entry_new();
  archive_entry_set_pathname(e, "tar");
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_size(e, static_cast<la_int64_t>(bytes.size()));
  EXPECT_EQ(archive_write_header(a, e), ARCHIVE_OK);
  EXPECT_EQ(archive_write_data(a, bytes.data(), bytes.size()), static_cast<la_ssize_t>(bytes.size()));
  archive_entry_free(e);
  EXPECT_EQ(archive_write_close(a), ARCHIVE_OK);
  archive_write_free(a);
  out.resize(used);
  return out;
}

// ---- extraction ----------------------------------------------------------------------------------

struct Extraction {
  ScratchDir dir;
  util::Result<archive_io::Extracted> result = util::Error(ErrorCode::internal, "not run");
  fs::path out() const { return dir.path() / "out"; }
};

void extract_bytes(Extraction& x, const std::string& bytes, const std::string& name = "a.tar") {
  const fs::path archive = x.dir.path() / name;
  testing_support::write_file(archive, bytes);
  fs::create_directories(x.out());
  auto h = crypto::hash_file(archive);
  ASSERT_TRUE(h.ok());
  auto pinned = archive_io::PinnedFile::open(archive, h->digest, std::nullopt);
  ASSERT_TRUE(pinned.ok()) << pinned.error().message;
  x.result = archive_io::extract(*pinned, x.out(), {});
}

// Refused as unsafe, naming every word of `words`, with nothing extracted.
void expect_refused(const std::string& bytes, const std::vector<std::string>& words, const std::string& what,
                    const std::string& name = "a.tar") {
  Extraction x;
  extract_bytes(x, bytes, name);
  ASSERT_FALSE(x.result.ok()) << what << ": extracted";
  EXPECT_EQ(x.result.error().code, ErrorCode::unsafe) << what << ": " << x.result.error().message;
  for (const auto& w : words)
    EXPECT_NE(x.result.error().message.find(w), std::string::npos) << what << ": \"" << w << "\" not in: " << x.result.error().message;
  EXPECT_TRUE(fs::is_empty(x.out())) << what << ": something was written before the refusal";
}

std::vector<std::string> paths_of(const archive_io::Extracted& x) {
  std::vector<std::string> paths;
  for (const auto& e : x.entries) paths.push_back(e.path);
  return paths;
}

// ---- names -----------------------------------------------------------------------------------------

TEST(TarScanNames, ALongNameAndAPaxPathThatDifferAreRefusedInEitherOrder) {
  const std::string staged = "cudnn/lib/libcudnn.so.9.1.0", other = "cudnn/lib/libcudnn.so.9.2.0";
  expect_refused(fixtures::raw_tar({long_name(staged), pax(pax_record("path", other)), file("short")}),
                 {staged, other, "long name", "path="}, "L then x");
  expect_refused(fixtures::raw_tar({pax(pax_record("path", other)), long_name(staged), file("short")}), {staged, other}, "x then L");
  // the same bytes in both: one name for every reader
  Extraction x;
  extract_bytes(x, fixtures::raw_tar({long_name(staged), pax(pax_record("path", staged)), file("short", "lib")}));
  ASSERT_TRUE(x.result.ok()) << x.result.error().message;
  EXPECT_EQ(paths_of(*x.result), std::vector<std::string>{staged});
  EXPECT_EQ(testing_support::read_text(x.out() / staged), "lib");
}

TEST(TarScanNames, TwoLongNamesOrTwoPathsBeforeOneEntryAreRefused) {
  expect_refused(fixtures::raw_tar({long_name("a.so"), long_name("b.so"), file("short")}), {"two GNU long name records"}, "two L");
  expect_refused(fixtures::raw_tar({pax(pax_record("path", "a.so")), pax(pax_record("path", "b.so")), file("short")}),
                 {"two pax extended headers"}, "two x");
  expect_refused(fixtures::raw_tar({pax(pax_record("path", "a.so") + pax_record("path", "b.so")), file("short")}),
                 {"path= twice", "a.so", "b.so"}, "two path= in one x");
  expect_refused(fixtures::raw_tar({pax(pax_record("path", "a.so") + pax_record("GNU.sparse.name", "b.so")), file("short")}),
                 {"GNU.sparse.name", "b.so", "a.so"}, "GNU.sparse.name against path=");
}

TEST(TarScanNames, ALongLinkAndAPaxLinkpathThatDifferAreRefused) {
  expect_refused(fixtures::raw_tar({file("lib/a.so"), file("lib/b.so"), long_link("lib/a.so"), pax(pax_record("linkpath", "lib/b.so")),
                                    link_entry("lib/c.so", '2', "a.so")}),
                 {"lib/c.so", "long link", "linkpath=", "lib/a.so", "lib/b.so"}, "K vs linkpath=");
  // a link target for an entry that is not a link: one reader makes it a hardlink
  expect_refused(fixtures::raw_tar({file("lib/a.so"), long_link("lib/a.so"), file("lib/b.so")}), {"lib/b.so", "not a link"}, "K on a file");
  // the same target in both is one link
  Extraction x;
  extract_bytes(x, fixtures::raw_tar(
                       {file("lib/a.so"), long_link("a.so"), pax(pax_record("linkpath", "a.so")), link_entry("lib/c.so", '2', "a.so")}));
  ASSERT_TRUE(x.result.ok()) << x.result.error().message;
  ASSERT_EQ(x.result->entries.size(), 2u);
  EXPECT_EQ(x.result->entries[1].link, "a.so");
}

TEST(TarScanNames, APaxGlobalHeaderMaySayNothingButAComment) {
  for (const char* key : {"path", "linkpath", "size", "mtime"})
    expect_refused(fixtures::raw_tar({special('g', pax_record(key, "7"), "pax_global_header"), file("a.so")}), {"global header", key},
                   std::string("g with ") + key);
  Extraction x;  // what git archive writes
  extract_bytes(x, fixtures::raw_tar({special('g', pax_record("comment", "0123abcd"), "pax_global_header"), file("a.so")}));
  ASSERT_TRUE(x.result.ok()) << x.result.error().message;
  EXPECT_EQ(paths_of(*x.result), std::vector<std::string>{"a.so"});
}

TEST(TarScanNames, APrefixFieldIsAcceptedOnlyUnderPosixMagic) {
  const std::string name = std::string(90, 'p') + "/" + std::string(90, 'n');  // split into the prefix and name fields
  std::string tar = fixtures::raw_tar({file(name, "x")});
  {
    Extraction x;  // "ustar\0" "00": every reader joins them
    extract_bytes(x, tar);
    ASSERT_TRUE(x.result.ok()) << x.result.error().message;
    EXPECT_EQ(paths_of(*x.result), std::vector<std::string>{name});
  }
  // "ustar " "00": one reader reads the prefix, another takes the name field alone
  tar.replace(257, 8, std::string("ustar 00", 8));
  reseal(tar, 0);
  expect_refused(tar, {"prefix field", std::string(90, 'p')}, "ustar-space magic with a prefix");
}

// ---- data ------------------------------------------------------------------------------------------

TEST(TarScanData, AHardlinkOrSymlinkWithDataIsRefused) {
  // in a pax archive one reader reads a hardlink's data, another does not: the entry after it
  // differs (here the header hidden in the "data")
  RawTarEntry hard = link_entry("b.so", '1', "a.so");
  hard.data = fixtures::raw_tar({file("hidden.so", "evil")}).substr(0, 1024);
  expect_refused(fixtures::raw_tar({file("a.so"), pax(pax_record("mtime", "1")), hard}), {"\"b.so\"", "hardlink", "1024 bytes"},
                 "hardlink with a body");
  RawTarEntry sym = link_entry("s", '2', "a.so");
  sym.data = "0123456789";
  expect_refused(fixtures::raw_tar({file("a.so"), sym}), {"\"s\"", "symlink"}, "symlink with a body");
  // a pax size= for a directory counts too
  expect_refused(fixtures::raw_tar({pax(pax_record("size", "512")), RawTarEntry{"d/", '5', ""}}), {"directory"}, "pax size of a dir");
}

TEST(TarScanData, BytesAfterTheEndOfTheArchiveAreRefused) {
  const std::string tar = fixtures::raw_tar({file("a.so", "x")});
  expect_refused(tar + fixtures::raw_tar({file("b.so", "y")}), {"after its end-of-archive marker"}, "a second archive");
  // past the first megabyte (a chunk of its own, read after libarchive has stopped), plain and xz
  const std::string late = tar + std::string(3 << 20, '\0') + "junk" + std::string(508, '\0');
  {
    Extraction x;
    extract_bytes(x, late);
    ASSERT_FALSE(x.result.ok());
    EXPECT_EQ(x.result.error().code, ErrorCode::unsafe) << x.result.error().message;
    EXPECT_NE(x.result.error().message.find("after its end-of-archive marker"), std::string::npos) << x.result.error().message;
  }
  {
    Extraction x;
    extract_bytes(x, xz_of(late), "a.tar.xz");
    ASSERT_FALSE(x.result.ok());
    EXPECT_EQ(x.result.error().code, ErrorCode::unsafe) << x.result.error().message;
    EXPECT_NE(x.result.error().message.find("after its end-of-archive marker"), std::string::npos) << x.result.error().message;
  }
  // zeros after the marker (a tar's record padding) are fine
  Extraction ok;
  extract_bytes(ok, xz_of(tar + std::string(3 << 20, '\0')), "a.tar.xz");
  ASSERT_TRUE(ok.result.ok()) << ok.result.error().message;
  EXPECT_EQ(paths_of(*ok.result), std::vector<std::string>{"a.so"});
}

TEST(TarScanData, MalformedPaxRecordsAndHeaderCharsetsAreRefused) {
  for (const auto& [records, what] : std::vector<std::pair<std::string, std::string>>{
           {pax_record("path", "a.so") + "99 mtime=1\n", "length runs past"},
           {"12 path=a.so\n", "does not end on its newline"},
           {"12 pathaso\n\n", "no '='"},
           {"14  path=a.so\n", "starts with a space"},
           {"x path=a.so\n", "does not start with its length"},
           {pax_record("path", "a.so") + std::string(3, '\0'), "does not start with its length"}}) {
    expect_refused(fixtures::raw_tar({pax(records), file("short")}), {"malformed record", what}, what);
  }
  expect_refused(fixtures::raw_tar({pax(pax_record("hdrcharset", "BINARY") + pax_record("path", "caf\xE9")), file("short")}),
                 {"hdrcharset=BINARY"}, "hdrcharset");
}

TEST(TarScanData, AnUnknownTypeFlagIsRefused) {
  for (char type : {'A', 'D', 'M', 'N', 'V', 'X', 'I', 'z'})
    expect_refused(fixtures::raw_tar({RawTarEntry{"a.so", type, "x"}}), {"type flag '" + std::string(1, type) + "'"}, std::string(1, type));
}

TEST(TarScanData, AHugeLongNameIsRefusedWithTheBound) {
  const std::string bound = std::to_string(TarHeaderScan::k_max_long_name);
  expect_refused(fixtures::raw_tar({long_name(std::string(1 << 20, 'a')), file("short")}), {"long name record", "at most " + bound},
                 "1 MiB L");
  TarHeaderScan scan;
  auto st = scan.feed(fixtures::raw_tar({long_name(std::string(TarHeaderScan::k_max_long_name, 'a')), file("short")}).data(), 2048);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find(bound), std::string::npos) << st.error().message;
  const std::string pax_bound = std::to_string(TarHeaderScan::k_max_extended);
  expect_refused(fixtures::raw_tar({pax(pax_record("comment", std::string(TarHeaderScan::k_max_extended, 'c'))), file("short")}),
                 {"pax extended header", "at most " + pax_bound}, "huge x");
}

// ---- honest archives -----------------------------------------------------------------------------

TEST(TarScanHonest, LongNamesFromLibarchiveAndCompressedArchivesExtract) {
  ScratchDir d;
  const std::string deep =
      "cudnn-linux-x86_64-9.1.0.70_cuda12-archive/" + std::string(120, 'l') + "/" + std::string(120, 'm') + "/libcudnn.so.9";
  std::vector<fixtures::Entry> entries{
      {deep, fixtures::Kind::file, "lib", {}, 0644},
      {"cudnn-linux-x86_64-9.1.0.70_cuda12-archive/link", fixtures::Kind::symlink, "", deep.substr(43), 0777}};
  for (auto fmt : {fixtures::Format::tar, fixtures::Format::tar_xz, fixtures::Format::tar_gz}) {
    auto a = d.path() / ("a" + std::to_string(static_cast<int>(fmt)));
    fixtures::write_archive(a, fmt, entries);
    fs::create_directories(d.path() / "out" / a.filename());
    auto h = crypto::hash_file(a);
    ASSERT_TRUE(h.ok());
    auto pinned = archive_io::PinnedFile::open(a, h->digest, std::nullopt);
    ASSERT_TRUE(pinned.ok()) << pinned.error().message;
    auto x = archive_io::extract(*pinned, d.path() / "out" / a.filename(), {});
    ASSERT_TRUE(x.ok()) << x.error().message;
    EXPECT_EQ(x->entries.size(), 2u);
  }
  // GNU's own layout for a long name: an L record, then the header with the name cut at 100 bytes
  Extraction x;
  RawTarEntry cut = file(deep.substr(0, 100), "lib");
  extract_bytes(x, xz_of(fixtures::raw_tar({long_name(deep), cut})), "gnu.tar.xz");
  ASSERT_TRUE(x.result.ok()) << x.result.error().message;
  EXPECT_EQ(paths_of(*x.result), std::vector<std::string>{deep});
  // and the same conflict as above, compressed: the scan reads the decoder's output
  expect_refused(xz_of(fixtures::raw_tar({long_name(deep), pax(pax_record("path", deep + ".2")), cut})), {"long name", "path="},
                 "L then x in .tar.xz", "b.tar.xz");
}

// GNU tar's own archives, in its GNU and pax formats: long names (an L record, a path= record), a
// long symlink target (K, linkpath=), a hardlink, a sparse file with more regions than a header
// holds (extension blocks, or a pax sparse map).
TEST(TarScanHonest, ArchivesMadeByGnuTarExtract) {
  STACKPIN_SKIP_ON_WINDOWS("GNU tar runs in the Linux build");
  const std::string tar = testing_support::tool_path("tar");
  if (tar.empty()) GTEST_SKIP() << "tar is not installed";
  auto version = testing_support::run_process({tar, "--version"});
  if (version.out.find("GNU tar") == std::string::npos) GTEST_SKIP() << "tar is not GNU tar: " << version.out;
  ScratchDir d;
  const fs::path top = d.path() / "src" / "top";
  const std::string dir = std::string(110, 'd') + "/" + std::string(110, 'e');
  testing_support::write_file(top / dir / "libcudnn.so.9.1.0", "the library");
  fs::create_symlink(dir + "/libcudnn.so.9.1.0", top / "libcudnn.so");
  fs::create_hard_link(top / dir / "libcudnn.so.9.1.0", top / "hard.so");
  {
    std::ofstream sparse(top / "sparse.bin", std::ios::binary);
    for (int i = 0; i < 8; ++i) {
      sparse.seekp(static_cast<std::streamoff>(i) * 65536);
      sparse << "region " << i;
    }
    sparse.seekp(8 * 65536 - 1);
    sparse.put('\0');
  }
  const std::string expect_sparse = testing_support::read_text(top / "sparse.bin");
  for (const std::string format : {"gnu", "pax"}) {
    const fs::path archive = d.path() / (format + ".tar");
    auto made = testing_support::run_process(
        {tar, "--format=" + format, "--sparse", "-cf", archive.string(), "-C", (d.path() / "src").string(), "top"});
    ASSERT_EQ(made.exit_code, 0) << testing_support::show(made);
    const fs::path out = d.path() / ("out-" + format);
    fs::create_directories(out);
    auto h = crypto::hash_file(archive);
    ASSERT_TRUE(h.ok());
    auto pinned = archive_io::PinnedFile::open(archive, h->digest, std::nullopt);
    ASSERT_TRUE(pinned.ok()) << pinned.error().message;
    auto x = archive_io::extract(*pinned, out, {});
    ASSERT_TRUE(x.ok()) << format << ": " << x.error().message;
    EXPECT_EQ(testing_support::read_text(out / "top" / dir / "libcudnn.so.9.1.0"), "the library") << format;
    EXPECT_EQ(testing_support::read_text(out / "top" / "hard.so"), "the library") << format;
    EXPECT_EQ(fs::read_symlink(out / "top" / "libcudnn.so").generic_string(), dir + "/libcudnn.so.9.1.0") << format;
    EXPECT_EQ(testing_support::read_text(out / "top" / "sparse.bin"), expect_sparse) << format;
  }
}

// ---- the scan on its own -------------------------------------------------------------------------

struct ScanResult {
  std::string error;  // empty when accepted
  std::vector<std::string> names;
  bool operator==(const ScanResult& o) const { return error == o.error && names == o.names; }
};

ScanResult scan_in_chunks(const std::string& bytes, std::size_t chunk) {
  TarHeaderScan scan;
  ScanResult r;
  util::Status st;
  for (std::size_t at = 0; at < bytes.size() && st; at += chunk) {
    st = scan.feed(bytes.data() + at, std::min(chunk, bytes.size() - at));
    while (auto n = scan.take_name()) r.names.push_back(*n);
  }
  if (st) st = scan.finish();
  if (!st) r.error = st.error().message;
  return r;
}

TEST(TarScanChunks, TheAnswerDoesNotDependOnTheChunks) {
  RawTarEntry sparse;
  sparse.name = "lib/libsparse.so";
  sparse.type = 'S';
  sparse.data = std::string(512, 'a') + std::string(100, 'b');
  sparse.sparse = {{0, 512}, {4096, 100}};
  sparse.real_size = 8192;
  const std::vector<std::pair<std::string, std::string>> archives{
      {"honest",
       fixtures::raw_tar({RawTarEntry{"lib/", '5', ""}, long_name("lib/" + std::string(150, 'n')), file("cut", std::string(700, 'x')),
                          pax(pax_record("path", "lib/p.so") + pax_record("mtime", "1.5")), file("p", "pp"),
                          special('g', pax_record("comment", "c"), "g"), sparse, link_entry("lib/h.so", '1', "lib/p.so")}) +
           std::string(9216, '\0')},
      {"L then x", fixtures::raw_tar({file("a"), long_name("b"), pax(pax_record("path", "c")), file("d")})},
      {"trailing", fixtures::raw_tar({file("a")}) + "x"},
      {"truncated", fixtures::raw_tar({file("a", std::string(2000, 'a'))}).substr(0, 1500)},
      {"checksum",
       [] {
         auto t = fixtures::raw_tar({file("a"), file("b")});
         t[1024] = 'B';  // the second header's name, without a new checksum
         return t;
       }()},
  };
  for (const auto& [what, bytes] : archives) {
    const ScanResult whole = scan_in_chunks(bytes, bytes.size());
    for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{511}, std::size_t{512}, std::size_t{513}, std::size_t{4096}})
      EXPECT_TRUE(scan_in_chunks(bytes, chunk) == whole) << what << " in chunks of " << chunk;
    if (what == "honest") {
      EXPECT_EQ(whole.error, "") << whole.error;
      EXPECT_EQ(whole.names,
                (std::vector<std::string>{"lib/", "lib/" + std::string(150, 'n'), "lib/p.so", "lib/libsparse.so", "lib/h.so"}));
    } else {
      EXPECT_NE(whole.error, "") << what;
    }
  }
}

TEST(TarScanChunks, NamesWaitUntilTheyAreTaken) {
  TarHeaderScan scan;
  const std::string tar = fixtures::raw_tar({file("a"), file("b"), file("c")});
  ASSERT_TRUE(scan.feed(tar.data(), tar.size()).ok());
  EXPECT_EQ(scan.names_waiting(), 3u);
  EXPECT_EQ(scan.take_name(), std::optional<std::string>("a"));
  EXPECT_EQ(scan.names_waiting(), 2u);
  EXPECT_TRUE(scan.ended());
  EXPECT_TRUE(scan.finish().ok());
}

}  // namespace

}  // namespace tar_scan_test
