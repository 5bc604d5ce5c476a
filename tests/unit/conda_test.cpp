// generate conda: golden environment.yml files for the example manifests that make sense for
// conda and for values that must stay literal; the decisions behind them (which cuDNN, cuda-version,
// pip and its index) and every refusal, with its code, location and key words; yaml_quote.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "core/package/conda.hpp"
#include "format/manifest_reader.hpp"
#include "gen/conda.hpp"
#include "gen/quote.hpp"
#include "golden.hpp"
#include "test_support.hpp"

namespace conda_test {

namespace fs = std::filesystem;

namespace {

const knowledge::KnowledgeBase& kb() { return knowledge::KnowledgeBase::embedded(); }

core::CondaOptions options(const std::string& file) {
  core::CondaOptions o;
  o.manifest_file = file;
  o.manifest_sha256 = std::string(64, '0');
  return o;
}

util::Result<core::CondaPlan> plan_file(const fs::path& manifest) {
  auto m = format::load_manifest(manifest);
  EXPECT_TRUE(m) << (m ? "" : m.error().message);
  if (!m) return std::move(m).error();
  return core::plan_conda(*m, kb(), options(manifest.filename().string()));
}

util::Result<core::CondaPlan> plan_text(const std::string& toml) {
  auto m = format::parse_manifest(toml, "conda.toml");
  EXPECT_TRUE(m) << (m ? "" : m.error().message);
  if (!m) return std::move(m).error();
  return core::plan_conda(*m, kb(), options("conda.toml"));
}

void expect_golden(const std::string& text, const std::string& name) { testing_support::expect_golden(text, "conda/" + name); }

std::vector<std::string> specs(const std::vector<gen::CondaEntry>& list) {
  std::vector<std::string> out;
  for (const auto& e : list) out.push_back(e.spec);
  return out;
}

// A CUDA 12.1 manifest with the given extra TOML appended.
std::string cu121(const std::string& extra) {
  return "schema = 1\nname = \"t\"\n[cuda]\nversion = \"12.1.1\"\n[cudnn]\nversion = \"8.9.7.29\"\ncuda = 12\n" + extra;
}

void expect_refused(const util::Result<core::CondaPlan>& r, const std::vector<std::string>& words, int line = 0) {
  ASSERT_FALSE(r) << "expected a refusal";
  EXPECT_EQ(r.error().code, util::ErrorCode::invalid) << r.error().message;
  for (const auto& w : words)
    EXPECT_NE(r.error().message.find(w), std::string::npos) << "missing \"" << w << "\" in: " << r.error().message;
  if (line > 0) {
    ASSERT_TRUE(r.error().where) << r.error().message;
    EXPECT_EQ(r.error().where->line, line) << r.error().message;
  }
}

std::string hints(const util::Error& e) {
  std::string out;
  for (const auto& h : e.hints) out += h + "\n";
  return out;
}

}  // namespace

// --- golden files -----------------------------------------------------------------------------

TEST(CondaEnv, Cu121Torch21MatchesGolden) {
  auto p = plan_file(testing_support::source_dir() / "manifests/cu121-cudnn895-torch21.toml");
  ASSERT_TRUE(p) << p.error().message;
  expect_golden(gen::render_environment_yml(p->spec), "cu121-cudnn895-torch21.environment.yml");
  // conda-forge never published 8.9.5.30: [targets.conda] cudnn 8.9.7.29 is what the env gets
  EXPECT_EQ(p->cudnn_version, "8.9.7.29");
  EXPECT_EQ(p->cuda_version, "12.1");
  EXPECT_EQ(specs(p->spec.dependencies), (std::vector<std::string>{"python=3.10", "cuda-version=12.1", "cudnn=8.9.7.29"}));
  EXPECT_EQ(specs(p->spec.pip), (std::vector<std::string>{"--index-url https://download.pytorch.org/whl/cu121", "torch==2.1.0+cu121"}));
  EXPECT_EQ(p->spec.channels, std::vector<std::string>{"conda-forge"});
  // which cuDNN torch loads is explained, not hidden
  bool told = false;
  for (const auto& n : p->notes) told = told || n.find("8.9.2.26") != std::string::npos;
  EXPECT_TRUE(told);
}

TEST(CondaEnv, Cu118MatchesGolden) {
  auto p = plan_file(testing_support::source_dir() / "manifests/cu118-cudnn880-win.toml");
  ASSERT_TRUE(p) << p.error().message;
  auto text = gen::render_environment_yml(p->spec);
  expect_golden(text, "cu118-cudnn880-win.environment.yml");
  EXPECT_EQ(specs(p->spec.dependencies), (std::vector<std::string>{"cuda-version=11.8", "cudnn=8.8.0.121"}));
  EXPECT_TRUE(p->spec.pip.empty());
  EXPECT_NE(text.find("cudatoolkit"), std::string::npos) << "CUDA 11's toolkit package is explained";
  EXPECT_EQ(text.find("- pip"), std::string::npos) << text;
}

TEST(CondaEnv, Cu130Torch29MatchesGolden) {
  auto p = plan_file(testing_support::source_dir() / "manifests/cu130-cudnn913.toml");
  ASSERT_TRUE(p) << p.error().message;
  expect_golden(gen::render_environment_yml(p->spec), "cu130-cudnn913.environment.yml");
  EXPECT_EQ(specs(p->spec.dependencies), (std::vector<std::string>{"python=3.12", "cuda-version=13.0", "cudnn=9.13.0.50"}));
  EXPECT_EQ(specs(p->spec.pip), (std::vector<std::string>{"--index-url https://download.pytorch.org/whl/cu130", "torch==2.9.0+cu130"}));
}

TEST(CondaEnv, Cu124TorchAndOnnxRuntimeMatchesGolden) {
  auto p = plan_file(testing_support::source_dir() / "tests/data/conda/cu124-torch25-ort120.toml");
  ASSERT_TRUE(p) << p.error().message;
  expect_golden(gen::render_environment_yml(p->spec), "cu124-torch25-ort120.environment.yml");
  EXPECT_EQ(specs(p->spec.dependencies), (std::vector<std::string>{"python=3.12", "cuda-version=12.4", "cudnn=9.2.1.18"}));
  // PyPI stays the main index for onnxruntime-gpu; torch's own index is an extra one
  EXPECT_EQ(specs(p->spec.pip), (std::vector<std::string>{"--extra-index-url https://download.pytorch.org/whl/cu124", "torch==2.5.1+cu124",
                                                          "onnxruntime-gpu==1.20.0"}));
  EXPECT_EQ(p->spec.channels, (std::vector<std::string>{"conda-forge", "nvidia/label/cuda-12.4.1"}));
}

TEST(CondaEnv, HostileValuesStayQuotedAndOnOneLine) {
  auto path = testing_support::source_dir() / "tests/data/conda/hostile.toml";
  auto p = plan_file(path);
  ASSERT_TRUE(p) << p.error().message;
  auto text = gen::render_environment_yml(p->spec);
  expect_golden(text, "hostile.environment.yml");
  auto m = format::load_manifest(path);
  ASSERT_TRUE(m);
  EXPECT_NE(text.find("# description: " + gen::yaml_quote(m->description->value) + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  - \"my: chan #1 \\\"q\\\" \xC3\xBC\"\n"), std::string::npos) << text;
  // no raw line break of any kind inside a value: every line is a comment, a key or a list item
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    EXPECT_TRUE(line.rfind("#", 0) == 0 || line.rfind("  ", 0) == 0 || line.rfind("name:", 0) == 0 || line == "channels:" ||
                line == "dependencies:")
        << "unexpected line: " << line;
    EXPECT_EQ(line.find('\r'), std::string::npos) << line;
    EXPECT_EQ(line.find("\xE2\x80\xA8"), std::string::npos) << line;
    EXPECT_EQ(line.find("\xC2\x85"), std::string::npos) << line;
    start = end + 1;
  }
}

