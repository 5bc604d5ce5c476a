// Tests of util's file helpers: atomic writes, capped reads, the boot's name.
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "util/file_io.hpp"
#include "util/file_lock.hpp"
#include "util/fs.hpp"

namespace fs_test {

// The boot's name becomes a folder in the download cache: a UUID as the kernel writes it, or none.
TEST(Fs, ABootIsNamedByTheKernelsUuidOnly) {
  EXPECT_EQ(util::parse_boot_id("f20eed3a-481e-4d09-a7f8-0704b61e9c2d\n"), "f20eed3a-481e-4d09-a7f8-0704b61e9c2d");
  EXPECT_EQ(util::parse_boot_id("f20eed3a-481e-4d09-a7f8-0704b61e9c2d"), "f20eed3a-481e-4d09-a7f8-0704b61e9c2d");
  for (const char* bad :
       {"", "\n", "F20EED3A-481E-4D09-A7F8-0704B61E9C2D", "f20eed3a-481e-4d09-a7f8-0704b61e9c2", "f20eed3a-481e-4d09-a7f8-0704b61e9c2d0",
        "f20eed3a_481e-4d09-a7f8-0704b61e9c2d", "../../../../../../../../../../../tmp", "f20eed3a-481e-4d09-a7f8-0704b61e9c/d",
        "f20eed3a-481e-4d09-a7f8-0704b61e9c2d\nx"})
    EXPECT_FALSE(util::parse_boot_id(bad)) << bad;
  if (auto b = util::boot_identity()) {
    EXPECT_EQ(util::parse_boot_id(*b), *b);
  }
}

TEST(Fs, AtomicWriteReplacesWholeFile) {
  testing_support::ScratchDir dir;
  auto p = dir.path() / "f.txt";
  ASSERT_TRUE(util::write_file_atomic(p, "first").ok());
  ASSERT_TRUE(util::write_file_atomic(p, "second").ok());
  EXPECT_EQ(*util::read_file(p), "second");
  // no temporary left behind
  int n = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(dir.path())) ++n;
  EXPECT_EQ(n, 1);
}

TEST(Fs, ReadFileErrors) {
  testing_support::ScratchDir dir;
  auto missing = util::read_file(dir.path() / "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, util::ErrorCode::not_found);
  auto is_dir = util::read_file(dir.path());
  ASSERT_FALSE(is_dir.ok());
  EXPECT_EQ(is_dir.error().code, util::ErrorCode::io);
}

TEST(Fs, AtomicWriteIntoMissingDirectoryFailsCleanly) {
  testing_support::ScratchDir dir;
  auto r = util::write_file_atomic(dir.path() / "no" / "such" / "f", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, util::ErrorCode::io);
}

TEST(Fs, TempDirIsRemoved) {
  testing_support::ScratchDir dir;
  std::filesystem::path p;
  {
    auto t = util::TempDir::create(dir.path(), ".stage-");
    ASSERT_TRUE(t.ok());
    p = t->path();
    EXPECT_TRUE(std::filesystem::is_directory(p));
  }
  EXPECT_FALSE(std::filesystem::exists(p));
}

// A DEST as the user names it, made absolute: dot segments resolved, and on Windows the verbatim
// forms (\\?\C:\..., \\?\UNC\...) taken in their plain form, which std::filesystem takes apart.
TEST(Fs, AbsolutePathOfADestAsUsersWriteIt) {
  namespace fs = std::filesystem;
  EXPECT_EQ(util::io::absolute_path("rel/x/../y"), (fs::current_path() / "rel" / "y"));
#ifdef _WIN32
  EXPECT_EQ(util::io::absolute_path("C:\\a\\..\\b").wstring(), L"C:\\b");
  EXPECT_EQ(util::io::absolute_path("\\\\?\\C:\\tools\\cudnn").wstring(), L"C:\\tools\\cudnn");
  EXPECT_TRUE(util::io::absolute_path("\\\\?\\C:\\tools\\cudnn").has_root_name());
  EXPECT_EQ(util::io::absolute_path("\\\\?\\UNC\\server\\share\\cudnn").wstring(), L"\\\\server\\share\\cudnn");
  EXPECT_EQ(util::io::absolute_path("\\\\server\\share\\a\\..\\cudnn").wstring(), L"\\\\server\\share\\cudnn");
#else
  EXPECT_EQ(util::io::absolute_path("/opt/./cudnn/../cudnn-9"), fs::path("/opt/cudnn-9"));
#endif
}

// A name outside the Basic Multilingual Plane (an emoji, two UTF-16 units) survives the conversions
// between std::string and std::filesystem::path both ways, and names a file on disk. On Windows
// these go through the C runtime's conversions that stackpin supplies (util/console_windows.cpp).
TEST(Fs, ANameOutsideTheBmpRoundTrips) {
  const std::string name = "cuDNN \xF0\x9F\x9A\x80 \xE6\xB7\xB1\xF0\x90\x90\x80.h";  // U+1F680, U+6DF1, U+10400
  const std::filesystem::path p(name);
  EXPECT_EQ(p.string(), name);
  EXPECT_EQ(p.u16string(), u"cuDNN \U0001F680 \u6DF1\U00010400.h");
  EXPECT_EQ(std::filesystem::path(p.u16string()).string(), name);
  testing_support::ScratchDir d;
  ASSERT_TRUE(util::write_file_atomic(d.path() / p, "x").ok());
  std::vector<std::string> seen;
  for (const auto& e : std::filesystem::directory_iterator(d.path())) seen.push_back(e.path().filename().string());
  EXPECT_EQ(seen, std::vector<std::string>{name});
  EXPECT_EQ(util::read_file(d.path() / p).value(), "x");
}

}  // namespace fs_test
