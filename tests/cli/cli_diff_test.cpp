// `stackpin diff` through the real binary: exit codes, the text table and summary, --strict,
// the --json envelope and a bad manifest's location.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace cli_diff_test {

using nlohmann::json;
using testing_support::read_text;
using testing_support::ScratchDir;
using testing_support::source_dir;
using testing_support::stackpin;

namespace {
std::string example(const char* name) { return (source_dir() / "manifests" / name).string(); }

// The second seed's manifest with one line changed.
std::string seed2_with(const std::string& from, const std::string& to) {
  std::string text = read_text(example("cu121-cudnn895-torch21.toml"));
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}
}  // namespace

TEST(CliDiff, CudaMajorDiffersIsBreakingExitOne) {
  auto r = stackpin({"diff", example("cu118-cudnn880-win.toml"), example("cu121-cudnn895-torch21.toml")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("A: " + example("cu118-cudnn880-win.toml") + " (cu118-cudnn880-win)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nCUDA\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("breaking         cuda.version"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("11.8.0  ->  12.1.1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("8.8.0.121  ->  8.9.5.30"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("likely-breaking  cudnn.archives[windows-x86_64].sha256"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("frameworks.torch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("different majors"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("differences: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" breaking, "), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CliDiff, IdenticalStacksSaySoAndExitZero) {
  auto r = stackpin({"diff", example("cu130-cudnn913.toml"), example("cu130-cudnn913.toml")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("A and B pin the same stack: no differences"), std::string::npos) << r.out;
}

TEST(CliDiff, SummaryCountsEachWeight) {
  ScratchDir dir;
  // CUDA minor (likely breaking), torch patch (compatible), python minor (breaking)
  std::string text = seed2_with("version = \"12.1.1\"", "version = \"12.4.1\"");
  auto at = text.find("torch = \"2.1.0\"");
  text.replace(at, 15, "torch = \"2.1.2\"");
  at = text.find("version = \"3.10\"");
  text.replace(at, 16, "version = \"3.11\"");
  auto b = dir.write("b.toml", text);
  auto r = stackpin({"diff", example("cu121-cudnn895-torch21.toml"), b.string()});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("3 differences: 1 breaking, 1 likely breaking, 1 compatible"), std::string::npos) << r.out;
}

TEST(CliDiff, LikelyBreakingAloneExitsZeroAndStrictMakesItFail) {
  ScratchDir dir;
  auto b = dir.write("b.toml", seed2_with("version = \"12.1.1\"", "version = \"12.4.1\""));
  auto r = stackpin({"diff", example("cu121-cudnn895-torch21.toml"), b.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("1 difference: 0 breaking, 1 likely breaking, 0 compatible"), std::string::npos) << r.out;
  auto s = stackpin({"diff", "--strict", example("cu121-cudnn895-torch21.toml"), b.string()});
  EXPECT_EQ(s.exit_code, 1) << s.out;
  EXPECT_NE(s.out.find("--strict: likely-breaking differences fail"), std::string::npos) << s.out;
  // compatible differences never fail, even with --strict
  auto c = dir.write("c.toml", seed2_with("torch = \"2.1.0\"", "torch = \"2.1.2\""));
  EXPECT_EQ(stackpin({"diff", "--strict", example("cu121-cudnn895-torch21.toml"), c.string()}).exit_code, 0);
}

TEST(CliDiff, JsonIsOneEnvelopeWithFindingsAndEveryRow) {
  auto a = example("cu118-cudnn880-win.toml");
  auto r = stackpin({"diff", "--json", a, example("cu121-cudnn895-torch21.toml")});
  EXPECT_EQ(r.exit_code, 1);
  json j = json::parse(r.out);
  EXPECT_EQ(j["schema"], 1);
  EXPECT_EQ(j["command"], "diff");
  EXPECT_EQ(j["ok"], false);
  EXPECT_TRUE(j["error"].is_null());
  bool cuda = false;
  for (const auto& f : j["findings"]) {
    if (f["rule"] != "diff.cuda") continue;
    cuda = true;
    EXPECT_EQ(f["severity"], "error");
    EXPECT_EQ(f["subject"], "cuda.version");
    EXPECT_EQ(f["seen"], "11.8.0");
    EXPECT_EQ(f["expected"], "12.1.1");
    EXPECT_EQ(f["where"]["file"], a);
    EXPECT_GT(f["where"]["line"].get<int>(), 0);
  }
  EXPECT_TRUE(cuda) << r.out;
  const auto& rep = j["report"];
  EXPECT_EQ(rep["b"]["name"], "cu121-cudnn895-torch21");
  int same = 0;
  for (const auto& row : rep["rows"]) same += row["weight"] == "same";
  EXPECT_EQ(same, rep["counts"]["same"].get<int>());
  EXPECT_GT(same, 0) << "same rows are part of the comparison";
  EXPECT_EQ(rep["counts"]["differences"].get<std::size_t>(), j["findings"].size());

  auto ok = stackpin({"diff", "--json", a, a});
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(json::parse(ok.out)["ok"], true);
}

TEST(CliDiff, BadManifestIsTheUsualErrorWithItsLocation) {
  ScratchDir dir;
  auto bad = dir.write("bad.toml", "schema = 1\nname = \"x\"\n[cudnn]\nversion = \"8.9.5\"\n");
  auto r = stackpin({"diff", example("cu121-cudnn895-torch21.toml"), bad.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("bad.toml:4:11"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("has 3 parts"), std::string::npos) << r.err;

  auto j = stackpin({"diff", "--json", bad.string(), example("cu121-cudnn895-torch21.toml")});
  EXPECT_EQ(j.exit_code, 1);
  auto doc = json::parse(j.out);
  EXPECT_EQ(doc["ok"], false);
  EXPECT_EQ(doc["error"]["where"]["line"], 4);

  auto missing = stackpin({"diff", "/nonexistent/a.toml", example("cu121-cudnn895-torch21.toml")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no such file: /nonexistent/a.toml"), std::string::npos) << missing.err;
}

TEST(CliDiff, UsageErrorsExitTwo) {
  EXPECT_EQ(stackpin({"diff", example("cu121-cudnn895-torch21.toml")}).exit_code, 2);
  EXPECT_EQ(stackpin({"diff"}).exit_code, 2);
  EXPECT_EQ(stackpin({"diff", "--no-such", example("cu121-cudnn895-torch21.toml"), example("cu121-cudnn895-torch21.toml")}).exit_code, 2);
}

}  // namespace cli_diff_test
