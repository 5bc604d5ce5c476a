// stackpin(1): the page the build writes says what --help says, for every command, and is clean roff.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli/man.hpp"
#include "test_support.hpp"

namespace cli_man_test {

using testing_support::show;
using testing_support::stackpin;

namespace {

std::string page() {
  std::ostringstream out;
  cli::write_man_page(out);
  return out.str();
}

// The lines of a --help section ("Options:", "Subcommands:") up to the next blank line.
std::vector<std::string> section(const std::string& help, const std::string& title) {
  std::vector<std::string> lines;
  std::istringstream in(help);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line == title) {
      inside = true;
    } else if (inside && line.empty()) {
      break;
    } else if (inside) {
      lines.push_back(line);
    }
  }
  return lines;
}

// Every command path ("generate activate") under `path`, read from --help.
void commands_under(const std::vector<std::string>& path, std::vector<std::vector<std::string>>& all) {
  auto args = path;
  args.push_back("--help");
  auto r = stackpin(args);
  ASSERT_EQ(r.exit_code, 0) << show(r);
  for (const auto& line : section(r.out, "Subcommands:")) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    auto sub = path;
    sub.push_back(name);
    all.push_back(sub);
    commands_under(sub, all);
  }
}

std::string escaped(const std::string& s) { return std::regex_replace(s, std::regex("-"), "\\-"); }

// The part of the page between `.SS "stackpin PATH"` and the next .SS or .SH.
std::string part_for(const std::string& man, const std::string& path) {
  std::string head = ".SS \"" + escaped(path) + "\"\n";
  auto at = man.find(head);
  if (at == std::string::npos) return {};
  auto end = man.find("\n.S", at + head.size());
  return man.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace

TEST(ManPage, EveryCommandAndOptionOfTheHelpIsOnThePage) {
  std::vector<std::vector<std::string>> commands;
  commands_under({}, commands);
  ASSERT_GE(commands.size(), 12u);  // check ... apply, and generate's own commands
  auto man = page();
  for (const auto& cmd : commands) {
    std::string path = "stackpin";
    for (const auto& w : cmd) path += " " + w;
    std::string part = part_for(man, path);
    ASSERT_FALSE(part.empty()) << path << " has no section on the page";
    auto args = cmd;
    args.push_back("--help");
    auto r = stackpin(args);
    std::string first_line = r.out.substr(0, r.out.find('\n'));
    EXPECT_NE(part.find(escaped(first_line)), std::string::npos) << path << ": the page lacks its description\n" << part;
    for (const auto& line : section(r.out, "Options:")) {
      std::smatch m;
      if (!std::regex_search(line, m, std::regex("^  (-[-a-z0-9]*)"))) continue;
      std::string name = m[1];
      if (name == "-h") continue;  // said once for every command
      EXPECT_NE(part.find("\\fB" + escaped(name) + "\\fR"), std::string::npos) << path << ": " << name << " is not on the page";
    }
  }
}

TEST(ManPage, EveryOptionValueHasAName) {
  // "--dest DIR", never CLI11's generic words: the same names show in --help.
  auto man = page();
  for (const char* generic : {"\\fITEXT\\fR", "\\fIUINT\\fR", "\\fIINT\\fR", "\\fIFLOAT\\fR"}) {
    auto at = man.find(generic);
    EXPECT_EQ(at, std::string::npos) << generic << " in: " << man.substr(at == std::string::npos ? 0 : (at > 80 ? at - 80 : 0), 120);
  }
  auto r = stackpin({"stage", "--help"});
  EXPECT_NE(r.out.find("--dest DIR"), std::string::npos) << r.out;
}

TEST(ManPage, IsCleanRoffThatManRenders) {
  auto man = page();
  std::istringstream in(man);
  const std::regex request(R"(^\.(\\"|TH|SH|SS|TP|PP|br)( |$))");
  int n = 0;
  for (std::string line; std::getline(in, line); ++n) {
    if (!line.empty() && (line[0] == '.' || line[0] == '\'')) {
      EXPECT_TRUE(std::regex_search(line, request)) << "line " << n + 1 << " is a request the page does not mean: " << line;
    }
  }
  testing_support::ScratchDir scratch;
  auto file = scratch.write("stackpin.1", man);
  if (!std::filesystem::exists("/usr/bin/groff")) GTEST_SKIP() << "groff is not installed (scripts/install-deps.sh installs groff-base)";
  auto r = testing_support::run_process({"/usr/bin/groff", "-man", "-Tutf8", "-ww", "-z", file.string()});
  EXPECT_EQ(r.exit_code, 0) << show(r);
  EXPECT_EQ(r.err, "") << "groff warns about the page";
}

TEST(ManPage, TheBuildWroteThisPage) {
  std::ifstream in(testing_support::man_page(), std::ios::binary);
  ASSERT_TRUE(in) << testing_support::man_page().string() << " is missing: the default build target writes it";
  std::stringstream built;
  built << in.rdbuf();
  EXPECT_EQ(built.str(), page()) << testing_support::man_page().string() << " is stale";
}

}  // namespace cli_man_test