TEST(CondaEnv, SameManifestGivesSameBytes) {
  // Two processes with a different clock zone, locale and working directory: nothing of the run
  // leaks into the file.
  std::string manifest = (testing_support::source_dir() / "manifests/cu121-cudnn895-torch21.toml").string();
  auto a = testing_support::stackpin({"generate", "conda", manifest}, {"TZ=UTC", "LC_ALL=C"});
  auto b = testing_support::stackpin({"generate", "conda", manifest}, {"TZ=Asia/Shanghai", "LC_ALL=C.UTF-8", "HOME=/nonexistent"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_FALSE(a.out.empty());
  EXPECT_EQ(a.out, b.out);
}

// --- decisions --------------------------------------------------------------------------------

TEST(CondaEnv, TheArchivePinIsUsedWhenConflictFree) {
  auto p = plan_text(cu121("[targets.conda]\nchannels = [\"conda-forge\"]\n"));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->cudnn_version, "8.9.7.29");
  EXPECT_TRUE(p->notes.empty());
  EXPECT_EQ(specs(p->spec.dependencies), (std::vector<std::string>{"cuda-version=12.1", "cudnn=8.9.7.29"}));
}

TEST(CondaEnv, PytorchChannelIsKeptButTorchComesFromPip) {
  auto p =
      plan_text(cu121("[frameworks]\ntorch = \"2.1.0\"\ntorchvision = \"0.16.0\"\n[python]\nversion = \"3.10\"\n"
                      "[targets.conda]\nchannels = [\"pytorch\", \"nvidia\", \"conda-forge\"]\n"));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->spec.channels, (std::vector<std::string>{"pytorch", "nvidia", "conda-forge"}));
  EXPECT_EQ(specs(p->spec.pip),
            (std::vector<std::string>{"--index-url https://download.pytorch.org/whl/cu121", "torch==2.1.0+cu121", "torchvision==0.16.0"}));
  std::string header;
  for (const auto& n : p->spec.header_notes) header += n + "\n";
  EXPECT_NE(header.find("torch comes from pip"), std::string::npos) << header;
  EXPECT_NE(header.find("listed first"), std::string::npos) << header;
}

