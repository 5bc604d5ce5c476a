// A generated Dockerfile, built for real: `stackpin generate dockerfile --context` lays out the
// context, Docker builds it on local/cuda-runtime:bookworm (Debian plus this machine's libcudart,
// standing in for NVIDIA's runtime image, passed as --build-arg BASE_IMAGE), and the image is
// inspected: the archive's hash is enforced by the build, only runtime files are in it, the labels
// and loader path are set, and the conv test inside finds cuDNN and the CUDA runtime through the
// image's loader and reports "nothing to run on" (no GPU here). The cuDNN library is the machine's
// real libcudnn.so.9 when present, else the CPU test double.
// Hermetic images (cuda = "archive") are built on the plain local/debian:bookworm from the CUDA 13
// component archives scripts/make-cuda-fixtures.sh makes of this machine's toolkit, as the targets
// of a `generate bake` matrix.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "container.hpp"
#include "fixtures.hpp"
#include "http_server.hpp"
#include "registry.hpp"
#include "test_support.hpp"
#include "tree.hpp"
#include "wheels.hpp"

namespace dockerfile_build_test {

namespace fs = std::filesystem;
namespace ct = testing_support::container;
using nlohmann::json;

namespace {

const std::string k_version = "9.19.0.56";
const std::string k_top = "cudnn-linux-x86_64-9.19.0.56_cuda13-archive/";

fixtures::Info make_archive(const fs::path& dir) {
  fs::path real = "/usr/local/cuda/lib64/libcudnn.so.9";
  fs::path lib = fs::exists(real) ? real : testing_support::doubles_dir() / "cuda12-cudnn9/libcudnn.so.9";
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
  // the other sub-libraries as stand-ins (NVIDIA's sonames and needs, no code): stage and deb take
  // only a whole cuDNN, and nothing here loads them
  for (const auto& stem : fixtures::cudnn_linux_stems(9)) {
    if (stem == "libcudnn" || (stem == "libcudnn_graph" && lib == real && fs::exists(graph))) continue;
    e.push_back({k_top + "lib/" + stem + ".so.9.19.0", fixtures::Kind::file,
                 fixtures::elf_library(stem + ".so.9", fixtures::cudnn_library_needs(stem, 9, false),
                                       fixtures::cudnn_library_rodata(stem, k_version), 0),
                 "", 0755});
    e.push_back({k_top + "lib/" + stem + ".so.9", fixtures::Kind::symlink, "", stem + ".so.9.19.0"});
    e.push_back({k_top + "lib/" + stem + ".so", fixtures::Kind::symlink, "", stem + ".so.9"});
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
  std::string expected = ".\n./LICENSE\n./lib64\n";
  for (const auto& stem : fixtures::cudnn_linux_stems(9)) expected += "./lib64/" + stem + ".so.9\n./lib64/" + stem + ".so.9.19.0\n";
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

// ---- hermetic images (cuda = "archive") and bake matrices --------------------------------------

namespace {

// The CUDA 13 component archives scripts/make-cuda-fixtures.sh builds from this machine's toolkit
// (nvcc, crt, NVVM, CCCL, the runtime), cached between runs.
fs::path cuda_fixture_dir() {
  if (const char* d = std::getenv("STACKPIN_FIXTURES")) return fs::path(d) / "cuda13";
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "/tmp") / ".cache" / "stackpin" / "fixtures" / "cuda13";
}

class ContainerHermetic : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = ct::unavailable({ct::k_debian_image}); !why.empty()) GTEST_SKIP() << why;
    if (!fs::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda to build the component archives from";
    fs::path dir = cuda_fixture_dir();
    fs::create_directories(dir);
    auto r = testing_support::run_process(
        {"/bin/bash", (testing_support::source_dir() / "scripts" / "make-cuda-fixtures.sh").string(), dir.string()});
    if (r.exit_code == 2) GTEST_SKIP() << "scripts/make-cuda-fixtures.sh cannot build the archives here: " << r.err;
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    for (const auto& e : fs::directory_iterator(dir)) {
      std::string name = e.path().filename().string();
      if (name.size() > 15 && name.substr(name.size() - 15) == "-archive.tar.xz" && name.rfind("cudnn-", 0) != 0)
        components.emplace_back(name.substr(0, name.find("-linux-x86_64-")), fixtures::info(e.path()));
    }
    std::sort(components.begin(), components.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    ASSERT_EQ(components.size(), 5u);
    archives = scratch.path() / "archives";
    fs::create_directories(archives);
    for (const auto& [c, inf] : components) fs::create_hard_link(inf.path, archives / inf.path.filename());
    cudnn = make_archive(archives);
  }

  // A hermetic manifest: the five components (local pins), cuDNN's fixture archive, on the local
  // Debian base.
  fs::path manifest(const std::string& name, const std::string& description) {
    std::string extra = "[cudnn]\nversion = \"" + k_version +
                        "\"\ncuda = 13\n\n[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\nfile = \"" +
                        cudnn.path.filename().string() + "\"\nsha256 = \"" + cudnn.sha256 + "\"\nsize = " + std::to_string(cudnn.size) +
                        "\n\n[targets.docker]\ncuda = \"archive\"\nbase_image = \"" + ct::k_debian_image + "\"\n";
    std::string text = fixtures::local_toolkit_manifest("13.0.2", {"nvcc", "crt", "nvvm", "cudart", "cccl"}, components, extra);
    text.replace(text.find("name = \"toolkit-fixture\""), 24, "name = \"" + name + "\"\ndescription = \"" + description + "\"");
    return scratch.write(name + ".toml", text);
  }

  testing_support::ScratchDir scratch;
  std::vector<std::pair<std::string, fixtures::Info>> components;
  fixtures::Info cudnn;
  fs::path archives;
};

std::string output_of(const testing_support::RunResult& r) { return r.out + r.err; }

// One build step as the build output reports it: its instruction and whether the cache served it
// (the classic builder: "Step 3/9 : RUN ..." then " ---> Using cache"; BuildKit's plain output:
// "#7 [cuda 2/4] RUN ..." then "#7 CACHED").
struct BuildStep {
  std::string instruction;
  bool cached = false;
};

std::vector<BuildStep> build_steps(const std::string& log) {
  std::vector<BuildStep> steps;
  std::map<std::string, std::size_t> by_id;  // BuildKit's "#N"
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Step ", 0) == 0 && line.find(" : ") != std::string::npos) {
      steps.push_back({line.substr(line.find(" : ") + 3), false});
    } else if (line.find("---> Using cache") != std::string::npos && !steps.empty()) {
      steps.back().cached = true;
    } else if (line.rfind("#", 0) == 0 && line.find(' ') != std::string::npos) {
      std::string id = line.substr(0, line.find(' ')), rest = line.substr(line.find(' ') + 1);
      if (rest.rfind("[", 0) == 0 && rest.find("] ") != std::string::npos && !by_id.count(id)) {
        by_id[id] = steps.size();
        steps.push_back({rest.substr(rest.find("] ") + 2), false});
      } else if (rest == "CACHED" && by_id.count(id)) {
        steps[by_id[id]].cached = true;
      }
    }
  }
  return steps;
}

}  // namespace

