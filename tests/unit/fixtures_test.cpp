// Self-test of the fixture library (tests/support/fixtures.*): the archives it builds are read back
// with libarchive and compared with NVIDIA's layouts, hostile entries come back verbatim, broken
// streams are broken, and the same input gives the same bytes.
#include "fixtures.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <locale.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace fixtures_test {

namespace {
namespace fs = std::filesystem;
using fixtures::Entry;
using fixtures::Format;
using fixtures::Kind;
using testing_support::read_text;
using testing_support::ScratchDir;

struct ReadEntry {
  std::string path;
  Kind kind = Kind::file;
  std::string link;  // symlink or hardlink target
  std::string data;
  unsigned perm = 0;
  std::int64_t size = 0;
  std::int64_t mtime = 0;
  std::int64_t uid = -1, gid = -1;
  std::string uname, gname;
  unsigned rdevmajor = 0, rdevminor = 0;
};

struct ReadResult {
  std::vector<ReadEntry> entries;
  bool ok = true;            // every header and every data block read without error
  std::string error;         // libarchive's message of the first error
  std::string failed_entry;  // the entry whose header or data failed ("" when a header failed)
};

// Names as UTF-8 where libarchive has them so (pax "path" records, zip UTF-8 flag), else raw bytes.
std::string text(const char* utf8, const char* raw) { return utf8 ? utf8 : raw ? raw : ""; }

// libarchive's zip reader turns a UTF-8-flagged name into the locale's charset and loses it under the
// "C" locale of a test program: read under a UTF-8 LC_CTYPE, for this thread only.
class Utf8Ctype {
 public:
  Utf8Ctype() : m_loc(newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0))) {
    if (m_loc) m_old = uselocale(m_loc);
  }
  ~Utf8Ctype() {
    if (m_loc) {
      uselocale(m_old);
      freelocale(m_loc);
    }
  }
  Utf8Ctype(const Utf8Ctype&) = delete;
  Utf8Ctype& operator=(const Utf8Ctype&) = delete;

 private:
  locale_t m_loc;
  locale_t m_old = static_cast<locale_t>(0);
};

