// A staged toolkit builds real programs: archives in NVIDIA's layout made from the real CUDA 13
// toolkit on this machine (scripts/make-cuda-fixtures.sh: nvcc, crt, NVVM, CCCL, the runtime, and
// cuDNN's headers and main library) are staged into one tree, whose own nvcc compiles and links a
// CUDA program against the staged cudart and cuDNN, and a CMake project using
// find_package(CUDAToolkit) and the staged CUDNNConfig.cmake configures, builds and runs; the Debian
// packages `stackpin deb` makes of the same archives do the same once unpacked. No GPU
// is needed: nvcc compiles without one, and the programs only ask the libraries their versions.
// Skipped, saying why, where /usr/local/cuda has no nvcc or lacks what the script reads (its
// dist-info versions, cuDNN). The archives are built once into STACKPIN_FIXTURES/cuda13 (default
// ~/.cache/stackpin/fixtures/cuda13; about 60 MB, 30 s).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "fixtures.hpp"
#include "test_support.hpp"
#include "tree.hpp"
#include "util/fs.hpp"

namespace cli_toolkit_build_test {

using testing_support::show;
using testing_support::stackpin;

namespace {
namespace fs = std::filesystem;

const fs::path k_cuda = "/usr/local/cuda";

fs::path fixture_dir() {
  if (const char* d = std::getenv("STACKPIN_FIXTURES")) return fs::path(d) / "cuda13";
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "/tmp") / ".cache" / "stackpin" / "fixtures" / "cuda13";
}

std::string slurp(const fs::path& p) {
  auto text = util::read_file(p);
  return text.ok() ? *text : std::string();
}

class ToolkitBuild : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(k_cuda / "bin" / "nvcc")) GTEST_SKIP() << "no CUDA toolkit at " << k_cuda << " (bin/nvcc) to build the archives from";
    dir = fixture_dir();
    fs::create_directories(dir);
    auto r = testing_support::run_process(
        {"/bin/bash", (testing_support::source_dir() / "scripts" / "make-cuda-fixtures.sh").string(), dir.string()});
    // exit 2: this machine's toolkit lacks what the script reads (its dist-info versions, cuDNN)
    if (r.exit_code == 2) GTEST_SKIP() << "scripts/make-cuda-fixtures.sh cannot build the archives here: " << r.err;
    ASSERT_EQ(r.exit_code, 0) << show(r);
    for (const auto& e : fs::directory_iterator(dir)) {
      std::string name = e.path().filename().string();
      if (name.size() < 15 || name.substr(name.size() - 15) != "-archive.tar.xz") continue;
      if (name.rfind("cudnn-", 0) == 0)
        cudnn = fixtures::info(e.path());
      else
        components[name.substr(0, name.find("-linux-x86_64-"))] = fixtures::info(e.path());
    }
    ASSERT_EQ(components.size(), 5u);
    if (cudnn.path.empty()) GTEST_SKIP() << "no cuDNN headers and library under " << k_cuda << " to build the cuDNN archive from";
  }

  // [cuda] 13.0.2 with what nvcc needs (NVIDIA's versions of these components in 13.0.2 are those
  // of the toolkit here), cuDNN beside it, every archive pinned as a local one.
  fs::path manifest(const fs::path& work) {
    std::vector<std::pair<std::string, fixtures::Info>> pins(components.begin(), components.end());
    std::string name = cudnn.path.filename().string();
    std::string version = name.substr(19, name.find("_cuda") - 19);
    std::string extra = "[cudnn]\nversion = \"" + version +
                        "\"\ncuda = 13\n\n[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\n" + "file = \"" + name +
                        "\"\nsha256 = \"" + cudnn.sha256 + "\"\nsize = " + std::to_string(cudnn.size) + "\n";
    auto manifest = work / "stack.toml";
    testing_support::write_file(manifest,
                                fixtures::local_toolkit_manifest("13.0.2", {"nvcc", "crt", "nvvm", "cudart", "cccl"}, pins, extra));
    return manifest;
  }

  fs::path stage(const fs::path& work) {
    fs::path dest = work / "cuda tree";
    auto r = stackpin({"stage", manifest(work).string(), "--archives", dir.string(), "--target", "linux", "--dest", dest.string()});
    EXPECT_EQ(r.exit_code, 0) << show(r);
    return dest;
  }

  fs::path dir;
  std::map<std::string, fixtures::Info> components;
  fixtures::Info cudnn;
};

const char* k_program = R"(#include <cstdio>
#include <cuda_runtime.h>
#include <cudnn.h>
__global__ void touch(int* p) { if (p) *p = 1; }
int main() {
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  std::printf("cudnn %zu runtime %d header %d\n", cudnnGetVersion(), runtime, CUDNN_VERSION);
  touch<<<1, 1>>>(nullptr);
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  std::printf("devices: %s\n", cudaGetErrorName(e));
  return 0;
}
)";

}  // namespace