TEST(CondaEnv, OlderTorchVariantOfTheSameMajorIsANote) {
  // CUDA 12.2: torch 2.1 has cu121, which runs on a CUDA 12 driver; a note, not a refusal
  auto p = plan_text(
      "schema = 1\nname = \"t\"\n[cuda]\nversion = \"12.2.2\"\n[cudnn]\nversion = \"8.9.7.29\"\ncuda = 12\n"
      "[frameworks]\ntorch = \"2.1.0\"\n[python]\nversion = \"3.10\"\n");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(specs(p->spec.pip).back(), "torch==2.1.0+cu121");
  EXPECT_EQ(p->cuda_version, "12.2");
}

// --- refusals ---------------------------------------------------------------------------------

TEST(CondaRefuses, CudnnCondaForgeDoesNotPublish) {
  auto r = plan_file(testing_support::source_dir() / "manifests/cu124-cudnn91-torch25-docker.toml");
  expect_refused(r, {"conda-forge does not publish cudnn 9.1.0.70"}, 28);
  EXPECT_NE(hints(r.error()).find("[targets.conda] cudnn = \"9.2.1.18\""), std::string::npos) << hints(r.error());
}

TEST(CondaRefuses, CudnnNotPublishedForThatCudaMajor) {
  // conda-forge builds 9.14.0.64 for CUDA 13 only; the newest for CUDA 12 is named instead
  auto r = plan_text(
      "schema = 1\nname = \"t\"\n[cuda]\nversion = \"12.4.1\"\n[cudnn]\nversion = \"9.1.0.70\"\ncuda = 12\n"
      "[targets.conda]\nchannels = [\"conda-forge\"]\ncudnn = \"9.14.0.64\"\n");
  expect_refused(r, {"for CUDA 13 only", "not for CUDA 12", "mix two CUDA majors"}, 10);
  EXPECT_NE(hints(r.error()).find("cudnn = \"9.13.1.26\""), std::string::npos) << hints(r.error());
  // and a cuDNN 8 build conda-forge has, with the closest newer one in the same minor
  auto s = plan_text(cu121("[targets.conda]\ncudnn = \"8.9.5.30\"\n"));
  expect_refused(s, {"does not publish cudnn 8.9.5.30"});
  EXPECT_NE(hints(s.error()).find("cudnn = \"8.9.7.29\""), std::string::npos) << hints(s.error());
}

