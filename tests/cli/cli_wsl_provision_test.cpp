// wsl/provision.sh and scripts/container-engine.sh on the host, without containers: shellcheck,
// usage errors, and a --dry-run that changes nothing. The real runs are container tests
// (tests/container/wsl_provision_test.cpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include "test_support.hpp"

namespace cli_wsl_provision_test {

namespace fs = std::filesystem;
using testing_support::run_process;

namespace {
std::string script(const char* rel) { return (testing_support::source_dir() / rel).string(); }
using testing_support::contains;
}  // namespace

TEST(CliWslProvision, ScriptsPassShellcheck) {
  if (::access("/usr/bin/shellcheck", X_OK) != 0)
    GTEST_SKIP() << "shellcheck is not installed (scripts/install-deps.sh --tools installs it)";
  for (const char* s : {"wsl/provision.sh", "scripts/container-engine.sh"}) {
    auto r = run_process({"/usr/bin/shellcheck", script(s)});
    EXPECT_EQ(r.exit_code, 0) << s << "\n" << r.out << r.err;
  }
}

TEST(CliWslProvision, HelpAndUsageErrors) {
  auto help = run_process({script("wsl/provision.sh"), "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(contains(help.out, "--manifest M")) << help.out;
  EXPECT_FALSE(contains(help.out, "set -euo")) << help.out;
  auto none = run_process({script("wsl/provision.sh")});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_TRUE(contains(none.err, "--manifest is required")) << none.err;
  auto unknown = run_process({script("wsl/provision.sh"), "--manifest", "m", "--archives", ".", "--frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(contains(unknown.err, "unknown argument: --frobnicate")) << unknown.err;
  auto missing = run_process({script("wsl/provision.sh"), "--manifest", "/nonexistent/m.toml", "--archives", "/"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(contains(missing.err, "no manifest at /nonexistent/m.toml")) << missing.err;
  EXPECT_TRUE(contains(missing.err, "fix: ")) << missing.err;
}

TEST(CliWslProvision, DryRunPlansEverythingAndChangesNothing) {
  testing_support::ScratchDir dir;
  auto fixtures = dir.path() / "fixtures", home = dir.path() / "home", dest = dir.path() / "dest";
  ASSERT_EQ(run_process({script("scripts/make-demo-archive.sh"), fixtures.string()}).exit_code, 0);
  fs::create_directories(home);
  auto r = run_process({"/usr/bin/env", "-u", "WSL_DISTRO_NAME", "HOME=" + home.string(), script("wsl/provision.sh"), "--manifest",
                        (fixtures / "demo.toml").string(), "--archives", fixtures.string(), "--stackpin",
                        testing_support::binary().string(), "--dest", dest.string(), "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "verified: 1 archive(s)")) << r.out;
  EXPECT_TRUE(contains(r.out, "plan (--dry-run, nothing changed): 32 files")) << r.out;
  EXPECT_TRUE(contains(r.out, "(dry run) would add to " + (home / ".bashrc").string())) << r.out;
  EXPECT_TRUE(contains(r.out, "(dry run) would run: " + testing_support::binary().string() + " convtest")) << r.out;
  EXPECT_TRUE(contains(r.out, "dry run: nothing was changed")) << r.out;
  EXPECT_FALSE(fs::exists(dest));
  EXPECT_TRUE(fs::is_empty(home));
}

}  // namespace cli_wsl_provision_test