TEST_F(ToolkitBuild, TheStagedNvccCompilesAndLinksAgainstTheStagedCudartAndCudnn) {
  testing_support::ScratchDir work;
  fs::path dest = stage(work.path());
  ASSERT_TRUE(fs::exists(dest / "bin" / "nvcc"));
  EXPECT_TRUE(fs::exists(dest / "nvvm" / "libdevice"));
  EXPECT_NE(slurp(dest / "version.json").find("\"libnvvm\" : {"), std::string::npos) << slurp(dest / "version.json");
  testing_support::write_file(work.path() / "t.cu", k_program);
  // nothing from /usr/local/cuda on the way: the staged nvcc finds its own include/, lib64/ and nvvm/
  std::vector<std::string> env{"PATH=" + (dest / "bin").string() + ":/usr/bin:/bin", "LD_LIBRARY_PATH=" + (dest / "lib64").string()};
  auto nvcc = testing_support::run_process(
      {(dest / "bin" / "nvcc").string(), "-o", (work.path() / "t").string(), (work.path() / "t.cu").string(), "-lcudnn"}, env, work.path());
  ASSERT_EQ(nvcc.exit_code, 0) << show(nvcc);
  auto run = testing_support::run_process({(work.path() / "t").string()}, env);
  EXPECT_EQ(run.exit_code, 0) << show(run);
  EXPECT_NE(run.out.find("cudnn 91900 runtime 13000 header 91900"), std::string::npos) << show(run);
  auto ldd = testing_support::run_process({"/usr/bin/ldd", (work.path() / "t").string()}, env);
  EXPECT_NE(ldd.out.find((dest / "lib64" / "libcudnn.so.9").string()), std::string::npos) << ldd.out;
}

TEST_F(ToolkitBuild, FindCudaToolkitAndTheStagedCudnnConfigBuildACmakeProject) {
  testing_support::ScratchDir work;
  fs::path dest = stage(work.path());
  fs::path src = work.path() / "src";
  testing_support::write_file(src / "CMakeLists.txt", R"(cmake_minimum_required(VERSION 3.18)
project(uses_the_staged_tree LANGUAGES CXX)
find_package(CUDAToolkit REQUIRED)
find_package(CUDNN CONFIG REQUIRED)
add_executable(app app.cpp)
target_link_libraries(app PRIVATE CUDA::cudart CUDNN::cudnn)
file(WRITE "${CMAKE_BINARY_DIR}/found.txt" "${CUDAToolkit_VERSION}|${CUDAToolkit_BIN_DIR}|${CUDAToolkit_LIBRARY_DIR}|${CUDNN_DIR}")
)");
  testing_support::write_file(src / "app.cpp", R"(#include <cstdio>
#include <cuda_runtime_api.h>
#include <cudnn.h>
int main() {
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  std::printf("cudnn %zu runtime %d\n", cudnnGetVersion(), runtime);
  return 0;
}
)");
  fs::path build = work.path() / "build";
  std::vector<std::string> env{"PATH=/usr/bin:/bin", "CUDA_HOME=" + dest.string()};
  auto configure = testing_support::run_process({"/usr/bin/cmake", "-S", src.string(), "-B", build.string(),
                                                 "-DCUDAToolkit_ROOT=" + dest.string(), "-DCMAKE_PREFIX_PATH=" + dest.string()},
                                                env);
  ASSERT_EQ(configure.exit_code, 0) << show(configure);
  std::string found = slurp(build / "found.txt");
  EXPECT_EQ(found.rfind("13.0.", 0), 0u) << found;
  EXPECT_NE(found.find("|" + (dest / "bin").string() + "|"), std::string::npos) << found;
  EXPECT_NE(found.find(dest.string() + "/lib64"), std::string::npos) << found;
  auto make = testing_support::run_process({"/usr/bin/cmake", "--build", build.string()}, env);
  ASSERT_EQ(make.exit_code, 0) << show(make);
  auto run = testing_support::run_process({(build / "app").string()}, {"LD_LIBRARY_PATH=" + (dest / "lib64").string()});
  EXPECT_EQ(run.exit_code, 0) << show(run);
  EXPECT_NE(run.out.find("cudnn 91900 runtime 13000"), std::string::npos) << show(run);
}

