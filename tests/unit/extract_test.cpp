// archive_io::extract / list on fixtures: the hostile set (each refused with its exact error code
// and message, nothing written outside the extraction directory, the hostile entry itself never
// written), broken streams, bounds, and on good archives the archive's SHA-256 and every entry's
// hash, mode and link.
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#ifndef _WIN32
#include <sys/stat.h>
#endif

#include "archive/extract.hpp"
#include "crypto/sha256.hpp"
#include "fixtures.hpp"
#include "test_support.hpp"
#include "tree.hpp"

namespace extract_test {

namespace {
namespace fs = std::filesystem;
using archive_io::EntryType;
using archive_io::NameRules;
using fixtures::Entry;
using fixtures::Format;
using fixtures::Kind;
using testing_support::ScratchDir;
using util::ErrorCode;

const char* ext(Format f) {
  switch (f) {
    case Format::tar: return ".tar";
    case Format::tar_gz: return ".tar.gz";
    case Format::tar_xz: return ".tar.xz";
    case Format::zip: return ".zip";
  }
  return "";
}

Entry file(const std::string& p, const std::string& data = "data", unsigned mode = 0644) { return Entry{p, Kind::file, data, {}, mode}; }
Entry dir(const std::string& p) { return Entry{p, Kind::dir, {}, {}, 0755}; }
Entry symlink(const std::string& p, const std::string& target) { return Entry{p, Kind::symlink, {}, target, 0777}; }
Entry hardlink(const std::string& p, const std::string& target) { return Entry{p, Kind::hardlink, {}, target, 0644}; }

// The archive's own SHA-256 as its pin: these tests are about what happens once an archive has
// been verified (PinnedFile's own tests are in pinned_file_test.cpp).
util::Result<archive_io::PinnedFile> pin_of(const fs::path& a, std::optional<std::uint64_t> size = std::nullopt) {
  auto h = crypto::hash_file(a);
  return archive_io::PinnedFile::open(a, h ? h->digest : crypto::Digest{}, size);
}
util::Result<archive_io::Extracted> extract_pinned(const fs::path& a, const fs::path& out, const archive_io::ExtractOptions& o) {
  auto p = pin_of(a);
  if (!p) return std::move(p).error();
  return archive_io::extract(*p, out, o);
}
util::Result<archive_io::Extracted> list_pinned(const fs::path& a, const archive_io::ExtractOptions& o) {
  auto p = pin_of(a);
  if (!p) return std::move(p).error();
  return archive_io::list(*p, o);
}

// A scratch directory holding the archive, the extraction directory "out" and a sentinel tree
// "outside" that hostile entries aim at (through "../outside/..." names and links).
class ExtractFixture {
 public:
  ExtractFixture() {
    fs::create_directories(out());
    testing_support::write_file(m_dir.path() / "outside" / "keep.txt", "untouched\n");
  }
  fs::path root() const { return m_dir.path(); }
  fs::path out() const { return m_dir.path() / "work" / "out"; }
  fs::path make(const std::vector<Entry>& entries, Format fmt = Format::tar, const std::string& name = "a") const {
    fs::path p = m_dir.path() / (name + ext(fmt));
    fixtures::write_archive(p, fmt, entries);
    return p;
  }

 private:
  ScratchDir m_dir;
};

struct Refusal {
  ErrorCode code;
  std::vector<std::string> words;
};

// Extracts `archive` (expecting the refusal), then checks that nothing outside `out` changed and
// that listing the archive is refused the same way.
void expect_refused(const ExtractFixture& fx, const fs::path& archive, const archive_io::ExtractOptions& o, const Refusal& want,
                    const std::string& what) {
  SCOPED_TRACE(what);
  auto before = testing_support::snapshot(fx.root(), {"work/out"});
  auto x = extract_pinned(archive, fx.out(), o);
  ASSERT_FALSE(x.ok()) << what << ": extracted " << (x.ok() ? x->entries.size() : 0) << " entries";
  EXPECT_EQ(util::to_string(x.error().code), std::string(util::to_string(want.code))) << x.error().message;
  for (const auto& w : want.words)
    EXPECT_NE(x.error().message.find(w), std::string::npos) << "\"" << w << "\" not in: " << x.error().message;
  EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(fx.root(), {"work/out"})), "")
      << "something was written outside the extraction directory";
  // whatever partial output there is stays inside: no link in it resolves outside
  for (auto it = fs::recursive_directory_iterator(fx.out()); it != fs::recursive_directory_iterator(); ++it) {
    if (!it->is_symlink()) continue;
    std::error_code ec;
    fs::path real = fs::weakly_canonical(it->path(), ec);
    if (ec) continue;  // a loop: goes nowhere
    std::string rel = real.lexically_relative(fs::canonical(fx.out())).generic_string();
    EXPECT_TRUE(!rel.empty() && rel.rfind("..", 0) != 0) << it->path() << " resolves to " << real;
  }
  auto l = list_pinned(archive, o);
  ASSERT_FALSE(l.ok()) << what << " (list)";
  EXPECT_EQ(l.error().code, want.code) << l.error().message;
  EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(fx.root(), {"work/out"})), "");
}

archive_io::ExtractOptions posix() { return {}; }
archive_io::ExtractOptions windows() {
  archive_io::ExtractOptions o;
  o.rules = NameRules::windows;
  return o;
}

// ---- hostile names -------------------------------------------------------------------------------

TEST(ExtractHostile, AbsolutePathIsRefused) {
  for (Format f : {Format::tar, Format::zip}) {
    ExtractFixture fx;
    auto target = fx.root() / "outside" / "abs.txt";
    auto a = fx.make({file("ok.txt"), file(target.string(), "evil")}, f);
    // a temp folder on Windows starts with a drive letter, refused as such
    expect_refused(fx, a, posix(),
                   {ErrorCode::unsafe, {"unsafe archive entry", target.has_root_name() ? "drive-letter path" : "absolute path"}}, ext(f));
    EXPECT_FALSE(fs::exists(target));
  }
}