TEST(CondaRefuses, CudnnBuildOfAnotherCudaMajor) {
  auto r = plan_text("schema = 1\nname = \"t\"\n[cuda]\nversion = \"12.1.1\"\n[cudnn]\nversion = \"8.9.7.29\"\ncuda = 11\n");
  expect_refused(r, {"[cudnn] cuda = 11", "never mixes two CUDA majors"}, 7);
  EXPECT_NE(hints(r.error()).find("cudatoolkit"), std::string::npos) << hints(r.error());
}

TEST(CondaRefuses, NvidiaLabelOfAnotherCudaMajorOrRelease) {
  auto r = plan_text(cu121("[targets.conda]\nchannels = [\"conda-forge\", \"nvidia/label/cuda-11.8.0\"]\n"));
  expect_refused(r, {"nvidia/label/cuda-11.8.0", "CUDA 11.8.0", "never mixes two CUDA majors"}, 9);
  auto s = plan_text(cu121("[targets.conda]\nchannels = [\"conda-forge\", \"nvidia/label/cuda-12.4.1\"]\n"));
  expect_refused(s, {"CUDA 12.4.1", "[cuda] pins 12.1.1"});
  // a label of the same release is fine, also when [cuda] names only MAJOR.MINOR
  auto ok = plan_text(
      "schema = 1\nname = \"t\"\n[cuda]\nversion = \"12.4\"\n[cudnn]\nversion = \"9.2.1.18\"\ncuda = 12\n"
      "[targets.conda]\nchannels = [\"conda-forge\", \"nvidia/label/cuda-12.4.1\"]\n");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->cuda_version, "12.4");
}

TEST(CondaRefuses, FrameworkBuiltForAnotherCudaMajor) {
  // TensorFlow 2.14 is built against CUDA 11.8
  auto r = plan_text(cu121("[frameworks]\ntensorflow = \"2.14.0\"\n[python]\nversion = \"3.10\"\n"));
  expect_refused(r, {"tensorflow 2.14.0 cannot go into the conda environment", "CUDA 11.8", "mix two"}, 9);
  // torch 2.0 has no CUDA 12 build at all
  auto t = plan_text(cu121("[frameworks]\ntorch = \"2.0.1\"\n[python]\nversion = \"3.10\"\n"));
  expect_refused(t, {"torch 2.0.1 cannot go into the conda environment"});
}

TEST(CondaRefuses, FrameworkJudgedAgainstTheCondaCudnn) {
  // TensorFlow 2.15 needs cuDNN 8.9; the archives pin 8.9.7.29, but the environment gets 9.2.1.18
  auto r =
      plan_text(cu121("[frameworks]\ntensorflow = \"2.15.0\"\n[python]\nversion = \"3.10\"\n"
                      "[targets.conda]\ncudnn = \"9.2.1.18\"\n"));
  expect_refused(r, {"tensorflow 2.15.0", "conda-forge's cudnn 9.2.1.18"});
  auto ok = plan_text(cu121("[frameworks]\ntensorflow = \"2.15.0\"\n[python]\nversion = \"3.10\"\n"));
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(specs(ok->spec.pip), std::vector<std::string>{"tensorflow==2.15.0"});
}

