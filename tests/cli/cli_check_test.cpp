// `stackpin check` through the real binary: exit codes, the caret renderer and --json.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace cli_check_test {

using nlohmann::json;
using testing_support::ScratchDir;
using testing_support::source_dir;
using testing_support::stackpin;

namespace {
std::string example(const char* name) { return (source_dir() / "manifests" / name).string(); }

const char* k_wrong_major = R"(schema = 1
name = "wrong-major"
[cuda]
version = "12.1.1"
[cudnn]
version = "8.8.0.121"
cuda = 11
)";
}  // namespace

TEST(CliCheck, ExamplesPassWithExitZero) {
  auto r = stackpin({"check", example("cu118-cudnn880-win.toml"), example("cu121-cudnn895-torch21.toml"),
                     example("cu124-cudnn91-torch25-docker.toml"), example("cu130-cudnn913.toml")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("check passed: 4 manifests, 0 errors"), std::string::npos) << r.out;
}

TEST(CliCheck, ErrorFindingExitsOne) {
  ScratchDir dir;
  auto p = dir.write("m.toml", k_wrong_major);
  auto r = stackpin({"check", p.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("error [cudnn.cuda-major]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("m.toml:7:8"), std::string::npos) << r.out;
}

TEST(CliCheck, ParseErrorShowsFileLineAndCaret) {
  ScratchDir dir;
  auto p = dir.write("bad.toml", "schema = 1\nname = \"x\"\n[cudnn]\nversion = \"8.9.5\"\n");
  auto r = stackpin({"check", p.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad.toml:4:11"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("4 | version = \"8.9.5\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("  |           ^"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint:"), std::string::npos) << r.err;
}

TEST(CliCheck, MissingFileSaysSo) {
  auto r = stackpin({"check", "/nonexistent/m.toml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no such file: /nonexistent/m.toml"), std::string::npos) << r.err;
}

TEST(CliCheck, StrictMakesWarningsFail) {
  // the second seed's stack warns (torch bundles another cuDNN; zlibwapi)
  EXPECT_EQ(stackpin({"check", example("cu121-cudnn895-torch21.toml")}).exit_code, 0);
  EXPECT_EQ(stackpin({"check", "--strict", example("cu121-cudnn895-torch21.toml")}).exit_code, 1);
}

TEST(CliCheck, ExplainPrintsResolvedFacts) {
  auto r = stackpin({"check", "--explain", example("cu118-cudnn880-win.toml")});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("windows  520.06"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lib\\x64\\cudnn.lib"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bin\\cudnn64_8.dll"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("zlibwapi.dll      needed"), std::string::npos) << r.out;
  auto t = stackpin({"check", "--explain", example("cu121-cudnn895-torch21.toml")});
  EXPECT_NE(t.out.find("pip install torch==2.1.0+cu121 --index-url https://download.pytorch.org/whl/cu121"), std::string::npos) << t.out;
}

TEST(CliCheck, JsonIsOneDocumentAndNothingElse) {
  auto r = stackpin({"check", "--json", example("cu121-cudnn895-torch21.toml")});
  EXPECT_EQ(r.exit_code, 0);
  json j = json::parse(r.out);  // throws (fails the test) on anything but one JSON document
  EXPECT_EQ(j["schema"], 1);
  EXPECT_EQ(j["command"], "check");
  EXPECT_EQ(j["ok"], true);
  EXPECT_TRUE(j["error"].is_null());
  ASSERT_TRUE(j["findings"].is_array());
  const auto& f = j["findings"][0];
  for (const char* k : {"rule", "severity", "subject", "seen", "expected", "fix", "source"}) EXPECT_TRUE(f.contains(k)) << k;
  const auto& m = j["report"]["manifests"][0];
  EXPECT_EQ(m["cudnn"], "8.9.5.30");
  EXPECT_EQ(m["wheels"][0]["requirement"], "torch==2.1.0+cu121");
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CliCheck, JsonCarriesParseErrors) {
  ScratchDir dir;
  auto p = dir.write("bad.toml", "schema = 1\nname = \"x\"\n[cudnn]\nversion = \"8.9.5\"\n");
  auto r = stackpin({"check", "--json", p.string()});
  EXPECT_EQ(r.exit_code, 1);
  json j = json::parse(r.out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["error"]["code"], "invalid");
  EXPECT_EQ(j["error"]["where"]["line"], 4);
  EXPECT_EQ(j["error"]["where"]["column"], 11);
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CliCheck, JsonErrorFindingIsNotOk) {
  ScratchDir dir;
  auto p = dir.write("m.toml", k_wrong_major);
  auto r = stackpin({"check", "--json", p.string()});
  EXPECT_EQ(r.exit_code, 1);
  json j = json::parse(r.out);
  EXPECT_EQ(j["ok"], false);
  bool found = false;
  for (const auto& f : j["findings"])
    if (f["rule"] == "cudnn.cuda-major" && f["severity"] == "error") {
      found = true;
      EXPECT_EQ(f["where"]["line"], 7);
    }
  EXPECT_TRUE(found) << r.out;
}

TEST(CliCheck, NoColorWhenNotATerminal) {
  auto r = stackpin({"check", example("cu121-cudnn895-torch21.toml")});
  EXPECT_EQ(r.out.find("\033["), std::string::npos) << r.out;
}

}  // namespace cli_check_test