TEST(ExtractHostile, DotDotIsRefused) {
  for (Format f : {Format::tar, Format::tar_xz, Format::zip}) {
    for (std::string name : {"../outside/evil.txt", "x/../../outside/evil.txt", "x/..", "./../evil.txt"}) {
      ExtractFixture fx;
      auto a = fx.make({file(name, "evil")}, f);
      expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"\"..\" component", "would escape"}}, name + ext(f));
      EXPECT_FALSE(fs::exists(fx.root() / "outside" / "evil.txt"));
      EXPECT_FALSE(fs::exists(fx.root() / "work" / "evil.txt"));
    }
  }
}

TEST(ExtractHostile, DriveLetterIsRefused) {
  for (auto rules : {NameRules::posix, NameRules::windows}) {
    ExtractFixture fx;
    auto a = fx.make({file("C:/Windows/evil.dll", "evil")});
    archive_io::ExtractOptions o;
    o.rules = rules;
    expect_refused(fx, a, o, {ErrorCode::unsafe, {"drive-letter path"}}, "C:/");
    auto b = fx.make({file("c:evil.dll", "evil")}, Format::tar, "b");
    expect_refused(fx, b, o, {ErrorCode::unsafe, {"drive-letter path"}}, "c:");
  }
}

TEST(ExtractHostile, BackslashIsRefused) {
  for (std::string name : {"a\\..\\..\\evil.txt", "include\\cudnn.h", "\\\\server\\share\\x"}) {
    if (!fixtures::writes_name_verbatim(name)) continue;  // (WindowsExe.HostileNamesAreRefused runs them)
    ExtractFixture fx;
    auto a = fx.make({file(name, "evil")});
    expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"backslash"}}, name);
    expect_refused(fx, a, windows(), {ErrorCode::unsafe, {"backslash"}}, name + " (windows)");
  }
}

TEST(ExtractHostile, ControlCharacterIsRefused) {
  ExtractFixture fx;
  auto a = fx.make({file("bad\nname", "x")});
  expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"control character"}}, "newline");
}

// ---- links ---------------------------------------------------------------------------------------

TEST(ExtractHostile, SymlinkPointingOutsideIsRefused) {
  for (std::string target : {"../../etc/passwd", "/etc/passwd", "../../outside/keep.txt", "../..", "a/../../../x"}) {
    ExtractFixture fx;
    auto a = fx.make({dir("dir"), symlink("dir/link", target)});
    expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"\"dir/link\"", "points outside the archive"}}, target);
    EXPECT_FALSE(fs::exists(fs::symlink_status(fx.out() / "dir" / "link"))) << target;
  }
  // direct, at the top
  ExtractFixture fx;
  auto a = fx.make({symlink("passwd", "../../etc/passwd")});
  expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"symlink to \"../../etc/passwd\"", "points outside"}}, "top");
}

TEST(ExtractHostile, TwoStepSymlinkEscapeIsRefused) {
  // "d/s -> .." stays inside on its own; "l -> d/s/../x" looks inside lexically but resolves
  // through d/s to the parent of the tree.
  ExtractFixture fx;
  auto a = fx.make({dir("d"), symlink("d/s", ".."), symlink("l", "d/s/../outside/keep.txt")});
  expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"\"l\"", "leaves the archive through another symlink"}}, "two-step");
  // the order reversed: the escaping link comes first
  ExtractFixture fx2;
  auto b = fx2.make({symlink("l", "d/s/../x"), dir("d"), symlink("d/s", "..")});
  expect_refused(fx2, b, posix(), {ErrorCode::unsafe, {"leaves the archive through another symlink"}}, "reversed");
  // a chain of links inside the tree is fine
  STACKPIN_SKIP_ON_WINDOWS("symlinks made under Wine are not read back as symlinks");
  ExtractFixture ok;
  auto c = ok.make({dir("d"), file("d/real", "x"), symlink("d/s", "real"), symlink("t", "d/s"), symlink("u", "d/../t")});
  auto x = extract_pinned(c, ok.out(), posix());
  ASSERT_TRUE(x.ok()) << x.error().message;
  EXPECT_EQ(testing_support::read_text(ok.out() / "u"), "x");
}

TEST(ExtractHostile, SymlinkLoopIsRefused) {
  ExtractFixture fx;
  auto a = fx.make({symlink("a", "b"), symlink("b", "a")});
  expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"leaves the archive through another symlink (or loops)"}}, "loop");
}

TEST(ExtractHostile, WritingThroughASymlinkIsRefused) {
  {
    ExtractFixture fx;  // link -> /tmp: the link itself is refused, so nothing reaches /tmp
    std::string name = "stackpin-extract-test-" + std::to_string(::getpid());
    auto a = fx.make({symlink("link", "/tmp"), file("link/" + name, "evil")});
    expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"\"link\"", "points outside"}}, "link -> /tmp");
    EXPECT_FALSE(fs::exists(fs::path("/tmp") / name));
  }
  {
    ExtractFixture fx;  // link -> sub is contained, but writing link/x goes through it
    auto a = fx.make({dir("sub"), symlink("link", "sub"), file("link/x", "evil")});
    expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"\"link/x\"", "parent \"link\" is a symlink", "writing through a link"}},
                   "link -> sub");
    EXPECT_FALSE(fs::exists(fx.out() / "sub" / "x"));
  }
  {
    ExtractFixture fx;  // a directory entry below a link, and a file below a file
    auto a = fx.make({dir("sub"), symlink("link", "sub"), dir("link/deeper")});
    expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"writing through a link"}}, "dir below link");
    auto b = fx.make({file("f", "x"), file("f/g", "y")}, Format::tar, "b");
    expect_refused(fx, b, posix(), {ErrorCode::unsafe, {"\"f/g\"", "parent \"f\" is a file"}}, "file below file");
  }
}

