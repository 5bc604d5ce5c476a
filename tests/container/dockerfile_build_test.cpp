// A generated Dockerfile, built for real: `stackpin generate dockerfile --context` lays out the
// context, Docker builds it on local/cuda-runtime:bookworm (Debian plus this machine's libcudart,
// standing in for NVIDIA's runtime image, passed as --build-arg BASE_IMAGE), and the image is
// inspected: the archive's hash is enforced by the build, only runtime files are in it, the labels
// and loader path are set, and the conv test inside finds cuDNN and the CUDA runtime through the
// image's loader and reports "nothing to run on" (no GPU here). The cuDNN library is the machine's
// real libcudnn.so.9 when present, else the CPU test double.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>

#include "container.hpp"
#include "fixtures.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
namespace ct = testing_support::container;
using nlohmann::json;

namespace {

const std::string k_version = "9.19.0.56";
const std::string k_top = "cudnn-linux-x86_64-9.19.0.56_cuda13-archive/";

fixtures::Info make_archive(const fs::path& dir) {
  fs::path real = "/usr/local/cuda/lib64/libcudnn.so.9";
  fs::path lib = fs::exists(real) ? real : fs::path(STACKPIN_DOUBLES_DIR) / "cuda12-cudnn9/libcudnn.so.9";
  std::vector<fixtures::Entry> e = {
      {k_top, fixtures::Kind::dir}, {k_top + "include/", fixtures::Kind::dir}, {k_top + "lib/", fixtures::Kind::dir}};
  e.push_back({k_top + "LICENSE", fixtures::Kind::file, "test license\n"});
  e.push_back({k_top + "include/cudnn_version.h", fixtures::Kind::file, fixtures::cudnn_version_header(k_version)});
  e.push_back({k_top + "include/cudnn.h", fixtures::Kind::file, "/* cudnn.h */\n"});
  e.push_back({k_top + "lib/libcudnn.so.9.19.0", fixtures::Kind::file, testing_support::read_text(lib), "", 0755});
  e.push_back({k_top + "lib/libcudnn.so.9", fixtures::Kind::symlink, "", "libcudnn.so.9.19.0"});
  e.push_back({k_top + "lib/libcudnn.so", fixtures::Kind::symlink, "", "libcudnn.so.9"});
  // cuDNN 9's libcudnn.so.9 is a dispatcher that loads libcudnn_graph.so.9 for its API (without it,
  // it aborts the process): the real one travels with it.
  fs::path graph = "/usr/local/cuda/lib64/libcudnn_graph.so.9";
  if (lib == real && fs::exists(graph)) {
    e.push_back({k_top + "lib/libcudnn_graph.so.9.19.0", fixtures::Kind::file, testing_support::read_text(graph), "", 0755});
    e.push_back({k_top + "lib/libcudnn_graph.so.9", fixtures::Kind::symlink, "", "libcudnn_graph.so.9.19.0"});
    e.push_back({k_top + "lib/libcudnn_graph.so", fixtures::Kind::symlink, "", "libcudnn_graph.so.9"});
  }
  e.push_back({k_top + "lib/libcudnn_static.a", fixtures::Kind::file, "!<arch>\n"});
  fs::path out = dir / (k_top.substr(0, k_top.size() - 1) + ".tar.xz");
  fixtures::write_archive(out, fixtures::Format::tar_xz, e);
  return fixtures::info(out);
}

// A manifest pinning the fixture archive (origin local) for the CUDA 13 runtime image.
std::string manifest_for(const fixtures::Info& archive, const std::string& name, const std::string& description) {
  return "schema = 1\nname = \"" + name + "\"\n" + (description.empty() ? "" : "description = \"" + description + "\"\n") +
         "\n[cuda]\nversion = \"13.0.2\"\n\n[cudnn]\nversion = \"" + k_version +
         "\"\ncuda = 13\n\n"
         "[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\nfile = \"" +
         archive.path.filename().string() + "\"\nsha256 = \"" + archive.sha256 + "\"\nsize = " + std::to_string(archive.size) +
         "\n\n[targets.docker]\nbase_image = \"nvidia/cuda:13.0.2-runtime-ubuntu24.04\"\n";
}

struct Images {
  std::vector<std::string> tags;
  ~Images() {
    for (const auto& t : tags) ct::docker({"rmi", "-f", t}, 60);
  }
};

}  // namespace

