// stackpin deb: the packages as dpkg-deb and lintian see them, golden control files (with a
// hostile manifest name), reproducibility, and every refusal leaving the output folder untouched.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "golden.hpp"
#include "test_support.hpp"
#include "util/file_lock.hpp"

namespace cli_deb_test {

namespace fs = std::filesystem;
using testing_support::run_process;
using testing_support::RunResult;
using testing_support::ScratchDir;
using testing_support::stackpin;

namespace {

struct DebSetup {
  ScratchDir dir;
  fs::path manifest, archives, out;
  fixtures::Info archive;
  explicit DebSetup(bool elf = true, const std::string& description_line = "") {
    archives = dir.path() / "archives";
    out = dir.path() / "out";
    fs::create_directories(archives);
    archive = elf ? fixtures::make_cudnn_linux_elf(archives, testing_support::doubles_dir() / "stems")
                  : fixtures::make_cudnn_linux(archives, "9.1.0.70", 12);
    std::string text = fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"linux-x86_64", archive}});
    if (!description_line.empty()) text.replace(text.find("name = \"fixture\""), 16, "name = \"fixture\"\n" + description_line);
    manifest = dir.write("stack.toml", text);
  }
  RunResult deb(std::vector<std::string> more = {}, std::vector<std::string> env = {}) const {
    std::vector<std::string> args = {"deb", manifest.string(), "--archives", archives.string(), "--out-dir", out.string()};
    args.insert(args.end(), more.begin(), more.end());
    return stackpin(args, env);
  }
  fs::path runtime() const { return out / "stackpin-libcudnn9-cuda-12_9.1.0.70-1+cuda12_amd64.deb"; }
  fs::path dev() const { return out / "stackpin-libcudnn9-dev-cuda-12_9.1.0.70-1+cuda12_amd64.deb"; }
};

std::set<std::string> contents(const fs::path& deb) {
  auto r = run_process({testing_support::tool_path("dpkg-deb"), "--contents", deb.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> paths;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    auto at = line.find(" ./");
    if (at == std::string::npos) continue;
    std::string p = line.substr(at + 1);
    if (auto arrow = p.find(" -> "); arrow != std::string::npos) p = p.substr(0, arrow);
    paths.insert(p);
  }
  return paths;
}

std::string field(const fs::path& deb, const std::string& name) {
  auto r = run_process({testing_support::tool_path("dpkg-deb"), "--field", deb.string(), name});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.out;
}

}  // namespace

