// Staging CUDA toolkit components with cuDNN into one tree through the real binary: NVIDIA's
// layout mapped onto the toolkit's (lib64 with the SONAME links, share/doc/<component>/LICENSE,
// version.json in NVIDIA's format), one receipt for every archive, the activation script's
// CUDA_HOME/CUDA_PATH/PATH, status and unstage over the whole tree, hostile and corrupt component
// archives refused with nothing changed, and a run killed at every journal record.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "stage_crash.hpp"
#include "test_support.hpp"
#include "tree.hpp"
#include "util/fs.hpp"

namespace cli_stage_toolkit_test {

using testing_support::ScratchDir;
using testing_support::show;
using testing_support::stackpin;
using testing_support::Tree;

namespace {
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  auto text = util::read_file(p);
  EXPECT_TRUE(text.ok()) << p;
  return text.ok() ? *text : std::string();
}

// CUDA 12.4.1's runtime set plus cuFFT, with the component versions NVIDIA's manifest gives, and
// cuDNN 9.1.0.70 for CUDA 12.
const std::vector<std::pair<std::string, std::string>> k_components{
    {"cuda_cudart", "12.4.127"}, {"libcublas", "12.4.5.8"}, {"cuda_nvrtc", "12.4.127"}, {"libcufft", "11.2.1.3"}};

struct Toolkit {
  ScratchDir dir;
  std::vector<std::pair<std::string, fixtures::Info>> archives;
  fixtures::Info cudnn;

  explicit Toolkit(bool with_cudnn = true, const std::vector<fixtures::Entry>& extra_in_cufft = {}) {
    for (const auto& [c, v] : k_components)
      archives.push_back({c, fixtures::make_cuda_component(this->archives_dir(), c, v,
                                                           c == "libcufft" ? extra_in_cufft : std::vector<fixtures::Entry>{})});
    std::string extra = "[targets.linux]\nlayout = \"lib64\"\nprefix = \"/opt/stack\"\n";
    if (with_cudnn) {
      cudnn = fixtures::make_cudnn_linux(archives_dir(), "9.1.0.70", 12);
      extra =
          "[cudnn]\nversion = \"9.1.0.70\"\ncuda = 12\n\n[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\nfile = \"" +
          cudnn.path.filename().string() + "\"\nsha256 = \"" + cudnn.sha256 + "\"\nsize = " + std::to_string(cudnn.size) + "\n\n" + extra;
    }
    testing_support::write_file(manifest(), fixtures::local_toolkit_manifest("12.4.1", {"runtime", "cufft"}, archives, extra));
  }
  fs::path archives_dir() const { return dir.path() / "archives"; }
  fs::path manifest() const { return dir.path() / "stack.toml"; }
  std::vector<std::string> stage(const fs::path& dest) const {
    return {"stage", manifest().string(), "--archives", archives_dir().string(), "--target", "linux", "--dest", dest.string()};
  }
};

}  // namespace

