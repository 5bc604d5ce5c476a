// The packages `stackpin deb` writes, installed for real: dpkg -i in a fresh Debian container (no
// network: Depends must be satisfied by Debian's base system alone), then ldconfig's cache lists
// the libraries through the ldconfig trigger, a program finds them without LD_LIBRARY_PATH, and
// dpkg -r / --purge leaves no file behind. The same for the CUDA toolkit's packages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "container.hpp"
#include "fixtures.hpp"
#include "test_support.hpp"

namespace deb_install_test {

namespace fs = std::filesystem;
namespace ct = testing_support::container;

TEST(ContainerDeb, DpkgInstallsTheLibrariesAndRemovesEveryFile) {
  SP_SKIP_WITHOUT_CONTAINERS(ct::k_debian_image);
  testing_support::ScratchDir dir;
  fs::path archives = dir.path() / "archives", out = dir.path() / "debs";
  fs::create_directories(archives);
  auto archive = fixtures::make_cudnn_linux_elf(archives, testing_support::doubles_dir() / "stems");
  auto manifest = dir.write("stack.toml", fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"linux-x86_64", archive}}));
  auto built = testing_support::stackpin({"deb", manifest.string(), "--archives", archives.string(), "--out-dir", out.string()});
  ASSERT_EQ(built.exit_code, 0) << built.out << built.err;

  ct::Options o;
  o.image = ct::k_debian_image;
  o.mounts = {{out, "/debs"}};
  ct::Container c(o);
  ASSERT_TRUE(c.ok()) << c.error();
  const std::string rt = "stackpin-libcudnn9-cuda-12", dev = "stackpin-libcudnn9-dev-cuda-12";

  auto install = c.bash("dpkg -i /debs/" + rt + "_*.deb /debs/" + dev + "_*.deb");
  ASSERT_EQ(install.exit_code, 0) << ct::describe(install);
  auto status = c.bash("dpkg-query -W -f '${Package} ${Version} ${Status}\\n' " + rt + " " + dev);
  EXPECT_NE(status.out.find(rt + " 9.1.0.70-1+cuda12 install ok installed"), std::string::npos) << ct::describe(status);
  EXPECT_NE(status.out.find(dev + " 9.1.0.70-1+cuda12 install ok installed"), std::string::npos) << ct::describe(status);

  // The trigger ran ldconfig: the cache lists every library by its SONAME.
  auto cache = c.bash("ldconfig -p");
  ASSERT_EQ(cache.exit_code, 0) << ct::describe(cache);
  // (Debian's merged /usr makes ldconfig name /lib/x86_64-linux-gnu, the same directory.)
  for (const auto& stem : fixtures::cudnn_linux_stems(9)) {
    bool listed = cache.out.find(stem + ".so.9 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/" + stem + ".so.9\n") != std::string::npos ||
                  cache.out.find(stem + ".so.9 (libc6,x86-64) => /lib/x86_64-linux-gnu/" + stem + ".so.9\n") != std::string::npos;
    EXPECT_TRUE(listed) << stem << "\n" << cache.out;
  }

  // The loader resolves libcudnn.so.9 with no LD_LIBRARY_PATH (the dynamic loader, asked directly).
  auto resolve = c.bash(
      "env -u LD_LIBRARY_PATH /lib64/ld-linux-x86-64.so.2 --list /usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9.1.0 "
      "&& test -e /usr/include/cudnn_version.h && test -L /usr/lib/x86_64-linux-gnu/libcudnn.so");
  EXPECT_EQ(resolve.exit_code, 0) << ct::describe(resolve);

  // dpkg's own verification agrees with the md5sums stackpin wrote.
  auto verify = c.bash("dpkg --verify " + rt + " " + dev);
  EXPECT_EQ(verify.exit_code, 0) << ct::describe(verify);
  EXPECT_EQ(verify.out, "") << ct::describe(verify);

  // Removal takes every file the packages installed, and the cache forgets the libraries.
  auto files = c.bash("dpkg -L " + rt + " " + dev + " | sort -u > /tmp/files && wc -l < /tmp/files");
  ASSERT_EQ(files.exit_code, 0) << ct::describe(files);
  auto remove = c.bash("dpkg --purge " + dev + " " + rt);
  ASSERT_EQ(remove.exit_code, 0) << ct::describe(remove);
  auto left = c.bash(
      "while read -r f; do case $f in /usr/lib/*-linux-gnu/*|/usr/include/*|/usr/share/doc/stackpin*|/usr/share/lintian/*) "
      "if [ -e \"$f\" ] && [ ! -d \"$f\" ]; then echo \"left: $f\"; fi;; esac; done < /tmp/files; "
      "ldconfig -p | grep -c libcudnn || true");
  EXPECT_EQ(left.out, "0\n") << ct::describe(left);
}