ReadResult read_archive(const fs::path& p) {
  Utf8Ctype utf8;
  ReadResult r;
  archive* a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_all(a);
  if (archive_read_open_filename(a, p.c_str(), 10240) != ARCHIVE_OK) {
    r.ok = false;
    r.error = archive_error_string(a) ? archive_error_string(a) : "open failed";
    archive_read_free(a);
    return r;
  }
  for (;;) {
    archive_entry* e = nullptr;
    int rc = archive_read_next_header(a, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {  // ARCHIVE_RETRY (-10) is a failure too
      r.ok = false;
      r.error = archive_error_string(a) ? archive_error_string(a) : "header failed";
      break;
    }
    ReadEntry x;
    x.path = text(archive_entry_pathname_utf8(e), archive_entry_pathname(e));
    switch (archive_entry_filetype(e)) {
      case AE_IFDIR: x.kind = Kind::dir; break;
      case AE_IFLNK: x.kind = Kind::symlink; break;
      case AE_IFIFO: x.kind = Kind::fifo; break;
      case AE_IFCHR: x.kind = Kind::chardev; break;
      default: x.kind = Kind::file; break;
    }
    if (archive_entry_hardlink_utf8(e) || archive_entry_hardlink(e)) {
      x.kind = Kind::hardlink;
      x.link = text(archive_entry_hardlink_utf8(e), archive_entry_hardlink(e));
    } else if (x.kind == Kind::symlink) {
      x.link = text(archive_entry_symlink_utf8(e), archive_entry_symlink(e));
    }
    x.perm = archive_entry_perm(e);
    x.size = archive_entry_size(e);
    x.mtime = archive_entry_mtime(e);
    x.uid = archive_entry_uid(e);
    x.gid = archive_entry_gid(e);
    x.uname = text(archive_entry_uname_utf8(e), archive_entry_uname(e));
    x.gname = text(archive_entry_gname_utf8(e), archive_entry_gname(e));
    x.rdevmajor = archive_entry_rdevmajor(e);
    x.rdevminor = archive_entry_rdevminor(e);
    char buf[8192];
    bool data_ok = true;
    for (;;) {
      la_ssize_t n = archive_read_data(a, buf, sizeof buf);
      if (n == 0) break;
      if (n < 0) {
        data_ok = false;
        break;
      }
      x.data.append(buf, static_cast<std::size_t>(n));
    }
    r.entries.push_back(x);
    if (!data_ok) {
      r.ok = false;
      r.error = archive_error_string(a) ? archive_error_string(a) : "data failed";
      r.failed_entry = x.path;
      break;
    }
  }
  archive_read_free(a);
  return r;
}

const ReadEntry* find(const ReadResult& r, const std::string& path) {
  for (const auto& e : r.entries)
    if (e.path == path) return &e;
  return nullptr;
}

std::vector<std::string> names_under(const ReadResult& r, const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : r.entries)
    if (e.path.rfind(dir, 0) == 0 && e.path.size() > dir.size() && e.path.find('/', dir.size()) == std::string::npos)
      out.push_back(e.path.substr(dir.size()));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

void expect_common_metadata(const ReadResult& r) {
  for (const auto& e : r.entries) {
    EXPECT_EQ(e.mtime, fixtures::fixed_mtime) << e.path;
    EXPECT_EQ(e.uid, 0) << e.path;
    EXPECT_EQ(e.gid, 0) << e.path;
  }
}

void expect_version_header(const std::string& text, int major, int minor, int patch) {
  EXPECT_NE(text.find("#define CUDNN_MAJOR " + std::to_string(major) + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find("#define CUDNN_MINOR " + std::to_string(minor) + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find("#define CUDNN_PATCHLEVEL " + std::to_string(patch) + "\n"), std::string::npos) << text;
  std::string factor = major >= 9 ? "10000" : "1000";
  EXPECT_NE(text.find("#define CUDNN_VERSION (CUDNN_MAJOR * " + factor + " + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n"), std::string::npos)
      << text;
}

// ---- Linux layouts -------------------------------------------------------------------------------

TEST(Fixtures, LinuxV8LayoutMatchesNvidia) {
  ScratchDir dir;
  auto inf = fixtures::make_cudnn_linux(dir.path(), "8.9.7.29", 12);
  const std::string top = "cudnn-linux-x86_64-8.9.7.29_cuda12-archive";
  EXPECT_EQ(inf.path, dir.path() / (top + ".tar.xz"));
  EXPECT_EQ(inf.size, fs::file_size(inf.path));
  EXPECT_EQ(inf.sha256.size(), 64u);
  EXPECT_EQ(inf.sha256.find_first_not_of("0123456789abcdef"), std::string::npos);

  auto r = read_archive(inf.path);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_GE(r.entries.size(), 3u);
  EXPECT_EQ(r.entries[0].path, top + "/");
  EXPECT_EQ(r.entries[0].kind, Kind::dir);
  EXPECT_EQ(r.entries[1].path, top + "/include/");
  EXPECT_EQ(r.entries[2].path, top + "/lib/");
  for (const auto& e : r.entries) EXPECT_EQ(e.path.rfind(top + "/", 0), 0u) << e.path;
  expect_common_metadata(r);
  ASSERT_NE(find(r, top + "/LICENSE"), nullptr);

  EXPECT_EQ(names_under(r, top + "/include/"), sorted(fixtures::cudnn_headers(8)));
  const std::string lib = top + "/lib/";
  for (const std::string stem : {"libcudnn", "libcudnn_adv_infer", "libcudnn_adv_train", "libcudnn_cnn_infer", "libcudnn_cnn_train",
                                 "libcudnn_ops_infer", "libcudnn_ops_train"}) {
    const auto* real = find(r, lib + stem + ".so.8.9.7");
    ASSERT_NE(real, nullptr) << stem;
    EXPECT_EQ(real->kind, Kind::file);
    EXPECT_EQ(real->data.size(), 4096u);
    EXPECT_EQ(real->data.substr(0, 4),
              "\x7f"
              "ELF");
    const auto* so_major = find(r, lib + stem + ".so.8");
    ASSERT_NE(so_major, nullptr) << stem;
    EXPECT_EQ(so_major->kind, Kind::symlink);
    EXPECT_EQ(so_major->link, stem + ".so.8.9.7");
    const auto* so = find(r, lib + stem + ".so");
    ASSERT_NE(so, nullptr) << stem;
    EXPECT_EQ(so->kind, Kind::symlink);
    EXPECT_EQ(so->link, stem + ".so.8");
    if (std::string(stem) == "libcudnn") {
      EXPECT_EQ(find(r, lib + "libcudnn_static.a"), nullptr);
    } else {
      EXPECT_NE(find(r, lib + stem + "_static.a"), nullptr) << stem;
    }
  }
  EXPECT_EQ(names_under(r, lib).size(), 7u * 3 + 6);

  const auto* vh = find(r, top + "/include/cudnn_version.h");
  ASSERT_NE(vh, nullptr);
  expect_version_header(vh->data, 8, 9, 7);
}

TEST(Fixtures, LinuxV9LayoutMatchesNvidia) {
  ScratchDir dir;
  auto inf = fixtures::make_cudnn_linux(dir.path(), "9.1.0.70", 12);
  const std::string top = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive";
  EXPECT_EQ(inf.path.filename(), top + ".tar.xz");
  auto r = read_archive(inf.path);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.entries.at(0).path, top + "/");
  expect_common_metadata(r);
  EXPECT_EQ(r.entries.at(0).uname, "root");
  EXPECT_EQ(r.entries.at(0).gname, "root");
  EXPECT_EQ(names_under(r, top + "/include/"), sorted(fixtures::cudnn_headers(9)));
  const std::string lib = top + "/lib/";
  for (const auto& stem : fixtures::cudnn_linux_stems(9)) {
    const auto* so_major = find(r, lib + stem + ".so.9");
    ASSERT_NE(so_major, nullptr) << stem;
    EXPECT_EQ(so_major->kind, Kind::symlink);
    EXPECT_EQ(so_major->link, stem + ".so.9.1.0");
    const auto* so = find(r, lib + stem + ".so");
    ASSERT_NE(so, nullptr) << stem;
    EXPECT_EQ(so->link, stem + ".so.9");
    const auto* real = find(r, lib + stem + ".so.9.1.0");
    ASSERT_NE(real, nullptr) << stem;
    EXPECT_EQ(real->kind, Kind::file);
    EXPECT_EQ(real->perm, 0755u);
    EXPECT_NE(find(r, lib + stem + "_static.a"), nullptr) << stem;
  }
  EXPECT_EQ(names_under(r, lib).size(), 8u * 4);
  EXPECT_EQ(fixtures::cudnn_linux_stems(9).size(), 8u);
  const auto* vh = find(r, top + "/include/cudnn_version.h");
  ASSERT_NE(vh, nullptr);
  expect_version_header(vh->data, 9, 1, 0);
}

TEST(Fixtures, LinuxPlatformNamesTheTopDirectory) {
  auto es = fixtures::cudnn_linux_entries("9.1.0.70", 12, {}, "linux-sbsa");
  ASSERT_FALSE(es.empty());
  EXPECT_EQ(es[0].path, "cudnn-linux-sbsa-9.1.0.70_cuda12-archive/");
  EXPECT_EQ(fixtures::cudnn_archive_name("linux-sbsa", "9.1.0.70", 12), "cudnn-linux-sbsa-9.1.0.70_cuda12-archive.tar.xz");
  EXPECT_EQ(fixtures::cudnn_archive_name("windows-x86_64", "8.9.7.29", 12), "cudnn-windows-x86_64-8.9.7.29_cuda12-archive.zip");
  EXPECT_THROW(fixtures::cudnn_linux_entries("9.1.0", 12), std::runtime_error);
  EXPECT_THROW(fixtures::cudnn_linux_entries("7.6.5.32", 10), std::runtime_error);
}

TEST(Fixtures, RealLibrariesTakeTheInstalledBytes) {
  const fs::path real = "/usr/local/cuda/lib64/libcudnn_graph.so.9";
  if (!fs::is_regular_file(real)) GTEST_SKIP() << "no real cuDNN 9 under /usr/local/cuda/lib64 (" << real << ")";
  fixtures::CudnnOptions o;
  o.real_libraries = true;
  o.library_bytes = 2048;
  auto es = fixtures::cudnn_linux_entries("9.19.0.56", 13, o);
  auto it = std::find_if(es.begin(), es.end(), [](const Entry& e) {
    return e.path == "cudnn-linux-x86_64-9.19.0.56_cuda13-archive/lib/libcudnn_graph.so.9.19.0";
  });
  ASSERT_NE(it, es.end());
  std::string bytes(2048, '\0');
  std::ifstream in(real, std::ios::binary);
  ASSERT_TRUE(in.read(bytes.data(), 2048)) << real;
  EXPECT_EQ(it->data, bytes);
}

// ---- Windows layouts -----------------------------------------------------------------------------

TEST(Fixtures, WindowsV8LayoutMatchesNvidia) {
  ScratchDir dir;
  auto inf = fixtures::make_cudnn_windows(dir.path(), "8.8.0.121", 11);
  const std::string top = "cudnn-windows-x86_64-8.8.0.121_cuda11-archive";
  EXPECT_EQ(inf.path.filename(), top + ".zip");
  auto r = read_archive(inf.path);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.entries.at(0).path, top + "/");
  EXPECT_EQ(r.entries.at(0).kind, Kind::dir);
  for (const auto& e : r.entries) EXPECT_EQ(e.path.rfind(top + "/", 0), 0u) << e.path;
  EXPECT_EQ(find(r, top + "/bin/x64/"), nullptr);
  std::vector<std::string> dlls{"cudnn64_8.dll",           "cudnn_adv_infer64_8.dll", "cudnn_adv_train64_8.dll", "cudnn_cnn_infer64_8.dll",
                                "cudnn_cnn_train64_8.dll", "cudnn_ops_infer64_8.dll", "cudnn_ops_train64_8.dll"};
  EXPECT_EQ(names_under(r, top + "/bin/"), sorted(dlls));
  for (const auto& d : dlls) EXPECT_EQ(find(r, top + "/bin/" + d)->data.substr(0, 2), "MZ") << d;
  auto libs = names_under(r, top + "/lib/x64/");
  EXPECT_EQ(libs.size(), 14u);
  for (const std::string base : {"cudnn", "cudnn_adv_infer", "cudnn_ops_train"}) {
    EXPECT_NE(std::find(libs.begin(), libs.end(), base + ".lib"), libs.end()) << base;
    EXPECT_NE(std::find(libs.begin(), libs.end(), base + "64_8.lib"), libs.end()) << base;
  }
  EXPECT_EQ(names_under(r, top + "/include/"), sorted(fixtures::cudnn_headers(8)));
  const auto* vh = find(r, top + "/include/cudnn_version.h");
  ASSERT_NE(vh, nullptr);
  expect_version_header(vh->data, 8, 8, 0);
}

TEST(Fixtures, WindowsV9_19LayoutPutsDllsInBinX64) {
  ScratchDir dir;
  auto inf = fixtures::make_cudnn_windows(dir.path(), "9.19.0.56", 13);
  const std::string top = "cudnn-windows-x86_64-9.19.0.56_cuda13-archive";
  EXPECT_EQ(inf.path.filename(), top + ".zip");
  auto r = read_archive(inf.path);
  ASSERT_TRUE(r.ok) << r.error;
  std::vector<std::string> dlls{"cudnn64_9.dll",
                                "cudnn_adv64_9.dll",
                                "cudnn_cnn64_9.dll",
                                "cudnn_engines_precompiled64_9.dll",
                                "cudnn_engines_runtime_compiled64_9.dll",
                                "cudnn_graph64_9.dll",
                                "cudnn_heuristic64_9.dll",
                                "cudnn_ops64_9.dll"};
  EXPECT_EQ(names_under(r, top + "/bin/x64/"), sorted(dlls));
  for (const auto& d : dlls) EXPECT_EQ(find(r, top + "/bin/" + d), nullptr) << d;
  auto libs = names_under(r, top + "/lib/x64/");
  EXPECT_EQ(libs.size(), 16u);
  EXPECT_NE(std::find(libs.begin(), libs.end(), "cudnn_graph.lib"), libs.end());
  EXPECT_NE(std::find(libs.begin(), libs.end(), "cudnn_graph64_9.lib"), libs.end());
  const auto* vh = find(r, top + "/include/cudnn_version.h");
  ASSERT_NE(vh, nullptr);
  expect_version_header(vh->data, 9, 19, 0);
}

TEST(Fixtures, WindowsDirectoriesFollowTheVersion) {
  auto has = [](const std::vector<Entry>& es, const std::string& p) {
    return std::any_of(es.begin(), es.end(), [&](const Entry& e) { return e.path == p; });
  };
  auto v917 = fixtures::cudnn_windows_entries("9.17.1.4", 12);
  EXPECT_TRUE(has(v917, "cudnn-windows-x86_64-9.17.1.4_cuda12-archive/bin/cudnn64_9.dll"));
  auto v84 = fixtures::cudnn_windows_entries("8.4.1.50", 11);
  EXPECT_TRUE(has(v84, "cudnn-windows-x86_64-8.4.1.50_cuda11-archive/lib/cudnn.lib"));
  EXPECT_TRUE(has(v84, "cudnn-windows-x86_64-8.4.1.50_cuda11-archive/lib/cudnn64_8.lib"));
  EXPECT_FALSE(has(v84, "cudnn-windows-x86_64-8.4.1.50_cuda11-archive/lib/x64/"));
}

// ---- hostile entries -----------------------------------------------------------------------------

std::vector<Entry> hostile_entries(bool zip) {
  std::vector<Entry> es{
      {"../evil", Kind::file, "up one", {}, 0644},
      {"/etc/evil", Kind::file, "absolute", {}, 0600},
      {"a/../../b", Kind::file, "dotdot inside", {}, 0644},
      {"dir", Kind::dir, {}, {}, 0755},
      {"dir/link", Kind::symlink, {}, "../../etc/passwd", 0777},
      {"suid", Kind::file, "#!/bin/sh\n", {}, 04755},
      {"dup", Kind::file, "first", {}, 0644},
      {"dup", Kind::file, "second", {}, 0644},
      {"sp ace/\xc3\xa9t\xc3\xa9 $`x`.txt", Kind::file, "non-ascii", {}, 0644},
  };
  if (!zip) {
    es.push_back({"hard", Kind::hardlink, {}, "/etc/shadow", 0644});
    es.push_back({"fifo", Kind::fifo, {}, {}, 0644});
    es.push_back({"null", Kind::chardev, {}, {}, 0666});
  }
  return es;
}

void expect_verbatim(const std::vector<Entry>& written, const ReadResult& r, const std::string& what) {
  ASSERT_TRUE(r.ok) << what << ": " << r.error;
  ASSERT_EQ(r.entries.size(), written.size()) << what;
  for (std::size_t i = 0; i < written.size(); ++i) {
    const Entry& w = written[i];
    const ReadEntry& e = r.entries[i];
    std::string want_path = w.kind == Kind::dir && w.path.back() != '/' ? w.path + "/" : w.path;
    EXPECT_EQ(e.path, want_path) << what;
    EXPECT_EQ(e.kind, w.kind) << what << " " << w.path;
    EXPECT_EQ(e.link, w.link) << what << " " << w.path;
    if (w.kind == Kind::file) {
      EXPECT_EQ(e.data, w.data) << what << " " << w.path;
    }
    if (w.kind != Kind::symlink) {
      EXPECT_EQ(e.perm, w.mode) << what << " " << w.path;
    }
    if (w.kind == Kind::chardev) {
      EXPECT_EQ(e.rdevmajor, 1u);
      EXPECT_EQ(e.rdevminor, 3u);
    }
  }
}

TEST(Fixtures, HostileEntriesComeBackVerbatim) {
  ScratchDir dir;
  for (auto [fmt, name] : {std::pair{Format::tar, "h.tar"}, std::pair{Format::tar_gz, "h.tar.gz"}, std::pair{Format::tar_xz, "h.tar.xz"},
                           std::pair{Format::zip, "h.zip"}}) {
    auto es = hostile_entries(fmt == Format::zip);
    fs::path out = dir.path() / name;
    fixtures::write_archive(out, fmt, es);
    expect_verbatim(es, read_archive(out), name);
  }
}

TEST(Fixtures, ZipRefusesWhatItCannotStore) {
  ScratchDir dir;
  try {
    fixtures::write_archive(dir.path() / "f.zip", Format::zip, {{"fifo", Kind::fifo, {}, {}, 0644}});
    FAIL() << "a fifo in a zip was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("header of \"fifo\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot archive"), std::string::npos) << e.what();
  }
  EXPECT_THROW(fixtures::write_archive(dir.path() / "h.zip", Format::zip, {{"h", Kind::hardlink, {}, "x", 0644}}), std::runtime_error);
}

