// A staged toolkit builds real programs: archives in NVIDIA's layout made from the real CUDA 13
// toolkit on this machine (scripts/make-cuda-fixtures.sh: nvcc, crt, NVVM, CCCL, the runtime, and
// cuDNN's headers and main library) are staged into one tree, whose own nvcc compiles and links a
// CUDA program against the staged cudart and cuDNN, and a CMake project using
// find_package(CUDAToolkit) and the staged CUDNNConfig.cmake configures, builds and runs. No GPU
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
  fs::path stage(const fs::path& work) {
    std::vector<std::pair<std::string, fixtures::Info>> pins(components.begin(), components.end());
    std::string name = cudnn.path.filename().string();
    std::string version = name.substr(19, name.find("_cuda") - 19);
    std::string extra = "[cudnn]\nversion = \"" + version +
                        "\"\ncuda = 13\n\n[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\n" + "file = \"" + name +
                        "\"\nsha256 = \"" + cudnn.sha256 + "\"\nsize = " + std::to_string(cudnn.size) + "\n";
    auto manifest = work / "stack.toml";
    testing_support::write_file(manifest,
                                fixtures::local_toolkit_manifest("13.0.2", {"nvcc", "crt", "nvvm", "cudart", "cccl"}, pins, extra));
    fs::path dest = work / "cuda tree";
    auto r = stackpin({"stage", manifest.string(), "--archives", dir.string(), "--target", "linux", "--dest", dest.string()});
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
  EXPECT_NE(slurp(dest / "version.json").find("\"libnvvm\" : {"), std::string::npos);
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
