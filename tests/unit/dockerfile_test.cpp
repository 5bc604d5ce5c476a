// generate dockerfile: golden output for the archive mode with a framework (an example manifest),
// the apt mode with a digest-pinned base, and values that must stay literal in labels; the
// decisions (base image, bundled cuDNN) and the refusals.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "core/package/docker.hpp"
#include "format/manifest_reader.hpp"
#include "gen/dockerfile.hpp"
#include "golden.hpp"
#include "test_support.hpp"

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
  auto r = render(fs::path(STACKPIN_SOURCE_DIR) / "manifests/cu124-cudnn91-torch25-docker.toml");
  expect_golden(r.text, "cu124-cudnn91-torch25.Dockerfile");
  expect_golden(gen::render_dockerignore(r.plan.spec), "cu124-cudnn91-torch25.dockerignore");
  // the decisions behind it
  EXPECT_EQ(r.plan.spec.base_image, "nvidia/cuda:12.4.1-runtime-ubuntu22.04");
  ASSERT_EQ(r.plan.spec.frameworks.size(), 1u);
  EXPECT_EQ(r.plan.spec.frameworks[0].index_url, "https://download.pytorch.org/whl/cu124");
  EXPECT_NE(r.plan.spec.frameworks[0].cudnn_note.find("same build as the pinned cuDNN"), std::string::npos);
  EXPECT_NE(r.text.find("sha256sum -c -"), std::string::npos);
  EXPECT_EQ(r.text.find("_static.a"), std::string::npos);
  EXPECT_EQ(r.text.find("ADD --checksum"), std::string::npos) << "Debian's engine has no ADD --checksum";
  EXPECT_EQ(r.text.find("# syntax="), std::string::npos) << "no remote frontend";
}

TEST(Dockerfile, SameManifestGivesSameBytes) {
  // Two processes with a different clock zone, locale and home: nothing of the run leaks in.
  std::string manifest = (fs::path(STACKPIN_SOURCE_DIR) / "manifests/cu124-cudnn91-torch25-docker.toml").string();
  auto a = testing_support::stackpin({"generate", "dockerfile", manifest}, {"TZ=UTC", "LC_ALL=C"});
  auto b = testing_support::stackpin({"generate", "dockerfile", manifest}, {"TZ=Asia/Shanghai", "LC_ALL=C.UTF-8", "HOME=/nonexistent"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_FALSE(a.out.empty());
  EXPECT_EQ(a.out, b.out);
}

TEST(Dockerfile, AptModeWithDigestPinnedBaseMatchesGolden) {
  auto r = render(fs::path(STACKPIN_SOURCE_DIR) / "tests/data/docker/apt-digest.toml");
  expect_golden(r.text, "apt-digest.Dockerfile");
  // NVIDIA's own pin for 12.2.2 images (knowledge base), the runtime tag of the same CUDA release.
  EXPECT_EQ(r.plan.spec.apt_package, "libcudnn8=8.9.6.50-1+cuda12.2");
  EXPECT_EQ(r.plan.spec.base_image,
            "nvidia/cuda:12.2.2-runtime-ubuntu22.04@sha256:0000000000000000000000000000000000000000000000000000000000000001");
  EXPECT_NE(r.text.find("apt-mark hold libcudnn8"), std::string::npos);
  EXPECT_EQ(r.text.find("FROM ${BASE_IMAGE} AS cudnn"), std::string::npos);
}

TEST(Dockerfile, HostileDescriptionStaysInsideItsLabel) {
  core::DockerOptions o;
  o.from_url = true;
  auto r = render(fs::path(STACKPIN_SOURCE_DIR) / "tests/data/docker/hostile.toml", o);
  expect_golden(r.text, "hostile.Dockerfile");
  EXPECT_NE(
      r.text.find("org.opencontainers.image.description=\"team \\\"gpu\\\" \\$HOME `id` C:\\\\Program Files\\\\x caf\u00e9 RUN rm -rf /\""),
      std::string::npos)
      << r.text;
  EXPECT_EQ(r.text.find("\nRUN rm -rf /"), std::string::npos);
  EXPECT_NE(r.text.find("ADD https://mirror.example/cudnn/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz "), std::string::npos);
}

TEST(Dockerfile, RefusesWhatItCannotBuild) {
  auto m = format::load_manifest((fs::path(STACKPIN_SOURCE_DIR) / "manifests/cu130-cudnn913.toml").string());
  ASSERT_TRUE(m);
  core::DockerOptions o;
  auto plan = core::plan_dockerfile(*m, kb(), o);
  ASSERT_FALSE(m->docker && m->docker->base_image) << "the manifest this case needs names no base image of its own";
  ASSERT_FALSE(plan) << "no NVIDIA image is known for CUDA 13 in the knowledge base";
  EXPECT_EQ(plan.error().code, util::ErrorCode::invalid);
  EXPECT_NE(plan.error().message.find("no NVIDIA CUDA image is known"), std::string::npos);
  ASSERT_FALSE(plan.error().hints.empty());
  EXPECT_NE(plan.error().hints[0].find("base_image"), std::string::npos);
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
  EXPECT_NE(bad.error().message.find("cannot be written into a Dockerfile"), std::string::npos);
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
  std::string text = testing_support::read_text(fs::path(STACKPIN_SOURCE_DIR) / "manifests/cu124-cudnn91-torch25-docker.toml");
  auto plain = render(fs::path(STACKPIN_SOURCE_DIR) / "manifests/cu124-cudnn91-torch25-docker.toml");
  EXPECT_EQ(plain.text.find("io.stackpin.gpu.arch"), std::string::npos);
  auto p = d.write("gpus.toml", text + "\n[gpus]\narch = [\"8.0\", \"9.0\"]\nmodels = [\"RTX 4090\"]\n");
  auto r = render(p);
  EXPECT_NE(r.text.find("io.stackpin.gpu.arch=\"8.9,8.0,9.0\" \\\n"), std::string::npos) << r.text;
}