TEST(ExtractHostile, HardlinkEscapesAreRefused) {
  {
    ExtractFixture fx;
    auto a = fx.make({file("a", "x"), hardlink("shadow", "/etc/shadow")});
    expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"\"shadow\"", "hardlink to \"/etc/shadow\"", "not a path inside the archive"}},
                   "/etc/shadow");
    EXPECT_FALSE(fs::exists(fx.out() / "shadow"));
  }
  {
    ExtractFixture fx;
    auto a = fx.make({hardlink("h", "../outside/keep.txt")});
    expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"not a path inside the archive"}}, "../outside");
  }
  {
    ExtractFixture fx;  // to an entry that comes later (would link whatever is there at that moment)
    auto a = fx.make({hardlink("h", "later"), file("later", "x")});
    expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"hardlink to \"later\"", "not an earlier regular file"}}, "later");
  }
  {
    ExtractFixture fx;  // to a directory or a symlink
    auto a = fx.make({dir("d"), hardlink("h", "d")});
    expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"not an earlier regular file"}}, "to a dir");
    auto b = fx.make({file("f", "x"), symlink("s", "f"), hardlink("h", "s")}, Format::tar, "b");
    expect_refused(fx, b, posix(), {ErrorCode::unsafe, {"not an earlier regular file"}}, "to a symlink");
  }
}

TEST(ExtractHostile, SymlinksAreRefusedForWindowsTrees) {
  ExtractFixture fx;
  auto a = fx.make({file("a.dll", "x"), symlink("b.dll", "a.dll")});
  expect_refused(fx, a, windows(), {ErrorCode::unsafe, {"\"b.dll\"", "symbolic link in a tree for Windows"}}, "windows symlink");
}

TEST(ExtractHostile, ZipSymlinksAreSeenFromTheCentralDirectory) {
  // A zip's local headers carry no Unix mode: only the central directory says that an entry is a
  // symlink. Read as a stream, "passwd -> /etc/passwd" came out as a regular file holding the
  // target's text; read through the directory it is a symlink, judged like a tar's.
  {
    ExtractFixture fx;
    auto a = fx.make({file("a.so", "ELF"), symlink("b.so", "a.so"), symlink("passwd", "/etc/passwd")}, Format::zip);
    expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"\"passwd\"", "points outside the archive"}}, "absolute zip symlink");
    ExtractFixture fx2;
    auto c = fx2.make({file("a.so", "ELF"), symlink("c", "../../outside/keep.txt")}, Format::zip, "c");
    expect_refused(fx2, c, posix(), {ErrorCode::unsafe, {"\"c\"", "points outside the archive"}}, "climbing zip symlink");
  }
  {
    ExtractFixture fx;  // a tree for Windows holds no symlink at all
    auto a = fx.make({file("a.dll", "MZ"), symlink("b.dll", "a.dll")}, Format::zip);
    expect_refused(fx, a, windows(), {ErrorCode::unsafe, {"\"b.dll\"", "symbolic link in a tree for Windows"}}, "windows zip symlink");
  }
  STACKPIN_SKIP_ON_WINDOWS("symlinks made under Wine are not read back as symlinks");
  ExtractFixture ok;  // a contained zip symlink is a symlink, as in a tar
  auto a = ok.make({file("a.so", "ELF"), symlink("b.so", "a.so")}, Format::zip);
  auto x = extract_pinned(a, ok.out(), posix());
  ASSERT_TRUE(x.ok()) << x.error().message;
  ASSERT_EQ(x->entries.size(), 2u);
  EXPECT_EQ(x->entries[1].type, EntryType::symlink);
  EXPECT_EQ(x->entries[1].link, "a.so");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(ok.out() / "b.so")));
}

// ---- special files and modes ---------------------------------------------------------------------

TEST(ExtractHostile, DeviceFilesAndFifosAreRefused) {
  ExtractFixture fx;
  auto a = fx.make({file("ok", "x"), Entry{"null", Kind::chardev, {}, {}, 0666}});
  expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"\"null\"", "device file"}}, "chardev");
  EXPECT_FALSE(fs::exists(fs::symlink_status(fx.out() / "null")));
  auto b = fx.make({Entry{"pipe", Kind::fifo, {}, {}, 0644}}, Format::tar_gz, "b");
  expect_refused(fx, b, posix(), {ErrorCode::unsafe, {"\"pipe\"", "FIFO"}}, "fifo");
  EXPECT_FALSE(fs::exists(fs::symlink_status(fx.out() / "pipe")));
}

TEST(ExtractModes, SetuidSetgidAndStickyBitsAreDropped) {
  STACKPIN_SKIP_ON_WINDOWS("POSIX mode bits");
  ExtractFixture fx;
  auto a = fx.make({file("suid", "#!/bin/sh\n", 04755), file("sgid", "x", 02750), file("sticky", "y", 01777), file("plain", "z", 0640),
                    file("exec", "w", 0755)});
  auto x = extract_pinned(a, fx.out(), posix());
  ASSERT_TRUE(x.ok()) << x.error().message;
  std::map<std::string, unsigned> want{{"suid", 0755}, {"sgid", 0750}, {"sticky", 0755}, {"plain", 0640}, {"exec", 0755}};
  ASSERT_EQ(x->entries.size(), want.size());
  for (const auto& e : x->entries) {
    EXPECT_EQ(e.mode, want.at(e.path)) << e.path;
    // the mode on disk has no set-id or sticky bit either (fs::perms::mask is the 07777 bits)
    auto on_disk = fs::symlink_status(fx.out() / e.path).permissions() & fs::perms::mask;
    EXPECT_EQ(static_cast<unsigned>(on_disk), want.at(e.path)) << e.path;
  }
}