// ---- broken streams ------------------------------------------------------------------------------

TEST(Fixtures, LyingSizeFailsWhenTheDataIsRead) {
  ScratchDir dir;
  fs::path out = dir.path() / "lies.tar";
  fixtures::write_tar_with_lying_size(out, "payload.bin", 1 << 20, "only a few bytes");
  EXPECT_EQ(fs::file_size(out), 512u + 512u + 1024u);
  auto r = read_archive(out);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].path, "payload.bin");
  EXPECT_EQ(r.entries[0].size, 1 << 20);
  EXPECT_EQ(r.failed_entry, "payload.bin");
  EXPECT_FALSE(r.error.empty());

  // Declaring less than it carries: the entry reads short and the next "header" is the rest of the data.
  fs::path shorter = dir.path() / "shorter.tar";
  fixtures::write_tar_with_lying_size(shorter, "payload.bin", 2, std::string(600, 'x'));
  auto s = read_archive(shorter);
  EXPECT_FALSE(s.ok);
  ASSERT_EQ(s.entries.size(), 1u);
  EXPECT_EQ(s.entries[0].data, "xx");
  EXPECT_EQ(s.failed_entry, "");  // the failure is the header after it
  EXPECT_FALSE(s.error.empty());

  // Telling the truth, the same writer gives a valid archive.
  fs::path honest = dir.path() / "honest.tar";
  fixtures::write_tar_with_lying_size(honest, "payload.bin", 16, "only a few bytes");
  auto h = read_archive(honest);
  ASSERT_TRUE(h.ok) << h.error;
  ASSERT_EQ(h.entries.size(), 1u);
  EXPECT_EQ(h.entries[0].data, "only a few bytes");
  EXPECT_EQ(h.entries[0].uname, "root");
}

