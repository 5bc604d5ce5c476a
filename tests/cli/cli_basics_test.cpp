// The binary's contract: --help, --version, usage errors and exit codes.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/run.hpp"
#include "test_support.hpp"

namespace cli_basics_test {

using testing_support::stackpin;

TEST(CliBasics, HelpListsCommandsAndExitCodes) {
  auto r = stackpin({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("check"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Exit codes"), std::string::npos) << r.out;
}

TEST(CliBasics, VersionNamesTheKnowledge) {
  auto r = stackpin({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  // The version is the project's (CMakeLists.txt), passed to the test as it is to the binary.
  EXPECT_EQ(r.out.rfind(std::string("stackpin ") + testing_support::project_version() + " (knowledge: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("cuDNN archives"), std::string::npos) << r.out;
}

TEST(CliBasics, NoCommandIsAUsageError) {
  auto r = stackpin({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--help"), std::string::npos) << r.err;
}

TEST(CliBasics, UnknownCommandOrOptionIsAUsageError) {
  EXPECT_EQ(stackpin({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(stackpin({"check", "--no-such-option", "x.toml"}).exit_code, 2);
  EXPECT_EQ(stackpin({"check"}).exit_code, 2);
}

TEST(CliBasics, RunsInProcess) {
  std::ostringstream out, err;
  util::MapEnv env;
  cli::Io io{out, err, env};
  EXPECT_EQ(cli::run({"--version"}, io), 0);
  EXPECT_NE(out.str().find("stackpin"), std::string::npos) << out.str();
  EXPECT_EQ(cli::run({"check"}, io), 2);
}

}  // namespace cli_basics_test
