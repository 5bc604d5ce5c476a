// `stackpin generate conda` through the real binary: stdout and -o, the manifest's real sha256 in
// the header, notes on stderr, exit codes of refusals and usage errors, and the output read back
// by a real YAML parser (PyYAML, skipped with the reason when python3-yaml is not installed).
// conda itself cannot run here (no package index), so these tests prove the YAML and the pins,
// not a solve.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "format/manifest_reader.hpp"
#include "test_support.hpp"

namespace cli_conda_test {

namespace fs = std::filesystem;
using testing_support::run_process;
using testing_support::stackpin;

namespace {

std::string example(const char* name) { return (testing_support::source_dir() / "manifests" / name).string(); }
std::string data(const char* name) { return (testing_support::source_dir() / "tests/data/conda" / name).string(); }

std::string sha256_of(const std::string& path) {
  auto r = run_process({"/usr/bin/env", "sha256sum", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out.substr(0, 64);
}

bool have_pyyaml() { return run_process({"/usr/bin/env", "python3", "-c", "import yaml"}).exit_code == 0; }

// Parses FILE with PyYAML and compares the document with the expected one (argv[2], JSON); with
// a "description", also parses the header's `# description: "..."` line on its own and compares
// the value exactly (the comment must be one line holding one double-quoted YAML scalar).
const char* k_check_yaml = R"PY(
import json, sys, yaml
path, want = sys.argv[1], json.loads(sys.argv[2])
with open(path, encoding='utf-8') as f:
    doc = yaml.safe_load(f)
assert doc == want['doc'], 'parsed %r\nwanted %r' % (doc, want['doc'])
if 'description' in want:
    with open(path, encoding='utf-8', newline='') as f:
        lines = [l for l in f.read().split('\n') if l.startswith('# description: ')]
    assert len(lines) == 1, lines
    got = yaml.safe_load(lines[0][2:])
    assert got == {'description': want['description']}, 'description %r\nwanted %r' % (got, want['description'])
print('yaml ok')
)PY";

void expect_yaml(const fs::path& file, const nlohmann::json& want) {
  auto r = run_process({"/usr/bin/env", "python3", "-c", k_check_yaml, file.string(), want.dump()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("yaml ok"), std::string::npos) << r.out << r.err;
}

}  // namespace

TEST(CliConda, ToStdoutWithTheManifestsHash) {
  auto r = stackpin({"generate", "conda", example("cu121-cudnn895-torch21.toml")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# manifest sha256: \"" + sha256_of(example("cu121-cudnn895-torch21.toml")) + "\"\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  - cudnn=8.9.7.29\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n      - torch==2.1.0+cu121\n"), std::string::npos) << r.out;
  // the decisions a user should read go to stderr, never into the YAML on stdout
  EXPECT_NE(r.err.find("note: the conda environment gets cuDNN 8.9.7.29"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("note:"), std::string::npos) << r.out;
}

TEST(CliConda, ToAFile) {
  testing_support::ScratchDir dir;
  auto out = dir.path() / "environment.yml";
  auto r = stackpin({"generate", "conda", example("cu130-cudnn913.toml"), "-o", out.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  auto text = testing_support::read_text(out);
  EXPECT_NE(text.find("name: \"cu130-cudnn913\"\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  - cuda-version=13.0\n"), std::string::npos) << text;
}

TEST(CliConda, RefusalsExitOneWithTheReason) {
  // conda-forge never published cuDNN 9.1.0.70
  auto r = stackpin({"generate", "conda", example("cu124-cudnn91-torch25-docker.toml")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("conda-forge does not publish cudnn 9.1.0.70"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cu124-cudnn91-torch25-docker.toml:28:11"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[targets.conda] cudnn = \"9.2.1.18\""), std::string::npos) << r.err;
  // a channel of another CUDA major
  testing_support::ScratchDir dir;
  auto m = dir.write("mixed.toml",
                     "schema = 1\nname = \"mixed\"\n[cuda]\nversion = \"12.1.1\"\n[cudnn]\nversion = \"8.9.7.29\"\ncuda = 12\n"
                     "[targets.conda]\nchannels = [\"conda-forge\", \"nvidia/label/cuda-11.8.0\"]\n");
  auto x = stackpin({"generate", "conda", m.string(), "-o", (dir.path() / "env.yml").string()});
  EXPECT_EQ(x.exit_code, 1);
  EXPECT_NE(x.err.find("never mixes two CUDA majors"), std::string::npos) << x.err;
  EXPECT_FALSE(fs::exists(dir.path() / "env.yml")) << "nothing is written when refused";
}

TEST(CliConda, UsageErrorsExitTwo) {
  EXPECT_EQ(stackpin({"generate", "conda"}).exit_code, 2);
  EXPECT_EQ(stackpin({"generate", "conda", example("cu121-cudnn895-torch21.toml"), "--shell", "sh"}).exit_code, 2);
  auto missing = stackpin({"generate", "conda", "/nonexistent/stack.toml"});
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
}

TEST(CliConda, OutputParsesAsYamlWithTheExactPins) {
  if (!have_pyyaml()) GTEST_SKIP() << "python3-yaml is not installed (scripts/install-deps.sh --tools installs it)";
  testing_support::ScratchDir dir;
  struct Case {
    std::string manifest;
    nlohmann::json doc;
  };
  std::vector<Case> cases = {
      {example("cu121-cudnn895-torch21.toml"),
       {{"name", "cu121-cudnn895-torch21"},
        {"channels", {"conda-forge"}},
        {"dependencies",
         {"python=3.10",
          "cuda-version=12.1",
          "cudnn=8.9.7.29",
          "pip",
          {{"pip", {"--index-url https://download.pytorch.org/whl/cu121", "torch==2.1.0+cu121"}}}}}}},
      {example("cu118-cudnn880-win.toml"),
       {{"name", "cu118-cudnn880-win"}, {"channels", {"conda-forge"}}, {"dependencies", {"cuda-version=11.8", "cudnn=8.8.0.121"}}}},
      {example("cu130-cudnn913.toml"),
       {{"name", "cu130-cudnn913"},
        {"channels", {"conda-forge"}},
        {"dependencies",
         {"python=3.12",
          "cuda-version=13.0",
          "cudnn=9.13.0.50",
          "pip",
          {{"pip", {"--index-url https://download.pytorch.org/whl/cu130", "torch==2.9.0+cu130"}}}}}}},
      {data("cu124-torch25-ort120.toml"),
       {{"name", "cu124-torch25-ort120"},
        {"channels", {"conda-forge", "nvidia/label/cuda-12.4.1"}},
        {"dependencies",
         {"python=3.12",
          "cuda-version=12.4",
          "cudnn=9.2.1.18",
          "pip",
          {{"pip", {"--extra-index-url https://download.pytorch.org/whl/cu124", "torch==2.5.1+cu124", "onnxruntime-gpu==1.20.0"}}}}}}},
      {data("hostile.toml"),
       {{"name", "hostile-yaml"},
        {"channels", {"conda-forge", "my: chan #1 \"q\" \xC3\xBC"}},
        {"dependencies",
         {"python=3.10",
          "cuda-version=12.1",
          "cudnn=8.9.7.29",
          "pip",
          {{"pip", {"--extra-index-url https://download.pytorch.org/whl/cu121", "torch==2.1.0+cu121", "tensorflow==2.15.0"}}}}}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.manifest);
    auto out = dir.path() / (fs::path(c.manifest).stem().string() + ".yml");
    auto r = stackpin({"generate", "conda", c.manifest, "-o", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json want = {{"doc", c.doc}};
    auto m = format::load_manifest(c.manifest);
    ASSERT_TRUE(m);
    if (m->description) want["description"] = m->description->value;
    expect_yaml(out, want);
  }
}

}  // namespace cli_conda_test