TEST(Fixtures, TruncatedAndCorruptCopies) {
  ScratchDir dir;
  auto inf = fixtures::make_cudnn_linux(dir.path(), "9.1.0.70", 12);
  fs::path cut = dir.path() / "cut.tar.xz";
  fixtures::truncate_copy(inf.path, cut, inf.size / 2);
  EXPECT_EQ(fs::file_size(cut), inf.size / 2);
  auto r = read_archive(cut);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.error.empty());

  fs::path bad = dir.path() / "bad.tar.xz";
  fixtures::corrupt_copy(inf.path, bad, inf.size / 2);
  std::string a = read_text(inf.path), b = read_text(bad);
  ASSERT_EQ(a.size(), b.size());
  std::size_t diffs = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diffs += a[i] != b[i];
  EXPECT_EQ(diffs, 1u);
  EXPECT_NE(a[inf.size / 2], b[inf.size / 2]);
  EXPECT_FALSE(read_archive(bad).ok);

  EXPECT_THROW(fixtures::truncate_copy(inf.path, cut, inf.size + 1), std::runtime_error);
  EXPECT_THROW(fixtures::corrupt_copy(inf.path, bad, inf.size), std::runtime_error);
}

// ---- determinism ---------------------------------------------------------------------------------

TEST(Fixtures, SameInputSameBytes) {
  ScratchDir one, two;
  EXPECT_EQ(fixtures::make_cudnn_linux(one.path(), "9.1.0.70", 12).sha256, fixtures::make_cudnn_linux(two.path(), "9.1.0.70", 12).sha256);
  EXPECT_EQ(fixtures::make_cudnn_windows(one.path(), "8.8.0.121", 11).sha256,
            fixtures::make_cudnn_windows(two.path(), "8.8.0.121", 11).sha256);
  auto es = hostile_entries(false);
  fixtures::write_archive(one.path() / "h.tar.gz", Format::tar_gz, es);
  fixtures::write_archive(two.path() / "h.tar.gz", Format::tar_gz, es);
  EXPECT_EQ(fixtures::info(one.path() / "h.tar.gz").sha256, fixtures::info(two.path() / "h.tar.gz").sha256);
  // No time stamp in the gzip header (bytes 4..7), so a build a second later is the same too.
  std::string gz = read_text(one.path() / "h.tar.gz");
  ASSERT_GE(gz.size(), 10u);
  EXPECT_EQ(gz.substr(4, 4), std::string(4, '\0'));
  // Different versions give different bytes.
  EXPECT_NE(fixtures::make_cudnn_linux(one.path(), "9.1.0.70", 12).sha256, fixtures::make_cudnn_linux(one.path(), "9.1.1.17", 12).sha256);
}

