// Every check rule has a passing and a failing manifest under tests/data/check/. Each file's first
// line states what `check` must find: "# expect: <error|warning|note> <rule> [line N]" or
// "# expect: clean <rule>". The real example manifests must pass. A case of the Python rules has its
// Python lock beside it (the same name, .pylock).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include "core/check/check.hpp"
#include "core/check/python_rules.hpp"
#include "format/manifest_reader.hpp"
#include "format/pylock.hpp"
#include "test_support.hpp"

namespace check_rules_test {

namespace fs = std::filesystem;

namespace {

struct Expectation {
  std::string kind;  // error | warning | note | ok | clean
  std::string rule;
  int line = 0;
};

Expectation read_expectation(const fs::path& p) {
  std::string text = testing_support::read_text(p);
  std::string first = text.substr(0, text.find('\n'));
  static const std::regex k_re(R"(^# expect: (error|warning|note|ok|clean) ([a-z0-9.-]+)(?: line ([0-9]+))?\s*$)");
  std::smatch m;
  Expectation e;
  if (std::regex_match(first, m, k_re)) {
    e.kind = m[1];
    e.rule = m[2];
    if (m[3].matched) e.line = std::stoi(m[3]);
  }
  return e;
}

std::vector<fs::path> case_files() {
  std::vector<fs::path> out;
  fs::path dir = testing_support::source_dir() / "tests" / "data" / "check";
  if (fs::exists(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".toml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

model::CheckReport check_file(const fs::path& p) {
  auto m = format::load_manifest(p);
  EXPECT_TRUE(m.ok()) << p << ": " << (m.ok() ? "" : m.error().message);
  if (!m.ok()) return {};
  auto r = core::check_manifest(*m, knowledge::KnowledgeBase::embedded());
  EXPECT_TRUE(r.ok()) << p << ": " << (r.ok() ? "" : r.error().message);
  // a case of the Python rules brings its Python lock beside it: NAME.pylock
  fs::path pylock = p;
  pylock.replace_extension(".pylock");
  if (r.ok() && fs::exists(pylock)) {
    auto py = format::parse_pylock(testing_support::read_text(pylock), pylock.string());
    EXPECT_TRUE(py.ok()) << pylock << ": " << (py.ok() ? "" : py.error().message);
    if (py.ok()) core::check_python_lock(*m, *py, knowledge::KnowledgeBase::embedded(), knowledge::CudaCatalog::embedded(), *r);
  }
  return r.ok() ? std::move(r).value() : model::CheckReport{};
}

std::string describe(const model::CheckReport& r) {
  std::string s;
  for (const auto& f : r.findings)
    s += std::string("  ") + model::to_string(f.severity) + " " + f.rule + " line " + std::to_string(f.where ? f.where->line : 0) + ": " +
         f.seen + "\n";
  return s;
}

}  // namespace

class CheckRuleCase : public ::testing::TestWithParam<fs::path> {};

TEST_P(CheckRuleCase, FindsWhatTheFileExpects) {
  const fs::path& p = GetParam();
  Expectation e = read_expectation(p);
  ASSERT_FALSE(e.kind.empty()) << p << ": first line must be '# expect: ...'";
  auto report = check_file(p);
  if (e.kind == "clean") {
    // The rule must have looked at this manifest: with the rule deleted, its clean case fails.
    EXPECT_TRUE(report.examined.count(e.rule)) << p << ": rule " << e.rule << " did not examine this manifest";
    for (const auto& f : report.findings) {
      EXPECT_NE(f.severity, model::Severity::error) << p << "\n" << describe(report);
      if (f.rule == e.rule) {
        EXPECT_NE(f.severity, model::Severity::warning) << p << "\n" << describe(report);
      }
    }
    return;
  }
  bool found = false;
  for (const auto& f : report.findings) {
    if (f.rule != e.rule || model::to_string(f.severity) != e.kind) continue;
    if (e.line && (!f.where || f.where->line != e.line)) continue;
    found = true;
    EXPECT_FALSE(f.seen.empty()) << p;
    if (f.severity != model::Severity::note) {
      EXPECT_FALSE(f.fix.empty()) << p << " " << f.rule;
    }
  }
  EXPECT_TRUE(found) << p << ": expected " << e.kind << " " << e.rule << (e.line ? " at line " + std::to_string(e.line) : "")
                     << "\nfound:\n"
                     << describe(report);
}

INSTANTIATE_TEST_SUITE_P(Data, CheckRuleCase, ::testing::ValuesIn(case_files()), [](const ::testing::TestParamInfo<fs::path>& info) {
  std::string n = info.param.stem().string();
  for (auto& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

TEST(CheckRules, EveryFindingComesFromARuleThatSaysItExamined) {
  // Keeps CheckReport::examined complete: a rule that finds something has examined the manifest.
  for (const auto& p : case_files()) {
    auto report = check_file(p);
    for (const auto& f : report.findings) EXPECT_TRUE(report.examined.count(f.rule)) << p << ": " << f.rule;
  }
}

TEST(CheckRules, EveryRuleHasAPassingAndAFailingCase) {
  std::set<std::string> pass, fail;
  for (const auto& p : case_files()) {
    auto e = read_expectation(p);
    (e.kind == "clean" ? pass : fail).insert(e.rule);
  }
  ASSERT_FALSE(fail.empty()) << "no test cases under tests/data/check";
  // every rule that can warn or fail has both kinds of case
  for (const auto& r : fail) {
    std::string note_only_prefix;
    bool note_only = true;
    for (const auto& p : case_files()) {
      auto e = read_expectation(p);
      if (e.rule == r && (e.kind == "error" || e.kind == "warning")) note_only = false;
    }
    if (!note_only) {
      EXPECT_TRUE(pass.count(r)) << "rule " << r << " has no passing case";
    }
  }
}

TEST(CheckRules, ExampleManifestsPass) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(testing_support::source_dir() / "manifests")) {
    if (e.path().extension() != ".toml") continue;
    ++n;
    auto report = check_file(e.path());
    EXPECT_EQ(model::count(report.findings).errors, 0) << e.path() << "\n" << describe(report);
  }
  EXPECT_GE(n, 4);
}

TEST(CheckRules, ExplainResolvesTheFirstSeedsStack) {
  auto report = check_file(testing_support::source_dir() / "manifests" / "cu118-cudnn880-win.toml");
  ASSERT_TRUE(report.windows.has_value());
  EXPECT_EQ(report.windows->import_lib_dir, "lib\\x64");
  EXPECT_EQ(report.windows->dll_dir, "bin");
  EXPECT_EQ(report.windows->main_dll, "cudnn64_8.dll");
  EXPECT_TRUE(report.windows->zlibwapi_needed);
  bool win = false;
  for (const auto& d : report.drivers)
    if (d.os == model::Os::windows) {
      win = true;
      EXPECT_EQ(d.effective, "520.06");
    }
  EXPECT_TRUE(win);
}

TEST(CheckRules, ExplainListsTheMatchingWheel) {
  auto report = check_file(testing_support::source_dir() / "manifests" / "cu121-cudnn895-torch21.toml");
  ASSERT_EQ(report.wheels.size(), 1u);
  EXPECT_EQ(report.wheels[0].requirement, "torch==2.1.0+cu121");
  EXPECT_EQ(report.wheels[0].index_url, "https://download.pytorch.org/whl/cu121");
  EXPECT_EQ(report.wheels[0].bundled_cudnn, "8.9.2.26");
}

TEST(CheckRules, MissingKeysAreErrorsOfTheCommand) {
  auto m = format::parse_manifest("schema = 1\nname = \"x\"\n[cuda]\nversion = \"12.1.1\"\n", "m.toml");
  ASSERT_TRUE(m.ok());
  auto r = core::check_manifest(*m, knowledge::KnowledgeBase::embedded());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, util::ErrorCode::invalid);
  EXPECT_NE(r.error().message.find("cudnn.version"), std::string::npos) << r.error().message;
  // Without [cuda], nothing tells which CUDA build of cuDNN is meant.
  auto m2 = format::parse_manifest("schema = 1\nname = \"x\"\n[cudnn]\nversion = \"8.9.5.30\"\n", "m.toml");
  ASSERT_TRUE(m2.ok());
  EXPECT_FALSE(m2->cudnn->cuda);
  auto r2 = core::check_manifest(*m2, knowledge::KnowledgeBase::embedded());
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error().code, util::ErrorCode::invalid);
}

TEST(CheckRules, CudnnBuildDefaultsToTheToolkitsMajor) {
  auto m = format::parse_manifest("schema = 1\nname = \"x\"\n[cuda]\nversion = \"12.1.1\"\n[cudnn]\nversion = \"8.9.5.30\"\n", "m.toml");
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(m->cudnn->cuda);
  EXPECT_EQ(m->cudnn->cuda->value, 12);
  EXPECT_EQ(m->cudnn->cuda->pos.line, 5);  // the [cudnn] table
  auto r = core::check_manifest(*m, knowledge::KnowledgeBase::embedded());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->cudnn_cuda_major, 12);
}

}  // namespace check_rules_test
