// The harness's first proof: the host-built stackpin-convtest (C++ runtime linked statically, only
// the C library needed) runs in local/cuda-runtime:bookworm, the stand-in for NVIDIA's runtime
// image that scripts/container-engine.sh builds from this machine's libcudart. No network, the
// repository mounted read-only. No GPU reaches a container here, so the documented results are
// "cuDNN missing" (exit 1) in the bare runtime image and "nothing to run on" (exit 3) once a cuDNN
// is on the container's loader path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "container.hpp"
#include "test_support.hpp"

namespace convtest_container_test {

namespace fs = std::filesystem;
namespace ct = testing_support::container;
using nlohmann::json;

namespace {
const std::string k_bin = "/opt/stackpin/bin/stackpin-convtest";

ct::Options runtime_image_options() {
  ct::Options o;
  o.image = ct::k_cuda_runtime_image;
  o.mounts = {{testing_support::binary().parent_path() / "stackpin-convtest", k_bin}, {testing_support::source_dir(), "/src"}};
  o.workdir = "/src";
  return o;
}

const json* finding(const json& doc, const std::string& rule) {
  for (const auto& f : doc["findings"])
    if (f["rule"] == rule) return &f;
  return nullptr;
}

json parse(const testing_support::RunResult& r) {
  auto doc = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << ct::describe(r);
  return doc.is_discarded() ? json::object({{"findings", json::array()}, {"report", json::object()}}) : doc;
}
}  // namespace

TEST(ContainerConvtest, RuntimeImageReportsItsCudaRuntimeAndMissingCudnn) {
  SP_SKIP_WITHOUT_CONTAINERS(ct::k_cuda_runtime_image);
  auto r = ct::run(runtime_image_options(), {k_bin, "--json"});
  ASSERT_EQ(r.exit_code, 1) << "no cuDNN in the runtime image is a failure, not 'no GPU'\n" << ct::describe(r);
  auto doc = parse(r);
  const auto& cudart = doc["report"]["cudart"];
  EXPECT_EQ(cudart["error"], "") << doc.dump(1);
  EXPECT_EQ(cudart["path"].get<std::string>().rfind("/usr/local/cuda/lib64/libcudart.so.", 0), 0u) << doc.dump(1);
  EXPECT_FALSE(doc["report"]["runtime_version"].get<std::string>().empty()) << doc.dump(1);
  ASSERT_NE(finding(doc, "convtest.cudnn-missing"), nullptr) << doc.dump(1);
  EXPECT_EQ((*finding(doc, "convtest.cudnn-missing"))["severity"], "error");
  ASSERT_NE(finding(doc, "convtest.no-gpu"), nullptr) << doc.dump(1);
  EXPECT_EQ(doc["report"]["gpus"], json::array());
}

TEST(ContainerConvtest, CudnnOnTheContainersLoaderPathGivesNothingToRunOn) {
  SP_SKIP_WITHOUT_CONTAINERS(ct::k_cuda_runtime_image);
  // The host's real cuDNN, mounted file by file (not its directory, which also holds a libcudart):
  // the runtime must come from the image, cuDNN from the mount.
  fs::path lib = "/usr/local/cuda/lib64";
  if (!fs::exists(lib / "libcudnn.so.9")) GTEST_SKIP() << "no real cuDNN 9 under " << lib;
  auto o = runtime_image_options();
  for (const auto& e : fs::directory_iterator(lib)) {
    std::string n = e.path().filename().string();
    if (n.rfind("libcudnn", 0) == 0 && n.find(".so.") != std::string::npos)
      o.mounts.push_back({fs::canonical(e.path()), "/opt/cudnn/lib64/" + n});
  }
  o.env = {"LD_LIBRARY_PATH=/opt/cudnn/lib64"};

  auto r = ct::run(o, {k_bin, "--json"});
  ASSERT_EQ(r.exit_code, 3) << ct::describe(r);
  auto doc = parse(r);
  const auto& report = doc["report"];
  EXPECT_EQ(report["cudart"]["path"].get<std::string>().rfind("/usr/local/cuda/lib64/libcudart.so.", 0), 0u) << doc.dump(1);
  EXPECT_EQ(report["cudnn"]["path"], "/opt/cudnn/lib64/libcudnn.so.9") << doc.dump(1);
  EXPECT_EQ(report["cudnn_version"].get<std::string>().rfind("9.", 0), 0u) << doc.dump(1);
  EXPECT_FALSE(report["nothing_to_run"].get<std::string>().empty());
  ASSERT_NE(finding(doc, "convtest.no-gpu"), nullptr) << doc.dump(1);
  EXPECT_EQ((*finding(doc, "convtest.no-gpu"))["severity"], "note");
  for (const auto& f : doc["findings"]) EXPECT_NE(f["severity"], "error") << f.dump();

  // The same run as people read it.
  auto text = ct::run(o, {k_bin});
  EXPECT_EQ(text.exit_code, 3);
  EXPECT_NE(text.out.find("CUDA runtime: /usr/local/cuda/lib64/libcudart.so."), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("cuDNN: /opt/cudnn/lib64/libcudnn.so.9"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("nothing to run on"), std::string::npos) << text.out;
}

TEST(ContainerConvtest, TheRepositoryIsMountedReadOnly) {
  SP_SKIP_WITHOUT_CONTAINERS(ct::k_cuda_runtime_image);
  auto r = ct::run(runtime_image_options(), {"sh", "-c", "test -f /src/CMakeLists.txt && ! touch /src/.probe 2>/dev/null"});
  EXPECT_EQ(r.exit_code, 0) << ct::describe(r);
}

}  // namespace convtest_container_test