TEST(Fixtures, InfoIsTheSha256OfTheFile) {
  ScratchDir dir;
  auto p = dir.write("abc", "abc");
  auto inf = fixtures::info(p);
  EXPECT_EQ(inf.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(inf.size, 3u);
  EXPECT_EQ(inf.path, p);
  EXPECT_THROW(fixtures::info(dir.path() / "missing"), std::runtime_error);
}

// ---- xz threads ----------------------------------------------------------------------------------

std::uint64_t read_varint(const std::string& s, std::size_t& pos) {
  std::uint64_t v = 0;
  for (int shift = 0; pos < s.size() && shift < 63; shift += 7) {
    auto b = static_cast<unsigned char>(s[pos++]);
    v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) break;
  }
  return v;
}

// The number of blocks of a single-stream .xz file, from its index.
std::uint64_t xz_blocks(const std::string& xz) {
  if (xz.size() < 24 || xz.substr(xz.size() - 2) != "YZ") throw std::runtime_error("not an xz stream");
  const std::size_t f = xz.size() - 12;
  std::uint32_t backward = 0;
  for (int i = 3; i >= 0; --i) backward = (backward << 8) | static_cast<unsigned char>(xz[f + 4 + static_cast<std::size_t>(i)]);
  std::size_t index = f - (static_cast<std::size_t>(backward) + 1) * 4;
  if (xz[index] != '\0') throw std::runtime_error("no xz index where the footer says");
  std::size_t pos = index + 1;
  return read_varint(xz, pos);
}

