// stackpin diff: every weight rule through two small manifests that differ in one place, the
// identical case, the findings' contract (rule, severity, seen = A, expected = B, where) and the
// --json report.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/diff/diff.hpp"
#include "format/json.hpp"
#include "format/manifest_reader.hpp"

namespace diff_test {

namespace {

using model::DiffWeight;

// Line numbers matter: tests point at them (cuda.version is line 5, cudnn.version line 10).
const std::string k_base = R"(schema = 1
name = "base"
description = "the base stack"
[cuda]
version = "12.1.1"
[driver]
linux = "530.30.02"
windows = "531.14"
[cudnn]
version = "8.9.5.30"
cuda = 12
[[cudnn.archives]]
platform = "linux-x86_64"
origin = "local"
file = "cudnn-local.tar.xz"
url = "https://mirror.example/cudnn-local.tar.xz"
sha256 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
size = 100
[frameworks]
torch = "2.1.0"
[python]
version = "3.10"
[targets.windows]
layout = "isolated"
prefix = 'C:\tools\cudnn\v8.9.5'
cuda_path = 'C:\CUDA\v12.1'
[targets.linux]
layout = "lib64"
prefix = "/opt/cudnn"
[targets.docker]
base_image = "nvidia/cuda:12.1.1-runtime-ubuntu22.04"
cudnn = "archive"
[targets.conda]
channels = ["conda-forge"]
cudnn = "8.9.7.29"
)";

// k_base with `from` replaced by `to` (exactly one occurrence).
std::string with(const std::string& from, const std::string& to, std::string text = k_base) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "not in the manifest: " << from;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "more than once in the manifest: " << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

model::Manifest parse(const std::string& text, const std::string& path) {
  auto m = format::parse_manifest(text, path);
  EXPECT_TRUE(m.ok()) << path << ": " << (m.ok() ? "" : m.error().message);
  return m.ok() ? std::move(m).value() : model::Manifest{};
}

model::DiffReport diff(const std::string& a, const std::string& b) {
  return core::diff_manifests(parse(a, "a.toml"), parse(b, "b.toml"), knowledge::KnowledgeBase::embedded());
}

const model::DiffRow* find_row(const model::DiffReport& r, const std::string& component) {
  for (const auto& row : r.rows)
    if (row.component == component) return &row;
  return nullptr;
}

std::string describe(const model::DiffReport& r) {
  std::string s;
  for (const auto& row : r.rows)
    if (row.weight != DiffWeight::same)
      s += "  " + row.component + " " + model::to_string(row.weight) + ": " + row.a.value_or("-") + " -> " + row.b.value_or("-") + "\n";
  return s;
}

// The weight of `component`, and that it is the only difference when `only` is set.
void expect_weight(const model::DiffReport& r, const std::string& component, DiffWeight w, bool only = true) {
  const auto* row = find_row(r, component);
  ASSERT_NE(row, nullptr) << component << " not compared:\n" << describe(r);
  EXPECT_EQ(row->weight, w) << component << ": " << model::to_string(row->weight) << " (" << row->reason << ")";
  if (only) {
    EXPECT_EQ(r.counts().differences(), w == DiffWeight::same ? 0 : 1) << describe(r);
  }
}

}  // namespace

TEST(Diff, IdenticalManifestsCompareEveryComponentAsSame) {
  auto r = diff(k_base, k_base);
  EXPECT_EQ(r.counts().differences(), 0) << describe(r);
  EXPECT_TRUE(r.findings.empty());
  for (const char* c : {"name",
                        "description",
                        "cuda.version",
                        "cudnn.version",
                        "cudnn.cuda",
                        "cudnn.archives[linux-x86_64].sha256",
                        "cudnn.archives[linux-x86_64].size",
                        "cudnn.archives[linux-x86_64].url",
                        "cudnn.archives[linux-x86_64].origin",
                        "driver.linux",
                        "driver.windows",
                        "frameworks.torch",
                        "python.version",
                        "targets.windows.layout",
                        "targets.windows.cuda_path",
                        "targets.linux.prefix",
                        "targets.docker.base_image",
                        "targets.docker.cudnn",
                        "targets.conda.channels",
                        "targets.conda.cudnn"})
    expect_weight(r, c, DiffWeight::same);
  EXPECT_EQ(r.counts().same, static_cast<int>(r.rows.size()));
  EXPECT_EQ(r.a.path, "a.toml");
  EXPECT_EQ(r.b.name, "base");
}