// The CUDA toolkit's packages from archives made of this machine's CUDA 13 toolkit
// (scripts/make-cuda-fixtures.sh): dpkg -i puts libcudart where ldconfig lists it and a CUDA_HOME
// at /usr/lib/cuda-13.0 whose nvcc runs; dpkg --verify agrees; --purge leaves no file.
TEST(ContainerDeb, TheToolkitPackagesInstallACudaHomeAndRemoveEveryFile) {
  SP_SKIP_WITHOUT_CONTAINERS(ct::k_debian_image);
  if (!fs::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda to build the archives from";
  const char* env_dir = std::getenv("STACKPIN_FIXTURES");
  const char* home = std::getenv("HOME");
  fs::path archives = env_dir ? fs::path(env_dir) / "cuda13" : fs::path(home ? home : "/tmp") / ".cache/stackpin/fixtures/cuda13";
  fs::create_directories(archives);
  auto made = testing_support::run_process(
      {"/bin/bash", (testing_support::source_dir() / "scripts" / "make-cuda-fixtures.sh").string(), archives.string()});
  if (made.exit_code == 2) GTEST_SKIP() << "scripts/make-cuda-fixtures.sh cannot build the archives here: " << made.err;
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  std::vector<std::pair<std::string, fixtures::Info>> pins;
  for (const auto& e : fs::directory_iterator(archives)) {
    std::string name = e.path().filename().string();
    if (name.rfind("cudnn-", 0) == 0 || name.find("-linux-x86_64-") == std::string::npos) continue;
    pins.emplace_back(name.substr(0, name.find("-linux-x86_64-")), fixtures::info(e.path()));
  }
  std::sort(pins.begin(), pins.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  testing_support::ScratchDir dir;
  fs::path out = dir.path() / "debs";
  auto manifest =
      dir.write("toolkit.toml", fixtures::local_toolkit_manifest("13.0.2", {"nvcc", "crt", "nvvm", "cudart", "cccl"}, pins, ""));
  auto built = testing_support::stackpin(
      {"deb", manifest.string(), "--archives", archives.string(), "--out-dir", out.string(), "--compression", "gzip"});
  ASSERT_EQ(built.exit_code, 0) << built.out << built.err;

  ct::Options o;
  o.image = ct::k_debian_image;
  o.mounts = {{out, "/debs"}};
  ct::Container c(o);
  ASSERT_TRUE(c.ok()) << c.error();
  const std::string rt = "stackpin-cuda-runtime-13-0", dev = "stackpin-cuda-dev-13-0";
  auto install = c.bash("dpkg -i /debs/" + rt + "_*.deb /debs/" + dev + "_*.deb");
  ASSERT_EQ(install.exit_code, 0) << ct::describe(install);
  auto cache = c.bash("ldconfig -p | grep -E 'libcudart.so.13 .*=> (/usr)?/lib/x86_64-linux-gnu/libcudart.so.13$'");
  EXPECT_EQ(cache.exit_code, 0) << ct::describe(cache);
  auto nvcc = c.bash(
      "/usr/lib/cuda-13.0/bin/nvcc --version && test -e /usr/lib/cuda-13.0/lib64/libcudart.so.13 && "
      "test -e /usr/lib/cuda-13.0/include/cuda_runtime.h && test -e /usr/lib/cuda-13.0/nvvm/libdevice/libdevice.10.bc");
  EXPECT_EQ(nvcc.exit_code, 0) << ct::describe(nvcc);
  EXPECT_NE(nvcc.out.find("Cuda compilation tools, release 13.0"), std::string::npos) << ct::describe(nvcc);
  auto verify = c.bash("dpkg --verify " + rt + " " + dev);
  EXPECT_EQ(verify.exit_code, 0) << ct::describe(verify);
  EXPECT_EQ(verify.out, "") << ct::describe(verify);
  auto files = c.bash("dpkg -L " + rt + " " + dev + " | sort -u > /tmp/files && wc -l < /tmp/files");
  ASSERT_EQ(files.exit_code, 0) << ct::describe(files);
  auto remove = c.bash("dpkg --purge " + dev + " " + rt);
  ASSERT_EQ(remove.exit_code, 0) << ct::describe(remove);
  auto left = c.bash(
      "while read -r f; do if { [ -e \"$f\" ] || [ -L \"$f\" ]; } && [ ! -d \"$f\" ]; then echo \"left: $f\"; fi; done < /tmp/files; "
      "test ! -e /usr/lib/cuda-13.0 && ldconfig -p | grep -c libcudart || true");
  EXPECT_EQ(left.out, "0\n") << ct::describe(left);
}

}  // namespace deb_install_test