TEST(ExtractModes, NothingIsStagedWritableByGroupOrWorld) {
  STACKPIN_SKIP_ON_WINDOWS("POSIX mode bits");
  // repacks made on Windows or with 7-Zip say 0777 and 0666; an archive may also say 0000 or 0200:
  // whatever it says, the owner reads and writes, the execute bits stay, and nobody else writes
  for (Format f : {Format::tar, Format::zip}) {
    SCOPED_TRACE(ext(f));
    ExtractFixture fx;
    auto a = fx.make({dir("d"), file("d/all", "a", 0777), file("d/rw", "b", 0666), file("d/none", "c", 0000), file("d/wo", "d", 0200),
                      file("d/gw", "e", 0775), file("deep/er/x", "f", 0644)},
                     f);
#ifndef _WIN32
    ::mode_t old_umask = ::umask(0);  // as in a container whose umask is 0: folders stackpin makes are 0755 all the same
#endif
    auto x = extract_pinned(a, fx.out(), posix());
#ifndef _WIN32
    ::umask(old_umask);
#endif
    ASSERT_TRUE(x.ok()) << x.error().message;
    // a zip's mode of 0 says "no Unix mode": such a file is 0644
    std::map<std::string, unsigned> want{{"d/all", 0755}, {"d/rw", 0644}, {"d/none", f == Format::zip ? 0644u : 0600u},
                                         {"d/wo", 0600},  {"d/gw", 0755}, {"deep/er/x", 0644}};
    for (const auto& e : x->entries) {
      auto on_disk = static_cast<unsigned>(fs::symlink_status(fx.out() / e.path).permissions() & fs::perms::mask);
      if (e.type == EntryType::dir) {
        EXPECT_EQ(on_disk, 0755u) << e.path;
        continue;
      }
      EXPECT_EQ(e.mode, want.at(e.path)) << e.path;
      EXPECT_EQ(on_disk, want.at(e.path)) << e.path;
    }
    for (const char* implicit : {"deep", "deep/er"})  // made for a file, never named by the archive
      EXPECT_EQ(static_cast<unsigned>(fs::symlink_status(fx.out() / implicit).permissions() & fs::perms::mask), 0755u) << implicit;
  }
}

// ---- bounds on names -----------------------------------------------------------------------------

TEST(ExtractHostile, NamesPastTheBoundsAreRefusedWithoutWalkingThem) {
  // 200,000 components in 400 KB of PAX path (node-tar ships such an archive): refused by its
  // length alone, before any parent is claimed, so memory and time stay flat
  std::string deep;
  for (int i = 0; i < 200000; ++i) deep += "a/";
  deep += "x";
  struct Case {
    std::string name, words;
  };
  std::string long_component(300, 'c');
  std::string many;  // short enough in bytes, too many components
  for (int i = 0; i < 200; ++i) many += "d/";
  many += "x";
  for (const auto& c : std::vector<Case>{{deep, "400001 bytes long; stackpin accepts at most 4096"},
                                         {many, "201 components deep; stackpin accepts at most 128"},
                                         {"top/" + long_component + "/f", "a component is 300 bytes long"}}) {
    // a zip's name field holds at most 65,535 bytes: the 400 KB name is a tar's alone
    for (Format f :
         c.name.size() > 65535 ? std::vector<Format>{Format::tar, Format::tar_xz} : std::vector<Format>{Format::tar_xz, Format::zip}) {
      ExtractFixture fx;
      auto a = fx.make({file("ok.txt"), file(c.name, "evil")}, f);
      expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"unsafe archive entry", c.words}}, c.words + ext(f));
    }
  }
  // at the bounds: accepted
  std::string at_depth;
  for (std::size_t i = 0; i + 1 < archive_io::k_max_depth; ++i) at_depth += "d/";
  at_depth += "x";
  ExtractFixture fx;
  auto a = fx.make({file(at_depth, "ok"), file("top/" + std::string(255, 'n'), "ok")});
  auto x = extract_pinned(a, fx.out(), posix());
  EXPECT_TRUE(x.ok()) << x.error().message;
}

TEST(ExtractHostile, WindowsShortNamesAreRefusedForEveryTarget) {
  // on NTFS (Windows, or /mnt/c under WSL) CUDNN6~1.DLL can be another name of cudnn64_8.dll
  for (const char* name : {"bin/CUDNN6~1.DLL", "include/CUDNN_~1.H", "STACKP~1/receipt.json", "bin/cu2b4f~1.dll", "lib/x~12"}) {
    for (auto rules : {posix(), windows()}) {
      ExtractFixture fx;
      auto a = fx.make({file("ok.txt"), file(name, "alias")}, Format::zip);
      expect_refused(fx, a, rules, {ErrorCode::unsafe, {"Windows 8.3 short name"}}, name);
    }
  }
  // names with a tilde that are not in that form are files like any other
  ExtractFixture fx;
  auto a = fx.make({file("a~b.txt"), file("backup~"), file("long_name~1.txt"), file("x~1.json5"), file("v~1.2.3")});
  auto x = extract_pinned(a, fx.out(), windows());
  EXPECT_TRUE(x.ok()) << x.error().message;
}

// ---- duplicates and Windows names ----------------------------------------------------------------

