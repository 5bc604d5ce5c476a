// The quick start's demo archives (scripts/make-demo-archive.sh) stay stageable on both targets.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.hpp"

namespace cli_demo_test {

namespace fs = std::filesystem;

TEST(CliDemo, DemoArchivesVerifyAndStage) {
  for (const char* tool : {"xz", "zip", "sha256sum"})
    if (!testing_support::have_tool(tool)) GTEST_SKIP() << tool << " is not installed (scripts/install-deps.sh --tools installs it)";
  testing_support::ScratchDir dir;
  auto made = testing_support::run_process(
      {"/bin/bash", (testing_support::source_dir() / "scripts" / "make-demo-archive.sh").string(), dir.path().string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::string manifest = (dir.path() / "demo.toml").string();
  EXPECT_EQ(testing_support::stackpin({"check", manifest}).exit_code, 0);
  EXPECT_EQ(testing_support::stackpin({"verify", manifest, "--archives", dir.path().string()}).exit_code, 0);
  for (const char* target : {"linux", "windows"}) {
    auto r = testing_support::stackpin(
        {"stage", manifest, "--archives", dir.path().string(), "--target", target, "--dest", (dir.path() / target).string()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  EXPECT_TRUE(fs::is_symlink(dir.path() / "linux" / "lib64" / "libcudnn.so"));
  EXPECT_EQ(fs::read_symlink(dir.path() / "linux" / "lib64" / "libcudnn.so.9").string(), "libcudnn.so.9.1.0");
  EXPECT_TRUE(fs::is_regular_file(dir.path() / "windows" / "bin" / "cudnn64_9.dll"));
  EXPECT_TRUE(fs::is_regular_file(dir.path() / "windows" / "lib" / "x64" / "cudnn.lib"));
}

TEST(CliDemo, StageWritesTheActivationScriptsAndUnstageRemovesThem) {
  for (const char* tool : {"xz", "zip", "sha256sum"})
    if (!testing_support::have_tool(tool)) GTEST_SKIP() << tool << " is not installed (scripts/install-deps.sh --tools installs it)";
  testing_support::ScratchDir dir;
  auto made = testing_support::run_process(
      {"/bin/bash", (testing_support::source_dir() / "scripts" / "make-demo-archive.sh").string(), dir.path().string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::string manifest = (dir.path() / "demo.toml").string();
  auto win = dir.path() / "windows";
  auto r = testing_support::stackpin({"stage", manifest, "--archives", dir.path().string(), "--target", "windows", "--dest", win.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto ps1 = testing_support::read_text(win / ".stackpin" / "activate.ps1");
  EXPECT_NE(ps1.find("$CudnnBin = 'C:\\tools\\cudnn\\v9.1.0\\bin'"), std::string::npos) << ps1;
  auto check = testing_support::read_text(win / ".stackpin" / "check-cudnn.ps1");
  EXPECT_NE(check.find("$ImportLib = 'C:\\tools\\cudnn\\v9.1.0\\lib\\x64\\cudnn.lib'"), std::string::npos) << check;
  EXPECT_TRUE(fs::exists(win / ".stackpin" / "activate.cmd"));
  // a removed script comes back on the next stage (not a no-op that skips it)
  fs::remove(win / ".stackpin" / "activate.ps1");
  EXPECT_EQ(testing_support::stackpin({"stage", manifest, "--archives", dir.path().string(), "--target", "windows", "--dest", win.string()})
                .exit_code,
            0);
  EXPECT_TRUE(fs::exists(win / ".stackpin" / "activate.ps1"));
  // sourcing the Linux tree's script puts its lib64 first
  auto lin = dir.path() / "linux";
  ASSERT_EQ(testing_support::stackpin({"stage", manifest, "--archives", dir.path().string(), "--target", "linux", "--dest", lin.string()})
                .exit_code,
            0);
  auto env = testing_support::run_process(
      {"/bin/sh", "-c", ". \"$1\"; printf '%s' \"$LD_LIBRARY_PATH\"", "sh", (lin / ".stackpin" / "activate.sh").string()},
      {"LD_LIBRARY_PATH=/x"});
  EXPECT_EQ(env.out.rfind("/usr/local/cudnn-9.1.0/lib64:", 0), 0u) << env.out;
  for (const auto& d : {win, lin}) {
    EXPECT_EQ(testing_support::stackpin({"unstage", "--dest", d.string()}).exit_code, 0);
    EXPECT_TRUE(fs::is_empty(d)) << d;
  }
}

}  // namespace cli_demo_test