TEST(Diff, CudaMajorIsBreakingWithTheFindingsContract) {
  auto r = diff(k_base, with("version = \"12.1.1\"", "version = \"11.8.0\""));
  expect_weight(r, "cuda.version", DiffWeight::breaking);
  ASSERT_EQ(r.findings.size(), 1u);
  const auto& f = r.findings[0];
  EXPECT_EQ(f.rule, "diff.cuda");
  EXPECT_EQ(f.severity, model::Severity::error);
  EXPECT_EQ(f.subject, "cuda.version");
  EXPECT_EQ(f.seen, "12.1.1");
  EXPECT_EQ(f.expected, "11.8.0");
  EXPECT_NE(f.fix.find("different majors"), std::string::npos) << f.fix;
  ASSERT_TRUE(f.where.has_value());
  EXPECT_EQ(f.where->file, "a.toml");
  EXPECT_EQ(f.where->line, 5);
  EXPECT_EQ(f.where->column, 11);
  EXPECT_EQ(f.where->excerpt, "version = \"12.1.1\"");
}

TEST(Diff, CudaMinorIsLikelyBreakingAndPatchCompatible) {
  auto minor = diff(k_base, with("version = \"12.1.1\"", "version = \"12.4.1\""));
  expect_weight(minor, "cuda.version", DiffWeight::likely_breaking);
  EXPECT_EQ(minor.findings.at(0).severity, model::Severity::warning);
  EXPECT_NE(minor.findings.at(0).fix.find("cu121 vs cu124"), std::string::npos) << minor.findings.at(0).fix;
  auto patch = diff(k_base, with("version = \"12.1.1\"", "version = \"12.1.0\""));
  expect_weight(patch, "cuda.version", DiffWeight::compatible);
  EXPECT_EQ(patch.findings.at(0).severity, model::Severity::note);
  // "12.1" and "12.1.0" are the same release
  auto a = with("version = \"12.1.1\"", "version = \"12.1\"");
  expect_weight(diff(a, with("version = \"12.1.1\"", "version = \"12.1.0\"")), "cuda.version", DiffWeight::same);
}

TEST(Diff, CudaOnOneSideOnlyIsBreaking) {
  auto r = diff(k_base, with("[cuda]\nversion = \"12.1.1\"\n", ""));
  expect_weight(r, "cuda.version", DiffWeight::breaking, false);
  EXPECT_FALSE(find_row(r, "cuda.version")->b.has_value());
}

TEST(Diff, CudnnMajorMinorPatchAndBuild) {
  auto major = diff(k_base, with("version = \"8.9.5.30\"", "version = \"9.1.0.70\""));
  expect_weight(major, "cudnn.version", DiffWeight::breaking);
  EXPECT_EQ(major.findings.at(0).rule, "diff.cudnn");
  EXPECT_NE(major.findings.at(0).fix.find("libcudnn.so.8 vs libcudnn.so.9"), std::string::npos) << major.findings.at(0).fix;
  EXPECT_EQ(major.findings.at(0).where->line, 10);

  expect_weight(diff(k_base, with("version = \"8.9.5.30\"", "version = \"8.8.0.121\"")), "cudnn.version", DiffWeight::likely_breaking);
  expect_weight(diff(k_base, with("version = \"8.9.5.30\"", "version = \"8.9.7.29\"")), "cudnn.version", DiffWeight::compatible);

  // Two builds of one X.Y.Z are reported as such (ARCHITECTURE "Versions").
  auto build = diff(k_base, with("version = \"8.9.5.30\"", "version = \"8.9.5.29\""));
  expect_weight(build, "cudnn.version", DiffWeight::compatible);
  const auto& why = find_row(build, "cudnn.version")->reason;
  EXPECT_NE(why.find("the same cuDNN 8.9.5 in two builds (30 vs 29)"), std::string::npos) << why;
  EXPECT_NE(why.find("8905"), std::string::npos) << why;
  // cuDNN 9 encodes its integer version differently
  auto nine = diff(with("version = \"8.9.5.30\"", "version = \"9.1.0.70\""), with("version = \"8.9.5.30\"", "version = \"9.1.0.69\""));
  EXPECT_NE(find_row(nine, "cudnn.version")->reason.find("90100"), std::string::npos) << find_row(nine, "cudnn.version")->reason;
}

