// The quick start's demo archives (scripts/make-demo-archive.sh) stay stageable on both targets.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.hpp"

namespace fs = std::filesystem;

TEST(CliDemo, DemoArchivesVerifyAndStage) {
  for (const char* tool : {"xz", "zip", "sha256sum"})
    if (testing_support::run_process({"/bin/sh", "-c", std::string("command -v ") + tool}).exit_code != 0)
      GTEST_SKIP() << tool << " is not installed (scripts/install-deps.sh --tools installs it)";
  testing_support::ScratchDir dir;
  auto made = testing_support::run_process({"/bin/bash", (testing_support::source_dir() / "scripts" / "make-demo-archive.sh").string(),
                                            dir.path().string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::string manifest = (dir.path() / "demo.toml").string();
  EXPECT_EQ(testing_support::stackpin({"check", manifest}).exit_code, 0);
  EXPECT_EQ(testing_support::stackpin({"verify", manifest, "--archives", dir.path().string()}).exit_code, 0);
  for (const char* target : {"linux", "windows"}) {
    auto r = testing_support::stackpin({"stage", manifest, "--archives", dir.path().string(), "--target", target, "--dest",
                                        (dir.path() / target).string()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  EXPECT_TRUE(fs::is_symlink(dir.path() / "linux" / "lib64" / "libcudnn.so"));
  EXPECT_EQ(fs::read_symlink(dir.path() / "linux" / "lib64" / "libcudnn.so.9").string(), "libcudnn.so.9.1.0");
  EXPECT_TRUE(fs::is_regular_file(dir.path() / "windows" / "bin" / "cudnn64_9.dll"));
  EXPECT_TRUE(fs::is_regular_file(dir.path() / "windows" / "lib" / "x64" / "cudnn.lib"));
}