TEST(ExtractHostile, DuplicateEntriesAreRefused) {
  for (Format f : {Format::tar, Format::zip}) {
    ExtractFixture fx;
    auto a = fx.make({file("dup", "first"), file("dup", "second")}, f);
    expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"\"dup\"", "duplicate entry"}}, ext(f));
    if (f == Format::zip)
      EXPECT_TRUE(fs::is_empty(fx.out()));  // the zip's directory lists it twice: refused before writing
    else
      EXPECT_EQ(testing_support::read_text(fx.out() / "dup"), "first");  // never overwritten
  }
  ExtractFixture fx;  // a file and a directory of the same name, or "a" and "./a"
  auto a = fx.make({file("x", "1"), dir("x")});
  expect_refused(fx, a, posix(), {ErrorCode::unsafe, {"duplicate entry"}}, "file then dir");
  auto b = fx.make({file("y", "1"), file("./y", "2")}, Format::tar, "b");
  expect_refused(fx, b, posix(), {ErrorCode::unsafe, {"duplicate entry"}}, "./y");
  // a directory listed twice is harmless
  ExtractFixture ok;
  auto c = ok.make({dir("d"), dir("d"), file("d/f", "x")});
  EXPECT_TRUE(extract_pinned(c, ok.out(), posix()).ok());
}

TEST(ExtractWindowsNames, CaseInsensitiveCollisionIsRefused) {
  ExtractFixture fx;
  auto a = fx.make({file("include/Cudnn.h", "A"), file("include/cudnn.h", "B")}, Format::zip);
  expect_refused(fx, a, windows(), {ErrorCode::unsafe, {"\"include/cudnn.h\" and \"include/Cudnn.h\"", "same name on Windows"}}, "Cudnn.h");
  auto b = fx.make({file("Bin/a.dll", "A"), file("bin/b.dll", "B")}, Format::zip, "b");
  expect_refused(fx, b, windows(), {ErrorCode::unsafe, {"same name on Windows"}}, "Bin/bin");
  // non-ASCII names collide as Windows' upcase table says: É/é, Σ/σ and Σ/ς are one name each
  for (auto [x, y] : {std::pair<std::string, std::string>{"include/\u00C9.h", "include/\u00E9.h"},
                      {"\u03A3.h", "\u03C3.h"},
                      {"\u03C2.dll", "\u03A3.DLL"},
                      {"\u0416/a", "\u0436/b"}}) {
    if (!fixtures::writes_name_verbatim(x + y)) continue;
    for (Format f : {Format::tar, Format::zip}) {
      ExtractFixture fx;
      auto a = fx.make({file(x, "A"), file(y, "B")}, f);
      expect_refused(fx, a, windows(), {ErrorCode::unsafe, {"the same name on Windows"}}, x + " vs " + y + ext(f));
    }
  }
  if (fixtures::writes_name_verbatim(
          "\u00DF")) {  // but sharp s has no one-letter uppercase: "\u00DF.h" and "SS.h" are two names on Windows too
    ExtractFixture fx;
    auto a = fx.make({file("\u00DF.h", "A"), file("SS.h", "B"), file("\U00010400.h", "C"), file("\U00010428.h", "D")}, Format::zip);
    auto x = extract_pinned(a, fx.out(), windows());
    EXPECT_TRUE(x.ok()) << x.error().message;  // (nor are characters outside the BMP case-mapped)
  }
  // the same names are distinct files on Linux
  STACKPIN_SKIP_ON_WINDOWS("a case-insensitive file system holds one of the two");
  ExtractFixture ok;
  auto c = ok.make({file("include/Cudnn.h", "A"), file("include/cudnn.h", "B")});
  ASSERT_TRUE(extract_pinned(c, ok.out(), posix()).ok());
  EXPECT_EQ(testing_support::read_text(ok.out() / "include" / "Cudnn.h"), "A");
}

TEST(ExtractWindowsNames, ReservedNamesAndTrailingDotsAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"CON", "reserved device name"},
      {"bin/nul.txt", "reserved device name"},
      {"COM1", "reserved device name"},
      {"lib/com9.lib", "reserved device name"},
      {"Aux/x.h", "reserved device name"},
      {"LPT1.dll", "reserved device name"},
      {"prn", "reserved device name"},
      {"trailing.", "ends in a dot or space"},
      {"trailing ", "ends in a dot or space"},
      {"dir./x", "ends in a dot or space"},
      {"a<b", "does not allow"},
      {"ab:c", "does not allow"},
      {"what?.h", "does not allow"},
      // the documented set beyond COM1-9/LPT1-9: COM0, LPT0 and the superscript digits, an
      // extension or trailing spaces in the stem making no difference
      {"COM0", "reserved device name"},
      {"lpt0.dll", "reserved device name"},
      {"COM\u00B9", "reserved device name"},
      {"bin/LPT\u00B2.h", "reserved device name"},
      {"com\u00B3.txt", "reserved device name"},
      {"nul .txt", "reserved device name"},
      {"CONIN$", "reserved device name"},
      {"conout$.log", "reserved device name"},
      // characters Windows' best-fit ANSI conversion turns into path characters
      {"\uFF0E\uFF0E\uFF3Cx.dll", "FULLWIDTH"},
      {"a\uFF0Fb.h", "FULLWIDTH SOLIDUS"},
      {"x\u2215y", "DIVISION SLASH"},
  };
  for (const auto& [name, words] : cases) {
    if (!fixtures::writes_name_verbatim(name)) continue;
    ExtractFixture fx;
    auto a = fx.make({file("ok.h", "x"), file(name, "evil")}, Format::zip);
    expect_refused(fx, a, windows(), {ErrorCode::unsafe, {"unsafe archive entry", words}}, name);
  }
  // not reserved: a longer stem, COM10, and all of them on Linux
  ExtractFixture ok;
  auto b = ok.make({file("CONSOLE.h", "x"), file("com0", "x"), file("COM10", "x"), file("nul.txt", "x"), file("trailing.", "x")});
  auto x = extract_pinned(b, ok.out(), posix());
  ASSERT_TRUE(x.ok()) << x.error().message;
  ExtractFixture ok2;
  auto c = ok2.make({file("CONSOLE.h", "x"), file("COM10", "x"), file("LPT", "x"), file("comX", "x")}, Format::zip);
  auto y = extract_pinned(c, ok2.out(), windows());
  EXPECT_TRUE(y.ok()) << y.error().message;
}