TEST(DebCli, BuildsARuntimeAndADevPackageThatDpkgDebReads) {
  if (!testing_support::have_tool("dpkg-deb")) GTEST_SKIP() << "dpkg-deb is not installed";
  DebSetup s;
  auto r = s.deb();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("stackpin-libcudnn9-cuda-12 9.1.0.70-1+cuda12 amd64 (runtime"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sudo dpkg -i"), std::string::npos) << r.out;
  ASSERT_TRUE(fs::exists(s.runtime()));
  ASSERT_TRUE(fs::exists(s.dev()));

  EXPECT_EQ(field(s.runtime(), "Architecture"), "amd64");
  EXPECT_EQ(field(s.runtime(), "Multi-Arch"), "no") << "the doc files differ between architectures (dpkg-deb shows the default)";
  // Depends from the ELF dynamic sections: the doubles need libc and libm only.
  std::string depends = field(s.runtime(), "Depends");
  EXPECT_EQ(depends.rfind("libc6 (>= 2.", 0), 0u) << depends;
  EXPECT_EQ(depends.find("libstdc++"), std::string::npos) << depends;
  EXPECT_EQ(field(s.runtime(), "Recommends"), "cuda-cudart-12-4 | libcudart12, libcublas-12-4 | libcublaslt12");
  EXPECT_NE(field(s.runtime(), "Conflicts").find("libcudnn9-cuda-12"), std::string::npos) << field(s.runtime(), "Conflicts");
  EXPECT_NE(field(s.runtime(), "Replaces").find("libcudnn9-cuda-12"), std::string::npos) << field(s.runtime(), "Replaces");
  EXPECT_EQ(field(s.runtime(), "Provides"), "libcudnn9-cuda-12 (= 9.1.0.70-1), stackpin-libcudnn9");
  EXPECT_EQ(field(s.dev(), "Depends"), "stackpin-libcudnn9-cuda-12 (= 9.1.0.70-1+cuda12)");

  auto rt = contents(s.runtime());
  EXPECT_TRUE(rt.count("./usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0"));
  EXPECT_TRUE(rt.count("./usr/lib/x86_64-linux-gnu/libcudnn.so.9"));
  EXPECT_FALSE(rt.count("./usr/lib/x86_64-linux-gnu/libcudnn.so")) << "the link-time name belongs to -dev";
  EXPECT_TRUE(rt.count("./usr/share/doc/stackpin-libcudnn9-cuda-12/copyright"));
  EXPECT_TRUE(rt.count("./usr/share/doc/stackpin-libcudnn9-cuda-12/changelog.Debian.gz"));
  auto dv = contents(s.dev());
  EXPECT_TRUE(dv.count("./usr/include/cudnn.h"));
  EXPECT_TRUE(dv.count("./usr/include/cudnn_version.h"));
  EXPECT_TRUE(dv.count("./usr/lib/x86_64-linux-gnu/libcudnn.so"));
  EXPECT_TRUE(dv.count("./usr/lib/x86_64-linux-gnu/libcudnn_ops_static.a"));
  EXPECT_TRUE(dv.count("./usr/lib/x86_64-linux-gnu/cmake/CUDNN/CUDNNConfig.cmake"));
  EXPECT_TRUE(dv.count("./usr/lib/x86_64-linux-gnu/cmake/CUDNN/CUDNNConfigVersion.cmake"));
  EXPECT_TRUE(dv.count("./usr/lib/x86_64-linux-gnu/pkgconfig/cudnn.pc"));
  for (const auto& p : rt) EXPECT_EQ(p.find("/usr/local"), std::string::npos) << p;

  // Control members: shlibs per SONAME, the ldconfig trigger, md5sums that match the files.
  auto shlibs = run_process({testing_support::tool_path("dpkg-deb"), "--info", s.runtime().string(), "shlibs"});
  EXPECT_NE(shlibs.out.find("libcudnn_ops 9 stackpin-libcudnn9-cuda-12 (>= 9.1.0.70-1+cuda12)"), std::string::npos) << shlibs.out;
  auto triggers = run_process({testing_support::tool_path("dpkg-deb"), "--info", s.runtime().string(), "triggers"});
  EXPECT_EQ(triggers.out, "activate-noawait ldconfig\n");
  fs::path x = s.dir.path() / "x";
  ASSERT_EQ(run_process({testing_support::tool_path("dpkg-deb"), "-x", s.runtime().string(), x.string()}).exit_code, 0);
  auto md5 = run_process({testing_support::tool_path("dpkg-deb"), "--info", s.runtime().string(), "md5sums"});
  s.dir.write("md5sums", md5.out);
  auto check = run_process({testing_support::tool_path("md5sum"), "-c", (s.dir.path() / "md5sums").string()}, {}, x);
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(md5.out.find("usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0"), std::string::npos) << md5.out;
}

TEST(DebCli, LintianFindsNothingUnexplained) {
  if (!testing_support::have_tool("lintian")) GTEST_SKIP() << "lintian is not installed (scripts/install-deps.sh --tools installs it)";
  DebSetup s;
  ASSERT_EQ(s.deb().exit_code, 0);
  auto r = run_process(
      {testing_support::tool_path("lintian"), "--no-cfg", "--fail-on", "error,warning", s.runtime().string(), s.dev().string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("E: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("W: "), std::string::npos) << r.out;
}

// An archive whose libraries are not libraries (text where the shared objects belong) is not a
// whole cuDNN: refused before any package is written, naming the files.
TEST(DebCli, LibrariesThatAreNotLibrariesAreRefused) {
  if (!testing_support::have_tool("dpkg-deb")) GTEST_SKIP() << "dpkg-deb is not installed";
  DebSetup s(false);
  auto entries = fixtures::cudnn_linux_entries("9.1.0.70", 12);
  for (auto& e : entries)
    if (e.kind == fixtures::Kind::file && e.path.find("/lib/lib") != std::string::npos && e.path.find(".so") != std::string::npos)
      e.data = "not an ELF object\n";
  fixtures::write_archive(s.archive.path, fixtures::Format::tar_xz, entries);
  auto info = fixtures::info(s.archive.path);
  s.manifest = s.dir.write("stack.toml", fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"linux-x86_64", info}}));
  auto r = s.deb();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("is not whole"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("libcudnn_ops.so.9.1.0 cannot be read as a library (it is too short for a library)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(s.runtime())) << "no package from a cuDNN that is not whole";
  EXPECT_FALSE(fs::exists(s.dev()));
}

TEST(DebCli, SameArchiveAndManifestGiveTheSameBytes) {
  DebSetup s;
  ASSERT_EQ(s.deb().exit_code, 0);
  std::string rt1 = testing_support::read_text(s.runtime()), dev1 = testing_support::read_text(s.dev());
  fs::path first = s.out;
  s.out = s.dir.path() / "out2";
  ASSERT_EQ(s.deb().exit_code, 0);
  EXPECT_EQ(testing_support::read_text(s.runtime()), rt1) << "runtime package differs between two builds";
  EXPECT_EQ(testing_support::read_text(s.dev()), dev1) << "dev package differs between two builds";
  // A rebuild into the same folder reports the packages unchanged.
  s.out = first;
  auto again = s.deb();
  EXPECT_NE(again.out.find("unchanged"), std::string::npos) << again.out;
  // SOURCE_DATE_EPOCH sets every timestamp, and the same value gives the same bytes again.
  s.out = s.dir.path() / "sde1";
  ASSERT_EQ(s.deb({}, {"SOURCE_DATE_EPOCH=1700000000"}).exit_code, 0);
  std::string sde1 = testing_support::read_text(s.runtime());
  EXPECT_NE(sde1, rt1);
  s.out = s.dir.path() / "sde2";
  ASSERT_EQ(s.deb({}, {"SOURCE_DATE_EPOCH=1700000000"}).exit_code, 0);
  EXPECT_EQ(testing_support::read_text(s.runtime()), sde1);
  if (testing_support::have_tool("dpkg-deb")) {
    auto r = run_process({testing_support::tool_path("dpkg-deb"), "--contents", s.runtime().string()});
    EXPECT_NE(r.out.find("root/root"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("2023-11-14 22:13"), std::string::npos) << r.out;
  }
}

TEST(DebCli, ControlFilesMatchGoldenWithAHostileManifestName) {
  if (!testing_support::have_tool("dpkg-deb")) GTEST_SKIP() << "dpkg-deb is not installed";
  // A description carrying quotes, $, backticks, non-ASCII, a blank line and a line break that
  // tries to add a field; a maintainer with quotes and non-ASCII.
  DebSetup s(true, "description = \"team \\\"gpu\\\" $HOME `id` caf\u00e9\\n\\nEssential: yes\"");
  auto r = s.deb({"--maintainer", "Ad\u00e1 \"Countess\" Lovelace <ada@example.org>"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const auto& [deb, name] : {std::pair{s.runtime(), "runtime.control"}, std::pair{s.dev(), "dev.control"}}) {
    auto c = run_process({testing_support::tool_path("dpkg-deb"), "--info", deb.string(), "control"});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    // What depends on the compiler that built the library doubles is replaced by placeholders.
    auto replace = [&](const std::string& from, const std::string& to) {
      if (auto at = c.out.find(from); at != std::string::npos) c.out.replace(at, from.size(), to);
    };
    replace(s.archive.sha256, "<archive-sha256>");
    for (const char* key : {"Installed-Size: ", "libc6 (>= "}) {
      auto at = c.out.find(key);
      if (at == std::string::npos) continue;
      at += std::string(key).size();
      auto end = c.out.find_first_of(")\n", at);
      c.out.replace(at, end - at, "<n>");
    }
    testing_support::expect_golden(c.out, std::string("deb/") + name);
    EXPECT_EQ(c.out.find("\nEssential:"), std::string::npos) << "a manifest value added a control field";
  }
}

TEST(DebCli, RefusalsWriteNoPackage) {
  DebSetup s;
  // wrong hash
  std::string text = testing_support::read_text(s.manifest);
  std::string bad = text;
  bad.replace(bad.find(s.archive.sha256), 64, std::string(64, 'a'));
  s.dir.write("bad-hash.toml", bad);
  auto r = stackpin({"deb", (s.dir.path() / "bad-hash.toml").string(), "--archives", s.archives.string(), "--out-dir", s.out.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("SHA-256 mismatch"), std::string::npos) << r.err;
  // a corrupted copy under the pinned name: refused while it is read
  fs::path real = s.archives / s.archive.path.filename();
  fixtures::corrupt_copy(real, s.dir.path() / "corrupt.tar.xz", s.archive.size / 2);
  fs::path corrupt_dir = s.dir.path() / "corrupt";
  fs::create_directories(corrupt_dir);
  fs::rename(s.dir.path() / "corrupt.tar.xz", corrupt_dir / s.archive.path.filename());
  r = stackpin({"deb", s.manifest.string(), "--archives", corrupt_dir.string(), "--out-dir", s.out.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(r.err.find("SHA-256 mismatch") != std::string::npos || r.err.find("corrupt") != std::string::npos ||
              r.err.find("invalid") != std::string::npos || r.err.find("error") != std::string::npos)
      << r.err;
  // usage errors
  r = s.deb({"--platform", "windows-x86_64"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = s.deb({"--maintainer", "no email"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("Full Name <email"), std::string::npos) << r.err;
  r = s.deb({"--compression", "bz2"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = s.deb({}, {"SOURCE_DATE_EPOCH=yesterday"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  // no CUDA major (neither cudnn.cuda nor a [cuda] release to take it from): the error points into the manifest
  std::string no_cuda = text;
  no_cuda.erase(no_cuda.find("cuda = 12\n"), 10);
  const std::string cuda_table = "[cuda]\nversion = \"12.4.1\"\n";
  no_cuda.erase(no_cuda.find(cuda_table), cuda_table.size());
  s.dir.write("no-cuda.toml", no_cuda);
  r = stackpin({"deb", (s.dir.path() / "no-cuda.toml").string(), "--archives", s.archives.string(), "--out-dir", s.out.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("no-cuda.toml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cuda = <major>"), std::string::npos) << r.err;
  // an x86-64 library pinned as the arm64 (linux-sbsa) archive
  std::string sbsa = text;
  sbsa.replace(sbsa.find("linux-x86_64"), 12, "linux-sbsa");
  s.dir.write("sbsa.toml", sbsa);
  r = stackpin({"deb", (s.dir.path() / "sbsa.toml").string(), "--archives", s.archives.string(), "--out-dir", s.out.string(), "--platform",
                "linux-sbsa"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("built for x86_64, not for linux-sbsa"), std::string::npos) << r.err;
  // nothing was written, and no temporary directory was left behind
  std::error_code ec;
  if (fs::exists(s.out)) {
    for (const auto& entry : fs::directory_iterator(s.out)) ADD_FAILURE() << "left in the output folder: " << entry.path();
  }
}

TEST(DebCli, LinksAreJudgedWhereTheyWillLiveInThePackages) {
  const std::string top = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive";
  struct Case {
    std::string path, target, words;
  };
  // the first is fine in a staged tree (include/ and lib64/ side by side) but not in the packages,
  // where include/ becomes usr/include and lib64/ usr/lib/<triplet>; the second leaves both
  for (const auto& c : std::vector<Case>{{"/include/x.so", "../lib64/libcudnn.so.9", "in the package"},
                                         {"/include/x", "../..", "points at no file DEST holds"}}) {
    SCOPED_TRACE(c.path);
    ScratchDir dir;
    auto archives = dir.path() / "archives";
    auto out = dir.path() / "out";
    fs::create_directories(archives);
    auto es = fixtures::cudnn_linux_entries("9.1.0.70", 12);
    es.push_back(fixtures::Entry{top + c.path, fixtures::Kind::symlink, {}, c.target, 0777});
    auto path = archives / fixtures::cudnn_archive_name("linux-x86_64", "9.1.0.70", 12);
    fixtures::write_archive(path, fixtures::Format::tar_xz, es);
    auto manifest = dir.write("stack.toml", fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"linux-x86_64", fixtures::info(path)}}));
    auto r = stackpin({"deb", manifest.string(), "--archives", archives.string(), "--out-dir", out.string()});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(top + c.path), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("no package was written"), std::string::npos) << r.err;
    if (fs::exists(out))
      for (const auto& entry : fs::directory_iterator(out)) ADD_FAILURE() << "left in the output folder: " << entry.path();
  }
}

TEST(DebCli, WhatARunKilledWhileWritingLeftIsRemovedByTheNextRun) {
  DebSetup s;
  // SIGXFSZ at the first write past 2 KiB: inside the extraction (the fixture's libraries are 5 to
  // 15 KiB, as the linker and the debug information make them) or the package writing
  std::vector<std::string> a{"/bin/sh",
                             "-c",
                             "ulimit -f 4; exec \"$0\" \"$@\"",
                             testing_support::binary().string(),
                             "deb",
                             s.manifest.string(),
                             "--archives",
                             s.archives.string(),
                             "--out-dir",
                             s.out.string()};
  auto killed = run_process(a);
  ASSERT_EQ(killed.exit_code, 128 + SIGXFSZ) << killed.err;
  std::vector<fs::path> left;
  for (const auto& e : fs::directory_iterator(s.out)) left.push_back(e.path());
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].filename().string().rfind(".stackpin-deb-", 0), 0u) << left[0];
  // a directory a live run owns is not touched by another run
  ScratchDir other;
  fs::create_directories(s.out / ".stackpin-deb-live");
  auto live = util::FileLock::acquire(s.out / ".stackpin-deb-live" / ".owner");
  ASSERT_TRUE(live.ok());
  auto r = s.deb();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(left[0])) << "the killed run's directory is still there";
  EXPECT_TRUE(fs::exists(s.out / ".stackpin-deb-live")) << "a running process's directory was removed";
  EXPECT_TRUE(fs::exists(s.runtime()));
  EXPECT_TRUE(fs::exists(s.dev()));
}

TEST(DebCli, NonAsciiNamesArePackagedAsStageStagesThem) {
  const std::string top = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive";
  ScratchDir dir;
  auto archives = dir.path() / "archives";
  auto out = dir.path() / "out";
  fs::create_directories(archives);
  auto info = fixtures::make_cudnn_linux_elf(
      archives, testing_support::doubles_dir() / "stems",
      {fixtures::Entry{top + "/include/cudnn_\u00FCbersicht \u4E2D\u6587.h", fixtures::Kind::file, "/* notes */\n", {}, 0644}});
  auto manifest = dir.write("stack.toml", fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"linux-x86_64", info}}));
  for (const char* lang : {"LANG=C", "LANG=C.UTF-8"}) {
    fs::remove_all(out);
    auto r = stackpin({"deb", manifest.string(), "--archives", archives.string(), "--out-dir", out.string()}, {lang, "LC_ALL="});
    ASSERT_EQ(r.exit_code, 0) << lang << ": " << r.err;
    auto dev = out / "stackpin-libcudnn9-dev-cuda-12_9.1.0.70-1+cuda12_amd64.deb";
    auto names = contents(dev);
    EXPECT_TRUE(names.count("./usr/include/cudnn_\u00FCbersicht \u4E2D\u6587.h")) << lang;
  }
}

TEST(DebCli, JsonReportListsBothPackages) {
  DebSetup s;
  auto r = s.deb({"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"command\": \"deb\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"role\": \"runtime\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"role\": \"dev\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"libcudnn_ops.so.9\""), std::string::npos) << "SONAMEs are reported";
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(DebCli, DryRunPlansBothPackagesAndWritesNothing) {
  DebSetup s;
  auto plan = s.deb({"--dry-run", "--json"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_FALSE(fs::exists(s.out)) << "a dry run created --out-dir";
  auto doc = nlohmann::json::parse(plan.out);
  const auto& report = doc["report"];
  EXPECT_TRUE(report["dry_run"].get<bool>());
  ASSERT_EQ(report["packages"].size(), 2u);
  for (const auto& p : report["packages"]) {
    EXPECT_TRUE(p["sha256"].get<std::string>().empty()) << "nothing was written, so nothing was hashed";
    EXPECT_FALSE(p["contents"].empty()) << p.dump();
  }
  // the plan is what a real run then writes: the same paths and the same files in each package
  auto real = s.deb({"--json"});
  ASSERT_EQ(real.exit_code, 0) << real.err;
  auto written = nlohmann::json::parse(real.out)["report"];
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& planned = report["packages"][i];
    const auto& made = written["packages"][i];
    EXPECT_EQ(planned["path"], made["path"]);
    EXPECT_EQ(planned["files"], made["files"]);
    EXPECT_EQ(planned["installed_size_kib"], made["installed_size_kib"]);
    EXPECT_EQ(planned["depends"], made["depends"]);
    std::set<std::string> in_deb;
    for (const auto& f : contents(made["path"].get<std::string>())) {
      if (f.back() != '/') in_deb.insert(f.substr(1));  // "./usr/lib/..." -> "/usr/lib/..."
    }
    std::set<std::string> in_plan;
    for (const auto& f : planned["contents"]) in_plan.insert(f.get<std::string>());
    EXPECT_EQ(in_plan, in_deb) << planned["name"];
  }
  auto text = s.deb({"--dry-run"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("--dry-run: nothing is written"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("would write " + s.runtime().string()), std::string::npos) << text.out;
}

}  // namespace cli_deb_test
