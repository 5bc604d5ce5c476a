// A staged tree is usable from build systems: `stackpin stage` writes the CMake package
// configuration and the pkg-config file, and real cmake and pkg-config + cc build a small program
// against a staged Linux tree whose libcudnn.so.9 is a real shared library (the CPU test double of
// tests/doubles, which exports cudnnGetVersion), in a DEST whose path has a space and non-ASCII.
// Also `stackpin generate profile-d`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "test_support.hpp"
#include "tree.hpp"

namespace cli_build_systems_test {

using nlohmann::json;
using testing_support::run_process;
using testing_support::ScratchDir;
using testing_support::stackpin;

namespace {
namespace fs = std::filesystem;

// Runs a tool found on PATH (run_process takes a path).
testing_support::RunResult run_tool(std::vector<std::string> argv, const std::vector<std::string>& env = {}) {
  argv.insert(argv.begin(), {"/bin/sh", "-c", "exec \"$@\"", "sh"});
  return run_process(argv, env);
}

using testing_support::show;

std::string host_platform() {
#if defined(__aarch64__)
  return "linux-sbsa";
#else
  return "linux-x86_64";
#endif
}

const char* k_header =
    "/* Stand-in for NVIDIA's cudnn.h in a stackpin test: only what the test program calls. */\n"
    "#ifndef CUDNN_H_\n#define CUDNN_H_\n#include <stddef.h>\n#include \"cudnn_version.h\"\n"
    "#ifdef __cplusplus\nextern \"C\" {\n#endif\nsize_t cudnnGetVersion(void);\n"
    "#ifdef __cplusplus\n}\n#endif\n#endif\n";

const char* k_program =
    "#include <stdio.h>\n#include <cudnn.h>\n"
    "int main(void) {\n"
    "  printf(\"cudnnGetVersion %zu, CUDNN_VERSION %d\\n\", cudnnGetVersion(), (int)CUDNN_VERSION);\n"
    "  return cudnnGetVersion() == CUDNN_VERSION ? 0 : 1;\n"
    "}\n";

// cuDNN 9.1.0.70 in NVIDIA's layout with the test double as libcudnn.so.9.1.0 and a cudnn.h that
// declares cudnnGetVersion; a manifest pinning it.
struct World {
  ScratchDir dir;
  fs::path archives() const { return dir.path() / "archives"; }
  fs::path manifest() const { return dir.path() / "stack.toml"; }
  World() {
    const std::string platform = host_platform(), version = "9.1.0.70";
    auto entries = fixtures::cudnn_linux_entries(version, 12, {}, platform);
    const std::string top = "cudnn-" + platform + "-" + version + "_cuda12-archive";
    const fs::path library = testing_support::doubles_dir() / "cuda12-cudnn9" / "libcudnn.so.9";
    int replaced = 0;
    for (auto& e : entries) {
      if (e.path == top + "/lib/libcudnn.so.9.1.0") e.data = testing_support::read_text(library), ++replaced;
      if (e.path == top + "/include/cudnn.h") e.data = k_header, ++replaced;
    }
    if (replaced != 2) throw std::runtime_error("the fixture's layout changed: libcudnn.so.9.1.0 or cudnn.h not found");
    fs::create_directories(archives());
    fs::path archive = archives() / fixtures::cudnn_archive_name(platform, version, 12);
    fixtures::write_archive(archive, fixtures::Format::tar_xz, entries);
    testing_support::write_file(manifest(),
                                fixtures::local_manifest(version, 12, "12.4.1", {{platform, fixtures::info(archive)}},
                                                         "[targets.linux]\nlayout = \"lib64\"\nprefix = \"/usr/local/cudnn-9.1.0\"\n"));
  }
  std::vector<std::string> stage(const fs::path& dest, const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> a{"stage",  manifest().string(), "--archives", archives().string(), "--target", "linux",
                               "--dest", dest.string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
};

// Runs the program with the staged tree on the loader path; the double reports the staged version.
void expect_runs(const fs::path& program, const fs::path& dest) {
  auto r = run_process({program.string()}, {"LD_LIBRARY_PATH=" + (dest / "lib64").string(), "STACKPIN_FAKE_CUDNN_VERSION=90100"});
  EXPECT_EQ(r.exit_code, 0) << show(r);
  EXPECT_EQ(r.out, "cudnnGetVersion 90100, CUDNN_VERSION 90100\n") << show(r);
}

}  // namespace

TEST(CliBuildSystems, StageWritesTheFilesAndUnstageRemovesThem) {
  World w;
  auto dest = w.dir.path() / "staged cudnn \xc3\xbc";
  auto r = stackpin(w.stage(dest, {"--json"}));
  ASSERT_EQ(r.exit_code, 0) << show(r);
  auto j = json::parse(r.out);
  EXPECT_EQ(j["report"]["build_files"],
            json::array({(dest / "share/cmake/CUDNN/CUDNNConfig.cmake").string(),
                         (dest / "share/cmake/CUDNN/CUDNNConfigVersion.cmake").string(), (dest / "lib64/pkgconfig/cudnn.pc").string()}));
  EXPECT_EQ(j["report"]["build_files_note"], "");
  // the plain output lists them too, also for a no-op restage
  auto again = stackpin(w.stage(dest));
  EXPECT_EQ(again.exit_code, 0) << show(again);
  EXPECT_NE(again.out.find("already staged"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("  build    " + (dest / "lib64/pkgconfig/cudnn.pc").string() + "\n"), std::string::npos) << again.out;
  // a missing one comes back on restage
  fs::remove(dest / "share/cmake/CUDNN/CUDNNConfigVersion.cmake");
  auto restored = stackpin(w.stage(dest));
  EXPECT_EQ(restored.exit_code, 0) << show(restored);
  EXPECT_TRUE(fs::is_regular_file(dest / "share/cmake/CUDNN/CUDNNConfigVersion.cmake"));
  auto un = stackpin({"unstage", "--dest", dest.string()});
  EXPECT_EQ(un.exit_code, 0) << show(un);
  EXPECT_EQ(testing_support::snapshot(dest), testing_support::Tree{});
}

TEST(CliBuildSystems, CMakeFindPackageBuildsAndRunsAProgram) {
  for (const char* tool : {"cmake", "cc"})
    if (!testing_support::have_tool(tool)) GTEST_SKIP() << tool << " is not installed";
  World w;
  auto dest = w.dir.path() / "staged cudnn \xc3\xbc";
  auto r = stackpin(w.stage(dest));
  ASSERT_EQ(r.exit_code, 0) << show(r);
  auto src = w.dir.path() / "app";
  testing_support::write_file(src / "main.c", k_program);
  testing_support::write_file(src / "CMakeLists.txt",
                              "cmake_minimum_required(VERSION 3.16)\nproject(app C)\n"
                              "find_package(CUDNN 9.1 CONFIG REQUIRED)\n"
                              "message(STATUS \"cuDNN ${CUDNN_VERSION} from ${CUDNN_DIR}\")\n"
                              "add_executable(app main.c)\ntarget_link_libraries(app PRIVATE CUDNN::cudnn)\n");
  auto build = w.dir.path() / "app build";
  auto cfg = run_tool({"cmake", "-S", src.string(), "-B", build.string(), "-DCMAKE_PREFIX_PATH=" + dest.string()});
  ASSERT_EQ(cfg.exit_code, 0) << show(cfg);
  EXPECT_NE(cfg.out.find("cuDNN 9.1.0.70 from " + (dest / "share/cmake/CUDNN").string()), std::string::npos) << cfg.out;
  auto b = run_tool({"cmake", "--build", build.string()});
  ASSERT_EQ(b.exit_code, 0) << show(b);
  expect_runs(build / "app", dest);
}

TEST(CliBuildSystems, PkgConfigAndCcBuildAndRunAProgram) {
  for (const char* tool : {"pkg-config", "cc"})
    if (!testing_support::have_tool(tool)) GTEST_SKIP() << tool << " is not installed";
  World w;
  auto dest = w.dir.path() / "staged cudnn \xc3\xbc";
  auto r = stackpin(w.stage(dest));
  ASSERT_EQ(r.exit_code, 0) << show(r);
  const std::string pc_path = "PKG_CONFIG_PATH=" + (dest / "lib64" / "pkgconfig").string();
  auto v = run_tool({"pkg-config", "--modversion", "cudnn"}, {pc_path});
  EXPECT_EQ(v.out, "9.1.0.70\n") << show(v);
  auto src = w.dir.path() / "main.c";
  testing_support::write_file(src, k_program);
  auto program = w.dir.path() / "app pc";
  // pkg-config escapes the blank in the path: the shell reads its output back (as make does)
  auto cc = run_process({"/bin/sh", "-c", "eval \"cc \\\"\\$1\\\" $(pkg-config --cflags --libs cudnn) -o \\\"\\$2\\\"\"", "sh",
                         src.string(), program.string()},
                        {pc_path});
  ASSERT_EQ(cc.exit_code, 0) << show(cc);
  expect_runs(program, dest);

  // relocatable: the tree copied elsewhere is found there
  auto copy = w.dir.path() / "copied tree";
  fs::copy(dest, copy, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  auto lib = run_tool({"pkg-config", "--variable=libdir", "cudnn"}, {"PKG_CONFIG_PATH=" + (copy / "lib64" / "pkgconfig").string()});
  std::string escaped;  // pkg-config escapes the blank
  for (char c : (copy / "lib64" / "pkgconfig").string()) escaped += c == ' ' ? std::string("\\ ") : std::string(1, c);
  EXPECT_EQ(lib.out, escaped + "/../../lib64\n") << show(lib);
}

TEST(CliBuildSystems, GenerateProfileD) {
  World w;
  auto prefix = w.dir.path() / "cudnn tree";
  fs::create_directories(prefix / "lib64");
  auto out = w.dir.path() / "stackpin-fixture.sh";
  auto r = stackpin({"generate", "profile-d", w.manifest().string(), "--prefix", prefix.string(), "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << show(r);
  EXPECT_EQ(r.out, "");
  auto text = testing_support::read_text(out);
  EXPECT_NE(text.find("# Install as /etc/profile.d/stackpin-fixture.sh"), std::string::npos) << text;
  if (testing_support::have_tool("shellcheck")) {
    auto sc = run_tool({"shellcheck", "-s", "sh", out.string()});
    EXPECT_EQ(sc.exit_code, 0) << show(sc);
  }
  auto sourced = run_process(
      {"/bin/sh", "-u", "-c", ". \"$1\"; . \"$1\"; printf '%s\\n%s\\n' \"$LD_LIBRARY_PATH\" \"$CUDNN_PATH\"", "sh", out.string()},
      {"LD_LIBRARY_PATH=/x"});
  ASSERT_EQ(sourced.exit_code, 0) << show(sourced);
  if (!fs::is_directory("/usr/lib/wsl/lib")) {
    EXPECT_EQ(sourced.out, (prefix / "lib64").string() + ":/x\n" + prefix.string() + "\n");
  }
  // the default prefix is the manifest's [targets.linux] prefix
  auto d = stackpin({"generate", "profile-d", w.manifest().string()});
  EXPECT_EQ(d.exit_code, 0) << show(d);
  EXPECT_NE(d.out.find("stackpin_cudnn_root='/usr/local/cudnn-9.1.0'"), std::string::npos) << d.out;
  // usage and missing prefix
  EXPECT_EQ(stackpin({"generate", "profile-d"}).exit_code, 2);
  EXPECT_EQ(stackpin({"generate", "profile-d", w.manifest().string(), "--prefix", "relative"}).exit_code, 2);
  auto m = w.dir.write("no-prefix.toml", "schema = 1\nname = \"x\"\n[cudnn]\nversion = \"9.1.0.70\"\ncuda = 12\n");
  auto np = stackpin({"generate", "profile-d", m.string()});
  EXPECT_EQ(np.exit_code, 1) << show(np);
  EXPECT_NE(np.err.find("[targets.linux] prefix"), std::string::npos) << np.err;
}

}  // namespace cli_build_systems_test