TEST(Fixtures, XzThreadsMakeAMultiBlockStream) {
  ScratchDir dir;
  fixtures::CudnnOptions o;
  o.library_bytes = 80 * 1024;  // 8 stems x (library + static archive) x 80 KiB: 1.3 MiB of tar, two 1 MiB blocks
  o.xz_threads = 2;
  auto multi = fixtures::make_cudnn_linux(dir.path(), "9.1.0.70", 12, o);
  EXPECT_GE(xz_blocks(read_text(multi.path)), 2u);
  auto r = read_archive(multi.path);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(find(r, "cudnn-linux-x86_64-9.1.0.70_cuda12-archive/lib/libcudnn_ops.so.9.1.0")->data.size(), 80u * 1024);

  ScratchDir single_dir;
  EXPECT_EQ(xz_blocks(read_text(fixtures::make_cudnn_linux(single_dir.path(), "9.1.0.70", 12).path)), 1u);
}

// ---- manifest ------------------------------------------------------------------------------------

TEST(Fixtures, LocalManifestPinsTheArchives) {
  fixtures::Info lin{"/x/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz", std::string(64, 'a'), 1234};
  fixtures::Info win{"/x/cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip", std::string(64, 'b'), 99};
  std::string m = fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"linux-x86_64", lin}, {"windows-x86_64", win}},
                                           "[targets.linux]\nlayout = \"lib64\"\n");
  EXPECT_EQ(m.rfind("schema = 1\nname = \"fixture\"\n", 0), 0u) << m;
  EXPECT_NE(m.find("[cuda]\nversion = \"12.4.1\"\n"), std::string::npos) << m;
  EXPECT_NE(m.find("[cudnn]\nversion = \"9.1.0.70\"\ncuda = 12\n"), std::string::npos) << m;
  EXPECT_NE(m.find("[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\n"
                   "file = \"cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz\"\nsha256 = \"" +
                   std::string(64, 'a') + "\"\nsize = 1234\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("platform = \"windows-x86_64\"\norigin = \"local\"\nfile = \"cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip\"\n"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.substr(m.size() - std::string("[targets.linux]\nlayout = \"lib64\"\n").size()), "[targets.linux]\nlayout = \"lib64\"\n");
}

}  // namespace

}  // namespace fixtures_test
