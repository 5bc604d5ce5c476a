// generate dockerfile: golden output for the archive mode with a framework (an example manifest),
// the apt mode with a digest-pinned base, and values that must stay literal in labels; the
// decisions (base image, bundled cuDNN) and the refusals.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/archives/lock.hpp"
#include "core/package/docker.hpp"
#include "format/manifest_reader.hpp"
#include "gen/bake.hpp"
#include "gen/dockerfile.hpp"
#include "golden.hpp"
#include "test_support.hpp"

namespace dockerfile_test {

namespace fs = std::filesystem;

namespace {

const knowledge::KnowledgeBase& kb() { return knowledge::KnowledgeBase::embedded(); }

struct Rendered {
  core::DockerPlan plan;
  std::string text;
};

Rendered render(const fs::path& manifest, core::DockerOptions o = {}) {
  auto m = format::load_manifest(manifest.string());
  EXPECT_TRUE(m) << (m ? "" : m.error().message);
  o.manifest_file = manifest.filename().string();
  o.manifest_sha256 = std::string(64, '0');
  auto plan = core::plan_dockerfile(*m, kb(), o);
  EXPECT_TRUE(plan) << (plan ? "" : plan.error().message);
  auto text = gen::render_dockerfile(plan->spec);
  EXPECT_TRUE(text) << (text ? "" : text.error().message);
  return {*plan, *text};
}

void expect_golden(const std::string& text, const std::string& name) { testing_support::expect_golden(text, "docker/" + name); }

}  // namespace

TEST(Dockerfile, ArchiveModeWithTorchMatchesGolden) {
  auto r = render(testing_support::source_dir() / "manifests/cu124-cudnn91-torch25-docker.toml");
  expect_golden(r.text, "cu124-cudnn91-torch25.Dockerfile");
  expect_golden(gen::render_dockerignore(r.plan.spec), "cu124-cudnn91-torch25.dockerignore");
  // the decisions behind it
  EXPECT_EQ(r.plan.spec.base_image, "nvidia/cuda:12.4.1-runtime-ubuntu22.04");
  ASSERT_EQ(r.plan.spec.frameworks.size(), 1u);
  EXPECT_EQ(r.plan.spec.frameworks[0].index_url, "https://download.pytorch.org/whl/cu124");
  EXPECT_NE(r.plan.spec.frameworks[0].cudnn_note.find("same build as the pinned cuDNN"), std::string::npos)
      << r.plan.spec.frameworks[0].cudnn_note;
  EXPECT_NE(r.text.find("sha256sum -c -"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("_static.a"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("ADD --checksum"), std::string::npos) << "Debian's engine has no ADD --checksum";
  EXPECT_EQ(r.text.find("# syntax="), std::string::npos) << "no remote frontend";
}

// cuda = "archive": NVIDIA's archives of every [cuda] component (here the torch set of CUDA
// 12.4.1, from stackpin's copy of NVIDIA's redistrib_12.4.1.json) on a plain Debian base.
Rendered render_hermetic(const fs::path& manifest, core::DockerOptions o = {}) {
  auto m = format::load_manifest(manifest.string());
  EXPECT_TRUE(m) << (m ? "" : m.error().message);
  auto resolved = core::resolve_archives(*m, kb());
  o.manifest_file = manifest.filename().string();
  o.manifest_sha256 = std::string(64, '0');
  auto plan = core::plan_dockerfile(resolved, kb(), o);
  EXPECT_TRUE(plan) << (plan ? "" : plan.error().message);
  if (!plan) return {};
  auto text = gen::render_dockerfile(plan->spec);
  EXPECT_TRUE(text) << (text ? "" : text.error().message);
  return {*plan, text ? *text : ""};
}

TEST(Dockerfile, HermeticImageFromTheComponentArchivesMatchesGolden) {
  const fs::path manifest = testing_support::source_dir() / "manifests/cu124-cudnn91-torch25-hermetic.toml";
  auto r = render_hermetic(manifest);
  expect_golden(r.text, "cu124-cudnn91-torch25-hermetic.Dockerfile");
  expect_golden(gen::render_dockerignore(r.plan.spec), "cu124-cudnn91-torch25-hermetic.dockerignore");
  const auto& s = r.plan.spec;
  ASSERT_TRUE(s.hermetic);
  EXPECT_EQ(s.base_image, "debian:bookworm-slim");
  EXPECT_EQ(s.cuda_prefix, "/usr/local/cuda-12.4");
  EXPECT_EQ(s.require_cuda, "cuda>=12.4,driver>=550.54.15");
  // the torch set of CUDA 12 (cuFile, optional, is shipped for linux-x86_64 in 12.4.1), each with
  // NVIDIA's SHA-256 and size
  ASSERT_EQ(s.cuda_archives.size(), 11u);
  for (const auto& a : s.cuda_archives) {
    EXPECT_EQ(a.sha256.size(), 64u) << a.component;
    EXPECT_GT(a.size, 0u) << a.component;
    EXPECT_NE(r.text.find("io.stackpin.cuda.archive." + a.component + ".sha256=\"" + a.sha256 + "\""), std::string::npos) << a.component;
    EXPECT_NE(r.text.find(a.sha256 + " " + a.file), std::string::npos) << "checked by sha256sum -c: " << a.component;
  }
  // every size and hash check comes before the first tar
  EXPECT_LT(r.text.find("sha256sum -c"), r.text.find("tar -xJf")) << r.text;
  // the run-time stage carries no compiler, header or static library of the toolkit
  auto runtime = r.text.substr(r.text.find("AS runtime"), r.text.find("AS devel") - r.text.find("AS runtime"));
  EXPECT_NE(runtime.find("COPY --from=cuda /opt/stackpin/runtime/ /"), std::string::npos) << runtime;
  EXPECT_EQ(runtime.find("/opt/stackpin/devel"), std::string::npos) << runtime;
  EXPECT_NE(r.text.find("FROM runtime AS devel\nCOPY --from=cuda /opt/stackpin/devel/ /"), std::string::npos) << r.text;
}

TEST(Dockerfile, HermeticImageDownloadsFromNvidiaWithFromUrl) {
  core::DockerOptions o;
  o.from_url = true;
  auto r = render_hermetic(testing_support::source_dir() / "manifests/cu124-cudnn91-torch25-hermetic.toml", o);
  for (const auto& a : r.plan.spec.cuda_archives) {
    EXPECT_EQ(a.url.rfind("https://developer.download.nvidia.com/compute/cuda/redist/" + a.component + "/linux-x86_64/", 0), 0u) << a.url;
    EXPECT_NE(r.text.find("ADD " + a.url + " /tmp/stackpin/" + a.file + "\n"), std::string::npos) << a.component;
  }
  EXPECT_EQ(r.text.find("COPY archives/"), std::string::npos) << r.text;
  EXPECT_EQ(gen::render_dockerignore(r.plan.spec).find("archives/"), std::string::npos) << gen::render_dockerignore(r.plan.spec);
}

// Changing a framework pin changes nothing in the Dockerfile before the framework layer, so that
// Docker reuses every CUDA and cuDNN layer (the container test shows the build doing so).
TEST(Dockerfile, AFrameworkPinChangesOnlyTheFrameworkLayerAndLater) {
  testing_support::ScratchDir d;
  std::string text = testing_support::read_text(testing_support::source_dir() / "manifests/cu124-cudnn91-torch25-hermetic.toml");
  auto a = render_hermetic(d.write("a.toml", text));
  std::string changed = text;
  changed.replace(changed.find("torch = \"2.5.1\""), 15, "torch = \"2.5.0\"");
  auto b = render_hermetic(d.write("a.toml", changed));
  ASSERT_NE(a.text, b.text);
  // from the first line that differs on, everything belongs to the framework layer or later
  std::size_t i = 0;
  while (i < a.text.size() && i < b.text.size() && a.text[i] == b.text[i]) ++i;
  std::string before = a.text.substr(0, i);
  // the manifest's own hash appears in the header comment only; comments do not enter the cache key
  EXPECT_NE(before.find("COPY --from=cudnn"), std::string::npos) << a.text.substr(i, 200);
  EXPECT_NE(before.find("RUN echo /opt/cudnn-9.1.0.70/lib64"), std::string::npos) << before;
  EXPECT_NE(before.find("NVIDIA_REQUIRE_CUDA"), std::string::npos) << before;
}

TEST(Dockerfile, HermeticRefusals) {
  testing_support::ScratchDir d;
  std::string text = testing_support::read_text(testing_support::source_dir() / "manifests/cu124-cudnn91-torch25-hermetic.toml");
  std::string none = text;
  none.erase(none.find("components = [\"torch\"]\n"), 23);
  auto m = format::load_manifest(d.write("none.toml", none).string());
  ASSERT_TRUE(m) << m.error().message;
  auto plan = core::plan_dockerfile(core::resolve_archives(*m, kb()), kb(), {});
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("lists none"), std::string::npos) << plan.error().message;
  ASSERT_TRUE(plan.error().where);
  EXPECT_NE(plan.error().where->excerpt.find("cuda = \"archive\""), std::string::npos) << plan.error().where->excerpt;
  // apt needs NVIDIA's repository, which a plain base does not have: refused when the manifest is read
  std::string apt = text;
  apt.replace(apt.find("cudnn = \"archive\""), 17, "cudnn = \"apt\"");
  auto bad = format::load_manifest(d.write("apt.toml", apt).string());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("cudnn = \"apt\""), std::string::npos) << bad.error().message;
}

TEST(Dockerfile, SameManifestGivesSameBytes) {
  // Two processes with a different clock zone, locale and home: nothing of the run leaks in.
  std::string manifest = (testing_support::source_dir() / "manifests/cu124-cudnn91-torch25-docker.toml").string();
  auto a = testing_support::stackpin({"generate", "dockerfile", manifest}, {"TZ=UTC", "LC_ALL=C"});
  auto b = testing_support::stackpin({"generate", "dockerfile", manifest}, {"TZ=Asia/Shanghai", "LC_ALL=C.UTF-8", "HOME=/nonexistent"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_FALSE(a.out.empty());
  EXPECT_EQ(a.out, b.out);
}

TEST(Dockerfile, AptModeWithDigestPinnedBaseMatchesGolden) {
  auto r = render(testing_support::source_dir() / "tests/data/docker/apt-digest.toml");
  expect_golden(r.text, "apt-digest.Dockerfile");
  // NVIDIA's own pin for 12.2.2 images (knowledge base), the runtime tag of the same CUDA release.
  EXPECT_EQ(r.plan.spec.apt_package, "libcudnn8=8.9.6.50-1+cuda12.2");
  EXPECT_EQ(r.plan.spec.base_image,
            "nvidia/cuda:12.2.2-runtime-ubuntu22.04@sha256:0000000000000000000000000000000000000000000000000000000000000001");
  EXPECT_NE(r.text.find("apt-mark hold libcudnn8"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("FROM ${BASE_IMAGE} AS cudnn"), std::string::npos) << r.text;
}

TEST(Dockerfile, HostileDescriptionStaysInsideItsLabel) {
  core::DockerOptions o;
  o.from_url = true;
  auto r = render(testing_support::source_dir() / "tests/data/docker/hostile.toml", o);
  expect_golden(r.text, "hostile.Dockerfile");
  EXPECT_NE(
      r.text.find("org.opencontainers.image.description=\"team \\\"gpu\\\" \\$HOME `id` C:\\\\Program Files\\\\x caf\u00e9 RUN rm -rf /\""),
      std::string::npos)
      << r.text;
  EXPECT_EQ(r.text.find("\nRUN rm -rf /"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("ADD https://mirror.example/cudnn/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz "), std::string::npos)
      << r.text;
}

// Each wheel index is a build argument declared just before its pip step (a mirror or proxy given
// with --build-arg): PYTORCH_INDEX_URL for PyTorch's, PIP_INDEX_URL (which pip reads) for PyPI,
// WHEEL_INDEX_URL, _2, ... for others; the value is the index the manifest or lock names.
TEST(Dockerfile, EachWheelIndexIsABuildArgumentBeforeItsStep) {
  gen::DockerfileSpec spec;
  spec.base_image = "nvidia/cuda:12.4.1-runtime-ubuntu22.04";
  spec.prefix = "/opt/cudnn-9.1.0.70";
  spec.archive_file = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz";
  auto framework = [](const std::string& req, const std::string& index) {
    gen::DockerFramework f;
    f.name = req.substr(0, req.find('='));
    f.pip_requirement = req;
    f.index_url = index;
    return f;
  };
  spec.frameworks = {framework("torch==2.5.1", "https://download.pytorch.org/whl/cu124"), framework("tensorflow==2.16.1", ""),
                     framework("torchvision==0.20.1", "https://download.pytorch.org/whl/cu124"),
                     framework("a==1", "https://wheels.example/simple"), framework("b==2", "https://other.example/simple")};
  auto text = gen::render_dockerfile(spec);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_NE(text->find("ARG PYTORCH_INDEX_URL=https://download.pytorch.org/whl/cu124\n"
                       "RUN /opt/stackpin-venv/bin/pip install --no-cache-dir torch==2.5.1 torchvision==0.20.1 --index-url "
                       "\"${PYTORCH_INDEX_URL}\"\n"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("ARG PIP_INDEX_URL\nRUN /opt/stackpin-venv/bin/pip install --no-cache-dir tensorflow==2.16.1\n"), std::string::npos)
      << *text;
  EXPECT_NE(text->find("ARG WHEEL_INDEX_URL=https://wheels.example/simple\n"
                       "RUN /opt/stackpin-venv/bin/pip install --no-cache-dir a==1 --index-url \"${WHEEL_INDEX_URL}\"\n"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("ARG WHEEL_INDEX_URL_2=https://other.example/simple\n"
                       "RUN /opt/stackpin-venv/bin/pip install --no-cache-dir b==2 --index-url \"${WHEEL_INDEX_URL_2}\"\n"),
            std::string::npos)
      << *text;
  // an index that would not stay one word of the RUN line is refused
  spec.frameworks.push_back(framework("c==3", "https://x.example/simple;id"));
  EXPECT_FALSE(gen::render_dockerfile(spec));
}

TEST(Dockerfile, RefusesWhatItCannotBuild) {
  auto m = format::load_manifest((testing_support::source_dir() / "manifests/cu130-cudnn913.toml").string());
  ASSERT_TRUE(m);
  core::DockerOptions o;
  auto plan = core::plan_dockerfile(*m, kb(), o);
  ASSERT_FALSE(m->docker && m->docker->base_image) << "the manifest this case needs names no base image of its own";
  ASSERT_FALSE(plan) << "no NVIDIA image is known for CUDA 13 in the knowledge base";
  EXPECT_EQ(plan.error().code, util::ErrorCode::invalid);
  EXPECT_NE(plan.error().message.find("no NVIDIA CUDA image is known"), std::string::npos) << plan.error().message;
  ASSERT_FALSE(plan.error().hints.empty());
  EXPECT_NE(plan.error().hints[0].find("base_image"), std::string::npos) << plan.error().hints[0];
  o.platform = model::Platform::windows_x86_64;
  auto win = core::plan_dockerfile(*m, kb(), o);
  ASSERT_FALSE(win);
  EXPECT_EQ(win.error().code, util::ErrorCode::unsupported);

  gen::DockerfileSpec spec;
  spec.base_image = "nvidia/cuda:12.4.1 runtime";
  spec.prefix = "/opt/cudnn";
  spec.archive_file = "a.tar.xz";
  auto bad = gen::render_dockerfile(spec);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("cannot be written into a Dockerfile"), std::string::npos) << bad.error().message;
  // A file name with shell operators or globs would run or expand inside the RUN line.
  spec.base_image = "nvidia/cuda:12.4.1-runtime-ubuntu22.04";
  for (const char* name : {"cudnn.tar.xz;reboot", "a&b.tar.xz", "a|b", "c*.tar.xz", "x$(id)"}) {
    spec.archive_file = name;
    EXPECT_FALSE(gen::render_dockerfile(spec)) << name;
  }
  spec.archive_file = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz";
  spec.prefix = "/opt/cudnn-9.1.0.70";
  EXPECT_TRUE(gen::render_dockerfile(spec));
}

TEST(Dockerfile, TheImageIsLabelledWithTheGpuArchitecturesItWasCheckedAgainst) {
  testing_support::ScratchDir d;
  std::string text = testing_support::read_text(testing_support::source_dir() / "manifests/cu124-cudnn91-torch25-docker.toml");
  auto plain = render(testing_support::source_dir() / "manifests/cu124-cudnn91-torch25-docker.toml");
  EXPECT_EQ(plain.text.find("io.stackpin.gpu.arch"), std::string::npos) << plain.text;
  auto p = d.write("gpus.toml", text + "\n[gpus]\narch = [\"8.0\", \"9.0\"]\nmodels = [\"RTX 4090\"]\n");
  auto r = render(p);
  EXPECT_NE(r.text.find("io.stackpin.gpu.arch=\"8.9,8.0,9.0\" \\\n"), std::string::npos) << r.text;
}

// ---- bake ----------------------------------------------------------------------------------------

namespace {
gen::BakeImage bake_image() {
  gen::BakeImage i;
  i.name = "stack-amd64";
  i.context = "contexts/stack/linux-x86_64";
  i.platform = "linux/amd64";
  i.base_image = "debian:bookworm-slim@sha256:" + std::string(64, 'a');
  i.image = "ghcr.io/acme/stack";
  i.tag = "amd64";
  i.cache_ref = "ghcr.io/acme/stack:buildcache-amd64";
  return i;
}
}  // namespace

// A value that would change what bake or BuildKit reads (a quote ending a JSON string, a comma
// adding a key to a cache entry, an absolute or empty context) is refused, naming it.
TEST(Bake, RefusesValuesBakeWouldReadOtherwise) {
  ASSERT_TRUE(gen::render_bake({bake_image()}));
  auto with = [](auto change) {
    auto i = bake_image();
    change(i);
    return gen::render_bake({i});
  };
  for (auto r : {with([](gen::BakeImage& i) { i.cache_ref += ",mode=min"; }), with([](gen::BakeImage& i) { i.image += "\""; }),
                 with([](gen::BakeImage& i) { i.context = "/etc"; }), with([](gen::BakeImage& i) { i.name = "a b"; }),
                 with([](gen::BakeImage& i) { i.tag = ""; }), with([](gen::BakeImage& i) { i.base_image += "\n"; })}) {
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("cannot be written into a bake file"), std::string::npos) << r.error().message;
  }
  EXPECT_FALSE(gen::render_bake({}));
  auto two = gen::render_bake({bake_image(), bake_image()});
  ASSERT_FALSE(two);
  EXPECT_NE(two.error().message.find("\"stack-amd64\""), std::string::npos) << two.error().message;
}

// The test target reads the shared cache and does not write it; without a cache reference there
// are no cache entries at all.
TEST(Bake, CacheEntries) {
  auto i = bake_image();
  i.test = true;
  auto text = gen::render_bake({i});
  ASSERT_TRUE(text);
  auto doc = nlohmann::json::parse(*text);
  EXPECT_EQ(doc["target"]["stack-amd64"]["cache-to"][0], "type=registry,ref=ghcr.io/acme/stack:buildcache-amd64,mode=max");
  EXPECT_TRUE(doc["target"]["stack-amd64-test"].contains("cache-from"));
  EXPECT_FALSE(doc["target"]["stack-amd64-test"].contains("cache-to"));
  i.cache_ref.clear();
  doc = nlohmann::json::parse(*gen::render_bake({i}));
  EXPECT_FALSE(doc["target"]["stack-amd64"].contains("cache-from"));
  EXPECT_EQ(doc["group"]["test"]["targets"], nlohmann::json::array({"stack-amd64-test"}));
}

}  // namespace dockerfile_test
