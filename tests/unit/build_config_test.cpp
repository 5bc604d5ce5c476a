// The build-system files (CUDNNConfig.cmake, CUDNNConfigVersion.cmake, cudnn.pc) and the profile.d
// snippet: golden files, hostile values, and the real tools reading them: cmake (find_package with
// version requests, a half-copied tree, a Windows tree through CMAKE_SYSTEM_NAME=Windows),
// pkg-config (--validate, the flags it prints) and sh/shellcheck for the snippet.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gen/activate.hpp"
#include "gen/build_config.hpp"
#include "gen/quote.hpp"
#include "golden.hpp"
#include "test_support.hpp"
#include "tree.hpp"

namespace build_config_test {

namespace fs = std::filesystem;
using testing_support::run_process;
using testing_support::ScratchDir;

namespace {

// quote, $, backticks, spaces, '#', a backslash and non-ASCII
const std::string k_hostile_dir = "it's a $HOME `id` \"q\" #x \\ \xc3\xbc dir";

// Runs a tool found on PATH (run_process takes a path).
testing_support::RunResult run_tool(std::vector<std::string> argv, const std::vector<std::string>& env = {}) {
  argv.insert(argv.begin(), {"/bin/sh", "-c", "exec \"$@\"", "sh"});
  return run_process(argv, env);
}

using testing_support::expect_golden;

gen::BuildConfig linux9() {
  gen::BuildConfig c;
  c.name = "demo-stack";
  c.version = "9.1.0.70";
  c.cudnn_major = 9;
  c.cuda_major = 12;
  c.platform = model::Platform::linux_x86_64;
  c.cmake_dir = "share/cmake/CUDNN";
  c.pkgconfig_dir = "lib64/pkgconfig";
  c.lib_dir = "lib64";
  c.libraries = {"cudnn",       "cudnn_adv",       "cudnn_cnn", "cudnn_engines_precompiled", "cudnn_engines_runtime_compiled",
                 "cudnn_graph", "cudnn_heuristic", "cudnn_ops"};
  c.static_libraries = c.libraries;
  return c;
}

gen::BuildConfig windows8() {
  gen::BuildConfig c;
  c.name = "cu118-cudnn880-win";
  c.version = "8.8.0.121";
  c.cudnn_major = 8;
  c.cuda_major = 11;
  c.platform = model::Platform::windows_x86_64;
  c.cmake_dir = "cmake";
  c.lib_dir = "lib/x64";
  c.bin_dir = "bin";
  c.libraries = {"cudnn", "cudnn_adv_infer", "cudnn_adv_train", "cudnn_cnn_infer", "cudnn_cnn_train", "cudnn_ops_infer", "cudnn_ops_train"};
  return c;
}

// A .deb's files at fixed places under a prefix made of hostile characters.
gen::BuildConfig hostile(const std::string& prefix) {
  gen::BuildConfig c;
  c.name = "it's \"q\" $x `id` \xc3\xbc\nline";
  c.version = "9.1.0.70";
  c.cudnn_major = 9;
  c.cuda_major = 12;
  c.prefix = prefix;
  c.lib_dir = "lib/x86_64-linux-gnu";
  c.libraries = {"cudnn", "cudnn_ops"};
  return c;
}

// The same for this machine's processor: cmake finds a tree for another one unsuitable.
gen::BuildConfig host_linux9() {
  auto c = linux9();
#if defined(__aarch64__)
  c.platform = model::Platform::linux_sbsa;
#endif
  return c;
}

// Creates the files a config names under `root`.
void make_tree(const fs::path& root, const gen::BuildConfig& c) {
  testing_support::write_file(root / c.include_dir / "cudnn.h", "/* x */\n");
  testing_support::write_file(root / c.include_dir / "cudnn_version.h", "/* x */\n");
  for (const auto& l : c.libraries) {
    if (model::is_windows(c.platform)) {
      testing_support::write_file(root / c.bin_dir / (l + "64_" + std::to_string(c.cudnn_major) + ".dll"), "MZ");
      testing_support::write_file(root / c.lib_dir / (l + ".lib"), "!<arch>\n");
    } else {
      testing_support::write_file(root / c.lib_dir / ("lib" + l + ".so." + std::to_string(c.cudnn_major)),
                                  "\x7f"
                                  "ELF");
    }
  }
  for (const auto& l : c.static_libraries) testing_support::write_file(root / c.lib_dir / ("lib" + l + "_static.a"), "!<arch>\n");
}

// Writes the CMake files for `c` into root/<cmake_dir>.
void write_cmake(const fs::path& root, const gen::BuildConfig& c) {
  testing_support::write_file(root / c.cmake_dir / "CUDNNConfig.cmake", gen::render_cmake_config(c));
  testing_support::write_file(root / c.cmake_dir / "CUDNNConfigVersion.cmake", gen::render_cmake_config_version(c));
}

// Configures a project (no language: no compiler needed) whose CMakeLists.txt body is `body`.
testing_support::RunResult configure(const fs::path& work, const std::string& body, const std::vector<std::string>& args) {
  static int n = 0;
  fs::path src = work / ("project-" + std::to_string(++n));
  testing_support::write_file(src / "CMakeLists.txt", "cmake_minimum_required(VERSION 3.16)\nproject(probe NONE)\n" + body);
  std::vector<std::string> argv{"cmake", "-S", src.string(), "-B", (src / "build").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_tool(argv);
}

const char* k_show_targets =
    "find_package(CUDNN 9 CONFIG REQUIRED)\n"
    "foreach(t cudnn cudnn_ops)\n"
    "  get_target_property(loc CUDNN::${t} IMPORTED_LOCATION)\n"
    "  get_target_property(soname CUDNN::${t} IMPORTED_SONAME)\n"
    "  get_target_property(implib CUDNN::${t} IMPORTED_IMPLIB)\n"
    "  message(STATUS \"[${t}] location=${loc}|soname=${soname}|implib=${implib}\")\n"
    "endforeach()\n"
    "get_target_property(inc CUDNN::cudnn INTERFACE_INCLUDE_DIRECTORIES)\n"
    "get_target_property(all CUDNN::cudnn_all INTERFACE_LINK_LIBRARIES)\n"
    "message(STATUS \"[vars] include=${inc}|all=${all}|CUDNN_INCLUDE_DIR=${CUDNN_INCLUDE_DIR}|CUDNN_LIBRARY=${CUDNN_LIBRARY}|\"\n"
    "  \"CUDNN_VERSION=${CUDNN_VERSION}|CUDNN_CUDA_MAJOR=${CUDNN_CUDA_MAJOR}|CUDNN_FOUND=${CUDNN_FOUND}\")\n";

}  // namespace

// ---- quoting ---------------------------------------------------------------------------------------

TEST(Quote, CMakeEscapesBackslashQuoteDollarAndLineBreaks) {
  EXPECT_EQ(gen::cmake_quote("C:\\a \"b\" ${X} $ENV{Y}\n\t"), "\"C:\\\\a \\\"b\\\" \\${X} \\$ENV{Y}\\n\\t\"");
}

TEST(Quote, PkgConfigEscapesEverythingButPlainPathCharacters) {
  EXPECT_EQ(*gen::pc_escape("/usr/lib/x86_64-linux-gnu"), "/usr/lib/x86_64-linux-gnu");
  EXPECT_EQ(*gen::pc_escape("/a b/it's/$x/#/\xc3\xbc"), "/a\\ b/it\\'s/\\$x/\\#/\xc3\xbc");
  auto bad = gen::pc_escape("/a\nb");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, util::ErrorCode::unsupported);
}

// ---- golden files ----------------------------------------------------------------------------------

TEST(BuildConfig, MatchesTheGoldenFiles) {
  expect_golden(gen::render_cmake_config(linux9()), "CUDNNConfig-cudnn9-linux.cmake");
  expect_golden(gen::render_cmake_config_version(linux9()), "CUDNNConfigVersion-cudnn9-linux.cmake");
  expect_golden(*gen::render_pkg_config(linux9()), "cudnn-cudnn9-linux.pc");
  expect_golden(gen::render_cmake_config(windows8()), "CUDNNConfig-cudnn8-windows.cmake");
  expect_golden(gen::render_cmake_config_version(windows8()), "CUDNNConfigVersion-cudnn8-windows.cmake");
  auto h = hostile("/opt/" + k_hostile_dir);
  expect_golden(gen::render_cmake_config(h), "CUDNNConfig-hostile.cmake");
  expect_golden(*gen::render_pkg_config(h), "cudnn-hostile.pc");
}

TEST(BuildConfig, HostileValuesStayLiteral) {
  auto h = hostile("/opt/" + k_hostile_dir);
  auto cmake = gen::render_cmake_config(h);
  EXPECT_NE(cmake.find("set(_cudnn_prefix \"/opt/it's a \\$HOME `id` \\\"q\\\" #x \\\\ \xc3\xbc dir\")\n"), std::string::npos) << cmake;
  // a line break in the manifest name cannot end the header comment and become code
  EXPECT_EQ(cmake.find("\nline"), std::string::npos) << cmake;
  auto pc = *gen::render_pkg_config(h);
  EXPECT_NE(pc.find("\nprefix=/opt/it\\'s\\ a\\ \\$HOME\\ \\`id\\`\\ \\\"q\\\"\\ \\#x\\ \\\\\\ \xc3\xbc\\ dir\n"), std::string::npos) << pc;
  EXPECT_NE(pc.find("\nlibdir=${prefix}/lib/x86_64-linux-gnu\n"), std::string::npos) << pc;
  auto bad = gen::render_pkg_config(hostile("/opt/a\nb"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, util::ErrorCode::unsupported);
  auto win = gen::render_pkg_config(windows8());
  ASSERT_FALSE(win.ok());
  EXPECT_EQ(win.error().code, util::ErrorCode::unsupported);
}

// ---- cmake reads them ------------------------------------------------------------------------------

TEST(BuildConfigCMake, RelocatableLinuxTreeGivesExactTargetsAndVariables) {
  if (!testing_support::have_tool("cmake")) GTEST_SKIP() << "cmake is not installed";
  ScratchDir dir;
  fs::path root = dir.path() / ("tree " + std::string("\xc3\xbc"));
  auto c = host_linux9();
  make_tree(root, c);
  write_cmake(root, c);
  auto r = configure(dir.path(), k_show_targets, {"-DCMAKE_PREFIX_PATH=" + root.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string lib = (root / "lib64").string();
  EXPECT_NE(r.out.find("[cudnn] location=" + lib + "/libcudnn.so.9|soname=libcudnn.so.9|implib=implib-NOTFOUND\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("[cudnn_ops] location=" + lib + "/libcudnn_ops.so.9|soname=libcudnn_ops.so.9|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[vars] include=" + (root / "include").string() + "|all=CUDNN::cudnn;CUDNN::cudnn_adv;"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("|CUDNN_INCLUDE_DIR=" + (root / "include").string() + "|CUDNN_LIBRARY=" + lib +
                       "/libcudnn.so.9|"
                       "CUDNN_VERSION=9.1.0.70|CUDNN_CUDA_MAJOR=12|CUDNN_FOUND=1\n"),
            std::string::npos)
      << r.out;

  // moved elsewhere, the tree finds itself there
  fs::path moved = dir.path() / "moved";
  fs::rename(root, moved);
  auto m = configure(dir.path(), k_show_targets, {"-DCMAKE_PREFIX_PATH=" + moved.string()});
  ASSERT_EQ(m.exit_code, 0) << m.out << m.err;
  EXPECT_NE(m.out.find("[cudnn] location=" + (moved / "lib64").string() + "/libcudnn.so.9|"), std::string::npos) << m.out;
}

TEST(BuildConfigCMake, VersionRequestsAndRanges) {
  if (!testing_support::have_tool("cmake")) GTEST_SKIP() << "cmake is not installed";
  ScratchDir dir;
  auto c = host_linux9();
  make_tree(dir.path() / "tree", c);
  write_cmake(dir.path() / "tree", c);
  std::string body;
  const std::vector<std::pair<std::string, bool>> requests{
      {"", true},   {"9", true},   {"9.1", true},       {"9.1.0.70 EXACT", true}, {"9.1 EXACT", false}, {"9.2", false},
      {"8", false}, {"10", false}, {"8.9...<10", true}, {"9.0...9.1", false},     {"9.0...9.2", true},  {"9.1.0.70...9.1.0.70", true}};
  for (std::size_t i = 0; i < requests.size(); ++i) {
    std::string v = std::to_string(i);
    // a fresh search each time: CUDNN_DIR would otherwise be remembered from the previous one
    body += "unset(CUDNN_DIR CACHE)\nfind_package(CUDNN " + requests[i].first + " CONFIG QUIET)\n";
    body += "if(CUDNN_FOUND)\n  message(STATUS \"request " + v + ": 1\")\nelse()\n  message(STATUS \"request " + v + ": 0\")\nendif()\n";
  }
  auto r = configure(dir.path(), body, {"-DCMAKE_PREFIX_PATH=" + (dir.path() / "tree").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (std::size_t i = 0; i < requests.size(); ++i)
    EXPECT_NE(r.out.find("request " + std::to_string(i) + ": " + (requests[i].second ? "1" : "0") + "\n"), std::string::npos)
        << "find_package(CUDNN " << requests[i].first << ")\n"
        << r.out;
}

TEST(BuildConfigCMake, HalfCopiedTreeNamesTheMissingFile) {
  if (!testing_support::have_tool("cmake")) GTEST_SKIP() << "cmake is not installed";
  ScratchDir dir;
  auto c = host_linux9();
  make_tree(dir.path() / "tree", c);
  write_cmake(dir.path() / "tree", c);
  fs::remove(dir.path() / "tree" / "lib64" / "libcudnn_ops.so.9");
  auto r = configure(dir.path(), "find_package(CUDNN CONFIG REQUIRED)\n", {"-DCMAKE_PREFIX_PATH=" + (dir.path() / "tree").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("but it set CUDNN_FOUND to FALSE"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("incomplete (half-copied?)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("libcudnn_ops.so.9"), std::string::npos) << r.err;
}

TEST(BuildConfigCMake, TreeForAnotherPlatformIsUnsuitable) {
  if (!testing_support::have_tool("cmake")) GTEST_SKIP() << "cmake is not installed";
  ScratchDir dir;
  auto c = windows8();
  make_tree(dir.path() / "win", c);
  write_cmake(dir.path() / "win", c);
  auto r = configure(dir.path(), "find_package(CUDNN CONFIG REQUIRED)\n", {"-DCMAKE_PREFIX_PATH=" + (dir.path() / "win").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("version: 8.8.0.121 (for windows-x86_64, not Linux"), std::string::npos) << r.err;
}

TEST(BuildConfigCMake, WindowsTreeGivesTheDllAndItsImportLibrary) {
  if (!testing_support::have_tool("cmake")) GTEST_SKIP() << "cmake is not installed";
  ScratchDir dir;
  auto c = windows8();
  c.libraries = {"cudnn", "cudnn_ops"};
  c.cudnn_major = 9;
  c.version = "9.19.0.56";
  c.bin_dir = "bin/x64";
  fs::path root = dir.path() / "Program Files" / "cuDNN";
  make_tree(root, c);
  write_cmake(root, c);
  // CMAKE_SYSTEM_NAME=Windows: CMake takes the platform to be Windows (no compiler is needed for NONE)
  auto r = configure(dir.path(), k_show_targets, {"-DCMAKE_SYSTEM_NAME=Windows", "-DCMAKE_PREFIX_PATH=" + root.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("[cudnn] location=" + (root / "bin/x64/cudnn64_9.dll").string() +
                       "|soname=soname-NOTFOUND|implib=" + (root / "lib/x64/cudnn.lib").string() + "\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("[cudnn_ops] location=" + (root / "bin/x64/cudnn_ops64_9.dll").string() +
                       "|soname=soname-NOTFOUND|implib=" + (root / "lib/x64/cudnn_ops.lib").string() + "\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("CUDNN_LIBRARY=" + (root / "lib/x64/cudnn.lib").string() + "|"), std::string::npos) << r.out;
}

TEST(BuildConfigCMake, HostileAbsolutePrefixIsTakenLiterally) {
  if (!testing_support::have_tool("cmake")) GTEST_SKIP() << "cmake is not installed";
  ScratchDir dir;
  fs::path prefix = dir.path() / k_hostile_dir;
  auto c = hostile(prefix.string());
  c.platform = host_linux9().platform;
  make_tree(prefix, c);
  // an absolute configuration can lie anywhere: CUDNN_DIR names its folder
  testing_support::write_file(dir.path() / "cfg" / "CUDNNConfig.cmake", gen::render_cmake_config(c));
  testing_support::write_file(dir.path() / "cfg" / "CUDNNConfigVersion.cmake", gen::render_cmake_config_version(c));
  auto r = configure(dir.path(), k_show_targets, {"-DCUDNN_DIR=" + (dir.path() / "cfg").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("[cudnn] location=" + (prefix / "lib/x86_64-linux-gnu/libcudnn.so.9").string() + "|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[vars] include=" + (prefix / "include").string() + "|"), std::string::npos) << r.out;
}

// ---- pkg-config reads them -------------------------------------------------------------------------

namespace {
// The arguments of pkg-config's output as a POSIX shell splits them without expanding anything
// (xargs: blanks separate, backslashes and quotes protect), one per line.
testing_support::RunResult pc_args(const fs::path& pcdir, const std::string& query) {
  return run_process({"/bin/sh", "-c", "pkg-config " + query + " cudnn | xargs printf '%s\\n'"}, {"PKG_CONFIG_PATH=" + pcdir.string()});
}
}  // namespace

TEST(BuildConfigPkgConfig, RelocatableFileValidatesAndFindsTheTreeWhereverItIs) {
  if (!testing_support::have_tool("pkg-config")) GTEST_SKIP() << "pkg-config is not installed";
  ScratchDir dir;
  fs::path root = dir.path() / "tree with space \xc3\xbc";
  auto c = linux9();
  testing_support::write_file(root / c.pkgconfig_dir / "cudnn.pc", *gen::render_pkg_config(c));
  auto v = run_tool({"pkg-config", "--validate", "cudnn"}, {"PKG_CONFIG_PATH=" + (root / c.pkgconfig_dir).string()});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  auto mv = run_tool({"pkg-config", "--modversion", "cudnn"}, {"PKG_CONFIG_PATH=" + (root / c.pkgconfig_dir).string()});
  EXPECT_EQ(mv.out, "9.1.0.70\n") << mv.err;
  auto r = pc_args(root / c.pkgconfig_dir, "--cflags --libs");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string base = (root / c.pkgconfig_dir).string() + "/../..";
  EXPECT_EQ(r.out, "-I" + base + "/include\n-L" + base + "/lib64\n-lcudnn\n");
}

TEST(BuildConfigPkgConfig, HostileAbsolutePrefixComesBackLiterally) {
  if (!testing_support::have_tool("pkg-config")) GTEST_SKIP() << "pkg-config is not installed";
  ScratchDir dir;
  std::string prefix = "/opt/" + k_hostile_dir;
  testing_support::write_file(dir.path() / "cudnn.pc", *gen::render_pkg_config(hostile(prefix)));
  auto v = run_tool({"pkg-config", "--validate", "cudnn"}, {"PKG_CONFIG_PATH=" + dir.path().string()});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  auto r = pc_args(dir.path(), "--cflags --libs");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "-I" + prefix + "/include\n-L" + prefix + "/lib/x86_64-linux-gnu\n-lcudnn\n");
}

// ---- the profile.d snippet ---------------------------------------------------------------------------

namespace {
gen::LinuxActivation activation(const std::string& prefix) { return {"demo-stack", "9.1.0.70", prefix}; }
}  // namespace

TEST(ProfileD, MatchesTheGoldenFile) { expect_golden(gen::render_profile_d(activation("/usr/local/cudnn-9.1.0")), "profile.d.sh"); }

TEST(ProfileD, PassesShellcheckWithHostileValues) {
  if (!testing_support::have_tool("shellcheck"))
    GTEST_SKIP() << "shellcheck is not installed (scripts/install-deps.sh --tools installs it)";
  ScratchDir dir;
  for (const auto& prefix : {std::string("/usr/local/cudnn-9.1.0"), "/opt/" + k_hostile_dir}) {
    auto p = dir.write("stackpin-demo.sh", gen::render_profile_d(activation(prefix)));
    auto r = run_tool({"shellcheck", "-s", "sh", p.string()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  }
}

TEST(ProfileD, SourcedTwiceUnderSetUAndSetESetsTheEnvironmentOnceAndPrintsNothing) {
  ScratchDir dir;
  for (const auto& name : {std::string("cudnn"), k_hostile_dir}) {
    fs::path prefix = dir.path() / name;
    fs::create_directories(prefix / "lib64");
    auto p = dir.write("stackpin-demo.sh", gen::render_profile_d(activation(prefix.string() + "/")));
    // what a login shell does: source it (here twice), under -u and -e; nothing may be printed
    std::string script =
        "set -eu; . \"$1\" >\"$2\" 2>&1; first=$LD_LIBRARY_PATH; . \"$1\" >>\"$2\" 2>&1; "
        "[ \"$first\" = \"$LD_LIBRARY_PATH\" ] || echo CHANGED; "
        "printf '%s\\n%s\\n' \"$LD_LIBRARY_PATH\" \"$CUDNN_PATH\"; "
        "set | grep -E '^(stackpin_|_sp_)' || true; command -v stackpin_front || true";
    for (const char* shell : {"/bin/sh", "/bin/bash"}) {
      SCOPED_TRACE(std::string(shell) + " " + prefix.string());
      auto out = dir.path() / "printed";
      auto r = run_process({shell, "-c", script, "sh", p.string(), out.string()},
                           {"LD_LIBRARY_PATH=/a:" + prefix.string() + "/lib64:/b with space"});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      if (fs::is_directory("/usr/lib/wsl/lib")) GTEST_SKIP() << "running under WSL2: /usr/lib/wsl/lib is added too";
      EXPECT_EQ(r.out, prefix.string() + "/lib64:/a:/b with space\n" + prefix.string() + "\n");
      EXPECT_EQ(testing_support::read_text(out), "");
    }
    // with LD_LIBRARY_PATH unset too (set -u must not trip over it)
    auto u = run_process({"/bin/sh", "-c", "set -eu; unset LD_LIBRARY_PATH; . \"$1\"; printf '%s' \"$LD_LIBRARY_PATH\"", "sh", p.string()});
    ASSERT_EQ(u.exit_code, 0) << u.err;
    if (!fs::is_directory("/usr/lib/wsl/lib")) {
      EXPECT_EQ(u.out, prefix.string() + "/lib64");
    }
  }
}

TEST(ProfileD, ChangesNothingWhileTheTreeIsNotThere) {
  ScratchDir dir;
  auto p = dir.write("stackpin-demo.sh", gen::render_profile_d(activation((dir.path() / "removed").string())));
  auto r =
      run_process({"/bin/sh", "-c",
                   "set -eu; unset LD_LIBRARY_PATH CUDNN_PATH; . \"$1\"; . \"$1\"; echo \"${LD_LIBRARY_PATH-unset} ${CUDNN_PATH-unset}\"; "
                   "set | grep -E '^(stackpin_|_sp_)' || true",
                   "sh", p.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "unset unset\n");
}

}  // namespace build_config_test