TEST(CliStageToolkit, StagesTheToolkitAndCudnnAsOneTree) {
  Toolkit t;
  auto dest = t.dir.path() / "dest";
  auto r = stackpin(t.stage(dest));
  ASSERT_EQ(r.exit_code, 0) << show(r);
  // NVIDIA's lib/ is lib64/, with the SONAME chain; stubs, headers, each component's licence
  EXPECT_EQ(fs::read_symlink(dest / "lib64/libcudart.so.12"), "libcudart.so.12.4.127");
  EXPECT_EQ(fs::read_symlink(dest / "lib64/libcudart.so"), "libcudart.so.12");
  EXPECT_TRUE(fs::is_regular_file(dest / "lib64/libcudart.so.12.4.127"));
  EXPECT_TRUE(fs::is_regular_file(dest / "lib64/stubs/libcuda.so"));
  EXPECT_TRUE(fs::is_regular_file(dest / "lib64/libcufft.so.11.2.1.3"));
  EXPECT_TRUE(fs::is_regular_file(dest / "include/cuda_runtime.h"));
  EXPECT_TRUE(fs::is_regular_file(dest / "include/cublas.h"));
  EXPECT_TRUE(fs::is_regular_file(dest / "include/cudnn.h"));
  EXPECT_TRUE(fs::is_regular_file(dest / "lib64/libcudnn.so.9.1.0"));
  for (const auto& [c, v] : k_components) {
    auto licence = slurp(dest / "share/doc" / c / "LICENSE");
    EXPECT_NE(licence.find(c + " " + v), std::string::npos) << c;
  }
  EXPECT_TRUE(fs::is_regular_file(dest / "LICENSE")) << "cuDNN's licence, where a cuDNN staging puts it";
  // version.json in NVIDIA's format, with each component's own version and NVIDIA's name for it
  auto version = nlohmann::json::parse(slurp(dest / "version.json"));
  EXPECT_EQ(version["cuda"]["name"], "CUDA SDK");
  EXPECT_EQ(version["cuda"]["version"], "12.4.1");
  EXPECT_EQ(version["cuda_cudart"]["name"], "CUDA Runtime (cudart)");
  EXPECT_EQ(version["cuda_cudart"]["version"], "12.4.127");
  EXPECT_EQ(version["libcufft"]["version"], "11.2.1.3");
  EXPECT_EQ(version.size(), 5u);
  EXPECT_EQ(slurp(dest / "version.json").substr(0, 31), "{\n   \"cuda\" : {\n      \"name\" : ");
  // one receipt for every archive
  auto receipt = nlohmann::json::parse(slurp(dest / ".stackpin/receipt.json"));
  EXPECT_EQ(receipt["cudnn"]["version"], "9.1.0.70");
  EXPECT_EQ(receipt["cuda"]["version"], "12.4.1");
  ASSERT_EQ(receipt["cuda"]["archives"].size(), 4u);
  EXPECT_EQ(receipt["cuda"]["archives"][0]["component"], "cuda_cudart");
  EXPECT_EQ(receipt["cuda"]["archives"][0]["sha256"], t.archives[0].second.sha256);
  // the activation script: CUDA_HOME and CUDA_PATH at the tree, lib64 first on the loader path
  auto act = testing_support::run_process(
      {"/bin/sh", "-c",
       ". " + (dest / ".stackpin/activate.sh").string() + " && echo \"$CUDA_HOME|$CUDA_PATH|$LD_LIBRARY_PATH|$CUDNN_PATH\""});
  EXPECT_EQ(act.out, "/opt/stack|/opt/stack|/opt/stack/lib64|/opt/stack\n") << show(act);

  // status over the whole tree; drift in one component is found
  auto st = stackpin({"status", "--dest", dest.string()});
  EXPECT_EQ(st.exit_code, 0) << show(st);
  EXPECT_NE(st.out.find("CUDA 12.4.1 (4 components)"), std::string::npos) << st.out;
  testing_support::write_file(dest / "lib64/libcufft.so.11.2.1.3", "not the library");
  auto drift = stackpin({"status", "--dest", dest.string()});
  EXPECT_EQ(drift.exit_code, 1) << show(drift);
  EXPECT_NE(drift.out.find("lib64/libcufft.so.11.2.1.3"), std::string::npos) << drift.out;
  auto forced = stackpin([&] {
    auto a = t.stage(dest);
    a.push_back("--force");
    return a;
  }());
  EXPECT_EQ(forced.exit_code, 0) << show(forced);
  EXPECT_EQ(stackpin({"status", "--dest", dest.string()}).exit_code, 0);
  // restaging an intact tree does nothing
  auto again = stackpin(t.stage(dest));
  EXPECT_EQ(again.exit_code, 0) << show(again);
  EXPECT_NE(again.out.find("already staged"), std::string::npos) << again.out;
  // unstage takes every archive's files away
  auto un = stackpin({"unstage", "--dest", dest.string()});
  EXPECT_EQ(un.exit_code, 0) << show(un);
  EXPECT_EQ(testing_support::snapshot(dest), Tree{});
}

TEST(CliStageToolkit, AToolkitAloneNeedsNoCudnn) {
  Toolkit t(false);
  auto dest = t.dir.path() / "dest";
  auto r = stackpin(t.stage(dest));
  ASSERT_EQ(r.exit_code, 0) << show(r);
  EXPECT_TRUE(fs::is_regular_file(dest / "version.json"));
  EXPECT_FALSE(fs::exists(dest / "include/cudnn.h"));
  EXPECT_FALSE(fs::exists(dest / "lib64/cmake/cudnn")) << "no cuDNN package configuration without cuDNN";
  auto receipt = nlohmann::json::parse(slurp(dest / ".stackpin/receipt.json"));
  EXPECT_EQ(receipt["cudnn"]["version"], "");
  EXPECT_EQ(receipt["cuda"]["archives"].size(), 4u);
}