// stackpin deb of the same manifest: the toolkit's runtime package puts libcudart where the loader
// looks, its -dev package is a CUDA_HOME at /usr/lib/cuda-13.0 whose nvcc, unpacked with dpkg-deb
// into a folder (as dpkg would install it, relative links and all), builds a program against the
// packaged cuDNN; lintian finds nothing unexplained; a second run gives the same bytes.
TEST_F(ToolkitBuild, DebPackagesGiveACudaHomeWhoseNvccBuildsAgainstThePackagedCudnn) {
  if (!testing_support::have_tool("dpkg-deb")) GTEST_SKIP() << "dpkg-deb is not installed";
  testing_support::ScratchDir work;
  fs::path m = manifest(work.path()), out = work.path() / "debs";
  std::vector<std::string> args = {"deb", m.string(), "--archives", dir.string(), "--out-dir", out.string(), "--compression", "gzip"};
  // a dry run verifies and plans in the system's temporary folder: --out-dir is not even created
  auto dry = stackpin({"deb", m.string(), "--archives", dir.string(), "--out-dir", (work.path() / "dry").string(), "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << show(dry);
  EXPECT_NE(dry.out.find("/usr/lib/cuda-13.0/bin/nvcc"), std::string::npos) << dry.out;
  EXPECT_FALSE(fs::exists(work.path() / "dry"));
  auto r = stackpin(args);
  ASSERT_EQ(r.exit_code, 0) << show(r);
  const std::vector<std::string> names = {"stackpin-cuda-runtime-13-0_13.0.2-1_amd64.deb", "stackpin-cuda-dev-13-0_13.0.2-1_amd64.deb",
                                          "stackpin-libcudnn9-cuda-13_9.19.0.56-1+cuda13_amd64.deb",
                                          "stackpin-libcudnn9-dev-cuda-13_9.19.0.56-1+cuda13_amd64.deb"};
  fs::path root = work.path() / "root";
  for (const auto& n : names) {
    ASSERT_TRUE(fs::exists(out / n)) << n << "\n" << r.out;
    auto x = testing_support::run_process({testing_support::tool_path("dpkg-deb"), "-x", (out / n).string(), root.string()});
    ASSERT_EQ(x.exit_code, 0) << show(x);
  }
  const fs::path lib = root / "usr/lib/x86_64-linux-gnu", home = root / "usr/lib/cuda-13.0";
  EXPECT_TRUE(fs::is_regular_file(lib / "libcudart.so.13"));
  EXPECT_EQ(fs::read_symlink(home / "lib64" / "libcudart.so.13"), "../../x86_64-linux-gnu/libcudart.so.13");
  EXPECT_FALSE(fs::exists(lib / "libcudart_static.a"));  // link-time files are the -dev package's
  EXPECT_TRUE(fs::is_regular_file(home / "lib64" / "libcudart_static.a"));
  // libraries are not executable; the tools are
  EXPECT_EQ(fs::status(lib / "libcudart.so.13").permissions() & fs::perms::owner_exec, fs::perms::none);
  EXPECT_NE(fs::status(home / "bin" / "nvcc").permissions() & fs::perms::owner_exec, fs::perms::none);
  EXPECT_NE(slurp(home / "version.json").find("\"cuda_cudart\""), std::string::npos) << slurp(home / "version.json");

  auto field = [&](const std::string& deb, const std::string& name) {
    auto f = testing_support::run_process({testing_support::tool_path("dpkg-deb"), "-f", (out / deb).string(), name});
    return f.out;
  };
  EXPECT_NE(field(names[0], "Provides").find("libcudart13"), std::string::npos) << field(names[0], "Provides");
  EXPECT_NE(field(names[0], "Conflicts").find("stackpin-cuda-runtime-13"), std::string::npos) << field(names[0], "Conflicts");
  EXPECT_NE(field(names[1], "Depends").find("stackpin-cuda-runtime-13-0 (= 13.0.2-1)"), std::string::npos) << field(names[1], "Depends");
  EXPECT_NE(field(names[2], "Recommends").find("stackpin-cuda-runtime-13-0 | "), std::string::npos) << field(names[2], "Recommends");

  // the packaged nvcc finds its include/, lib64/ and nvvm/ from its own folder
  testing_support::write_file(work.path() / "t.cu", k_program);
  std::vector<std::string> env{"PATH=" + (home / "bin").string() + ":/usr/bin:/bin"};
  auto nvcc =
      testing_support::run_process({(home / "bin" / "nvcc").string(), "-o", (work.path() / "t").string(), (work.path() / "t.cu").string(),
                                    "-I" + (root / "usr/include").string(), "-L" + lib.string(), "-lcudnn"},
                                   env, work.path());
  ASSERT_EQ(nvcc.exit_code, 0) << show(nvcc);
  auto run = testing_support::run_process({(work.path() / "t").string()}, {"LD_LIBRARY_PATH=" + lib.string()});
  EXPECT_EQ(run.exit_code, 0) << show(run);
  EXPECT_NE(run.out.find("cudnn 91900 runtime 13000 header 91900"), std::string::npos) << show(run);

  if (testing_support::have_tool("lintian")) {
    std::vector<std::string> l = {testing_support::tool_path("lintian"), "--no-cfg", "--fail-on", "error,warning"};
    for (const auto& n : names) l.push_back((out / n).string());
    auto lint = testing_support::run_process(l);
    EXPECT_EQ(lint.exit_code, 0) << show(lint);
  }
  auto again = stackpin(args);
  ASSERT_EQ(again.exit_code, 0) << show(again);
  std::size_t unchanged = 0;
  for (std::size_t at = 0; (at = again.out.find("unchanged: the same bytes", at)) != std::string::npos; ++at) ++unchanged;
  EXPECT_EQ(unchanged, 4u) << again.out;
}

}  // namespace cli_toolkit_build_test