// ---- broken streams ------------------------------------------------------------------------------

TEST(ExtractBroken, TruncatedStreamsAreRefused) {
  ScratchDir src;
  fixtures::CudnnOptions o;
  o.library_bytes = 16 * 1024;
  auto lin = fixtures::make_cudnn_linux(src.path(), "9.1.0.70", 12, o);
  auto win = fixtures::make_cudnn_windows(src.path(), "9.1.0.70", 12, o);
  for (const auto* inf : {&lin, &win}) {
    ExtractFixture fx;
    fs::path cut = fx.root() / ("cut" + inf->path.extension().string());
    fixtures::truncate_copy(inf->path, cut, inf->size / 2);
    expect_refused(fx, cut, inf == &win ? windows() : posix(), {ErrorCode::invalid, {"truncated"}}, cut.filename().string());
  }
  // cut a few bytes short: the xz index/footer (or the zip central directory) is missing
  ExtractFixture fx;
  fs::path cut = fx.root() / "short.tar.xz";
  fixtures::truncate_copy(lin.path, cut, lin.size - 8);
  expect_refused(fx, cut, posix(), {ErrorCode::invalid, {"truncated"}}, "xz - 8");
}

TEST(ExtractBroken, CorruptBytesAreRefused) {
  ScratchDir src;
  fixtures::CudnnOptions o;
  o.library_bytes = 16 * 1024;
  auto lin = fixtures::make_cudnn_linux(src.path(), "9.1.0.70", 12, o);
  auto win = fixtures::make_cudnn_windows(src.path(), "9.1.0.70", 12, o);
  // (Not .tar.gz: libarchive's gzip reader does not check the gzip CRC, so a flipped byte in
  // stored data extracts as different bytes; stage catches that by the archive's SHA-256 —
  // StageRefused.CorruptTarGzIsAHashMismatch.)
  for (const auto& inf : {lin, win}) {
    for (double at : {0.3, 0.5, 0.7}) {
      ExtractFixture fx;
      fs::path bad = fx.root() / ("bad" + inf.path.extension().string());
      fixtures::corrupt_copy(inf.path, bad, static_cast<std::uint64_t>(static_cast<double>(inf.size) * at));
      expect_refused(fx, bad, inf.path == win.path ? windows() : posix(), {ErrorCode::invalid, {"corrupt"}},
                     inf.path.filename().string() + " @" + std::to_string(at));
    }
  }
  ExtractFixture fx;  // not an archive at all
  auto junk = fx.root() / "junk.tar.xz";
  testing_support::write_file(junk, std::string(4096, 'j'));
  expect_refused(fx, junk, posix(), {ErrorCode::invalid, {"is not a tar archive stackpin can read"}}, "junk");
}

TEST(ExtractBroken, DataThatDisagreesWithTheDeclaredSizeIsRefused) {
  {
    ExtractFixture fx;  // declares 1 MiB, carries a few bytes: the data runs into the end of the file
    auto a = fx.root() / "more.tar";
    fixtures::write_tar_with_lying_size(a, "payload.bin", 1 << 20, "only a few bytes");
    expect_refused(fx, a, posix(), {ErrorCode::invalid, {"\"payload.bin\"", "truncated"}}, "declares more");
  }
  {
    ExtractFixture fx;  // declares 2 bytes, carries 600: the rest is read as a (broken) header
    auto a = fx.root() / "less.tar";
    fixtures::write_tar_with_lying_size(a, "payload.bin", 2, std::string(600, 'x'));
    expect_refused(fx, a, posix(), {ErrorCode::invalid, {"corrupt or truncated archive"}}, "declares less");
  }
  {
    ExtractFixture fx;  // the honest twin is fine
    auto a = fx.root() / "honest.tar";
    fixtures::write_tar_with_lying_size(a, "payload.bin", 16, "only a few bytes");
    auto x = extract_pinned(a, fx.out(), posix());
    ASSERT_TRUE(x.ok()) << x.error().message;
    EXPECT_EQ(testing_support::read_text(fx.out() / "payload.bin"), "only a few bytes");
  }
}

// ---- bounds --------------------------------------------------------------------------------------

TEST(ExtractBounds, ExpandingPastTheBoundIsRefused) {
  ExtractFixture fx;
  // 4 MiB of zeros compress to a few KiB: the classic bomb shape
  auto a = fx.make({file("small", "x"), file("bomb.bin", std::string(4 << 20, '\0'))}, Format::tar_xz);
  auto o = posix();
  o.max_total_bytes = 1 << 20;
  expect_refused(fx, a, o, {ErrorCode::unsafe, {"expands past", "\"bomb.bin\""}}, "bomb");
  // its declared size is past the bound: refused before a byte of it is written
  EXPECT_FALSE(fs::exists(fx.out() / "bomb.bin"));
  // within the bound it is fine
  ExtractFixture ok;
  auto b = ok.make({file("bomb.bin", std::string(4 << 20, '\0'))}, Format::tar_xz);
  o.max_total_bytes = 4 << 20;
  EXPECT_TRUE(extract_pinned(b, ok.out(), o).ok());
}

