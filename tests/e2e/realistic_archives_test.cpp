// Opt-in end-to-end run on the realistic archives (NVIDIA's layout, real cuDNN library bytes,
// ~330 MB tar.xz and ~370 MB zip) that ../shared/bench/make-cudnn-fixtures.sh builds from the
// cuDNN installed on this machine. Slow (minutes the first time), so never part of the default
// run: set STACKPIN_E2E=1 (and STACKPIN_FIXTURES=DIR to reuse a cache, default
// $HOME/.cache/stackpin/fixtures). Skipped with the reason where no cuDNN is installed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "test_support.hpp"

namespace realistic_archives_test {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

fs::path fixture_dir() {
  if (const char* d = std::getenv("STACKPIN_FIXTURES")) return d;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "/tmp") / ".cache" / "stackpin" / "fixtures";
}

std::optional<fs::path> find(const fs::path& dir, const std::string& prefix, const std::string& suffix) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      return e.path();
  }
  return std::nullopt;
}

}  // namespace

class RealisticArchives : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* on = std::getenv("STACKPIN_E2E");
    if (!on || std::string(on) != "1") GTEST_SKIP() << "opt-in: set STACKPIN_E2E=1 to stage the realistic cuDNN archives";
    dir = fixture_dir();
    txz = find(dir, "cudnn-linux-x86_64-", "-archive.tar.xz");
    zip = find(dir, "cudnn-windows-x86_64-", "-archive.zip");
    if (!txz || !zip) {
      fs::path script = testing_support::shared_dir() / "bench" / "make-cudnn-fixtures.sh";
      if (!fs::exists(script)) GTEST_SKIP() << "no fixture script at " << script;
      fs::create_directories(dir);
      auto r = testing_support::run_process({"/bin/bash", script.string(), dir.string()});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      txz = find(dir, "cudnn-linux-x86_64-", "-archive.tar.xz");
      zip = find(dir, "cudnn-windows-x86_64-", "-archive.zip");
      if (!txz || !zip) GTEST_SKIP() << "the fixture script built nothing: " << r.err;
    }
  }
  fs::path dir;
  std::optional<fs::path> txz, zip;
};

TEST_F(RealisticArchives, StageVerifyStatusUnstageBothPlatforms) {
  std::string name = txz->filename().string();
  std::string version = name.substr(std::string("cudnn-linux-x86_64-").size());
  version = version.substr(0, version.find("_cuda"));
  int cuda = std::stoi(name.substr(name.find("_cuda") + 5));
  auto lin = fixtures::info(*txz), win = fixtures::info(*zip);
  testing_support::ScratchDir work;
  auto manifest = work.write(
      "m.toml", fixtures::local_manifest(version, cuda, std::to_string(cuda) + ".0.0", {{"linux-x86_64", lin}, {"windows-x86_64", win}}));
  auto v = testing_support::stackpin({"verify", manifest.string(), "--archives", dir.string()});
  ASSERT_EQ(v.exit_code, 0) << v.out << v.err;
  for (const char* target : {"linux", "windows"}) {
    fs::path dest = work.path() / target;
    auto s = testing_support::stackpin(
        {"stage", manifest.string(), "--archives", dir.string(), "--target", target, "--dest", dest.string(), "--json"});
    ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
    auto j = json::parse(s.out);
    EXPECT_GT(j["report"]["files"].get<int>(), 20);
    auto again = testing_support::stackpin(
        {"stage", manifest.string(), "--archives", dir.string(), "--target", target, "--dest", dest.string(), "--json"});
    EXPECT_TRUE(json::parse(again.out)["report"]["no_op"].get<bool>());
    auto st = testing_support::stackpin({"status", "--dest", dest.string()});
    EXPECT_EQ(st.exit_code, 0) << st.out;
    if (std::string(target) == "linux") {
      EXPECT_TRUE(fs::is_symlink(dest / "lib64" / "libcudnn.so"));
      EXPECT_TRUE(fs::is_regular_file(dest / "include" / "cudnn_version.h"));
    }
    auto u = testing_support::stackpin({"unstage", "--dest", dest.string()});
    EXPECT_EQ(u.exit_code, 0) << u.err;
    EXPECT_TRUE(fs::is_empty(dest));
  }
}

}  // namespace realistic_archives_test