TEST(CliStageToolkit, ACorruptComponentArchiveChangesNothing) {
  Toolkit t;
  // cuFFT's archive on disk is not the pinned one any more
  fixtures::corrupt_copy(t.archives[3].second.path, t.dir.path() / "corrupt", 200);
  fs::rename(t.dir.path() / "corrupt", t.archives[3].second.path);
  auto dest = t.dir.path() / "dest";
  testing_support::write_file(dest / "keep.txt", "the user's");
  const Tree before = testing_support::snapshot(dest);
  auto r = stackpin(t.stage(dest));
  EXPECT_EQ(r.exit_code, 1) << show(r);
  EXPECT_NE(r.err.find("libcufft"), std::string::npos) << r.err;
  EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(dest)), "");
}

TEST(CliStageToolkit, AHostileComponentArchiveChangesNothing) {
  Toolkit t(true,
            {fixtures::Entry{
                "libcufft-linux-x86_64-11.2.1.3-archive/lib/libescape.so", fixtures::Kind::symlink, {}, "../../../../etc/passwd", 0777}});
  auto dest = t.dir.path() / "dest";
  auto r = stackpin(t.stage(dest));
  EXPECT_EQ(r.exit_code, 1) << show(r);
  EXPECT_NE(r.err.find("unsafe"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dest)) << "DEST did not exist before and must not now";
}

TEST(CliStageToolkit, NothingFromAnArchiveLandsInStackpinsOwnState) {
  // a component whose top folder holds .stackpin/: placed there, it would be a receipt or journal
  // of the attacker's, and the staging could be neither checked nor undone
  for (const std::string state : {".stackpin/receipt.json", ".StackPin/journal", ".stackpin/backup/lib64/libcudart.so.12"}) {
    SCOPED_TRACE(state);
    Toolkit t(true, {fixtures::Entry{"libcufft-linux-x86_64-11.2.1.3-archive/" + state, fixtures::Kind::file, "{}\n", {}, 0644}});
    auto dest = t.dir.path() / "dest";
    auto r = stackpin(t.stage(dest));
    EXPECT_EQ(r.exit_code, 1) << show(r);
    EXPECT_NE(r.err.find("unsafe archive entry \"libcufft-linux-x86_64-11.2.1.3-archive/" + state + "\""), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("inside stackpin's own state"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dest)) << "DEST did not exist before and must not now";
    // nor into a staged tree's state: a restage over an existing staging is refused the same way
    Toolkit good;
    auto d2 = good.dir.path() / "dest";
    ASSERT_EQ(stackpin(good.stage(d2)).exit_code, 0);
    auto receipt = slurp(d2 / ".stackpin/receipt.json");
    auto r2 = stackpin(t.stage(d2));
    EXPECT_EQ(r2.exit_code, 1) << show(r2);
    EXPECT_EQ(slurp(d2 / ".stackpin/receipt.json"), receipt);
  }
}

TEST(CliStageToolkit, TwoComponentsWritingOneFileDifferentlyConflict) {
  Toolkit t(true, {fixtures::Entry{
                      "libcufft-linux-x86_64-11.2.1.3-archive/include/cuda_runtime.h", fixtures::Kind::file, "/* another */\n", {}, 0644}});
  auto dest = t.dir.path() / "dest";
  auto r = stackpin(t.stage(dest));
  EXPECT_EQ(r.exit_code, 1) << show(r);
  EXPECT_NE(r.err.find("cuda_cudart and libcufft both put include/cuda_runtime.h into DEST"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dest));
}

TEST(CliStageToolkit, KilledAtEveryJournalRecordLeavesTheOldStateOrTheNew) {
  Toolkit t;
  testing_support::kill_at_every_record([&](const fs::path& d) { return t.stage(d); }, [](const fs::path&) {}, 60);
}