TEST(ExtractBounds, TooManyEntriesAreRefused) {
  ExtractFixture fx;
  std::vector<Entry> es;
  for (int i = 0; i < 20; ++i) es.push_back(file("f" + std::to_string(i), "x"));
  auto a = fx.make(es);
  auto o = posix();
  o.max_entries = 10;
  expect_refused(fx, a, o, {ErrorCode::unsafe, {"more than 10 entries"}}, "entries");
}

TEST(ExtractBounds, ExpectedSizeMismatchIsRefusedBeforeReading) {
  ExtractFixture fx;
  auto a = fx.make({file("a", "x")}, Format::tar_xz);
  auto size = fs::file_size(a);
  auto p = pin_of(a, size + 1);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::mismatch);
  for (const std::string& w :
       std::vector<std::string>{"size mismatch", "expected " + std::to_string(size + 1), "the file has " + std::to_string(size)})
    EXPECT_NE(p.error().message.find(w), std::string::npos) << p.error().message;
  EXPECT_TRUE(fs::is_empty(fx.out()));  // refused before anything was read
  auto q = pin_of(a, size);
  ASSERT_TRUE(q.ok()) << q.error().message;
  EXPECT_TRUE(archive_io::extract(*q, fx.out(), posix()).ok());
}

TEST(ExtractBounds, MissingArchiveIsNotFound) {
  ExtractFixture fx;
  auto x = extract_pinned(fx.root() / "nope.tar.xz", fx.out(), posix());
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.error().code, ErrorCode::not_found);
  EXPECT_NE(x.error().message.find("cannot open archive"), std::string::npos) << x.error().message;
  auto d = extract_pinned(fx.root(), fx.out(), posix());  // a directory
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, ErrorCode::io) << d.error().message;
}

// ---- good archives -------------------------------------------------------------------------------

std::string hex(const crypto::Digest& d) { return crypto::to_hex(d); }
std::string sha(const std::string& data) { return crypto::to_hex(crypto::sha256_of(data)); }

TEST(ExtractGood, ArchiveSha256IsTheFileHashForEveryFormat) {
  ScratchDir src;
  fixtures::CudnnOptions o;
  o.library_bytes = 8 * 1024;
  auto entries = fixtures::cudnn_linux_entries("8.9.7.29", 12, o);
  std::vector<fs::path> archives;
  for (Format f : {Format::tar, Format::tar_gz, Format::tar_xz}) {
    archives.push_back(src.path() / (std::string("a") + ext(f)));
    fixtures::write_archive(archives.back(), f, entries);
  }
  fixtures::CudnnOptions multi;
  multi.library_bytes = 80 * 1024;
  multi.xz_threads = 2;
  archives.push_back(src.path() / "multi.tar.xz");  // several xz blocks (decoded in parallel)
  fixtures::write_archive(archives.back(), Format::tar_xz, fixtures::cudnn_linux_entries("9.1.0.70", 12, multi), 2);
  archives.push_back(fixtures::make_cudnn_windows(src.path(), "9.1.0.70", 12, o).path);
  for (const auto& a : archives) {
    SCOPED_TRACE(a.filename().string());
    auto want = fixtures::info(a);
    ExtractFixture fx;
    auto x = extract_pinned(a, fx.out(), a.extension() == ".zip" ? windows() : posix());
    ASSERT_TRUE(x.ok()) << x.error().message;
    EXPECT_EQ(hex(x->archive_sha256), want.sha256);
    EXPECT_EQ(x->archive_size, want.size);
    auto l = list_pinned(a, a.extension() == ".zip" ? windows() : posix());
    ASSERT_TRUE(l.ok()) << l.error().message;
    EXPECT_EQ(hex(l->archive_sha256), want.sha256);
    EXPECT_EQ(l->entries.size(), x->entries.size());
  }
}

// The decoder's memory bound changes how a multi-block stream is decoded (two threads, or one when
// the bound is too small for two blocks), never what comes out.
TEST(ExtractGood, TheDecoderMemoryBoundChangesNothingExtracted) {
  ScratchDir src;
  fixtures::CudnnOptions multi;
  multi.library_bytes = 80 * 1024;
  multi.xz_threads = 2;
  auto a = src.path() / "multi.tar.xz";
  fixtures::write_archive(a, Format::tar_xz, fixtures::cudnn_linux_entries("9.1.0.70", 12, multi), 2);
  std::vector<std::vector<std::string>> seen;
  for (std::uint64_t memory : {std::uint64_t{1}, std::uint64_t{24} << 20, archive_io::ExtractOptions::k_default_xz_memory}) {
    for (unsigned threads : {1u, 2u}) {
      SCOPED_TRACE(std::to_string(memory) + " bytes, " + std::to_string(threads) + " thread(s)");
      auto o = posix();
      o.xz_memory = memory;
      o.decode_threads = threads;
      ExtractFixture fx;
      auto x = extract_pinned(a, fx.out(), o);
      ASSERT_TRUE(x.ok()) << x.error().message;
      std::vector<std::string> got;
      for (const auto& e : x->entries) got.push_back(e.path + " " + hex(e.sha256) + " " + std::to_string(e.size));
      seen.push_back(got);
    }
  }
  for (const auto& s : seen) EXPECT_EQ(s, seen.front());
  EXPECT_GT(seen.front().size(), 10u);
}

