// NVIDIA's CUDA redistrib_<version>.json: every copy in data/redist reads, with each
// component's own version and archives, and malformed or hostile files are refused by the JSON path.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "format/redistrib.hpp"
#include "test_support.hpp"
#include "util/fs.hpp"

namespace cuda_redistrib_test {

namespace fs = std::filesystem;
using util::ErrorCode;

namespace {

const fs::path k_dir = testing_support::source_dir() / "data" / "redist" / "cuda";

format::CudaRedistribRelease read(const std::string& version) {
  auto path = k_dir / ("redistrib_" + version + ".json");
  auto text = util::read_file(path);
  EXPECT_TRUE(text.ok()) << path;
  auto r = format::parse_cuda_redistrib(*text, path.string());
  EXPECT_TRUE(r.ok()) << r.error().message;
  return *r;
}

const format::CudaComponent* find(const format::CudaRedistribRelease& r, const std::string& id) {
  auto it = std::find_if(r.components.begin(), r.components.end(), [&](const auto& c) { return c.id == id; });
  return it == r.components.end() ? nullptr : &*it;
}

std::string sha(char c) { return std::string(64, c); }

}  // namespace

TEST(CudaRedistrib, EveryCopyInTheSharedDataReads) {
  ASSERT_TRUE(fs::is_directory(k_dir)) << k_dir;
  int files = 0;
  std::size_t archives = 0;
  for (const auto& e : fs::directory_iterator(k_dir)) {
    if (e.path().extension() != ".json") continue;
    auto text = util::read_file(e.path());
    ASSERT_TRUE(text.ok());
    auto r = format::parse_cuda_redistrib(*text, e.path().string());
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_NE(find(*r, "cuda_cudart"), nullptr) << e.path();
    for (const auto& c : r->components) archives += c.archives.size();
    ++files;
  }
  EXPECT_EQ(files, 50);        // 11.4.2 ... 13.4.2 (data/README.md)
  EXPECT_GT(archives, 4000u);  // one per component and platform
}

TEST(CudaRedistrib, AComponentHasItsOwnVersionAndOneArchivePerPlatform) {
  ASSERT_TRUE(fs::is_directory(k_dir)) << k_dir;
  auto r = read("12.4.1");
  EXPECT_EQ(r.release_label, "12.4.1");
  EXPECT_EQ(r.release_product, "cuda");
  const auto* cudart = find(r, "cuda_cudart");
  ASSERT_NE(cudart, nullptr);
  EXPECT_EQ(cudart->version_text, "12.4.127");  // not the release label
  EXPECT_EQ(cudart->name, "CUDA Runtime (cudart)");
  EXPECT_EQ(cudart->license_path, "cuda_cudart/LICENSE.txt");
  auto x86 = std::find_if(cudart->archives.begin(), cudart->archives.end(), [](const auto& a) { return a.platform_key == "linux-x86_64"; });
  ASSERT_NE(x86, cudart->archives.end());
  ASSERT_TRUE(x86->platform.has_value());
  EXPECT_EQ(*x86->platform, model::Platform::linux_x86_64);
  EXPECT_EQ(x86->relative_path, "cuda_cudart/linux-x86_64/cuda_cudart-linux-x86_64-12.4.127-archive.tar.xz");
  EXPECT_EQ(x86->sha256, "0483bff9a36e7a44465db3cd42874f6f70f019297dcf803fbefcbf58d7448c8f");
  EXPECT_EQ(x86->size, 1099680u);  // a string in NVIDIA's file
  auto ppc =
      std::find_if(cudart->archives.begin(), cudart->archives.end(), [](const auto& a) { return a.platform_key == "linux-ppc64le"; });
  ASSERT_NE(ppc, cudart->archives.end());
  EXPECT_FALSE(ppc->platform.has_value());  // kept, but not a platform stackpin provisions
}

TEST(CudaRedistrib, PlatformIndependentAndPartialComponentsAreKept) {
  ASSERT_TRUE(fs::is_directory(k_dir)) << k_dir;
  auto r = read("13.0.2");
  const auto* crt = find(r, "cuda_crt");  // new in CUDA 13
  ASSERT_NE(crt, nullptr);
  const auto* assistant = find(r, "driver_assistant");
  ASSERT_NE(assistant, nullptr);
  ASSERT_EQ(assistant->archives.size(), 1u);
  EXPECT_EQ(assistant->archives[0].platform_key, "linux-all");
  EXPECT_FALSE(assistant->archives[0].platform.has_value());
}

TEST(CudaRedistrib, MalformedFilesAreRefusedByTheirJsonPath) {
  auto refused = [](const std::string& text, const std::string& says) {
    auto r = format::parse_cuda_redistrib(text, "r.json");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
    EXPECT_FALSE(r.error().hints.empty());
  };
  auto archive = [](const std::string& path, const std::string& hash, const std::string& size) {
    return R"({"relative_path": ")" + path + R"(", "sha256": ")" + hash + R"(", "size": )" + size + "}";
  };
  refused("{\n  \"cuda_cudart\": <html>\n", "r.json:2:");
  refused(R"({"cudnn": {"version": "9.1.0.70"}})", "cuDNN's redistrib file");
  refused(R"({"release_label": "12.4.1"})", "lists no component");
  refused(R"({"release_product": "cudnn", "cuda_cudart": {"version": "12.4.127"}})", "release_product");
  refused(R"({"cuda_cudart": {"name": "CUDA Runtime"}})", "cuda_cudart.version");
  refused(R"({"cuda_cudart": {"version": "12.4.127", "linux-x86_64": )" + archive("cuda_cudart/x.tar.xz", "12", "\"5\"") + "}}",
          "cuda_cudart.linux-x86_64.sha256");
  refused(R"({"cuda_cudart": {"version": "12.4.127", "linux-x86_64": )" + archive("cuda_cudart/x.tar.xz", sha('a'), "\"five\"") + "}}",
          "cuda_cudart.linux-x86_64.size");
  refused(R"({"cuda_cudart": {"version": "12.4.127", "linux-x86_64": )" + archive("cuda_cudart/../../x.tar.xz", sha('a'), "5") + "}}",
          "relative_path");
  refused(R"({"cuda_cudart": {"version": "12.4.127", "linux-x86_64": )" + archive("libcublas/x.tar.xz", sha('a'), "5") + "}}",
          "not inside the component's folder cuda_cudart/");
  refused(R"({"Cuda Cudart": {"version": "12.4.127"}})", "is not a component name");
  // components built per CUDA release (cuda_compat from 13.1): the variant list and what hangs off it
  const std::string compat = R"({"cuda_compat": {"version": "590.44.01", )";
  const std::string variant_archive = archive("cuda_compat/x_cuda13.1.tar.xz", sha('a'), "5");
  refused(compat + R"("cuda_variant": "13.1", "linux-x86_64": {"cuda13.1": )" + variant_archive + "}}}", "cuda_compat.cuda_variant");
  refused(compat + R"("cuda_variant": [], "linux-x86_64": {"cuda13.1": )" + variant_archive + "}}}", "cuda_compat.cuda_variant");
  refused(compat + R"("cuda_variant": ["13.1; rm -rf /"], "linux-x86_64": {"cuda13.1": )" + variant_archive + "}}}",
          "cuda_compat.cuda_variant");
  refused(compat + R"("cuda_variant": ["13.1"], "linux-x86_64": {"cuda13.2": )" + variant_archive + "}}}",
          "cuda_compat.linux-x86_64.cuda13.2");
  refused(compat + R"("cuda_variant": ["13.1"], "linux-x86_64": {"cuda13.1": "x"}}})", "is not an archive object");
  refused(compat + R"("cuda_variant": ["13.1"], "linux-x86_64": {"cuda13.1": )" + archive("libcublas/x.tar.xz", sha('a'), "5") + "}}}",
          "not inside the component's folder cuda_compat/");
  auto nested = format::parse_cuda_redistrib(
      compat + R"("cuda_variant": ["13.1"], "linux-x86_64": {"cuda13.1": )" + variant_archive + "}}}", "r.json");
  ASSERT_TRUE(nested.ok()) << nested.error().message;
  ASSERT_EQ(nested->components.at(0).archives.size(), 1u);
  EXPECT_EQ(nested->components[0].archives[0].variant, "cuda13.1");
  EXPECT_EQ(nested->components[0].archives[0].platform_key, "linux-x86_64");
}

// The host that keeps archives in a pool: relative paths that first climb out of the redist tree
// are read, resolved against the manifest's own URL, and refused when they leave the host.
TEST(CudaRedistrib, PoolPathsClimbOutOfTheTreeButNeverOffTheHost) {
  for (const char* ok : {"cuda_cudart/linux-x86_64/x.tar.xz", "../../../pool/linux-x86_64/0a1b/cuda_cudart-13.9.1-archive.tar.xz", "../x"})
    EXPECT_TRUE(format::is_redist_relative_path(ok)) << ok;
  for (const char* bad :
       {"", "/etc/passwd", "cuda_cudart/../../x", "../", "..", "./x", "a//b", "a/./b", "..\\x", "a\\b", "../../a/../b", "cud../nn/x", "a/"})
    EXPECT_FALSE(format::is_redist_relative_path(bad)) << bad;

  const std::string base = "https://second.example/compute/cuda/redist/";
  EXPECT_EQ(*format::redist_url(base, "cuda_cudart/linux-x86_64/x.tar.xz"), base + "cuda_cudart/linux-x86_64/x.tar.xz");
  EXPECT_EQ(*format::redist_url(base, "../../../pool/linux-x86_64/0a1b/x.tar.xz"),
            "https://second.example/pool/linux-x86_64/0a1b/x.tar.xz");
  auto above = format::redist_url(base, "../../../../x.tar.xz");
  ASSERT_FALSE(above.ok());
  EXPECT_NE(above.error().message.find("climbs above the root of https://second.example/"), std::string::npos) << above.error().message;
  EXPECT_FALSE(format::redist_url("second.example/redist/", "x").ok());
  EXPECT_EQ(*format::redist_url("file:///srv/nvidia/compute/cuda/redist/", "../../../pool/x"), "file:///srv/nvidia/pool/x");

  // paths inside the tree start from NVIDIA's directory; pool paths from the manifest's own, when it was read from a URL
  const std::string official = "https://developer.download.nvidia.com/compute/cuda/redist/";
  EXPECT_EQ(*format::archive_url(base + "redistrib_13.9.1.json", "../../../pool/x", official), "https://second.example/pool/x");
  EXPECT_EQ(*format::archive_url("HTTPS://second.example/compute/cuda/redist/redistrib_13.9.1.json", "../../../pool/x", official),
            "HTTPS://second.example/pool/x");
  EXPECT_EQ(*format::archive_url(base + "redistrib_13.9.1.json", "cuda_cudart/x", official), official + "cuda_cudart/x");
  auto local = format::archive_url("/home/u/redistrib_13.9.1.json", "../../../pool/x", official);
  ASSERT_FALSE(local.ok());
  EXPECT_NE(local.error().message.find("a local file does not say which host"), std::string::npos) << local.error().message;
  for (const char* encoded : {"pool/%2e%2e/x", "pool/x?y", "pool/x#y"}) EXPECT_FALSE(format::is_redist_relative_path(encoded)) << encoded;

  auto pooled = format::parse_cuda_redistrib(R"({"release_label": "13.9.1", "cuda_cudart": {"version": "13.9.10", "linux-x86_64":
      {"relative_path": "../../../pool/linux-x86_64/0a1b/cuda_cudart-linux-x86_64-13.9.10-archive.tar.xz", "sha256": ")" +
                                                 sha('a') + R"(", "size": "5"}}})",
                                             "r.json");
  ASSERT_TRUE(pooled.ok()) << pooled.error().message;
  EXPECT_EQ(pooled->components.at(0).archives.at(0).relative_path,
            "../../../pool/linux-x86_64/0a1b/cuda_cudart-linux-x86_64-13.9.10-archive.tar.xz");
}

TEST(CudaRedistrib, TheCudnnReaderSendsACudaFileAway) {
  auto r = format::parse_redistrib(R"({"release_label": "12.4.1", "cuda_cudart": {"version": "12.4.127"}})", "r.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no \"cudnn\" component"), std::string::npos) << r.error().message;
}

}  // namespace cuda_redistrib_test