// A capture's NVIDIA wheels: another cuDNN inside torch is breaking, whatever the release distance;
// another CUDA library wheel of the same major is likely breaking; a wheel on one side only too.
TEST(Diff, AnotherCudnnWheelInsideTheFrameworksIsBreaking) {
  const std::string pins = "[python]\nversion = \"3.10\"\npackages = [\"nvidia-cudnn-cu12==8.9.2.26\", \"nvidia-cublas-cu12==12.1.3.1\"]\n";
  const std::string a = with("[python]\nversion = \"3.10\"\n", pins);
  expect_weight(diff(a, a), "python.packages.nvidia-cudnn-cu12", DiffWeight::same);
  auto cudnn = diff(a, with("8.9.2.26", "8.9.2.27", a));
  expect_weight(cudnn, "python.packages.nvidia-cudnn-cu12", DiffWeight::breaking);
  EXPECT_EQ(cudnn.findings.at(0).rule, "diff.python-package");
  EXPECT_NE(find_row(cudnn, "python.packages.nvidia-cudnn-cu12")->reason.find("another cuDNN inside the frameworks"), std::string::npos);
  expect_weight(diff(a, with("12.1.3.1", "12.4.5.8", a)), "python.packages.nvidia-cublas-cu12", DiffWeight::likely_breaking);
  expect_weight(diff(a, with(", \"nvidia-cublas-cu12==12.1.3.1\"", "", a)), "python.packages.nvidia-cublas-cu12",
                DiffWeight::likely_breaking);
}

TEST(Diff, CudnnBuildForAnotherCudaMajorIsBreaking) {
  auto r = diff(k_base, with("cuda = 12", "cuda = 11"));
  expect_weight(r, "cudnn.cuda", DiffWeight::breaking);
  EXPECT_NE(r.findings.at(0).fix.find("CUDNN_STATUS_NOT_INITIALIZED"), std::string::npos) << r.findings.at(0).fix;
  // left out, the build is the toolkit's major: the same build as writing it
  auto implied = diff(k_base, with("cuda = 12\n", ""));
  expect_weight(implied, "cudnn.cuda", DiffWeight::same);
}

TEST(Diff, CudnnOnOneSideOnlyIsBreaking) {
  std::string no_cudnn = with("[cudnn]\nversion = \"8.9.5.30\"\ncuda = 12\n", "");
  no_cudnn = with(
      "[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\nfile = \"cudnn-local.tar.xz\"\n"
      "url = \"https://mirror.example/cudnn-local.tar.xz\"\n"
      "sha256 = \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"\nsize = 100\n",
      "", no_cudnn);
  auto r = diff(k_base, no_cudnn);
  expect_weight(r, "cudnn.version", DiffWeight::breaking, false);
  EXPECT_EQ(find_row(r, "cudnn.cuda"), nullptr) << "the build's CUDA major is compared only when both pin cuDNN";
}

