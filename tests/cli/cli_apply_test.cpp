// `stackpin apply` end to end through the real binary: a fixture archive served over loopback is
// fetched, verified and staged, the activation scripts written, doctor run as the activated shell
// sees the machine; a second run changes nothing; --dry-run changes nothing; a Windows tree; a
// refused download or a drifted lock stops before anything is staged.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "fixtures.hpp"
#include "http_server.hpp"
#include "test_support.hpp"
#include "util/fs.hpp"

namespace cli_apply_test {

using nlohmann::json;
using testing_support::HttpServer;
using testing_support::RunResult;
using testing_support::ScratchDir;
using testing_support::stackpin;

namespace {
namespace fs = std::filesystem;

const std::string k_path = "/cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz";

bool machine_has_nvidia_driver() { return fs::exists("/proc/driver/nvidia/version"); }

// A Linux stack whose archive (real ELF libraries with NVIDIA's SONAMEs) is served over loopback.
struct World {
  ScratchDir dir;
  HttpServer server;
  fs::path manifest = dir.path() / "stack.toml";
  fs::path prefix = dir.path() / "opt" / "cudnn 9.1";  // a space, as in real prefixes
  fixtures::Info archive;
  std::string text;

  explicit World(const std::string& layout = "lib64") {
    fs::path made = dir.path() / "made";
    fs::create_directories(made);
    archive = fixtures::make_cudnn_linux_elf(made, testing_support::doubles_dir() / "stems");
    server.serve(k_path, testing_support::read_text(archive.path));
    text =
        "schema = 1\nname = \"apply-fixture\"\n[cuda]\nversion = \"12.4.1\"\n[cudnn]\nversion = \"9.1.0.70\"\n"
        "[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\nurl = \"" +
        server.url(k_path) +
        "\"\n"
        "sha256 = \"" +
        archive.sha256 + "\"\nsize = " + std::to_string(archive.size) +
        "\n"
        "[targets.linux]\nlayout = \"" +
        layout + "\"\nprefix = '" + prefix.string() + "'\n";
    EXPECT_TRUE(util::write_file_atomic(manifest, text).ok());
  }
  fs::path cache() const { return dir.path() / "cache"; }
  std::vector<std::string> env() const {
    return {"STACKPIN_CACHE_DIR=" + cache().string(), "STACKPIN_CONFIG=" + (dir.path() / "none.toml").string()};
  }
  RunResult apply(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args{"apply", manifest.string(), "--target", "linux", "--retry-delay-ms", "1"};
    if (machine_has_nvidia_driver()) args.push_back("--no-convtest");  // the fixture's libraries are packaging doubles
    args.insert(args.end(), extra.begin(), extra.end());
    return stackpin(args, env());
  }
};

std::map<std::string, std::string> statuses(const json& report) {
  std::map<std::string, std::string> s;
  for (const auto& step : report["steps"]) s[step["name"]] = step["status"];
  return s;
}

TEST(CliApply, ProvisionsFromALoopbackServerAndASecondRunChangesNothing) {
  World w;
  auto first = w.apply({"--json"});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  json doc = json::parse(first.out);
  EXPECT_TRUE(doc["ok"].get<bool>());
  const json& r = doc["report"];
  auto s = statuses(r);
  EXPECT_EQ(s["archive"], "done");
  EXPECT_EQ(s["stage"], "done");
  EXPECT_EQ(s["activation"], "done");
  EXPECT_EQ(s["doctor"], "passed") << r.dump(2);
  EXPECT_EQ(s["convtest"], "skipped");
  EXPECT_TRUE(r["changed"].get<bool>());
  EXPECT_EQ(r["dest"], w.prefix.string());
  EXPECT_EQ(w.server.requests_for(k_path).size(), 1u);
  // staged, with the activation script, and the archive kept in the cache under its hash
  EXPECT_TRUE(fs::is_symlink(w.prefix / "lib64" / "libcudnn.so.9"));
  EXPECT_TRUE(fs::exists(w.prefix / ".stackpin" / "activate.sh"));
  EXPECT_TRUE(fs::exists(testing_support::cached_archive(w.cache(), w.archive.sha256, fs::path(k_path).filename().string())));
  // doctor saw the staged library first on the loader path
  for (const auto& step : r["steps"]) {
    if (step["name"] == "doctor") {
      EXPECT_NE(step["detail"].get<std::string>().find((w.prefix / "lib64").string()), std::string::npos) << step.dump();
    }
  }
  bool activation_hint = false;
  for (const auto& x : r["remaining"]) activation_hint |= x.get<std::string>().find("activate.sh") != std::string::npos;
  EXPECT_TRUE(activation_hint) << r["remaining"].dump();

  auto receipt_before = testing_support::read_text(w.prefix / ".stackpin" / "receipt.json");
  auto second = w.apply();
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_NE(second.out.find("nothing to do"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("already holds this exact staging"), std::string::npos) << second.out;
  EXPECT_EQ(w.server.requests_for(k_path).size(), 1u);  // nothing downloaded again
  EXPECT_EQ(testing_support::read_text(w.prefix / ".stackpin" / "receipt.json"), receipt_before);
  auto third = w.apply({"--json"});
  auto s3 = statuses(json::parse(third.out)["report"]);
  EXPECT_EQ(s3["archive"], "unchanged");
  EXPECT_EQ(s3["stage"], "unchanged");
  EXPECT_FALSE(json::parse(third.out)["report"]["changed"].get<bool>());
}

TEST(CliApply, DryRunDownloadsAndWritesNothing) {
  World w;
  auto r = w.apply({"--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("plan"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(w.server.url(k_path)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing changed"), std::string::npos) << r.out;
  EXPECT_TRUE(w.server.requests().empty());
  EXPECT_FALSE(fs::exists(w.prefix));
  EXPECT_FALSE(fs::exists(w.cache() / "sha256"));
  // with the archive at hand, the plan lists the files stage would write, still writing nothing
  fs::path have = w.dir.path() / "have";
  fs::create_directories(have);
  fs::copy_file(w.archive.path, have / fs::path(k_path).filename());
  auto planned = w.apply({"--dry-run", "--archives", have.string(), "--json"});
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  auto s = statuses(json::parse(planned.out)["report"]);
  EXPECT_EQ(s["archive"], "unchanged");
  EXPECT_EQ(s["stage"], "planned");
  EXPECT_EQ(s["doctor"], "planned");
  EXPECT_FALSE(fs::exists(w.prefix));
}

TEST(CliApply, WrongBytesStopTheRunBeforeAnythingIsStaged) {
  World w;
  w.server.fault(k_path, {testing_support::Fault::Kind::wrong_bytes});
  auto r = w.apply();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("archive    failed    "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("apply failed"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("stage "), std::string::npos) << r.out;  // later steps did not run
  EXPECT_FALSE(fs::exists(w.prefix));
  EXPECT_FALSE(fs::exists(testing_support::cached_archive(w.cache(), w.archive.sha256, fs::path(k_path).filename().string())));
  EXPECT_FALSE(fs::exists(w.cache() / "partial" / (w.archive.sha256 + ".part")));
}

TEST(CliApply, OfflineWithAnEmptyCacheSaysWhatIsMissing) {
  World w;
  auto r = w.apply({"--offline"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("--offline"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stackpin fetch"), std::string::npos) << r.out;
  EXPECT_TRUE(w.server.requests().empty());
  EXPECT_FALSE(fs::exists(w.prefix));
}

TEST(CliApply, ALockThatNoLongerMatchesIsRefused) {
  World w;
  ASSERT_EQ(stackpin({"lock", w.manifest.string()}, w.env()).exit_code, 0);
  auto locked = w.apply({"--locked", "--dry-run"});
  EXPECT_EQ(locked.exit_code, 0) << locked.err;
  std::string edited = w.text;
  edited.replace(edited.find("12.4.1"), 6, "12.4.0");
  ASSERT_TRUE(util::write_file_atomic(w.manifest, edited).ok());
  auto r = w.apply({"--locked"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cuda.version"), std::string::npos) << r.err;
  EXPECT_TRUE(w.server.requests().empty());
  EXPECT_FALSE(fs::exists(w.prefix));
}

TEST(CliApply, DebLayoutPlansPackagesAndTheirInstall) {
  World w("deb");
  auto r = w.apply({"--dry-run", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json doc = json::parse(r.out);
  const json& rep = doc["report"];
  EXPECT_EQ(rep["layout"], "deb");
  auto s = statuses(rep);
  EXPECT_EQ(s["packages"], "planned");
  EXPECT_EQ(s["install"], "planned");
  EXPECT_EQ(s.count("stage"), 0u);
  EXPECT_FALSE(fs::exists(w.cache() / "debs"));
}

TEST(CliApply, WindowsTreeIsStagedAndTheRestIsLeftForTheWindowsMachine) {
  ScratchDir dir;
  fs::path archives = dir.path() / "archives";
  fs::create_directories(archives);
  auto info = fixtures::make_cudnn_windows(archives, "8.9.7.29", 12);
  std::string text = fixtures::local_manifest("8.9.7.29", 12, "12.2.2", {{"windows-x86_64", info}},
                                              "[targets.windows]\nlayout = \"isolated\"\nprefix = 'C:\\tools\\cudnn\\v8.9.7'\n");
  ASSERT_TRUE(util::write_file_atomic(dir.path() / "win.toml", text).ok());
  fs::path dest = dir.path() / "cudnn-windows";
  std::vector<std::string> env{"STACKPIN_CACHE_DIR=" + (dir.path() / "cache").string(),
                               "STACKPIN_CONFIG=" + (dir.path() / "none.toml").string()};
  std::vector<std::string> args{
      "apply", (dir.path() / "win.toml").string(), "--target", "windows", "--dest", dest.string(), "--archives", archives.string()};
  auto r = stackpin(args, env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("stage      done      "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("activate.ps1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("doctor     skipped   "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("copy " + dest.string() + " to C:\\tools\\cudnn\\v8.9.7 on the Windows machine"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(dest / "bin" / "cudnn64_8.dll"));
  auto again = stackpin(args, env);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("nothing to do"), std::string::npos) << again.out;
  // the windows target needs DEST
  auto no_dest = stackpin({"apply", (dir.path() / "win.toml").string(), "--target", "windows"}, env);
  EXPECT_EQ(no_dest.exit_code, 2) << no_dest.err;
  EXPECT_NE(no_dest.err.find("--dest is required"), std::string::npos) << no_dest.err;
}

// The toolkit with cuDNN: cuDNN's archive in --archives, the components fetched from the loopback
// server into the cache (only those), all staged as one tree; a second run downloads nothing and
// changes nothing. A toolkit alone needs no [cudnn], and the conv test says why it does not run.
TEST(CliApply, ProvisionsTheToolkitWithCudnnAndASecondRunChangesNothing) {
  for (bool with_cudnn : {true, false}) {
    SCOPED_TRACE(with_cudnn ? "toolkit and cuDNN" : "toolkit alone");
    ScratchDir dir;
    HttpServer server;
    fs::path made = dir.path() / "made", archives = dir.path() / "archives", prefix = dir.path() / "opt" / "cuda 12.4";
    std::string text = "schema = 1\nname = \"apply-toolkit\"\n[cuda]\nversion = \"12.4.1\"\ncomponents = [\"cudart\", \"nvcc\"]\n";
    std::vector<std::string> paths;
    for (const auto& [c, v] : std::vector<std::pair<std::string, std::string>>{{"cuda_cudart", "12.4.127"}, {"cuda_nvcc", "12.4.131"}}) {
      auto inf = fixtures::make_cuda_component(made, c, v);
      std::string path = "/redist/" + c + "/linux-x86_64/" + inf.path.filename().string();
      server.serve(path, testing_support::read_text(inf.path));
      paths.push_back(path);
      text += "\n[[cuda.archives]]\ncomponent = \"" + c + "\"\nplatform = \"linux-x86_64\"\norigin = \"local\"\nurl = \"" +
              server.url(path) + "\"\nsha256 = \"" + inf.sha256 + "\"\nsize = " + std::to_string(inf.size) + "\n";
    }
    if (with_cudnn) {
      auto cudnn = fixtures::make_cudnn_linux_elf(archives, testing_support::doubles_dir() / "stems");  // 9.1.0.70 for CUDA 12
      text +=
          "\n[cudnn]\nversion = \"9.1.0.70\"\ncuda = 12\n\n[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\nfile = \"" +
          cudnn.path.filename().string() + "\"\nsha256 = \"" + cudnn.sha256 + "\"\nsize = " + std::to_string(cudnn.size) + "\n";
    }
    text += "\n[targets.linux]\nlayout = \"lib64\"\nprefix = '" + prefix.string() + "'\n";
    ASSERT_TRUE(util::write_file_atomic(dir.path() / "stack.toml", text).ok());
    std::vector<std::string> env{"STACKPIN_CACHE_DIR=" + (dir.path() / "cache").string(),
                                 "STACKPIN_CONFIG=" + (dir.path() / "none.toml").string()};
    std::vector<std::string> args{"apply", (dir.path() / "stack.toml").string(), "--target", "linux", "--retry-delay-ms", "1", "--json"};
    if (with_cudnn) args.insert(args.end(), {"--archives", archives.string()});
    if (machine_has_nvidia_driver()) args.push_back("--no-convtest");

    auto plan_args = args;
    plan_args.push_back("--dry-run");
    auto plan = stackpin(plan_args, env);
    ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
    auto ps = statuses(json::parse(plan.out)["report"]);
    EXPECT_EQ(ps["archive"], "planned");
    EXPECT_EQ(ps["stage"], "planned");
    EXPECT_NE(plan.out.find(server.url(paths[0])), std::string::npos) << plan.out;
    EXPECT_TRUE(server.requests().empty());
    EXPECT_FALSE(fs::exists(prefix));

    auto first = stackpin(args, env);
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    const json r = json::parse(first.out)["report"];
    auto s = statuses(r);
    EXPECT_EQ(s["archive"], "done");
    EXPECT_EQ(s["stage"], "done");
    EXPECT_EQ(s["doctor"], "passed") << r.dump(2);
    for (const auto& path : paths) EXPECT_EQ(server.requests_for(path).size(), 1u) << path;
    EXPECT_EQ(server.requests().size(), paths.size()) << "cuDNN came from --archives, not the network";
    EXPECT_TRUE(fs::is_symlink(prefix / "lib64" / "libcudart.so.12"));
    EXPECT_TRUE(fs::is_regular_file(prefix / "bin" / "nvcc"));
    EXPECT_TRUE(fs::is_regular_file(prefix / "version.json"));
    EXPECT_EQ(fs::exists(prefix / "include" / "cudnn.h"), with_cudnn);
    if (!with_cudnn && !machine_has_nvidia_driver()) {
      for (const auto& step : r["steps"]) {
        if (step["name"] == "convtest") {
          EXPECT_NE(step["detail"].get<std::string>().find("pins none"), std::string::npos) << step.dump();
        }
      }
    }

    auto second = stackpin(args, env);
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    auto s2 = statuses(json::parse(second.out)["report"]);
    EXPECT_EQ(s2["archive"], "unchanged");
    EXPECT_EQ(s2["stage"], "unchanged");
    EXPECT_FALSE(json::parse(second.out)["report"]["changed"].get<bool>());
    EXPECT_EQ(server.requests().size(), paths.size()) << "nothing downloaded again";
  }
}

}  // namespace

}  // namespace cli_apply_test
