// The quoting module and the Linux/WSL2 activation files: golden output, hostile values, shellcheck
// and real execution under sh.
#include <gtest/gtest.h>

#include <filesystem>

#include "gen/activate.hpp"
#include "gen/activate_windows.hpp"
#include "gen/quote.hpp"
#include "golden.hpp"
#include "test_support.hpp"

namespace gen_test {

namespace fs = std::filesystem;
using testing_support::run_process;

namespace {
const std::string k_hostile = "/opt/it's a $HOME `id` \"q\" \xc3\xbc dir";  // quote, $, backticks, spaces, non-ASCII

gen::LinuxActivation activation(const std::string& prefix) { return {"demo-stack", "9.1.0.70", prefix}; }

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

TEST(Quote, PowerShellDoublesTheTypographicApostrophesItAlsoReadsAsQuotes) {
  // U+2018, U+2019, U+201A and U+201B end a single-quoted string in PowerShell like ' does
  EXPECT_EQ(gen::ps_quote("O\u2019Brien"), "'O\u2019\u2019Brien'");
  EXPECT_EQ(gen::ps_quote("\u2018a\u201Ab\u201B"), "'\u2018\u2018a\u201A\u201Ab\u201B\u201B'");
  // other characters of that block, and bytes that only look like the start of one, stay single
  EXPECT_EQ(gen::ps_quote("\u201C\u2014"), "'\u201C\u2014'");
  EXPECT_EQ(gen::ps_quote(std::string("\xE2\x80\xE2\x80\x9B", 5)), std::string("'\xE2\x80\xE2\x80\x9B\xE2\x80\x9B'", 10));
}

TEST(Quote, PythonLiteralsAreAsciiAndReadBack) {
  EXPECT_EQ(gen::py_quote("C:\\Users\\Jos\u00E9 O'Brien\\cudnn v8"), "'C:\\\\Users\\\\Jos\\u00e9 O\\'Brien\\\\cudnn v8'");
  EXPECT_EQ(gen::py_quote("a\nb\x01\U0001F600"), "'a\\nb\\x01\\U0001f600'");
  if (!testing_support::have_tool("python3")) GTEST_SKIP() << "python3 is not installed";
  for (const std::string s : {"C:\\Users\\Jos\u00E9 O'Brien\\cudnn v8", "\"'\\\n\t%$`", "\u4E2D\u6587 \U0001F600"}) {
    auto r = run_process(
        {testing_support::tool_path("python3"), "-c", "import sys; sys.stdout.buffer.write((" + gen::py_quote(s) + ").encode('utf-8'))"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, s);
  }
}

TEST(Quote, CmdDoublesPercentAndRefusesDoubleQuotes) {
  EXPECT_EQ(*gen::cmd_quote("C:\\Program Files\\100%"), "\"C:\\Program Files\\100%%\"");
  auto bad = gen::cmd_quote("C:\\a\"b");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, util::ErrorCode::unsupported);
}

TEST(Quote, DockerfileEscapesQuoteBackslashAndDollarAndKeepsOneLine) {
  EXPECT_EQ(gen::dockerfile_quote("José \"O'Brien\" $HOME \\x"), "\"José \\\"O'Brien\\\" \\$HOME \\\\x\"");
  EXPECT_EQ(gen::dockerfile_quote("a\nb\tc\rd"), "\"a b c d\"");
  EXPECT_EQ(gen::dockerfile_quote(""), "\"\"");
}

TEST(ActivateSh, MatchesTheGoldenFile) {
  auto text = gen::render_activate_sh(activation("/usr/local/cudnn-9.1.0"));
  testing_support::expect_golden(text, "activate.sh");
}

TEST(ActivateSh, PassesShellcheckWithHostileValues) {
  if (!testing_support::have_tool("shellcheck"))
    GTEST_SKIP() << "shellcheck is not installed (scripts/install-deps.sh --tools installs it)";
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
    std::string script =
        ". \"$1\"; first=$LD_LIBRARY_PATH; . \"$1\"; [ \"$first\" = \"$LD_LIBRARY_PATH\" ] || echo CHANGED; "
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
  EXPECT_NE(text->find("\n/usr/local/cudnn-9.1.0/lib64\n"), std::string::npos) << *text;
  auto bad = gen::render_ld_so_conf(activation("/opt/with space"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, util::ErrorCode::unsupported);
}

// ---- Windows activation (no PowerShell or cmd runs here: golden files and quoting) ----------------

namespace {
gen::WindowsActivation windows(const std::string& root) {
  gen::WindowsActivation a;
  a.name = "demo-stack";
  a.cudnn_version = "8.8.0.121";
  a.cudnn_root = root;
  a.dll_dir = root + "\\bin";
  a.cuda_path = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8";
  a.cuda_version = "11.8";
  return a;
}
}  // namespace

TEST(ActivatePs1, HostileRootIsALiteralPowerShellString) {
  auto text = gen::render_activate_ps1(windows("C:\\it's $env:X `n \xc3\xbc dir"));
  EXPECT_NE(text.find("$CudnnRoot = 'C:\\it''s $env:X `n \xc3\xbc dir'\n"), std::string::npos) << text;
  EXPECT_NE(text.find("$CudnnBin = 'C:\\it''s $env:X `n \xc3\xbc dir\\bin'\n"), std::string::npos) << text;
  EXPECT_NE(text.find("$CudaPathVar = 'CUDA_PATH_V11_8'"), std::string::npos) << text;
  // a line break in a value cannot end the header comment and become code
  auto nl = gen::render_activate_ps1(windows("C:\\x\nRemove-Item C:\\"));
  EXPECT_EQ(nl.find("\nRemove-Item C:\\\n"), std::string::npos) << nl;
}

TEST(ActivatePs1, KeepsTheRegistryTypeAndNeverUsesSetx) {
  auto text = gen::render_activate_ps1(windows("C:\\tools\\cudnn\\v8.8.0"));
  EXPECT_NE(text.find("GetValue('Path', '', 'DoNotExpandEnvironmentNames')"), std::string::npos) << text;
  EXPECT_NE(text.find("-Type $Kind"), std::string::npos) << text;
  EXPECT_NE(text.find("SendMessageTimeout"), std::string::npos) << text;
  EXPECT_NE(text.find("SupportsShouldProcess"), std::string::npos) << text;
  EXPECT_NE(text.find("os.add_dll_directory"), std::string::npos) << text;
  EXPECT_EQ(text.find("setx "), std::string::npos) << text;
}

TEST(ActivateCmd, QuotesPercentAndRefusesDoubleQuotes) {
  auto text = gen::render_activate_cmd(windows("C:\\100% & more"));
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("set \"STACKPIN_DIR=C:\\100%% & more\\bin\"\r\n"), std::string::npos) << *text;
  auto bad = gen::render_activate_cmd(windows("C:\\say \"hi\""));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, util::ErrorCode::unsupported);
}

TEST(ActivateWindows, MatchGoldenFilesOfTheFirstSeedsStack) {
  auto r = testing_support::stackpin({"generate", "activate", "--shell", "powershell",
                                      (testing_support::source_dir() / "manifests" / "cu118-cudnn880-win.toml").string()});
  testing_support::expect_golden(r.out, "activate-cu118-cudnn880-win.ps1");
  auto c = testing_support::stackpin(
      {"generate", "activate", "--shell", "cmd", (testing_support::source_dir() / "manifests" / "cu118-cudnn880-win.toml").string()});
  testing_support::expect_golden(c.out, "activate-cu118-cudnn880-win.cmd");
  EXPECT_NE(r.out.find("$CudnnBin = 'C:\\tools\\cudnn\\v8.8.0\\bin'"), std::string::npos) << r.out;
}

TEST(CheckPs1, EmbedsTheManifestsFactsAndMatchesTheGoldenFile) {
  auto r = testing_support::stackpin(
      {"generate", "windows-check", (testing_support::source_dir() / "manifests" / "cu118-cudnn880-win.toml").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  testing_support::expect_golden(r.out, "check-cu118-cudnn880-win.ps1");
  // 8.8.0: import library in lib\x64 (not lib, as the seed's own script assumed), zlibwapi needed,
  // NVIDIA's Windows minimum for CUDA 11.8 (not the seed's 522.25)
  EXPECT_NE(r.out.find("$ImportLib = 'C:\\tools\\cudnn\\v8.8.0\\lib\\x64\\cudnn.lib'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("$NeedZlib = $true"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("$MinDriver = '520.06'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vcruntime140_1.dll"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exit 1"), std::string::npos) << r.out;
  // cuDNN 9.13 for CUDA 13: no zlibwapi, the 580 branch floor
  auto v9 = testing_support::stackpin(
      {"generate", "windows-check", (testing_support::source_dir() / "manifests" / "cu130-cudnn913.toml").string()});
  EXPECT_NE(v9.out.find("$NeedZlib = $false"), std::string::npos) << v9.out;
  EXPECT_NE(v9.out.find("$MinDriver = '580'"), std::string::npos) << v9.out;
  EXPECT_NE(v9.out.find("$MainDll = 'cudnn64_9.dll'"), std::string::npos) << v9.out;
}

}  // namespace gen_test