TEST(ExtractGood, EntriesCarryHashModeAndLink) {
  STACKPIN_SKIP_ON_WINDOWS("POSIX mode bits and symlinks");
  ScratchDir src;
  auto entries = fixtures::cudnn_linux_entries("9.1.0.70", 12);
  entries.push_back(hardlink(entries[3].path.substr(0, entries[3].path.rfind('/')) + "/LICENSE.txt", entries[3].path));
  auto a = src.path() / "c.tar.xz";
  fixtures::write_archive(a, Format::tar_xz, entries);
  ExtractFixture fx;
  auto x = extract_pinned(a, fx.out(), posix());
  ASSERT_TRUE(x.ok()) << x.error().message;
  ASSERT_EQ(x->entries.size(), entries.size());
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& want = entries[i];
    const auto& got = x->entries[i];
    std::string path = want.path.back() == '/' ? want.path.substr(0, want.path.size() - 1) : want.path;
    SCOPED_TRACE(path);
    EXPECT_EQ(got.path, path);  // in archive order, normalized
    fs::path on_disk = fx.out() / got.path;
    switch (want.kind) {
      case Kind::dir:
        EXPECT_EQ(got.type, EntryType::dir);
        EXPECT_TRUE(fs::is_directory(fs::symlink_status(on_disk)));
        break;
      case Kind::file:
        EXPECT_EQ(got.type, EntryType::file);
        EXPECT_EQ(hex(got.sha256), sha(want.data));
        EXPECT_EQ(got.size, want.data.size());
        EXPECT_EQ(got.mode, want.mode);
        EXPECT_EQ(testing_support::sha256_file(on_disk), sha(want.data));
        EXPECT_EQ(static_cast<unsigned>(fs::status(on_disk).permissions()), want.mode);
        bytes += want.data.size();
        break;
      case Kind::symlink:
        EXPECT_EQ(got.type, EntryType::symlink);
        EXPECT_EQ(got.link, want.link);
        EXPECT_EQ(fs::read_symlink(on_disk).string(), want.link);
        break;
      case Kind::hardlink: {
        EXPECT_EQ(got.type, EntryType::hardlink);
        EXPECT_EQ(got.link, want.link);
        EXPECT_EQ(hex(got.sha256), sha(entries[3].data));
        EXPECT_EQ(got.size, entries[3].data.size());
        EXPECT_TRUE(fs::equivalent(on_disk, fx.out() / want.link));  // one inode, two names
        break;
      }
      default: FAIL();
    }
  }
  EXPECT_EQ(x->bytes_written, bytes);
  // the so-name chain works on disk
  auto lib = fx.out() / "cudnn-linux-x86_64-9.1.0.70_cuda12-archive" / "lib";
  EXPECT_EQ(fs::canonical(lib / "libcudnn.so"), fs::canonical(lib / "libcudnn.so.9.1.0"));
}

TEST(ExtractGood, ZipEntriesCarryHashes) {
  ScratchDir src;
  auto win = fixtures::make_cudnn_windows(src.path(), "8.8.0.121", 11);
  auto entries = fixtures::cudnn_windows_entries("8.8.0.121", 11);
  ExtractFixture fx;
  auto x = extract_pinned(win.path, fx.out(), windows());
  ASSERT_TRUE(x.ok()) << x.error().message;
  ASSERT_EQ(x->entries.size(), entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].kind != Kind::file) continue;
    EXPECT_EQ(x->entries[i].path, entries[i].path);
    EXPECT_EQ(hex(x->entries[i].sha256), sha(entries[i].data)) << entries[i].path;
    EXPECT_EQ(testing_support::read_text(fx.out() / entries[i].path), entries[i].data);
  }
}

TEST(ExtractGood, ListWritesNothing) {
  ScratchDir src;
  auto lin = fixtures::make_cudnn_linux(src.path(), "8.9.7.29", 12);
  ScratchDir cwd;
  auto before = testing_support::snapshot(src.path());
  auto old_cwd = fs::current_path();
  fs::current_path(cwd.path());  // a relative write would land here
  auto l = list_pinned(lin.path, posix());
  fs::current_path(old_cwd);
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(src.path())), "");
  EXPECT_TRUE(fs::is_empty(cwd.path()));
  auto entries = fixtures::cudnn_linux_entries("8.9.7.29", 12);
  ASSERT_EQ(l->entries.size(), entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].kind == Kind::file) {
      EXPECT_EQ(l->entries[i].size, entries[i].data.size()) << entries[i].path;
    }
    if (entries[i].kind == Kind::symlink) {
      EXPECT_EQ(l->entries[i].link, entries[i].link) << entries[i].path;
    }
  }
  EXPECT_EQ(hex(l->archive_sha256), lin.sha256);
  // extract() needs a destination
  auto x = extract_pinned(lin.path, fs::path(), posix());
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.error().code, ErrorCode::internal);
}

TEST(ExtractGood, ProgressReportsBytesAndFiles) {
  ScratchDir src;
  fixtures::CudnnOptions o;
  o.library_bytes = 256 * 1024;
  auto tar = src.path() / "c.tar";  // plain tar: xz would spend a second on 4 MiB of random bytes
  fixtures::write_archive(tar, Format::tar, fixtures::cudnn_linux_entries("9.1.0.70", 12, o));
  auto lin = fixtures::info(tar);
  ExtractFixture fx;
  auto opts = posix();
  std::vector<archive_io::Progress> seen;
  opts.progress = [&](const archive_io::Progress& p) { seen.push_back(p); };
  auto x = extract_pinned(lin.path, fx.out(), opts);
  ASSERT_TRUE(x.ok()) << x.error().message;
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen.back().bytes_written, x->bytes_written);
  EXPECT_EQ(seen.back().archive_total, lin.size);
  EXPECT_EQ(seen.back().files, 8u * 2 + 1 + 7);  // libraries, static archives, LICENSE, headers
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].bytes_written, seen[i - 1].bytes_written);
}

}  // namespace

}  // namespace extract_test