TEST(CliStageToolkit, ActivationPutsTheToolkitsBinFirstOnPath) {
  ScratchDir dir;
  auto nvcc = fixtures::make_cuda_component(dir.path() / "archives", "cuda_nvcc", "12.4.131");
  auto cudart = fixtures::make_cuda_component(dir.path() / "archives", "cuda_cudart", "12.4.127");
  testing_support::write_file(dir.path() / "stack.toml", fixtures::local_toolkit_manifest("12.4.1", {"nvcc", "cudart"},
                                                                                          {{"cuda_nvcc", nvcc}, {"cuda_cudart", cudart}}));
  auto dest = dir.path() / "my tree";
  auto r = stackpin({"stage", (dir.path() / "stack.toml").string(), "--archives", (dir.path() / "archives").string(), "--target", "linux",
                     "--dest", dest.string()});
  ASSERT_EQ(r.exit_code, 0) << show(r);
  EXPECT_TRUE(fs::is_regular_file(dest / "bin/nvcc"));
  EXPECT_TRUE(fs::is_regular_file(dest / "nvvm/libdevice/libdevice.10.bc"));
  EXPECT_TRUE(fs::is_regular_file(dest / "include/crt/host_config.h"));
  std::string act = (dest / ".stackpin/activate.sh").string();
  auto run = testing_support::run_process(
      {"/bin/sh", "-c", ". \"$1\" && . \"$1\" && echo \"$CUDA_HOME|$PATH\" && command -v nvcc", "sh", act}, {"PATH=/usr/bin:/bin"});
  EXPECT_EQ(run.out, dest.string() + "|" + dest.string() + "/bin:/usr/bin:/bin\n" + dest.string() + "/bin/nvcc\n") << show(run);
}

// Arm64 trees are staged on this machine from NVIDIA's own archives: linux-sbsa for Arm servers,
// linux-aarch64 for Jetson.
TEST(CliStageToolkit, StagesTheArm64TreesOnAnyHost) {
  for (const std::string platform : {"linux-sbsa", "linux-aarch64"}) {
    SCOPED_TRACE(platform);
    ScratchDir dir;
    std::vector<std::pair<std::string, fixtures::Info>> archives;
    for (const auto& [c, v] : k_components)
      archives.push_back({c, fixtures::make_cuda_component(dir.path() / "archives", c, v, {}, platform)});
    testing_support::write_file(dir.path() / "stack.toml",
                                fixtures::local_toolkit_manifest("12.4.1", {"runtime", "cufft"}, archives, "", platform));
    auto dest = dir.path() / "arm64";
    auto r = stackpin({"stage", (dir.path() / "stack.toml").string(), "--archives", (dir.path() / "archives").string(), "--target", "linux",
                       "--platform", platform, "--dest", dest.string()});
    ASSERT_EQ(r.exit_code, 0) << show(r);
    EXPECT_EQ(fs::read_symlink(dest / "lib64/libcudart.so.12"), "libcudart.so.12.4.127");
    auto receipt = nlohmann::json::parse(slurp(dest / ".stackpin/receipt.json"));
    EXPECT_EQ(receipt["platform"], platform);
    EXPECT_EQ(receipt["cuda"]["archives"][0]["file"], "cuda_cudart-" + platform + "-12.4.127-archive.tar.xz");
  }
}