TEST(Diff, ArchiveHashDiffersIsLikelyBreakingAndTheSizeFollows) {
  auto b = with("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
  auto r = diff(k_base, b);
  expect_weight(r, "cudnn.archives[linux-x86_64].sha256", DiffWeight::likely_breaking);
  EXPECT_EQ(r.findings.at(0).rule, "diff.archive");
  EXPECT_EQ(r.findings.at(0).where->line, 17);

  auto sized = diff(k_base, with("size = 100", "size = 200", b));
  expect_weight(sized, "cudnn.archives[linux-x86_64].sha256", DiffWeight::likely_breaking, false);
  expect_weight(sized, "cudnn.archives[linux-x86_64].size", DiffWeight::compatible, false);
  EXPECT_EQ(sized.counts().differences(), 2);
}

TEST(Diff, ArchiveSizeAloneDiffersIsLikelyBreaking) {
  auto r = diff(k_base, with("size = 100", "size = 200"));
  expect_weight(r, "cudnn.archives[linux-x86_64].size", DiffWeight::likely_breaking);
  EXPECT_NE(find_row(r, "cudnn.archives[linux-x86_64].size")->reason.find("one side's size is wrong"), std::string::npos)
      << find_row(r, "cudnn.archives[linux-x86_64].size")->reason;
}

TEST(Diff, ArchiveUrlOrOriginWithTheSameHashIsCompatible) {
  expect_weight(diff(k_base, with("https://mirror.example/", "https://other.example/")), "cudnn.archives[linux-x86_64].url",
                DiffWeight::compatible);
  expect_weight(diff(k_base, with("origin = \"local\"", "origin = \"nvidia\"")), "cudnn.archives[linux-x86_64].origin",
                DiffWeight::compatible);
}

TEST(Diff, ArchiveUrlWithoutHashesIsLikelyBreaking) {
  std::string a = with("sha256 = \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"\n", "");
  auto r = diff(a, with("https://mirror.example/", "https://other.example/", a));
  expect_weight(r, "cudnn.archives[linux-x86_64].url", DiffWeight::likely_breaking);
}

TEST(Diff, ArchiveOnOneSideOnlyIsCompatible) {
  std::string b = with("platform = \"linux-x86_64\"", "platform = \"linux-sbsa\"");
  auto r = diff(k_base, b);
  expect_weight(r, "cudnn.archives[linux-x86_64]", DiffWeight::compatible, false);
  expect_weight(r, "cudnn.archives[linux-sbsa]", DiffWeight::compatible, false);
  EXPECT_EQ(r.counts().differences(), 2) << describe(r);
  EXPECT_EQ(find_row(r, "cudnn.archives[linux-x86_64]")->a, "cudnn-local.tar.xz");
}

TEST(Diff, NvidiaArchiveWithoutPinnedHashIsComparedWithNvidiasPublishedOne) {
  // The knowledge base knows cuDNN 8.9.5.30 for CUDA 12 on linux-x86_64 (manifests/cu121-...).
  const std::string real = "2a2eb89a2ab51071151c6082f1e816c702167a711a9372f9f73a7b5c4b06e01a";
  std::string pinned = with("origin = \"local\"", "origin = \"nvidia\"");
  pinned = with("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", real, pinned);
  pinned = with("size = 100", "size = 861488496", pinned);
  std::string unpinned = with("sha256 = \"" + real + "\"\n", "", pinned);
  unpinned = with("size = 861488496\n", "", unpinned);
  auto r = diff(unpinned, pinned);
  expect_weight(r, "cudnn.archives[linux-x86_64].sha256", DiffWeight::same, false);
  expect_weight(r, "cudnn.archives[linux-x86_64].size", DiffWeight::same, true);
  EXPECT_NE(find_row(r, "cudnn.archives[linux-x86_64].sha256")->a->find("from the knowledge base"), std::string::npos)
      << *find_row(r, "cudnn.archives[linux-x86_64].sha256")->a;
}

TEST(Diff, DriverMinimumsThatDifferAreLikelyBreaking) {
  auto r = diff(k_base, with("linux = \"530.30.02\"", "linux = \"535.54.03\""));
  expect_weight(r, "driver.linux", DiffWeight::likely_breaking);
  EXPECT_EQ(r.findings.at(0).rule, "diff.driver");
  EXPECT_NE(r.findings.at(0).fix.find("at least 530.30.02 but below 535.54.03"), std::string::npos) << r.findings.at(0).fix;
  // leading zeros do not make a difference
  expect_weight(diff(k_base, with("linux = \"530.30.02\"", "linux = \"530.30.2\"")), "driver.linux", DiffWeight::same);
}

TEST(Diff, DerivedDriverMinimumMeetsAPinnedOne) {
  // NVIDIA's minimum for CUDA 12.1.1 is 530.30.02 (Linux) and 531.14 (Windows): derived = pinned.
  std::string derived = with("[driver]\nlinux = \"530.30.02\"\nwindows = \"531.14\"\n", "");
  auto r = diff(derived, k_base);
  expect_weight(r, "driver.linux", DiffWeight::same, false);
  expect_weight(r, "driver.windows", DiffWeight::same, true);
  EXPECT_NE(find_row(r, "driver.linux")->a->find("derived from CUDA 12.1.1"), std::string::npos) << *find_row(r, "driver.linux")->a;
}

TEST(Diff, FrameworkMajorMinorPatchAndOneSide) {
  auto major = diff(k_base, with("torch = \"2.1.0\"", "torch = \"3.0.0\""));
  expect_weight(major, "frameworks.torch", DiffWeight::breaking);
  EXPECT_EQ(major.findings.at(0).rule, "diff.framework");
  expect_weight(diff(k_base, with("torch = \"2.1.0\"", "torch = \"2.5.1\"")), "frameworks.torch", DiffWeight::likely_breaking);
  expect_weight(diff(k_base, with("torch = \"2.1.0\"", "torch = \"2.1.2\"")), "frameworks.torch", DiffWeight::compatible);

  auto extra = diff(k_base, with("torch = \"2.1.0\"\n", "torch = \"2.1.0\"\ntorchvision = \"0.16.0\"\n"));
  expect_weight(extra, "frameworks.torchvision", DiffWeight::likely_breaking);
  const auto& f = extra.findings.at(0);
  EXPECT_EQ(f.seen, "(not set)");
  EXPECT_EQ(f.expected, "0.16.0");
  ASSERT_TRUE(f.where.has_value());
  EXPECT_EQ(f.where->file, "b.toml") << "A does not set it: the finding points at B";
  EXPECT_EQ(f.where->line, 21);
}

TEST(Diff, PythonMinorIsBreakingPatchCompatibleOneSideLikely) {
  auto minor = diff(k_base, with("version = \"3.10\"", "version = \"3.12\""));
  expect_weight(minor, "python.version", DiffWeight::breaking);
  EXPECT_NE(minor.findings.at(0).fix.find("cp310 vs cp312"), std::string::npos) << minor.findings.at(0).fix;
  expect_weight(diff(k_base, with("version = \"3.10\"", "version = \"3.10.12\"")), "python.version", DiffWeight::compatible);
  expect_weight(diff(k_base, with("[python]\nversion = \"3.10\"\n", "")), "python.version", DiffWeight::likely_breaking);
}

TEST(Diff, WindowsTarget) {
  auto layout = diff(k_base, with("layout = \"isolated\"", "layout = \"cuda-merge\""));
  expect_weight(layout, "targets.windows.layout", DiffWeight::likely_breaking);
  EXPECT_EQ(layout.findings.at(0).rule, "diff.windows");
  expect_weight(diff(k_base, with("\\v8.9.5'", "\\v8.9.5-b'")), "targets.windows.prefix", DiffWeight::compatible);
  expect_weight(diff(k_base, with("'C:\\CUDA\\v12.1'", "'D:\\CUDA\\v12.1'")), "targets.windows.cuda_path", DiffWeight::likely_breaking);
}

TEST(Diff, LinuxTarget) {
  expect_weight(diff(k_base, with("layout = \"lib64\"", "layout = \"deb\"")), "targets.linux.layout", DiffWeight::likely_breaking);
  expect_weight(diff(k_base, with("prefix = \"/opt/cudnn\"", "prefix = \"/usr/local/cudnn\"")), "targets.linux.prefix",
                DiffWeight::compatible);
}

TEST(Diff, DockerTarget) {
  expect_weight(diff(k_base, with("ubuntu22.04", "ubuntu24.04")), "targets.docker.base_image", DiffWeight::likely_breaking);
  expect_weight(diff(k_base, with("cudnn = \"archive\"", "cudnn = \"apt\"")), "targets.docker.cudnn", DiffWeight::likely_breaking);
  std::string digest = "base_digest = \"sha256:" + std::string(64, 'c') + "\"\n";
  auto pinned = with("cudnn = \"archive\"\n", "cudnn = \"archive\"\n" + digest);
  expect_weight(diff(k_base, pinned), "targets.docker.base_digest", DiffWeight::compatible);
  expect_weight(diff(with(std::string(64, 'c'), std::string(64, 'd'), pinned), pinned), "targets.docker.base_digest",
                DiffWeight::likely_breaking);
}

TEST(Diff, CondaTarget) {
  expect_weight(diff(k_base, with("[\"conda-forge\"]", "[\"conda-forge\", \"nvidia\"]")), "targets.conda.channels",
                DiffWeight::likely_breaking);
  auto cudnn = diff(k_base, with("cudnn = \"8.9.7.29\"", "cudnn = \"9.1.0.70\""));
  expect_weight(cudnn, "targets.conda.cudnn", DiffWeight::breaking);
  EXPECT_EQ(cudnn.findings.at(0).rule, "diff.conda");
  // without its own pin, conda installs [cudnn] version
  auto a = with("cudnn = \"8.9.7.29\"\n", "");
  auto r = diff(a, with("cudnn = \"8.9.7.29\"", "cudnn = \"8.9.5.30\""));
  expect_weight(r, "targets.conda.cudnn", DiffWeight::same);
  EXPECT_NE(find_row(r, "targets.conda.cudnn")->a->find("= [cudnn] version"), std::string::npos) << *find_row(r, "targets.conda.cudnn")->a;
}

TEST(Diff, TargetOnOneSideOnlyIsCompatible) {
  auto r = diff(k_base, with("[targets.conda]\nchannels = [\"conda-forge\"]\ncudnn = \"8.9.7.29\"\n", ""));
  expect_weight(r, "targets.conda", DiffWeight::compatible);
  EXPECT_EQ(find_row(r, "targets.conda")->a, "channels conda-forge, cudnn 8.9.7.29");
}

TEST(Diff, NameAndDescriptionAreNotes) {
  auto r = diff(k_base, with("the base stack", "another text", with("name = \"base\"", "name = \"other\"")));
  expect_weight(r, "name", DiffWeight::compatible, false);
  expect_weight(r, "description", DiffWeight::compatible, false);
  EXPECT_EQ(r.counts().differences(), 2);
  for (const auto& f : r.findings) EXPECT_EQ(f.severity, model::Severity::note);
}

TEST(Diff, SeveritiesFollowWeights) {
  EXPECT_EQ(model::severity_of(DiffWeight::breaking), model::Severity::error);
  EXPECT_EQ(model::severity_of(DiffWeight::likely_breaking), model::Severity::warning);
  EXPECT_EQ(model::severity_of(DiffWeight::compatible), model::Severity::note);
  EXPECT_STREQ(model::to_string(DiffWeight::likely_breaking), "likely-breaking");
}

TEST(Diff, JsonReportListsEveryRowWithNullForUnset) {
  auto r = diff(k_base, with("torch = \"2.1.0\"\n", "torch = \"2.1.0\"\ntorchvision = \"0.16.0\"\n"));
  auto j = nlohmann::json::parse(format::to_json(r).dump());
  EXPECT_EQ(j["a"]["path"], "a.toml");
  EXPECT_EQ(j["counts"]["differences"], 1);
  EXPECT_EQ(j["counts"]["likely_breaking"], 1);
  EXPECT_EQ(j["rows"].size(), r.rows.size());
  bool found = false;
  for (const auto& row : j["rows"]) {
    if (row["component"] != "frameworks.torchvision") continue;
    found = true;
    EXPECT_TRUE(row["a"].is_null());
    EXPECT_EQ(row["b"], "0.16.0");
    EXPECT_EQ(row["weight"], "likely-breaking");
    EXPECT_EQ(row["group"], "frameworks");
  }
  EXPECT_TRUE(found);
}

TEST(Diff, GpuArchitecturesAStackStopsRunningOnAreBreaking) {
  const std::string gpus = "[gpus]\narch = [\"7.0\", \"8.9\"]\n";
  auto a = k_base + gpus;
  // the same GPUs: nothing differs
  expect_weight(diff(a, a), "gpus.7.0", DiffWeight::same);
  // B drops Volta from its [gpus]: breaking
  expect_weight(diff(a, k_base + "[gpus]\narch = [\"8.9\"]\n"), "gpus.7.0", DiffWeight::breaking);
  // B adds a GPU (by model name): compatible
  expect_weight(diff(a, k_base + "[gpus]\narch = [\"7.0\", \"8.9\"]\nmodels = [\"H100\"]\n"), "gpus.9.0", DiffWeight::compatible);
  // the same GPUs, but B's cuDNN 9.11 no longer supports 7.0 (its other rows differ too)
  auto b = with("version = \"8.9.5.30\"", "version = \"9.11.0.98\"", k_base + gpus);
  auto r = diff(a, b);
  expect_weight(r, "gpus.7.0", DiffWeight::breaking, false);
  expect_weight(r, "gpus.8.9", DiffWeight::same, false);
}

// With each side's lock, the GPU code its cuDNN libraries carry is weighed: an architecture whose
// SASS B no longer carries is breaking, one B adds is compatible.
TEST(Diff, SassTheLockedLibrariesLoseIsBreaking) {
  auto locked = [](std::vector<const char*> targets) {
    model::Lock l;
    model::LockedArchive x;
    x.platform = model::Platform::linux_x86_64;
    x.kernels_read = true;
    model::LockedLibrary lib;
    lib.path = "lib/libcudnn_cnn.so.9.1.0";
    for (const char* t : targets) lib.targets.push_back({*model::parse_gpu_target(t)});
    x.libraries.push_back(lib);
    l.archives.push_back(x);
    return l;
  };
  const auto kb = []() -> const knowledge::KnowledgeBase& { return knowledge::KnowledgeBase::embedded(); };
  auto a = parse(k_base, "a.toml"), b = parse(k_base, "b.toml");
  auto la = locked({"sm_70", "sm_80", "sm_90", "compute_90"}), lb = locked({"sm_80", "sm_90", "sm_100", "compute_100"});
  auto r = core::diff_manifests(a, b, kb(), &la, &lb);
  expect_weight(r, "gpu-code.linux-x86_64", DiffWeight::breaking);
  const auto* row = find_row(r, "gpu-code.linux-x86_64");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->a.value_or(""), "SASS sm_70 sm_80 sm_90, PTX compute_90");
  EXPECT_NE(row->reason.find("no longer carry SASS for sm_70 (A's do, by their locks)"), std::string::npos) << row->reason;

  auto gained = core::diff_manifests(a, b, kb(), &lb, &lb);
  expect_weight(gained, "gpu-code.linux-x86_64", DiffWeight::same);
  auto more = core::diff_manifests(a, b, kb(), &la, &la);
  expect_weight(more, "gpu-code.linux-x86_64", DiffWeight::same);
  auto wider = locked({"sm_70", "sm_80", "sm_90", "sm_100", "compute_90"});
  expect_weight(core::diff_manifests(a, b, kb(), &la, &wider), "gpu-code.linux-x86_64", DiffWeight::compatible);
  // without both locks, or a lock that did not read its archive, nothing is said
  EXPECT_EQ(find_row(core::diff_manifests(a, b, kb(), &la, nullptr), "gpu-code.linux-x86_64"), nullptr);
  lb.archives[0].kernels_read = false;
  EXPECT_EQ(find_row(core::diff_manifests(a, b, kb(), &la, &lb), "gpu-code.linux-x86_64"), nullptr);
}

}  // namespace diff_test