TEST(ContainerDockerfile, BuildsChecksAndRunsTheConvTestInside) {
  SP_SKIP_WITHOUT_CONTAINERS(ct::k_cuda_runtime_image);
  testing_support::ScratchDir dir;
  fs::path archives = dir.path() / "archives", context = dir.path() / "context";
  fs::create_directories(archives);
  auto archive = make_archive(archives);
  std::string manifest_text = manifest_for(archive, "container-build", "generated-image test");
  auto manifest = dir.write("stack.toml", manifest_text);
  fs::path convtest = testing_support::binary().parent_path() / "stackpin-convtest";
  auto gen = testing_support::stackpin({"generate", "dockerfile", manifest.string(), "--context", context.string(), "--archives",
                                        archives.string(), "--convtest", convtest.string()});
  ASSERT_EQ(gen.exit_code, 0) << gen.out << gen.err;
  ASSERT_TRUE(fs::exists(context / "Dockerfile"));
  ASSERT_TRUE(fs::exists(context / ".dockerignore"));
  ASSERT_TRUE(fs::exists(context / "archives" / archive.path.filename()));

  Images images;
  const std::string tag = "stackpin-test/generated:" + std::to_string(::getpid());
  const std::string test_tag = tag + "-test";
  images.tags = {tag, test_tag};
  const std::string base_arg = std::string("BASE_IMAGE=") + ct::k_cuda_runtime_image;
  auto build = ct::docker({"build", "-q", "--build-arg", base_arg, "--target", "runtime", "-t", tag, context.string()}, 600);
  ASSERT_EQ(build.exit_code, 0) << ct::describe(build);

  // Only the runtime files: the versioned library and its SONAME link, no static library, no
  // headers, no link-time .so name.
  ct::Options o;
  o.image = tag;
  auto files = ct::run(o, {"sh", "-c", "cd /opt/cudnn-" + k_version + " && find . | sort"});
  ASSERT_EQ(files.exit_code, 0) << ct::describe(files);
  std::string expected = ".\n./LICENSE\n./lib64\n./lib64/libcudnn.so.9\n./lib64/libcudnn.so.9.19.0\n";
  if (fs::exists("/usr/local/cuda/lib64/libcudnn_graph.so.9"))
    expected += "./lib64/libcudnn_graph.so.9\n./lib64/libcudnn_graph.so.9.19.0\n";
  EXPECT_EQ(files.out, expected) << ct::describe(files);
  auto ldcache = ct::run(o, {"sh", "-c", "ldconfig -p | grep 'libcudnn.so.9 '"});
  EXPECT_NE(ldcache.out.find("/opt/cudnn-" + k_version + "/lib64/libcudnn.so.9"), std::string::npos) << ct::describe(ldcache);

  // Labels and loader path, as docker inspect shows them.
  auto inspect = ct::docker({"image", "inspect", "--format", "{{json .Config}}", tag}, 60);
  ASSERT_EQ(inspect.exit_code, 0) << ct::describe(inspect);
  auto config = json::parse(inspect.out);
  EXPECT_EQ(config["Labels"]["io.stackpin.cudnn"], k_version);
  EXPECT_EQ(config["Labels"]["io.stackpin.cuda"], "13.0.2");
  EXPECT_EQ(config["Labels"]["io.stackpin.manifest"], "stack.toml");
  EXPECT_EQ(config["Labels"]["io.stackpin.manifest.sha256"], fixtures::info(manifest).sha256);
  EXPECT_EQ(config["Labels"]["io.stackpin.cudnn.archive.sha256"], archive.sha256);
  bool loader_path = false;
  for (const auto& env : config["Env"])
    loader_path |= env.get<std::string>().rfind("LD_LIBRARY_PATH=/opt/cudnn-" + k_version + "/lib64", 0) == 0;
  EXPECT_TRUE(loader_path) << config["Env"].dump();

  // The test target: built (the conv test ran at build time and found its libraries), then run.
  auto test_build = ct::docker({"build", "-q", "--build-arg", base_arg, "--target", "test", "-t", test_tag, context.string()}, 600);
  ASSERT_EQ(test_build.exit_code, 0) << ct::describe(test_build);
  ct::Options t;
  t.image = test_tag;
  auto run = ct::run(t, {"stackpin-convtest", "--expect-cudnn", "9.19.0", "--expect-cuda", "13", "--json"});
  ASSERT_EQ(run.exit_code, 3) << "no GPU here: the documented 'nothing to run on'\n" << ct::describe(run);
  auto doc = json::parse(run.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << ct::describe(run);
  EXPECT_EQ(doc["report"]["cudnn"]["path"].get<std::string>().rfind("/opt/cudnn-" + k_version + "/lib64/libcudnn.so.9", 0), 0u)
      << doc.dump(1);
  EXPECT_EQ(doc["report"]["cudnn_version"].get<std::string>().rfind("9.19", 0), 0u) << doc.dump(1);
  EXPECT_EQ(doc["report"]["cudart"]["path"].get<std::string>().rfind("/usr/local/cuda/lib64/libcudart.so.", 0), 0u) << doc.dump(1);
  for (const auto& f : doc["findings"]) EXPECT_NE(f["severity"], "error") << f.dump();
}

TEST(ContainerDockerfile, BuildFailsWhenTheArchiveIsNotThePinnedOne) {
  SP_SKIP_WITHOUT_CONTAINERS(ct::k_cuda_runtime_image);
  testing_support::ScratchDir dir;
  fs::path archives = dir.path() / "archives", context = dir.path() / "context";
  fs::create_directories(archives);
  auto archive = make_archive(archives);
  std::string manifest_text = manifest_for(archive, "container-bad-hash", "");
  auto manifest = dir.write("stack.toml", manifest_text);
  fs::path convtest = testing_support::binary().parent_path() / "stackpin-convtest";
  auto gen = testing_support::stackpin({"generate", "dockerfile", manifest.string(), "--context", context.string(), "--archives",
                                        archives.string(), "--convtest", convtest.string()});
  ASSERT_EQ(gen.exit_code, 0) << gen.out << gen.err;
  // Someone swaps the archive in the context after stackpin verified it (same size, one byte off).
  fs::path in_context = context / "archives" / archive.path.filename();
  fs::remove(in_context);  // it was a hard link to the original
  fixtures::corrupt_copy(archive.path, in_context, archive.size / 2);

  Images images;
  const std::string tag = "stackpin-test/bad-hash:" + std::to_string(::getpid());
  images.tags = {tag};
  auto build = ct::docker(
      {"build", "--build-arg", std::string("BASE_IMAGE=") + ct::k_cuda_runtime_image, "--target", "runtime", "-t", tag, context.string()},
      600);
  EXPECT_NE(build.exit_code, 0) << ct::describe(build);
  EXPECT_NE((build.out + build.err).find("FAILED"), std::string::npos) << "sha256sum -c reports the mismatch\n" << ct::describe(build);
}