// The Windows tree is the layout NVIDIA's installer gives ...\CUDA\vX.Y: bin\ (CUDA 13: the DLLs
// in bin\x64\), include\, lib\x64\, with cuDNN in it; the activation scripts set CUDA_PATH and
// CUDA_PATH_VX_Y to the tree's place on the Windows machine and put its bin directories first on PATH.
TEST(CliStageToolkit, StagesTheWindowsToolkitInTheInstallersLayout) {
  struct Case {
    std::string cuda, tag;
    std::vector<std::pair<std::string, std::string>> components;
    bool cudnn;
    std::vector<std::string> dlls, bins;
  };
  const std::vector<Case> cases{
      {"12.4.1",
       "v12.4",
       {{"cuda_cudart", "12.4.127"}, {"cuda_nvcc", "12.4.131"}, {"libcublas", "12.4.5.8"}},
       true,
       {"bin/cudart64_12.dll", "bin/cublas64_12.dll", "bin/cudnn64_9.dll"},
       {"bin"}},
      {"13.0.2", "v13.0", {{"cuda_cudart", "13.0.96"}, {"cuda_nvcc", "13.0.88"}}, false, {"bin/x64/cudart64_13.dll"}, {"bin", "bin\\x64"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.cuda);
    ScratchDir dir;
    std::vector<std::pair<std::string, fixtures::Info>> archives;
    std::vector<std::string> names;
    for (const auto& [component, version] : c.components) {
      archives.push_back({component, fixtures::make_cuda_component(dir.path() / "archives", component, version, {}, "windows-x86_64")});
      names.push_back(component);
    }
    const std::string root = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\" + c.tag;
    std::string extra = "[targets.windows]\nlayout = \"isolated\"\nprefix = '" + root + "'\n";
    if (c.cudnn) {
      auto cudnn = fixtures::make_cudnn_windows(dir.path() / "archives", "9.1.0.70", 12);
      extra =
          "[cudnn]\nversion = \"9.1.0.70\"\ncuda = 12\n\n[[cudnn.archives]]\nplatform = \"windows-x86_64\"\norigin = \"local\"\nfile = \"" +
          cudnn.path.filename().string() + "\"\nsha256 = \"" + cudnn.sha256 + "\"\nsize = " + std::to_string(cudnn.size) + "\n\n" + extra;
    }
    testing_support::write_file(dir.path() / "stack.toml",
                                fixtures::local_toolkit_manifest(c.cuda, names, archives, extra, "windows-x86_64"));
    auto dest = dir.path() / "win";
    auto r = stackpin({"stage", (dir.path() / "stack.toml").string(), "--archives", (dir.path() / "archives").string(), "--target",
                       "windows", "--dest", dest.string()});
    ASSERT_EQ(r.exit_code, 0) << show(r);
    for (const auto& dll : c.dlls) EXPECT_TRUE(fs::is_regular_file(dest / dll)) << dll;
    for (const char* f : {"bin/nvcc.exe", "nvvm/bin/cicc.exe", "lib/x64/cudart.lib", "include/cuda_runtime.h",
                          "share/doc/cuda_cudart/LICENSE", "version.json"})
      EXPECT_TRUE(fs::is_regular_file(dest / f)) << f;
    EXPECT_FALSE(fs::exists(dest / "lib64")) << "lib\\x64 stays as NVIDIA ships it on Windows";
    EXPECT_EQ(fs::exists(dest / "include/cudnn.h"), c.cudnn);
    auto version = nlohmann::json::parse(slurp(dest / "version.json"));
    EXPECT_EQ(version["cuda"]["version"], c.cuda);
    EXPECT_EQ(version["cuda_cudart"]["version"], c.components[0].second);

    std::string var = "CUDA_PATH_V" + c.tag.substr(1, c.tag.find('.') - 1) + "_" + c.tag.substr(c.tag.find('.') + 1);
    std::string first = "@(";
    for (std::size_t i = 0; i < c.bins.size(); ++i) first += std::string(i ? ", " : "") + "'" + root + "\\" + c.bins[i] + "'";
    first += ")";
    auto ps1 = slurp(dest / ".stackpin/activate.ps1");
    EXPECT_NE(ps1.find("$CudaPath = '" + root + "'\n"), std::string::npos) << ps1;
    EXPECT_NE(ps1.find("$CudaPathVar = '" + var + "'\n"), std::string::npos) << ps1;
    EXPECT_NE(ps1.find("$FirstDirs = " + first + "\n"), std::string::npos) << ps1.substr(0, 2000);
    auto cmd = slurp(dest / ".stackpin/activate.cmd");
    EXPECT_NE(cmd.find("set \"CUDA_PATH=" + root + "\"\r\n"), std::string::npos) << cmd;
    EXPECT_NE(cmd.find("set \"" + var + "=" + root + "\"\r\n"), std::string::npos) << cmd;
    EXPECT_EQ(cmd.find("CUDNN_PATH") != std::string::npos, c.cudnn) << "CUDNN_PATH only where the tree holds cuDNN";
    for (const auto& b : c.bins) EXPECT_NE(cmd.find("set \"STACKPIN_DIR=" + root + "\\" + b + "\"\r\n"), std::string::npos) << b;
    auto check = slurp(dest / ".stackpin/check-cudnn.ps1");
    EXPECT_NE(check.find("$ToolkitHere = $true"), std::string::npos) << check;
    EXPECT_NE(check.find("$CudaBins = " + first), std::string::npos) << check;
    EXPECT_NE(check.find("lib\\x64\\cudart.lib"), std::string::npos) << "the check script hashes every staged file";

    auto again = stackpin({"stage", (dir.path() / "stack.toml").string(), "--archives", (dir.path() / "archives").string(), "--target",
                           "windows", "--dest", dest.string(), "--json"});
    ASSERT_EQ(again.exit_code, 0) << show(again);
    EXPECT_EQ(nlohmann::json::parse(again.out)["report"]["no_op"], true);
  }
}

// Every named set (runtime, devel, torch) of CUDA 12.4.1 and 13.0.2, on Linux and Windows: check
// resolves it to NVIDIA's components, stage lays each one out (its library or DLL, its licence),
// and version.json lists exactly those components at NVIDIA's versions.
TEST(CliStageToolkit, EveryNamedSetStagesTheComponentsItResolvesTo) {
  struct Platform {
    std::string name, target, targets;
  };
  const std::vector<Platform> platforms{{"linux-x86_64", "linux", "[targets.linux]\nlayout = \"lib64\"\nprefix = \"/opt/cuda\"\n"},
                                        {"windows-x86_64", "windows", "[targets.windows]\nlayout = \"isolated\"\nprefix = 'C:\\CUDA'\n"}};
  for (const std::string release : {"12.4.1", "13.0.2"}) {
    for (const auto& p : platforms) {
      for (const std::string set : {"runtime", "devel", "torch"}) {
        SCOPED_TRACE(release + " " + p.name + " " + set);
        ScratchDir dir;
        std::string head =
            "schema = 1\nname = \"sets\"\n\n[cuda]\nversion = \"" + release + "\"\ncomponents = [\"" + set + "\"]\n\n" + p.targets;
        testing_support::write_file(dir.path() / "plan.toml", head);
        auto checked = stackpin({"check", (dir.path() / "plan.toml").string(), "--json"});
        ASSERT_EQ(checked.exit_code, 0) << show(checked);
        std::map<std::string, std::string> want;  // component -> NVIDIA's version
        const auto plan = nlohmann::json::parse(checked.out);
        for (const auto& c : plan["report"]["manifests"][0]["cuda_components"])
          if (c["platform"] == p.name) want[c["component"]] = c["version"];
        ASSERT_GE(want.size(), 3u);

        std::vector<std::pair<std::string, fixtures::Info>> archives;
        for (const auto& [c, v] : want) archives.push_back({c, fixtures::make_cuda_component(dir.path() / "archives", c, v, {}, p.name)});
        testing_support::write_file(dir.path() / "stack.toml",
                                    fixtures::local_toolkit_manifest(release, {set}, archives, p.targets, p.name));
        auto dest = dir.path() / "tree";
        auto r = stackpin({"stage", (dir.path() / "stack.toml").string(), "--archives", (dir.path() / "archives").string(), "--target",
                           p.target, "--dest", dest.string()});
        ASSERT_EQ(r.exit_code, 0) << show(r);
        auto version = nlohmann::json::parse(slurp(dest / "version.json"));
        EXPECT_EQ(version["cuda"]["version"], release);
        std::map<std::string, std::string> listed;
        for (const auto& [k, v] : version.items())
          if (k != "cuda") listed[k] = v["version"];
        EXPECT_EQ(listed, want);
        for (const auto& [c, v] : want) {
          EXPECT_TRUE(fs::is_regular_file(dest / "share/doc" / c / "LICENSE")) << c;
          for (const auto& e : fixtures::cuda_component_entries(c, v, p.name)) {
            if (e.kind != fixtures::Kind::file) continue;
            std::string rel = e.path.substr(e.path.find('/') + 1);
            if (rel.find('/') == std::string::npos) continue;  // LICENSE, checked above
            if (p.target == "linux" && rel.rfind("lib/", 0) == 0) rel = "lib64/" + rel.substr(4);
            EXPECT_TRUE(fs::is_regular_file(dest / rel)) << c << ": " << rel;
          }
        }
      }
    }
  }
}

}  // namespace cli_stage_toolkit_test
