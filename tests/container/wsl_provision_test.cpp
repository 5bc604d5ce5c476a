// wsl/provision.sh run as a WSL2 user would run it, inside a fresh Debian container
// (local/stackpin-runtime:bookworm: the minbase Debian image plus the shared libraries a host-built
// stackpin needs), with the stackpin binary built once on the host and mounted read-only, the
// demo archives of scripts/make-demo-archive.sh as the fixture, and no network. The demo
// libraries are placeholders, so the conv test is skipped where the test is about provisioning,
// and checked for its clear failure where it is about the conv test step.
#include <gtest/gtest.h>

#include <memory>

#include "container.hpp"
#include "test_support.hpp"

namespace wsl_provision_test {

namespace fs = std::filesystem;
namespace ct = testing_support::container;
using testing_support::RunResult;

namespace {
const std::string k_prefix = "/usr/local/cudnn-9.1.0";  // the demo manifest's [targets.linux] prefix
const std::string k_provision = "/src/wsl/provision.sh";
const std::string k_stackpin = "/opt/stackpin/bin/stackpin";
const std::string k_marker = "# added by stackpin wsl/provision.sh for ";
const fs::path k_host_cudart = "/usr/local/cuda/lib64/libcudart.so.13";

using testing_support::contains;

class WslProvision : public ::testing::Test {
 protected:
  // The demo archives and manifests, made once for every test here.
  static void SetUpTestSuite() {
    s_fixtures = std::make_unique<testing_support::ScratchDir>();
    auto dir = s_fixtures->path().string();
    auto r = testing_support::run_process({(testing_support::source_dir() / "scripts/make-demo-archive.sh").string(), dir});
    ASSERT_EQ(r.exit_code, 0) << ct::describe(r);
    auto demo = testing_support::read_text(s_fixtures->path() / "demo.toml");
    auto at = demo.find("layout = \"lib64\"");
    ASSERT_NE(at, std::string::npos) << demo;
    s_fixtures->write("deb.toml", demo.substr(0, at) + "layout = \"deb\"" + demo.substr(at + 16));
  }
  static void TearDownTestSuite() { s_fixtures.reset(); }

  void SetUp() override {
    SP_SKIP_WITHOUT_CONTAINERS(ct::k_stackpin_runtime_image);
    ct::Options o;
    o.image = ct::k_stackpin_runtime_image;
    o.mounts = {{testing_support::source_dir(), "/src"}, {testing_support::binary(), k_stackpin}, {s_fixtures->path(), "/fixtures"}};
    // The host's CUDA runtime, off the loader path unless a test puts it there.
    if (fs::exists(k_host_cudart)) o.mounts.push_back({fs::canonical(k_host_cudart), "/opt/cudart/" + k_host_cudart.filename().string()});
    m_box = std::make_unique<ct::Container>(o);
    ASSERT_TRUE(m_box->ok()) << m_box->error();
  }

  RunResult provision(std::vector<std::string> extra = {}, const std::string& manifest = "/fixtures/demo.toml",
                      const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv{k_provision, "--manifest", manifest, "--archives", "/fixtures", "--stackpin", k_stackpin};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return m_box->exec(argv, 120, env);
  }

  // Everything provisioning may change: the tree (types, modes, link targets, content) and the
  // shell startup files.
  std::string snapshot(const std::string& dest = k_prefix) {
    auto r = m_box->bash("cd '" + dest +
                         "' && find . -printf '%y %m %p %l\\n' | sort && find . -type f -exec sha256sum {} + | sort;"
                         " sha256sum /root/.bashrc /root/.profile");
    EXPECT_EQ(r.exit_code, 0) << ct::describe(r);
    return r.out;
  }

  // LD_LIBRARY_PATH of a fresh login shell (`bash -l`) or interactive one (`bash -i`), nothing inherited.
  std::string fresh_shell_ld_path(const std::string& flag, const std::vector<std::string>& env = {}) {
    std::string vars = "HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin";
    for (const auto& e : env) vars += " " + e;
    auto r = m_box->bash("env -i " + vars + " bash " + flag + " -c 'printf \"%s\" \"${LD_LIBRARY_PATH-unset}\"'");
    EXPECT_EQ(r.exit_code, 0) << ct::describe(r);
    return r.out;
  }

