// The quoting module and the Linux/WSL2 activation files: golden output, hostile values, shellcheck
// and real execution under sh.
#include <gtest/gtest.h>

#include <filesystem>

#include "gen/activate.hpp"
#include "gen/quote.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using testing_support::run_process;

namespace {
const std::string k_hostile = "/opt/it's a $HOME `id` \"q\" \xc3\xbc dir";  // quote, $, backticks, spaces, non-ASCII

gen::LinuxActivation activation(const std::string& prefix) { return {"demo-stack", "9.1.0.70", prefix}; }

bool have(const char* tool) { return run_process({"/bin/sh", "-c", std::string("command -v ") + tool}).exit_code == 0; }
}  // namespace

TEST(Quote, ShRoundTripsAnyString) {
  for (std::string s : {std::string("plain"), std::string("it's"), k_hostile, std::string("a\nb"), std::string("")}) {
    auto r = run_process({"/bin/sh", "-c", "printf '%s' " + gen::sh_quote(s)});
    EXPECT_EQ(r.out, s);
  }
  EXPECT_EQ(gen::sh_quote("it's"), "'it'\\''s'");
}

TEST(Quote, PowerShellDoublesSingleQuotesAndKeepsDollarAndBacktick) {
  EXPECT_EQ(gen::ps_quote("C:\\Program Files\\it's $env:X `n"), "'C:\\Program Files\\it''s $env:X `n'");
}

TEST(Quote, CmdDoublesPercentAndRefusesDoubleQuotes) {
  EXPECT_EQ(*gen::cmd_quote("C:\\Program Files\\100%"), "\"C:\\Program Files\\100%%\"");
  auto bad = gen::cmd_quote("C:\\a\"b");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, util::ErrorCode::unsupported);
}

TEST(ActivateSh, MatchesTheGoldenFile) {
  auto text = gen::render_activate_sh(activation("/usr/local/cudnn-9.1.0"));
  auto golden = testing_support::read_text(testing_support::source_dir() / "tests" / "data" / "golden" / "activate.sh");
  EXPECT_EQ(text, golden) << "regenerate tests/data/golden/activate.sh only for an intended change";
}

TEST(ActivateSh, PassesShellcheckWithHostileValues) {
  if (!have("shellcheck")) GTEST_SKIP() << "shellcheck is not installed (scripts/install-deps.sh --tools installs it)";
  testing_support::ScratchDir dir;
  for (const auto& prefix : {std::string("/usr/local/cudnn-9.1.0"), k_hostile}) {
    auto p = dir.write("activate.sh", gen::render_activate_sh(activation(prefix)));
    auto r = run_process({"/bin/sh", "-c", "shellcheck -s sh \"$1\"", "sh", p.string()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  }
}

TEST(ActivateSh, SourcingSetsTheEnvironmentOnceAndIdempotently) {
  testing_support::ScratchDir dir;
  for (const auto& prefix : {std::string("/usr/local/cudnn-9.1.0"), k_hostile, std::string("/x/line\nbreak")}) {
    auto p = dir.write("activate.sh", gen::render_activate_sh(activation(prefix)));
    std::string script = ". \"$1\"; first=$LD_LIBRARY_PATH; . \"$1\"; [ \"$first\" = \"$LD_LIBRARY_PATH\" ] || echo CHANGED; "
                         "printf '%s\\n%s' \"$LD_LIBRARY_PATH\" \"$CUDNN_PATH\"";
    auto r = run_process({"/bin/sh", "-c", script, "sh", p.string()},
                         {"LD_LIBRARY_PATH=/a:" + prefix + "/lib64:/b with space:" + prefix + "/lib64"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, prefix + "/lib64:/a:/b with space\n" + prefix) << "prefix " << prefix;
  }
}

TEST(ActivateSh, EmptyLoaderPathGetsOnlyTheCudnnDirectory) {
  testing_support::ScratchDir dir;
  auto p = dir.write("activate.sh", gen::render_activate_sh(activation("/usr/local/cudnn-9.1.0/")));
  auto r = run_process({"/bin/sh", "-c", "unset LD_LIBRARY_PATH; . \"$1\"; printf '%s' \"$LD_LIBRARY_PATH\"", "sh", p.string()});
  if (fs::is_directory("/usr/lib/wsl/lib")) GTEST_SKIP() << "running under WSL2: /usr/lib/wsl/lib is added too";
  EXPECT_EQ(r.out, "/usr/local/cudnn-9.1.0/lib64");
}

TEST(LdSoConf, ListsTheLibraryDirectoryAndRefusesWhatItCannotHold) {
  auto text = gen::render_ld_so_conf(activation("/usr/local/cudnn-9.1.0"));
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("\n/usr/local/cudnn-9.1.0/lib64\n"), std::string::npos);
  auto bad = gen::render_ld_so_conf(activation("/opt/with space"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, util::ErrorCode::unsupported);
}