TEST(CondaRefuses, OnnxRuntimeBuildNotOnPypi) {
  // onnxruntime-gpu 1.17's CUDA 12 build is not the one PyPI carries (knowledge base)
  auto r = plan_text(
      "schema = 1\nname = \"t\"\n[cuda]\nversion = \"12.1.1\"\n[cudnn]\nversion = \"8.9.7.29\"\ncuda = 12\n"
      "[frameworks]\nonnxruntime-gpu = \"1.17.0\"\n[python]\nversion = \"3.10\"\n");
  expect_refused(r, {"onnxruntime-gpu 1.17.0 for CUDA 12", "PyPI"}, 9);
  EXPECT_NE(hints(r.error()).find("1.19"), std::string::npos) << hints(r.error());
}

TEST(CondaRefuses, ChannelsWithoutCondaForge) {
  auto r = plan_text(cu121("[targets.conda]\nchannels = [\"nvidia\"]\n"));
  expect_refused(r, {"do not include conda-forge"}, 8);
}

TEST(CondaRefuses, MissingPinsAndPython) {
  expect_refused(plan_text("schema = 1\nname = \"t\"\n[cudnn]\nversion = \"8.9.7.29\"\ncuda = 12\n"), {"cuda.version"});
  expect_refused(plan_text("schema = 1\nname = \"t\"\n[cuda]\nversion = \"12.1.1\"\n"), {"cudnn.version"});
  expect_refused(plan_text(cu121("[frameworks]\ntorch = \"2.1.0\"\n")), {"[python] version"});
  expect_refused(plan_text(cu121("[frameworks]\ntorchvision = \"0.16.0\"\n[python]\nversion = \"3.10\"\n")), {"without torch"});
  expect_refused(plan_text(cu121("[frameworks]\ntorch = \"1.5.0\"\n[python]\nversion = \"3.8\"\n")), {"not in the knowledge base"});
}

// --- yaml_quote -------------------------------------------------------------------------------

TEST(YamlQuote, EscapesWhatYamlWouldReadDifferently) {
  EXPECT_EQ(gen::yaml_quote("plain"), "\"plain\"");
  EXPECT_EQ(gen::yaml_quote("a \"b\" \\c"), "\"a \\\"b\\\" \\\\c\"");
  EXPECT_EQ(gen::yaml_quote("x\ny\rz\tw"), "\"x\\ny\\rz\\tw\"");
  EXPECT_EQ(gen::yaml_quote(std::string("\x01\x7f\0", 3)), "\"\\x01\\x7F\\0\"");
  // U+0085 NEL, U+2028 LS and U+2029 PS are line breaks in YAML 1.1; C1 controls are not printable
  EXPECT_EQ(gen::yaml_quote("\xC2\x85|\xE2\x80\xA8|\xE2\x80\xA9|\xC2\x9B"), "\"\\x85|\\u2028|\\u2029|\\x9B\"");
  EXPECT_EQ(gen::yaml_quote("\xEF\xBB\xBF"), "\"\\uFEFF\"");
  // other UTF-8 passes through; bytes that are not UTF-8 become U+FFFD
  EXPECT_EQ(gen::yaml_quote("caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80"), "\"caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80\"");
  EXPECT_EQ(gen::yaml_quote("a\xFF"
                            "b\xC0\xAF"
                            "c\xED\xA0\x80"),
            "\"a\\uFFFDb\\uFFFD\\uFFFDc\\uFFFD\\uFFFD\\uFFFD\"");
  // indicators and ": " / " #" are literal inside double quotes
  EXPECT_EQ(gen::yaml_quote("- *a &b !c %d @e `f` k: v # c"), "\"- *a &b !c %d @e `f` k: v # c\"");
}

}  // namespace conda_test