// Two manifests of one stack (they differ in name and description only) as a bake matrix: the
// bake file is read and checked, and every linux/amd64 target it defines is built here with the
// same context, Dockerfile, target and arguments. The first image is inspected (run-time files
// only, the toolkit's tree, the environment NVIDIA's container toolkit reads, one label per
// archive); its test target runs the conv test, which finds cudart and cuDNN at the image's own
// paths; its devel target has nvcc; the second image reuses every CUDA and cuDNN layer.
TEST_F(ContainerHermetic, ABakeMatrixOfHermeticImagesBuildsAndRuns) {
  auto a = manifest("stack-a", "first of the matrix");
  auto b = manifest("stack-b", "second of the matrix");
  fs::path out = scratch.path() / "matrix";
  fs::create_directories(out);
  fs::path convtest = testing_support::binary().parent_path() / "stackpin-convtest";
  // linux-x86_64 only: the toolkit's archives are this machine's, and the knowledge base would
  // pin NVIDIA's linux-sbsa archives of the same releases, which --archives does not hold
  auto gen = testing_support::stackpin({"generate", "bake", a.string(), b.string(), "-o", (out / "docker-bake.json").string(), "--archives",
                                        archives.string(), "--convtest", convtest.string(), "--registry", "registry.example/ci",
                                        "--platform", "linux-x86_64"});
  ASSERT_EQ(gen.exit_code, 0) << gen.out << gen.err;
  EXPECT_EQ(gen.err.find("linux-sbsa"), std::string::npos) << gen.err;

  auto bake = json::parse(testing_support::read_text(out / "docker-bake.json"));
  ASSERT_TRUE(bake.is_object());
  EXPECT_EQ(bake["group"]["default"]["targets"], json::array({"stack-a-amd64", "stack-b-amd64"})) << bake.dump(1);
  EXPECT_EQ(bake["group"]["devel"]["targets"], json::array({"stack-a-amd64-devel", "stack-b-amd64-devel"}));
  EXPECT_EQ(bake["group"]["test"]["targets"], json::array({"stack-a-amd64-test", "stack-b-amd64-test"}));
  std::set<std::string> allowed = {"context", "dockerfile", "target", "platforms", "args", "tags", "cache-from", "cache-to"};
  for (const auto& [name, t] : bake["target"].items()) {
    for (const auto& [key, v] : t.items()) EXPECT_TRUE(allowed.count(key)) << name << ": " << key;
    EXPECT_TRUE(t["context"].is_string() && t["dockerfile"] == "Dockerfile" && t["target"].is_string()) << name;
    EXPECT_EQ(t["platforms"], json::array({"linux/amd64"})) << name;
    EXPECT_EQ(t["args"]["BASE_IMAGE"], ct::k_debian_image) << name;
    EXPECT_EQ(t["tags"][0].get<std::string>().rfind("registry.example/ci/stack-", 0), 0u) << name;
    EXPECT_EQ(t["cache-from"][0].get<std::string>().rfind("type=registry,ref=registry.example/ci/stack-", 0), 0u) << name;
    EXPECT_TRUE(fs::exists(out / t["context"].get<std::string>() / "Dockerfile")) << name;
  }
  for (const auto& [name, t] : bake["group"].items())
    for (const auto& member : t["targets"]) EXPECT_TRUE(bake["target"].contains(member)) << name << ": " << member;

  Images images;
  // Every target, built as bake would build it (no buildx here: no registry cache, same inputs).
  std::map<std::string, std::string> tags, logs;
  for (const auto& [name, t] : bake["target"].items()) {
    std::string tag = "stackpin-test/" + name + ":" + std::to_string(::getpid());
    images.tags.push_back(tag);
    auto build = ct::docker({"build", "--build-arg", "BASE_IMAGE=" + t["args"]["BASE_IMAGE"].get<std::string>(), "--target",
                             t["target"].get<std::string>(), "-f", (out / t["context"].get<std::string>() / "Dockerfile").string(), "-t",
                             tag, (out / t["context"].get<std::string>()).string()},
                            900);
    ASSERT_EQ(build.exit_code, 0) << name << "\n" << ct::describe(build);
    tags[name] = tag;
    logs[name] = output_of(build);
  }

  // stack-a's runtime image: the toolkit's run-time files only
  ct::Options o;
  o.image = tags["stack-a-amd64"];
  auto files = ct::run(o, {"sh", "-c",
                           "cd /usr/local/cuda && readlink -f . && ls lib64 && ls share/doc && test -f version.json && "
                           "! test -e bin && ! test -e include && ! test -e nvvm && ! ls lib64 | grep -v '\\.so\\.'"});
  ASSERT_EQ(files.exit_code, 0) << ct::describe(files);
  EXPECT_NE(files.out.find("/usr/local/cuda-13.0\n"), std::string::npos) << files.out;
  EXPECT_NE(files.out.find("libcudart.so.13"), std::string::npos) << files.out;
  for (const auto& [c, inf] : components) EXPECT_NE(files.out.find(c + "\n"), std::string::npos) << "licence of " << c << "\n" << files.out;
  auto version = ct::run(o, {"cat", "/usr/local/cuda/version.json"});
  auto doc = json::parse(version.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << version.out;
  EXPECT_EQ(doc["cuda"]["version"], "13.0.2");
  EXPECT_TRUE(doc.contains("cuda_cudart") && doc.contains("cuda_nvcc")) << doc.dump(1);
  auto inspect = ct::docker({"image", "inspect", "--format", "{{json .Config}}", tags["stack-a-amd64"]}, 60);
  auto config = json::parse(inspect.out);
  std::set<std::string> env;
  for (const auto& e : config["Env"]) env.insert(e.get<std::string>());
  EXPECT_TRUE(env.count("CUDA_VERSION=13.0.2")) << config["Env"].dump();
  EXPECT_TRUE(env.count("NVIDIA_VISIBLE_DEVICES=all")) << config["Env"].dump();
  EXPECT_TRUE(env.count("NVIDIA_DRIVER_CAPABILITIES=compute,utility")) << config["Env"].dump();
  bool require = false;
  for (const auto& e : env) require |= e.rfind("NVIDIA_REQUIRE_CUDA=cuda>=13.0,driver>=580", 0) == 0;
  EXPECT_TRUE(require) << config["Env"].dump();
  for (const auto& [c, inf] : components) EXPECT_EQ(config["Labels"]["io.stackpin.cuda.archive." + c + ".sha256"], inf.sha256) << c;
  EXPECT_EQ(config["Labels"]["io.stackpin.cudnn.archive.sha256"], cudnn.sha256);

  // the SBOM in the image lists exactly its regular files under the toolkit and cuDNN, with their
  // SHA-256, and every archive as a package
  EXPECT_EQ(config["Labels"]["io.stackpin.sbom"], "/usr/share/doc/stackpin/sbom.spdx.json");
  auto listed = ct::run(o, {"sh", "-c",
                            "cat /usr/share/doc/stackpin/sbom.spdx.json > /dev/null && "
                            "find /usr/local/cuda-13.0 /opt/cudnn-* -type f -exec sha256sum {} + | sort -k2"});
  ASSERT_EQ(listed.exit_code, 0) << ct::describe(listed);
  auto sbom_text = ct::run(o, {"cat", "/usr/share/doc/stackpin/sbom.spdx.json"});
  auto sbom = json::parse(sbom_text.out, nullptr, false);
  ASSERT_FALSE(sbom.is_discarded()) << sbom_text.out.substr(0, 400);
  EXPECT_EQ(sbom["packages"].size(), components.size() + 1);
  std::map<std::string, std::string> in_sbom, in_image;
  for (const auto& f : sbom["files"]) in_sbom[f["fileName"].get<std::string>().substr(1)] = f["checksums"][1]["checksumValue"];
  std::istringstream lines(listed.out);
  for (std::string line; std::getline(lines, line);)
    if (line.size() > 66) in_image[line.substr(66)] = line.substr(0, 64);
  EXPECT_EQ(in_sbom, in_image) << "the SBOM lists the image's files, no more, no fewer";
  fs::path sbom_file = scratch.path() / "image-sbom.json";
  testing_support::write_file(sbom_file, sbom_text.out);
  std::string skip;
  auto schema = testing_support::schema_errors("spdx-2.3.json", sbom_file, skip);
  if (skip.empty()) {
    EXPECT_EQ(schema, "");
  }

  // the conv test finds the image's own cudart and cuDNN (no GPU here: exit 3)
  ct::Options t;
  t.image = tags["stack-a-amd64-test"];
  auto run = ct::run(t, {"stackpin-convtest", "--expect-cudnn", "9.19.0", "--expect-cuda", "13", "--json"});
  ASSERT_EQ(run.exit_code, 3) << ct::describe(run);
  auto report = json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << ct::describe(run);
  EXPECT_EQ(report["report"]["cudart"]["path"].get<std::string>().rfind("/usr/local/cuda-13.0/lib64/libcudart.so.13", 0), 0u)
      << report.dump(1);
  EXPECT_EQ(report["report"]["cudnn"]["path"].get<std::string>().rfind("/opt/cudnn-" + k_version + "/lib64/libcudnn.so.9", 0), 0u)
      << report.dump(1);

  // the devel image has the compiler and the headers
  ct::Options dv;
  dv.image = tags["stack-a-amd64-devel"];
  auto nvcc = ct::run(dv, {"sh", "-c",
                           "nvcc --version && test -f /usr/local/cuda/include/cuda_runtime.h && test -f /opt/cudnn-" + k_version +
                               "/include/cudnn_version.h"});
  EXPECT_EQ(nvcc.exit_code, 0) << ct::describe(nvcc);
  EXPECT_NE(nvcc.out.find("Cuda compilation tools"), std::string::npos) << nvcc.out;

  // stack-b differs from stack-a in its labels and SBOM only: its build reuses every step of the
  // CUDA and cuDNN stages and the runtime stage's up to the SBOM's copy
  const std::string& second = logs["stack-b-amd64"];
  auto steps = build_steps(second);
  auto sbom_step =
      std::find_if(steps.begin(), steps.end(), [](const BuildStep& s) { return s.instruction.rfind("COPY sbom.spdx.json", 0) == 0; });
  ASSERT_NE(sbom_step, steps.end()) << second;
  std::size_t cached = 0;
  bool in_stage = false;
  for (auto s = steps.begin(); s != sbom_step; ++s) {
    if (s->instruction.rfind("FROM ", 0) == 0) in_stage = true;
    if (s->instruction.rfind("FROM ", 0) == 0 || !in_stage) continue;  // no layer, no cache to report
    EXPECT_TRUE(s->cached) << "stack-b rebuilt a step it shares with stack-a: " << s->instruction;
    cached += s->cached;
  }
  EXPECT_GE(cached, 8u) << second;
}

namespace {

// A stand-in wheel of `name` `version` (pure Python: the package says its version), as PyTorch's
// index would serve its wheels; these machines cannot reach that index.
std::string stand_in_wheel(const testing_support::ScratchDir& dir, const std::string& name, const std::string& version) {
  const std::string info = name + "-" + version + ".dist-info/";
  std::vector<fixtures::Entry> e = {
      {name + "/__init__.py", fixtures::Kind::file, "__version__ = \"" + version + "\"\n"},
      {info + "METADATA", fixtures::Kind::file, "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n"},
      {info + "WHEEL", fixtures::Kind::file, "Wheel-Version: 1.0\nGenerator: stackpin-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
      {info + "RECORD", fixtures::Kind::file,
       name + "/__init__.py,,\n" + info + "METADATA,,\n" + info + "WHEEL,,\n" + info + "RECORD,,\n"}};
  fs::path out = dir.path() / (name + "-" + version + "-py3-none-any.whl");
  fixtures::write_archive(out, fixtures::Format::zip, e);
  return testing_support::read_text(out);
}

}  // namespace

// A framework pin changed, the image built again: every step of the CUDA and cuDNN stages and the
// Python environment's comes from the cache, and only the framework's install runs. The wheels
// come from a local index given as the generated PYTORCH_INDEX_URL build argument (a mirror, as
// a user behind a proxy gives it), serving stand-in torch wheels of two versions.
TEST_F(ContainerHermetic, AFrameworkPinChangeRebuildsOnlyTheFrameworkStep) {
  testing_support::HttpServer index;
  std::string page = "<!DOCTYPE html>\n<html><body>\n";
  for (const std::string v : {"2.9.0", "2.10.0"}) {
    std::string wheel = stand_in_wheel(scratch, "torch", v);
    std::string file = "torch-" + v + "-py3-none-any.whl";
    page += "<a href=\"/files/" + file + "#sha256=" + fixtures::info(scratch.path() / file).sha256 + "\">" + file + "</a>\n";
    index.serve("/files/" + file, wheel);
  }
  index.serve("/simple/torch/", page + "</body></html>\n");

  fs::path convtest = testing_support::binary().parent_path() / "stackpin-convtest";
  Images images;
  std::map<std::string, std::string> logs;
  std::map<std::string, double> seconds;
  for (const std::string v : {"2.9.0", "2.10.0"}) {
    fs::path m = manifest("stack-torch", "one framework pin changed");
    testing_support::write_file(m, testing_support::read_text(m) + "\n[frameworks]\ntorch = \"" + v + "\"\n");
    fs::path context = scratch.path() / ("context-" + v);
    auto gen = testing_support::stackpin({"generate", "dockerfile", m.string(), "--context", context.string(), "--archives",
                                          archives.string(), "--convtest", convtest.string()});
    ASSERT_EQ(gen.exit_code, 0) << gen.out << gen.err;
    std::string dockerfile = testing_support::read_text(context / "Dockerfile");
    ASSERT_NE(dockerfile.find("ARG PYTORCH_INDEX_URL=https://download.pytorch.org/whl/cu130\n"), std::string::npos) << dockerfile;
    std::string tag = "stackpin-test/torch-pin:" + v + "-" + std::to_string(::getpid());
    images.tags.push_back(tag);
    // the host's network, where the index listens on 127.0.0.1 (pip trusts a plain-HTTP index there)
    auto started = std::chrono::steady_clock::now();
    auto build = ct::docker({"build", "--network", "host", "--build-arg", std::string("BASE_IMAGE=") + ct::k_debian_image, "--build-arg",
                             "PYTORCH_INDEX_URL=" + index.url("/simple"), "--target", "runtime", "-t", tag, context.string()},
                            900);
    ASSERT_EQ(build.exit_code, 0) << v << "\n" << ct::describe(build);
    logs[v] = output_of(build);
    seconds[v] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ct::Options o;
    o.image = tag;
    auto version = ct::run(o, {"python", "-c", "import torch; print(torch.__version__)"});
    EXPECT_EQ(version.out, v + "\n") << ct::describe(version);
  }
  EXPECT_EQ(index.requests_for("/files/torch-2.10.0-py3-none-any.whl").size(), 1u);

  // the second build: everything before the framework's install from the cache, the install run
  auto steps = build_steps(logs["2.10.0"]);
  auto install =
      std::find_if(steps.begin(), steps.end(), [](const BuildStep& s) { return s.instruction.find("pip install") != std::string::npos; });
  ASSERT_NE(install, steps.end()) << logs["2.10.0"];
  EXPECT_FALSE(install->cached) << install->instruction;
  std::size_t cached = 0, runs = 0;
  bool in_stage = false;
  for (auto s = steps.begin(); s != install; ++s) {
    // FROM, and an ARG before the first FROM, make no layer: the builder reports no cache for them
    if (s->instruction.rfind("FROM ", 0) == 0) in_stage = true;
    if (s->instruction.rfind("FROM ", 0) == 0 || !in_stage) continue;
    EXPECT_TRUE(s->cached) << "rebuilt although the pin change does not touch it: " << s->instruction;
    cached += s->cached;
  }
  for (const auto& s : steps) runs += s.instruction.rfind("RUN ", 0) == 0 && !s.cached;
  EXPECT_EQ(runs, 1u) << "only the framework's install runs again\n" << logs["2.10.0"];
  EXPECT_GE(cached, 8u) << logs["2.10.0"];
  std::printf("torch 2.9.0 -> 2.10.0: %zu steps from the cache, %zu RUN step run again (the install); builds took %.1f s and %.1f s\n",
              cached, runs, seconds["2.9.0"], seconds["2.10.0"]);
}

// An image from a stack with a Python lock installs the lock's wheels for its platform and nothing
// else: `generate dockerfile --locked` writes each wheel's URL and SHA-256 into the image's pip
// step (--require-hashes --no-deps --no-index), the build fetches them from the index on
// 127.0.0.1, and the image holds exactly the locked versions, torch's Linux-only NVIDIA wheels
// included.
TEST_F(ContainerHermetic, AnImageInstallsExactlyTheWheelsOfThePythonLock) {
  if (auto why = testing_support::python_tools_missing(); !why.empty()) GTEST_SKIP() << why;
  testing_support::HttpServer index;
  const fs::path wheel_dir = scratch.path() / "wheels";
  std::vector<fs::path> wheels;
  for (const auto& w :
       std::vector<fixtures::WheelSpec>{{"torch",
                                         "2.9.0+cu130",
                                         "py3-none-manylinux_2_28_x86_64",
                                         {"nvidia-cudnn-cu13==9.13.0.50; sys_platform == \"linux\"", "filelock"},
                                         {{"torch/__init__.py", fixtures::Kind::file, "__version__ = '2.9.0+cu130'\n"}}},
                                        {"nvidia-cudnn-cu13",
                                         "9.13.0.50",
                                         "py3-none-manylinux_2_27_x86_64",
                                         {},
                                         {{"nvidia/cudnn/lib/libcudnn.so.9", fixtures::Kind::file, "x"}}},
                                        {"filelock", "3.20.0", "py3-none-any", {}, {{"filelock/__init__.py", fixtures::Kind::file, ""}}},
                                        {"filelock", "3.99.0", "py3-none-any", {}, {{"filelock/__init__.py", fixtures::Kind::file, ""}}}})
    wheels.push_back(fixtures::make_wheel(wheel_dir, w).path);
  testing_support::serve_wheel_index(index, wheels);
  fs::path m = manifest("stack-pylock", "frameworks from the Python lock");
  testing_support::write_file(m, testing_support::read_text(m) +
                                     "\n[frameworks]\ntorch = \"2.9.0\"\n\n[python]\nversion = \"3.11\"\nindex = \"" +
                                     index.url("/simple") + "\"\n");
  auto lock = testing_support::stackpin({"lock", m.string()});
  ASSERT_EQ(lock.exit_code, 0) << lock.out << lock.err;
  // the index serves two filelock releases: the image gets the one the lock chose (the newest, 3.99.0)
  fs::path convtest = testing_support::binary().parent_path() / "stackpin-convtest";
  fs::path context = scratch.path() / "context-pylock";
  auto gen = testing_support::stackpin({"generate", "dockerfile", m.string(), "--locked", "--context", context.string(), "--archives",
                                        archives.string(), "--convtest", convtest.string()});
  ASSERT_EQ(gen.exit_code, 0) << gen.out << gen.err;
  std::string dockerfile = testing_support::read_text(context / "Dockerfile");
  EXPECT_NE(dockerfile.find("--require-hashes --no-deps --no-index"), std::string::npos) << dockerfile;
  EXPECT_NE(dockerfile.find("nvidia-cudnn-cu13 @ " + index.url("/files/")), std::string::npos) << dockerfile;
  EXPECT_NE(dockerfile.find("--hash=sha256:" + fixtures::info(wheels[0]).sha256), std::string::npos) << dockerfile;
  std::string tag = "stackpin-test/pylock:" + std::to_string(::getpid());
  Images images;
  images.tags.push_back(tag);
  auto build = ct::docker({"build", "--network", "host", "--build-arg", std::string("BASE_IMAGE=") + ct::k_debian_image, "--target",
                           "runtime", "-t", tag, context.string()},
                          900);
  ASSERT_EQ(build.exit_code, 0) << ct::describe(build);
  ct::Options o;
  o.image = tag;
  auto listed = ct::run(o, {"python", "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"});
  EXPECT_EQ(listed.exit_code, 0) << ct::describe(listed);
  for (const char* want : {"torch==2.9.0+cu130", "nvidia-cudnn-cu13==9.13.0.50", "filelock==3.99.0"})
    EXPECT_NE(listed.out.find(want), std::string::npos) << want << "\n" << listed.out;
  EXPECT_EQ(listed.out.find("3.20.0"), std::string::npos) << listed.out;

  // the image's SBOM lists each wheel with its URL and SHA-256
  auto sbom = json::parse(testing_support::read_text(context / "sbom.spdx.json"));
  bool listed_torch = false;
  for (const auto& p : sbom["packages"])
    if (p["name"] == "torch") {
      listed_torch = true;
      EXPECT_EQ(p["versionInfo"], "2.9.0+cu130") << p.dump(1);
      EXPECT_NE(p["downloadLocation"].get<std::string>().find(index.url("/files/torch-2.9.0")), std::string::npos) << p.dump(1);
      EXPECT_NE(p.dump().find(fixtures::info(wheels[0]).sha256), std::string::npos) << p.dump(1);
    }
  EXPECT_TRUE(listed_torch) << sbom.dump(1);

  // a bake matrix of the same stack installs the same wheels
  const fs::path matrix = scratch.path() / "matrix-pylock";
  fs::create_directories(matrix);
  auto bake = testing_support::stackpin({"generate", "bake", m.string(), "--locked", "-o", (matrix / "docker-bake.json").string(),
                                         "--archives", archives.string(), "--platform", "linux-x86_64"});
  ASSERT_EQ(bake.exit_code, 0) << bake.out << bake.err;
  bool found = false;
  for (const auto& e : fs::recursive_directory_iterator(matrix))
    if (e.path().filename() == "Dockerfile") {
      found = true;
      std::string text = testing_support::read_text(e.path());
      EXPECT_NE(text.find("--hash=sha256:" + fixtures::info(wheels[0]).sha256), std::string::npos) << text;
    }
  EXPECT_TRUE(found);
}

// An image whose archives the build downloads (--from-url) from a machine that does not have
// them: its SBOM is written by the build (stage sbom) from the files the runtime stage receives,
// and is the document stackpin writes itself when the archives are at hand, byte for byte. The
// archives are served by a local HTTP server standing in for NVIDIA's (the engine's ADD fetches
// them).
TEST_F(ContainerHermetic, AnImageDownloadingItsArchivesWritesTheSameSbomInItsBuild) {
  testing_support::HttpServer mirror;
  fs::path m = manifest("stack-url", "archives downloaded by the build");
  std::string text = testing_support::read_text(m);
  for (auto at = text.find("file = \""); at != std::string::npos; at = text.find("file = \"", at)) {
    std::string name = text.substr(at + 8, text.find('"', at + 8) - at - 8);
    mirror.serve("/redist/" + name, testing_support::read_text(archives / name));
    std::string url = "url = \"" + mirror.url("/redist/" + name) + "\"\n";
    text.insert(at, url);
    at += url.size() + 8;
  }
  testing_support::write_file(m, text);
  const std::vector<std::string> epoch = {"SOURCE_DATE_EPOCH=1767225600"};
  const std::string convtest = (testing_support::binary().parent_path() / "stackpin-convtest").string();
  fs::path here = scratch.path() / "with-archives", there = scratch.path() / "without";
  auto local = testing_support::stackpin({"generate", "dockerfile", m.string(), "--context", here.string(), "--from-url", "--archives",
                                          archives.string(), "--convtest", convtest},
                                         epoch);
  ASSERT_EQ(local.exit_code, 0) << local.out << local.err;
  auto gen = testing_support::stackpin({"generate", "dockerfile", m.string(), "--context", there.string(), "--from-url", "--cache-dir",
                                        (scratch.path() / "empty-cache").string(), "--convtest", convtest},
                                       epoch);
  ASSERT_EQ(gen.exit_code, 0) << gen.out << gen.err;
  ASSERT_TRUE(fs::exists(there / "stackpin" / "spdx-plan.tsv")) << gen.err;
  ASSERT_FALSE(fs::exists(there / "archives"));

  Images images;
  const std::string tag = "stackpin-test/from-url:" + std::to_string(::getpid());
  images.tags = {tag};
  auto build = ct::docker({"build", "--target", "runtime", "-t", tag, there.string()}, 900);
  ASSERT_EQ(build.exit_code, 0) << ct::describe(build);
  EXPECT_EQ(mirror.requests_for("/redist/" + cudnn.path.filename().string()).size(), 1u);
  ct::Options o;
  o.image = tag;
  auto sbom = ct::run(o, {"cat", "/usr/share/doc/stackpin/sbom.spdx.json"});
  ASSERT_EQ(sbom.exit_code, 0) << ct::describe(sbom);
  EXPECT_EQ(sbom.out, testing_support::read_text(here / "sbom.spdx.json"))
      << "the build's document differs from the one stackpin writes from the archives";
  auto doc = json::parse(sbom.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << sbom.out.substr(0, 400);
  EXPECT_EQ(doc["packages"].size(), components.size() + 1);
  EXPECT_GE(doc["files"].size(), 8u);
  fs::path sbom_file = scratch.path() / "built-sbom.json";
  testing_support::write_file(sbom_file, sbom.out);
  std::string skip;
  auto schema = testing_support::schema_errors("spdx-2.3.json", sbom_file, skip);
  if (skip.empty()) {
    EXPECT_EQ(schema, "");
  }
  auto inspect = ct::docker({"image", "inspect", "--format", "{{json .Config.Labels}}", tag}, 60);
  EXPECT_EQ(json::parse(inspect.out)["io.stackpin.sbom"], "/usr/share/doc/stackpin/sbom.spdx.json") << inspect.out;
  std::printf("the build wrote the SBOM of %zu files, %zu packages, byte for byte stackpin's\n", doc["files"].size(),
              doc["packages"].size());
}

// An image whose archives come from the fleet's registry: `mirror push` puts the stack into the
// reference registry on 127.0.0.1, and the Dockerfile made with --from-registry downloads each
// archive by its digest (the engine's ADD, from the registry's blob API), checks it and builds,
// on a machine whose cache is empty.
TEST_F(ContainerHermetic, AnImageTakesItsArchivesFromARegistryMirror) {
  if (auto why = testing_support::registry_tools_missing(); !why.empty()) GTEST_SKIP() << why;
  testing_support::Registry registry(scratch.path() / "registry");
  fs::path m = manifest("stack-registry", "archives from the registry");
  const std::string repo = "oci+http://" + registry.host() + "/fleet/stack";
  const std::vector<std::string> env = {"STACKPIN_CACHE_DIR=" + (scratch.path() / "cache").string(), "no_proxy=127.0.0.1"};
  auto push = testing_support::stackpin({"mirror", "push", m.string(), repo, "--archives", archives.string()}, env);
  ASSERT_EQ(push.exit_code, 0) << push.out << push.err;
  fs::path there = scratch.path() / "context";
  const std::string convtest = (testing_support::binary().parent_path() / "stackpin-convtest").string();
  auto gen = testing_support::stackpin({"generate", "dockerfile", m.string(), "--context", there.string(), "--from-registry", repo,
                                        "--cache-dir", (scratch.path() / "empty-cache").string(), "--convtest", convtest},
                                       env);
  ASSERT_EQ(gen.exit_code, 0) << gen.out << gen.err;
  const std::string dockerfile = testing_support::read_text(there / "Dockerfile");
  EXPECT_NE(dockerfile.find("ADD http://" + registry.host() + "/v2/fleet/stack/blobs/sha256:" + cudnn.sha256), std::string::npos)
      << dockerfile;
  ASSERT_FALSE(fs::exists(there / "archives"));
  Images images;
  const std::string tag = "stackpin-test/from-registry:" + std::to_string(::getpid());
  images.tags = {tag};
  auto build = ct::docker({"build", "--target", "runtime", "-t", tag, there.string()}, 900);
  ASSERT_EQ(build.exit_code, 0) << ct::describe(build);
  ct::Options o;
  o.image = tag;
  auto ldcache = ct::run(o, {"sh", "-c", "ldconfig -p | grep 'libcudnn.so.9 ' && test -f /usr/local/cuda/version.json"});
  EXPECT_NE(ldcache.out.find("/opt/cudnn-" + k_version + "/lib64/libcudnn.so.9"), std::string::npos) << ct::describe(ldcache);
}

// An archive swapped in the context after stackpin verified it (same size, one byte changed)
// fails the build at the check, before anything is unpacked.
TEST_F(ContainerHermetic, ASwappedComponentArchiveFailsTheBuildBeforeUnpacking) {
  auto m = manifest("stack-swapped", "swapped archive");
  fs::path context = scratch.path() / "context";
  auto gen =
      testing_support::stackpin({"generate", "dockerfile", m.string(), "--context", context.string(), "--archives", archives.string(),
                                 "--convtest", (testing_support::binary().parent_path() / "stackpin-convtest").string()});
  ASSERT_EQ(gen.exit_code, 0) << gen.out << gen.err;
  const auto& cudart = *std::find_if(components.begin(), components.end(), [](const auto& c) { return c.first == "cuda_cudart"; });
  fs::path in_context = context / "archives" / cudart.second.path.filename();
  fs::remove(in_context);
  fixtures::corrupt_copy(cudart.second.path, in_context, cudart.second.size / 2);
  Images images;
  const std::string tag = "stackpin-test/swapped:" + std::to_string(::getpid());
  images.tags = {tag};
  auto build = ct::docker({"build", "--target", "runtime", "-t", tag, context.string()}, 900);
  EXPECT_NE(build.exit_code, 0) << ct::describe(build);
  std::string log = output_of(build);
  // sha256sum -c names the file; `set -eu` stops the step there, before the first tar
  EXPECT_NE(log.find(cudart.second.path.filename().string() + ": FAILED"), std::string::npos) << log;
}

// ---- the Dev Containers CLI --------------------------------------------------------------------

// The generated .devcontainer/ read and built by the Dev Containers CLI itself (@devcontainers/cli,
// which scripts/test.sh installs from npm and names in STACKPIN_DEVCONTAINER_CLI): its reading of
// devcontainer.json keeps the target, the base image argument and the GPU request, and its build,
// on the local CUDA runtime image (nothing pulled), gives an image whose loader finds the pinned
// cuDNN.
TEST(ContainerDevcontainer, TheDevContainersCliReadsAndBuildsIt) {
  SP_SKIP_WITHOUT_CONTAINERS(ct::k_cuda_runtime_image);
  const char* cli = std::getenv("STACKPIN_DEVCONTAINER_CLI");
  if (!cli || !fs::exists(cli)) GTEST_SKIP() << "no Dev Containers CLI (scripts/test.sh installs @devcontainers/cli from npm)";
  std::string node = testing_support::tool_path("node");
  if (node.empty()) GTEST_SKIP() << "no node on PATH to run the Dev Containers CLI";
  testing_support::ScratchDir dir;
  fs::path archives = dir.path() / "archives", repo = dir.path() / "repo";
  fs::create_directories(archives);
  fs::create_directories(repo);
  auto archive = make_archive(archives);
  std::string text = manifest_for(archive, "devcontainer-build", "");
  text.replace(text.find("nvidia/cuda:13.0.2-runtime-ubuntu24.04"), 38, ct::k_cuda_runtime_image);
  auto manifest = dir.write("stack.toml", text);
  auto gen = testing_support::stackpin(
      {"generate", "devcontainer", manifest.string(), "--out-dir", repo.string(), "--archives", archives.string()});
  ASSERT_EQ(gen.exit_code, 0) << gen.out << gen.err;
  EXPECT_FALSE(fs::exists(repo / ".devcontainer/stackpin")) << "no conv test in a dev container's context";

  const std::vector<std::string> env = {"PATH=" + fs::path(node).parent_path().string() + ":/usr/bin:/bin"};
  auto read = testing_support::run_process({node, cli, "read-configuration", "--workspace-folder", repo.string()}, env);
  ASSERT_EQ(read.exit_code, 0) << read.out << read.err;
  auto config = json::parse(read.out.substr(read.out.rfind("\n{") == std::string::npos ? 0 : read.out.rfind("\n{") + 1), nullptr, false);
  ASSERT_FALSE(config.is_discarded()) << read.out;
  const auto& c = config["configuration"];
  EXPECT_EQ(c["build"]["target"], "runtime") << c.dump(1);
  EXPECT_EQ(c["build"]["args"]["BASE_IMAGE"], ct::k_cuda_runtime_image) << c.dump(1);
  EXPECT_EQ(c["hostRequirements"]["gpu"], true) << c.dump(1);
  EXPECT_EQ(c["runArgs"], json::array({"--gpus", "all"})) << c.dump(1);

  Images images;
  const std::string tag = "stackpin-test/devcontainer:" + std::to_string(::getpid());
  images.tags = {tag};
  auto build = testing_support::run_process(
      {node, cli, "build", "--workspace-folder", repo.string(), "--docker-path", ct::docker_binary(), "--image-name", tag}, env, {});
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  EXPECT_NE(build.out.find("\"outcome\":\"success\""), std::string::npos) << build.out;
  ct::Options o;
  o.image = tag;
  auto ldcache = ct::run(o, {"sh", "-c", "ldconfig -p | grep 'libcudnn.so.9 '"});
  EXPECT_NE(ldcache.out.find("/opt/cudnn-" + k_version + "/lib64/libcudnn.so.9"), std::string::npos) << ct::describe(ldcache);
}

}  // namespace dockerfile_build_test
