// The pieces of `stackpin deb`: the ELF reader that derives Depends, the control-file renderer and
// its defences, and the deterministic compressors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "archive/deb.hpp"
#include "gen/deb_control.hpp"
#include "probe/elf.hpp"
#include "test_support.hpp"

namespace deb_test {

namespace fs = std::filesystem;

TEST(Elf, ReadsTheLoaderFactsOfARealBinary) {
  auto info = probe::read_elf(testing_support::binary().string());
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_TRUE(info->is64);
#if defined(__x86_64__)
  EXPECT_EQ(probe::machine_name(info->machine), "x86_64");
#elif defined(__aarch64__)
  EXPECT_EQ(probe::machine_name(info->machine), "aarch64");
#endif
  EXPECT_NE(std::find(info->needed.begin(), info->needed.end(), "libc.so.6"), info->needed.end());
  ASSERT_TRUE(info->version_needs.count("libc.so.6"));
  bool glibc = false;
  for (const auto& v : info->version_needs.at("libc.so.6")) glibc |= v.rfind("GLIBC_2.", 0) == 0;
  EXPECT_TRUE(glibc);
}

TEST(Elf, ReadsTheSonameOfTheCLibrary) {
  fs::path libc;
  for (const char* p : {"/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6"})
    if (fs::exists(p)) libc = p;
  if (libc.empty()) GTEST_SKIP() << "no libc.so.6 at a Debian path";
  auto info = probe::read_elf(libc);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_TRUE(info->shared_object);
  EXPECT_EQ(info->soname, "libc.so.6");
}

TEST(Elf, RefusesWhatIsNotAnElfFileOrIsTruncated) {
  testing_support::ScratchDir dir;
  auto text = dir.write("notelf.so", "just text, not a library\n");
  auto r = probe::read_elf(text);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, util::ErrorCode::invalid);
  EXPECT_FALSE(probe::is_elf(text));

  std::ifstream in(testing_support::binary(), std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), 4096);
  auto cut = dir.write("truncated.so", head);
  EXPECT_TRUE(probe::is_elf(cut));
  auto t = probe::read_elf(cut);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, util::ErrorCode::invalid) << t.error().message;
  EXPECT_NE(t.error().message.find("truncated"), std::string::npos) << t.error().message;

  auto missing = probe::read_elf(dir.path() / "absent.so");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, util::ErrorCode::not_found);
}

TEST(DebControl, RendersFieldsInOrderAndKeepsValuesOnOneLine) {
  gen::DebControl c;
  c.package = "stackpin-libcudnn9-cuda-12";
  c.version = "9.1.0.70-1+cuda12";
  c.architecture = "amd64";
  c.maintainer = "A \"B\" <a@example.org>\nEssential: yes";
  c.depends = {"libc6 (>= 2.17)", "zlib1g"};
  c.synopsis = "short\rline";
  c.description = {"a paragraph that is long enough to need wrapping because Debian wants lines of at most eighty columns", "",
                   "second\nparagraph"};
  auto text = gen::render_control(c);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text,
            "Package: stackpin-libcudnn9-cuda-12\n"
            "Version: 9.1.0.70-1+cuda12\n"
            "Architecture: amd64\n"
            "Maintainer: A \"B\" <a@example.org> Essential: yes\n"
            "Depends: libc6 (>= 2.17), zlib1g\n"
            "Priority: optional\n"
            "Description: short line\n"
            " a paragraph that is long enough to need wrapping because Debian wants lines of\n"
            " at most eighty columns\n"
            " .\n"
            " second paragraph\n");
}

TEST(DebControl, RefusesInvalidNamesAndVersions) {
  gen::DebControl c;
  c.package = "Bad_Name";
  c.version = "1.0";
  c.architecture = "amd64";
  c.maintainer = "m <m@example.org>";
  c.synopsis = "s";
  EXPECT_FALSE(gen::render_control(c));
  c.package = "good-name";
  c.version = "v1";
  EXPECT_FALSE(gen::render_control(c));
  c.version = "1.0-1";
  c.architecture = "";
  EXPECT_FALSE(gen::render_control(c));
  EXPECT_TRUE(gen::valid_package_name("stackpin-libcudnn8-dev-cuda-11"));
  EXPECT_FALSE(gen::valid_package_name("-x"));
  EXPECT_TRUE(gen::valid_version("8.9.5.30-1+cuda12"));
}

TEST(DebControl, ShlibsMd5sumsTriggersChangelog) {
  EXPECT_EQ(gen::render_shlibs({"libcudnn_ops.so.9", "libcudnn.so.9", "weird"}, "p (>= 1)"),
            "libcudnn 9 p (>= 1)\nlibcudnn_ops 9 p (>= 1)\n");
  EXPECT_EQ(gen::render_md5sums({{"usr/b", "bb"}, {"usr/a", "aa"}}), "aa  usr/a\nbb  usr/b\n");
  EXPECT_EQ(gen::render_ldconfig_trigger(), "activate-noawait ldconfig\n");
  // 2024-03-01T12:34:56Z was a Friday; 2000-02-29 a Tuesday (leap day of a century leap year).
  EXPECT_NE(gen::render_changelog("p", "1-1", "c", "M <m@x.org>", 1709296496).find("  Fri, 01 Mar 2024 12:34:56 +0000"), std::string::npos)
      << gen::render_changelog("p", "1-1", "c", "M <m@x.org>", 1709296496);
  EXPECT_NE(gen::render_changelog("p", "1-1", "c", "M <m@x.org>", 951782400).find("Tue, 29 Feb 2000 00:00:00 +0000"), std::string::npos)
      << gen::render_changelog("p", "1-1", "c", "M <m@x.org>", 951782400);
  auto copyright = gen::render_copyright("cuDNN", "https://x", "2024 NVIDIA", "LicenseRef-X", "line one\n\n\tline two\n\n\n");
  EXPECT_NE(copyright.find("License: LicenseRef-X\n line one\n .\n  line two\n"), std::string::npos) << copyright;
  EXPECT_EQ(copyright.substr(copyright.size() - 11), "  line two\n") << "no trailing blank continuation";
}

TEST(DebArchive, GzipHasNoTimestampAndIsDeterministic) {
  auto a = archive_io::gzip_bytes("hello changelog\n");
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_GE(a->size(), 10u);
  EXPECT_EQ(static_cast<unsigned char>((*a)[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>((*a)[1]), 0x8b);
  EXPECT_EQ(a->substr(4, 4), std::string(4, '\0')) << "MTIME must be zero";
  auto b = archive_io::gzip_bytes("hello changelog\n");
  EXPECT_EQ(*a, *b);
}

}  // namespace deb_test