  std::unique_ptr<ct::Container> m_box;
  static std::unique_ptr<testing_support::ScratchDir> s_fixtures;
};
std::unique_ptr<testing_support::ScratchDir> WslProvision::s_fixtures;
}  // namespace

TEST_F(WslProvision, Lib64StagesHooksNewShellsIsIdempotentAndUndoes) {
  auto first = provision({"--skip-convtest"});
  ASSERT_EQ(first.exit_code, 0) << ct::describe(first);
  EXPECT_TRUE(contains(first.out, "not WSL: plain Linux")) << first.out;
  EXPECT_TRUE(contains(first.out, "verified: 1 archive(s)")) << first.out;
  EXPECT_TRUE(contains(first.out, "layout = \"lib64\"")) << first.out;
  EXPECT_TRUE(contains(first.out, "staged 32 files")) << first.out;
  EXPECT_TRUE(contains(first.out, "added to /root/.bashrc")) << first.out;
  EXPECT_TRUE(contains(first.out, "added to /root/.profile")) << first.out;
  EXPECT_FALSE(contains(first.out, "apt-get")) << "the image has stackpin's libraries: nothing to install\n" << first.out;

  // The staged tree: NVIDIA's lib/ became lib64/ with the so-name chain, plus the receipt and
  // the activation script stage writes for the prefix.
  auto tree = m_box->bash("cd " + k_prefix +
                          " && readlink lib64/libcudnn.so && readlink lib64/libcudnn.so.9 && test -f lib64/libcudnn.so.9.1.0"
                          " && test -f include/cudnn_version.h && test -f .stackpin/receipt.json && test -f .stackpin/activate.sh");
  ASSERT_EQ(tree.exit_code, 0) << ct::describe(tree);
  EXPECT_EQ(tree.out, "libcudnn.so.9\nlibcudnn.so.9.1.0\n");

  // Each startup file holds the hook exactly once.
  auto hooks = m_box->bash("grep -c -F '" + k_marker + k_prefix + "' /root/.bashrc /root/.profile");
  EXPECT_EQ(hooks.out, "/root/.bashrc:1\n/root/.profile:1\n") << ct::describe(hooks);

  // Fresh shells find the staged lib64 first.
  EXPECT_EQ(fresh_shell_ld_path("-l"), k_prefix + "/lib64");
  EXPECT_EQ(fresh_shell_ld_path("-i"), k_prefix + "/lib64");
  EXPECT_EQ(fresh_shell_ld_path("-l", {"LD_LIBRARY_PATH=/opt/other/lib"}).rfind(k_prefix + "/lib64:", 0), 0u);

  // A second run changes nothing.
  auto before = snapshot();
  auto second = provision({"--skip-convtest"});
  ASSERT_EQ(second.exit_code, 0) << ct::describe(second);
  EXPECT_TRUE(contains(second.out, "already staged")) << second.out;
  EXPECT_TRUE(contains(second.out, "unchanged: /root/.bashrc already sources")) << second.out;
  EXPECT_TRUE(contains(second.out, "unchanged: /root/.profile already sources")) << second.out;
  EXPECT_EQ(snapshot(), before);

  // --undo removes the tree and the hooks; new shells are back to no LD_LIBRARY_PATH.
  auto undo = provision({"--undo"});
  ASSERT_EQ(undo.exit_code, 0) << ct::describe(undo);
  EXPECT_TRUE(contains(undo.out, "unstaged: removed 32 file(s)")) << undo.out;
  auto gone = m_box->bash("test ! -e " + k_prefix + "/lib64 && ! grep -q -F 'stackpin' /root/.bashrc /root/.profile");
  EXPECT_EQ(gone.exit_code, 0) << ct::describe(gone);
  EXPECT_EQ(fresh_shell_ld_path("-l"), "unset");
}

TEST_F(WslProvision, ConvtestRunsInTheActivatedEnvironmentAndItsFailureFails) {
  // The demo's libcudnn files are stand-ins without code: the conv test fails, and provisioning with it.
  // Without a CUDA runtime it says so; with the host's runtime on LD_LIBRARY_PATH it gets as far
  // as cuDNN and names the staged file, found through the activation script.
  auto r = provision();
  ASSERT_EQ(r.exit_code, 1) << ct::describe(r);
  EXPECT_TRUE(contains(r.out, "stackpin convtest")) << r.out;
  EXPECT_TRUE(contains(r.out, "convtest.cudart-missing")) << r.out;
  EXPECT_TRUE(contains(r.err, "convtest failed (exit 1)")) << r.err;
  EXPECT_TRUE(contains(r.err, "fix: ")) << r.err;

  if (!fs::exists(k_host_cudart)) GTEST_SKIP() << "no CUDA runtime at " << k_host_cudart << " to go further with";
  auto with_runtime = provision({}, "/fixtures/demo.toml", {"LD_LIBRARY_PATH=/opt/cudart"});
  ASSERT_EQ(with_runtime.exit_code, 1) << ct::describe(with_runtime);
  EXPECT_TRUE(contains(with_runtime.out, "CUDA runtime: /opt/cudart/libcudart.so.13")) << with_runtime.out;
  EXPECT_TRUE(contains(with_runtime.out, "cuDNN: " + k_prefix + "/lib64/libcudnn.so.9.1.0")) << with_runtime.out;
  EXPECT_TRUE(contains(with_runtime.out, "missing entry points: cudnnGetVersion")) << with_runtime.out;
}

TEST_F(WslProvision, UnderWsl2ALinuxDriverIsRefusedAndTheWindowsLibcudaIsChecked) {
  const std::vector<std::string> wsl = {"WSL_DISTRO_NAME=Ubuntu-22.04"};
  // A stand-in for Ubuntu's driver package (empty, built here with dpkg-deb).
  auto pkg = m_box->bash(
      "mkdir -p /tmp/pkg/DEBIAN && printf 'Package: libnvidia-compute-535\\nVersion: 535.0-1\\nArchitecture: all\\n"
      "Maintainer: test <test@example.invalid>\\nDescription: stand-in\\n' >/tmp/pkg/DEBIAN/control"
      " && dpkg-deb -b /tmp/pkg /tmp/fake.deb >/dev/null && dpkg -i /tmp/fake.deb >/dev/null");
  ASSERT_EQ(pkg.exit_code, 0) << ct::describe(pkg);

  auto refused = provision({"--skip-convtest"}, "/fixtures/demo.toml", wsl);
  EXPECT_EQ(refused.exit_code, 1) << ct::describe(refused);
  EXPECT_TRUE(contains(refused.out, "WSL detected (distribution: Ubuntu-22.04")) << refused.out;
  EXPECT_TRUE(contains(refused.err, "a Linux NVIDIA driver is installed inside WSL2: libnvidia-compute-535")) << refused.err;
  EXPECT_TRUE(contains(refused.err, "fix: remove it: sudo apt-get remove --purge libnvidia-compute-535")) << refused.err;
  EXPECT_EQ(m_box->bash("test ! -e " + k_prefix).exit_code, 0) << "nothing may be staged after a refusal";

  // Without the package, but also without the Windows driver's libcuda: a warning, not a failure.
  ASSERT_EQ(m_box->bash("dpkg -r libnvidia-compute-535 >/dev/null").exit_code, 0);
  auto no_libcuda = provision({"--skip-convtest", "--dry-run"}, "/fixtures/demo.toml", wsl);
  EXPECT_EQ(no_libcuda.exit_code, 0) << ct::describe(no_libcuda);
  EXPECT_TRUE(contains(no_libcuda.err, "no /usr/lib/wsl/lib/libcuda.so.1: install (or update) the NVIDIA driver on Windows"))
      << no_libcuda.err;

  // With it mapped, provisioning goes through, and WSL2 shells get /usr/lib/wsl/lib after the tree.
  ASSERT_EQ(m_box->bash("mkdir -p /usr/lib/wsl/lib && : >/usr/lib/wsl/lib/libcuda.so.1").exit_code, 0);
  auto ok = provision({"--skip-convtest"}, "/fixtures/demo.toml", wsl);
  ASSERT_EQ(ok.exit_code, 0) << ct::describe(ok);
  EXPECT_TRUE(contains(ok.out, "the Windows driver's libcuda is mapped: /usr/lib/wsl/lib/libcuda.so.1")) << ok.out;
  EXPECT_EQ(fresh_shell_ld_path("-l", wsl), k_prefix + "/lib64:/usr/lib/wsl/lib");
}

TEST_F(WslProvision, AnotherDestGetsItsOwnActivationScript) {
  auto r = provision({"--skip-convtest", "--dest", "/opt/cudnn"});
  ASSERT_EQ(r.exit_code, 0) << ct::describe(r);
  EXPECT_TRUE(contains(r.out, "the tree goes to /opt/cudnn")) << r.out;
  EXPECT_EQ(fresh_shell_ld_path("-l"), "/opt/cudnn/lib64");
  auto before = snapshot("/opt/cudnn");
  auto again = provision({"--skip-convtest", "--dest", "/opt/cudnn"});
  ASSERT_EQ(again.exit_code, 0) << ct::describe(again);
  EXPECT_EQ(snapshot("/opt/cudnn"), before);
  auto undo = provision({"--undo", "--dest", "/opt/cudnn"});
  ASSERT_EQ(undo.exit_code, 0) << ct::describe(undo);
  EXPECT_EQ(m_box->bash("test ! -e /opt/cudnn/lib64 && test -z \"$(ls -A /root/.config/stackpin)\"").exit_code, 0);
  EXPECT_EQ(fresh_shell_ld_path("-l"), "unset");
}

TEST_F(WslProvision, SystemRegistersTheTreeWithTheLoaderInsteadOfTheShell) {
  auto r = provision({"--skip-convtest", "--system"});
  ASSERT_EQ(r.exit_code, 0) << ct::describe(r);
  auto conf = m_box->bash("cat /etc/ld.so.conf.d/stackpin-demo-cu124-cudnn91.conf");
  ASSERT_EQ(conf.exit_code, 0) << ct::describe(conf);
  EXPECT_TRUE(contains(conf.out, "\n" + k_prefix + "/lib64\n")) << conf.out;
  EXPECT_EQ(m_box->bash("grep -q stackpin /root/.bashrc /root/.profile").exit_code, 1) << "--system hooks no shell";
  auto again = provision({"--skip-convtest", "--system"});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_TRUE(contains(again.out, "unchanged: /etc/ld.so.conf.d/stackpin-demo-cu124-cudnn91.conf")) << again.out;
  auto undo = provision({"--undo", "--system"});
  ASSERT_EQ(undo.exit_code, 0) << ct::describe(undo);
  EXPECT_EQ(m_box->bash("test ! -e /etc/ld.so.conf.d/stackpin-demo-cu124-cudnn91.conf && test ! -e " + k_prefix + "/lib64").exit_code, 0);
}

TEST_F(WslProvision, DebLayoutBuildsAndInstallsThePackages) {
  auto help = testing_support::stackpin({"deb", "--help"});
  ASSERT_EQ(help.exit_code, 0) << "`stackpin deb --help` failed: the deb layout needs the deb command\n" << help.err;
  ASSERT_TRUE(contains(help.out, "stackpin deb")) << help.out;
  auto r = provision({"--skip-convtest"}, "/fixtures/deb.toml");
  ASSERT_EQ(r.exit_code, 0) << ct::describe(r);
  EXPECT_TRUE(contains(r.out, "layout = \"deb\"")) << r.out;
  EXPECT_TRUE(contains(r.out, "$ dpkg -i ")) << r.out;
  auto owner = m_box->bash("dpkg -S libcudnn.so.9");
  EXPECT_EQ(owner.exit_code, 0) << ct::describe(owner);
  auto again = provision({"--skip-convtest"}, "/fixtures/deb.toml");
  ASSERT_EQ(again.exit_code, 0) << ct::describe(again);
  EXPECT_TRUE(contains(again.out, "is installed")) << again.out;
  EXPECT_FALSE(contains(again.out, "$ dpkg -i")) << "nothing to install the second time\n" << again.out;
  auto undo = provision({"--undo"}, "/fixtures/deb.toml");
  ASSERT_EQ(undo.exit_code, 0) << ct::describe(undo);
  EXPECT_NE(m_box->bash("dpkg -S libcudnn.so.9").exit_code, 0);
}

TEST(WslProvisionBareDebian, MissingLibrariesAreNamedWithSkipDeps) {
  // The bare minbase image lacks stackpin's libraries; with --skip-deps (and no network) the
  // script names the packages instead of installing them.
  SP_SKIP_WITHOUT_CONTAINERS(ct::k_debian_image);
  ct::Options o;
  o.image = ct::k_debian_image;
  o.mounts = {{testing_support::source_dir(), "/src"}, {testing_support::binary(), k_stackpin}};
  auto r = ct::run(
      o, {"bash", "-c",
          "mkdir /a && : >/a/m.toml && " + k_provision + " --manifest /a/m.toml --archives /a --stackpin " + k_stackpin + " --skip-deps"});
  EXPECT_EQ(r.exit_code, 1) << ct::describe(r);
  EXPECT_TRUE(contains(r.out, "needs libraries this machine lacks")) << r.out;
  for (const char* p : {"libarchive13", "libssl3", "libtomlplusplus3", "libcurl4", "libisal2"}) EXPECT_TRUE(contains(r.err, p)) << r.err;
  EXPECT_TRUE(contains(r.err, "fix: install them: sudo apt-get install")) << r.err;
}

}  // namespace wsl_provision_test
