// `stackpin verify / stage / unstage / status` through the real binary: exit codes, --json, and
// what a crash leaves: a run killed right before each journal record in turn (the
// STACKPIN_TEST_FAULT_AT hook), killed by SIGKILL at random moments, and two runs at once.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fixtures.hpp"
#include "stage_crash.hpp"
#include "test_support.hpp"
#include "tree.hpp"

namespace cli_stage_test {

using nlohmann::json;
using testing_support::RunResult;
using testing_support::ScratchDir;
using testing_support::stackpin;
using testing_support::Tree;

namespace {
namespace fs = std::filesystem;

using testing_support::copy_tree;
using testing_support::k_fault_exit;
using testing_support::staged_tree;

struct Spec {
  std::string version;
  int cuda;
  std::string cuda_version;
  bool windows;
};
const Spec k_linux{"8.9.7.29", 12, "12.2.2", false};
const Spec k_windows{"8.8.0.121", 11, "11.8.0", true};

std::string targets_text(const Spec& s, const std::string& windows_layout) {
  if (!s.windows) return "[targets.linux]\nlayout = \"lib64\"\nprefix = \"/usr/local/cudnn\"\n";
  if (windows_layout == "cuda-merge")
    return "[targets.windows]\nlayout = \"cuda-merge\"\ncuda_path = 'C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8'\n";
  return "[targets.windows]\nlayout = \"isolated\"\nprefix = 'C:\\tools\\cudnn\\v8.8.0'\n";
}

// Archives are built once per test program (by size), then linked into each test's folder.
const fixtures::Info& cached(const Spec& s, std::size_t library_bytes) {
  static ScratchDir dir;
  static std::map<std::string, fixtures::Info> made;
  std::string key = s.version + "-" + std::to_string(library_bytes);
  auto it = made.find(key);
  if (it != made.end()) return it->second;
  fixtures::CudnnOptions o;
  o.library_bytes = library_bytes;
  fs::path sub = dir.path() / key;
  fs::create_directories(sub);
  fixtures::Info info;
  if (!s.windows && library_bytes > (256u << 10)) {
    // big Linux fixtures as plain .tar: xz spends seconds on incompressible library bytes, and
    // what these tests exercise (kills, the lock) does not depend on the compression
    auto name = fixtures::cudnn_archive_name("linux-x86_64", s.version, s.cuda);
    fs::path p = sub / (name.substr(0, name.size() - 3));
    fixtures::write_archive(p, fixtures::Format::tar, fixtures::cudnn_linux_entries(s.version, s.cuda, o));
    info = fixtures::info(p);
  } else {
    info = s.windows ? fixtures::make_cudnn_windows(sub, s.version, s.cuda, o) : fixtures::make_cudnn_linux(sub, s.version, s.cuda, o);
  }
  return made.emplace(key, info).first->second;
}

// archives/ with the pinned archive, stack.toml pinning it.
struct World {
  ScratchDir dir;
  Spec spec;
  fixtures::Info info;
  std::string layout;

  explicit World(const Spec& s, const std::string& windows_layout = "isolated", std::size_t library_bytes = 4096)
      : spec(s), layout(windows_layout) {
    const auto& c = cached(s, library_bytes);
    fs::create_directories(archives());
    fs::create_hard_link(c.path, archives() / c.path.filename());
    info = fixtures::info(archives() / c.path.filename());
    write_manifest(info.sha256, info.size);
  }
  void write_manifest(const std::string& sha256, std::uint64_t size) const {
    fixtures::Info i = info;
    i.sha256 = sha256;
    i.size = size;
    testing_support::write_file(
        manifest(), fixtures::local_manifest(spec.version, spec.cuda, spec.cuda_version,
                                             {{spec.windows ? "windows-x86_64" : "linux-x86_64", i}}, targets_text(spec, layout)));
  }
  fs::path archives() const { return dir.path() / "archives"; }
  fs::path manifest() const { return dir.path() / "stack.toml"; }
  std::vector<std::string> stage(const fs::path& dest, std::vector<std::string> extra = {}) const {
    std::vector<std::string> a{
        "stage",  manifest().string(), "--archives", archives().string(), "--target", spec.windows ? "windows" : "linux",
        "--dest", dest.string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
};

// argv of the stackpin binary with `args`
std::vector<std::string> argv(std::vector<std::string> args) {
  args.insert(args.begin(), testing_support::binary().string());
  return args;
}

using testing_support::show;

// A fake CUDA 11.8 root on the Windows machine (see stage_test.cpp): toolkit files, an older
// cuDNN's files that staging replaces, and a cuDNN 7 DLL left behind.
void make_fake_cuda_root(const fs::path& root) {
  testing_support::write_file(root / "bin" / "cudart64_110.dll", "MZ toolkit runtime");
  testing_support::write_file(root / "bin" / "cudnn64_8.dll", "MZ an older cuDNN 8");
  testing_support::write_file(root / "bin" / "cudnn64_7.dll", "MZ cuDNN 7 left behind");
  testing_support::write_file(root / "include" / "cuda.h", "/* toolkit */\n");
  testing_support::write_file(root / "include" / "cudnn.h", "/* an older cuDNN */\n");
  testing_support::write_file(root / "lib" / "x64" / "cudart.lib", "!<arch>\ntoolkit");
  testing_support::write_file(root / "lib" / "x64" / "cudnn.lib", "!<arch>\nolder cuDNN");
}

// The staged tree to compare with: everything but the receipt's bytes (it records times and DEST).

// ---- exit codes and output -----------------------------------------------------------------------

TEST(CliStage, ExitCodes) {
  World w(k_linux);
  auto dest = w.dir.path() / "dest";
  auto r = stackpin(w.stage(dest));
  EXPECT_EQ(r.exit_code, 0) << show(r);
  EXPECT_NE(r.out.find("staged 37 files"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sha256 " + w.info.sha256 + " (verified)"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");  // no progress when stderr is not a terminal
  auto again = stackpin(w.stage(dest));
  EXPECT_EQ(again.exit_code, 0) << show(again);
  EXPECT_NE(again.out.find("already staged"), std::string::npos) << again.out;

  // usage errors: 2
  auto no_target = stackpin({"stage", w.manifest().string(), "--archives", w.archives().string(), "--dest", dest.string()});
  EXPECT_EQ(no_target.exit_code, 2) << show(no_target);
  EXPECT_NE(no_target.err.find("--target"), std::string::npos) << no_target.err;
  auto docker = stackpin({"stage", w.manifest().string(), "--archives", w.archives().string(), "--target", "docker"});
  EXPECT_EQ(docker.exit_code, 2) << show(docker);
  EXPECT_NE(docker.err.find("--target must be windows or linux"), std::string::npos) << docker.err;
  auto unknown = stackpin({"stage", w.manifest().string(), "--archives", w.archives().string(), "--target", "linux", "--bogus"});
  EXPECT_EQ(unknown.exit_code, 2) << show(unknown);
  auto no_memory =
      stackpin({"stage", w.manifest().string(), "--archives", w.archives().string(), "--target", "linux", "--decoder-memory", "0"});
  EXPECT_EQ(no_memory.exit_code, 2) << show(no_memory);
  EXPECT_NE(no_memory.err.find("--decoder-memory"), std::string::npos) << no_memory.err;
  auto small = stackpin({"stage", w.manifest().string(), "--archives", w.archives().string(), "--target", "linux", "--dest",
                         (w.dir.path() / "small").string(), "--decoder-memory", "1"});
  EXPECT_EQ(small.exit_code, 0) << show(small);
  EXPECT_EQ(testing_support::snapshot(w.dir.path() / "small" / "lib64"), testing_support::snapshot(dest / "lib64"));
  World win(k_windows);
  auto no_dest = stackpin({"stage", win.manifest().string(), "--archives", win.archives().string(), "--target", "windows"});
  EXPECT_EQ(no_dest.exit_code, 2) << show(no_dest);
  EXPECT_NE(no_dest.err.find("--dest is required for --target windows"), std::string::npos) << no_dest.err;
  EXPECT_EQ(stackpin({"unstage"}).exit_code, 2);
  EXPECT_EQ(stackpin({"status"}).exit_code, 2);

  // problems: 1
  World bad(k_linux);
  bad.write_manifest(std::string(64, 'f'), bad.info.size);
  auto mismatch = stackpin(bad.stage(bad.dir.path() / "dest"));
  EXPECT_EQ(mismatch.exit_code, 1) << show(mismatch);
  EXPECT_NE(mismatch.err.find("SHA-256 mismatch"), std::string::npos) << mismatch.err;
  EXPECT_NE(mismatch.err.find("expected " + std::string(64, 'f') + ", got " + bad.info.sha256), std::string::npos) << mismatch.err;
  EXPECT_FALSE(fs::exists(bad.dir.path() / "dest"));
  auto missing = stackpin(
      {"stage", (w.dir.path() / "nope.toml").string(), "--archives", w.archives().string(), "--target", "linux", "--dest", dest.string()});
  EXPECT_EQ(missing.exit_code, 1) << show(missing);

  // status: 0 intact, 1 drift; unstage: 1 refused, 0 forced, 1 nothing staged
  auto st = stackpin({"status", "--dest", dest.string()});
  EXPECT_EQ(st.exit_code, 0) << show(st);
  EXPECT_NE(st.out.find("intact: " + dest.string()), std::string::npos) << st.out;
  testing_support::write_file(dest / "include" / "cudnn.h", "edited\n");
  auto drift = stackpin({"status", "--dest", dest.string()});
  EXPECT_EQ(drift.exit_code, 1) << show(drift);
  EXPECT_NE(drift.out.find("status.modified"), std::string::npos) << drift.out;
  EXPECT_NE(drift.out.find("drift: "), std::string::npos) << drift.out;
  auto refused = stackpin({"unstage", "--dest", dest.string()});
  EXPECT_EQ(refused.exit_code, 1) << show(refused);
  EXPECT_NE(refused.err.find("include/cudnn.h"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused.err;
  EXPECT_TRUE(fs::exists(dest / "lib64" / "libcudnn.so.8.9.7"));  // nothing removed
  auto forced = stackpin({"unstage", "--dest", dest.string(), "--force"});
  EXPECT_EQ(forced.exit_code, 0) << show(forced);
  EXPECT_NE(forced.out.find("unstaged: removed 37 file(s)"), std::string::npos) << forced.out;
  EXPECT_EQ(testing_support::snapshot(dest), Tree{});
  auto nothing = stackpin({"unstage", "--dest", dest.string()});
  EXPECT_EQ(nothing.exit_code, 1) << show(nothing);
  EXPECT_NE(nothing.err.find("nothing staged"), std::string::npos) << nothing.err;
  auto no_status = stackpin({"status", "--dest", dest.string()});
  EXPECT_EQ(no_status.exit_code, 1) << show(no_status);
}

// One cuDNN, whole: stage reads the unpacked libraries for what they are before anything is
// staged, status reads the staged ones, and inspect a tree.
TEST(CliStage, ACudnnMissingASubLibraryIsRefusedAndStatusReadsTheFiles) {
  ScratchDir d;
  const std::string version = "9.19.0.56";
  auto entries = fixtures::cudnn_linux_entries(version, 13);
  std::vector<fixtures::Entry> half;
  for (const auto& e : entries)
    if (e.path.find("/lib/libcudnn_heuristic") == std::string::npos) half.push_back(e);
  fs::create_directories(d.path() / "half");
  fs::create_directories(d.path() / "whole");
  const std::string name = fixtures::cudnn_archive_name("linux-x86_64", version, 13);
  fixtures::write_archive(d.path() / "half" / name, fixtures::Format::tar_xz, half);
  fixtures::write_archive(d.path() / "whole" / name, fixtures::Format::tar_xz, entries);
  const std::string targets = "[targets.linux]\nlayout = \"lib64\"\nprefix = \"/usr/local/cudnn\"\n";
  for (const char* which : {"half", "whole"}) {
    auto info = fixtures::info(d.path() / which / name);
    testing_support::write_file(d.path() / which / "stack.toml",
                                fixtures::local_manifest(version, 13, "13.0.2", {{"linux-x86_64", info}}, targets));
  }
  auto stage = [&](const char* which) {
    return stackpin({"stage", (d.path() / which / "stack.toml").string(), "--archives", (d.path() / which).string(), "--target", "linux",
                     "--dest", (d.path() / which / "dest").string()});
  };
  auto refused = stage("half");
  EXPECT_EQ(refused.exit_code, 1) << show(refused);
  EXPECT_NE(refused.err.find("is not whole: cuDNN 9.19.0: missing libcudnn_heuristic.so.9"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(d.path() / "half" / "dest")) << "nothing is staged from a cuDNN that is not whole";

  auto staged = stage("whole");
  ASSERT_EQ(staged.exit_code, 0) << show(staged);
  EXPECT_NE(staged.out.find("cuDNN 9.19.0: all 8 sub-libraries of one release (read from the files)"), std::string::npos) << staged.out;
  const fs::path dest = d.path() / "whole" / "dest";
  auto st = stackpin({"status", "--dest", dest.string()});
  EXPECT_EQ(st.exit_code, 0) << show(st);
  EXPECT_NE(st.out.find("ok [cudnn.whole] cuDNN 9.19.0 in " + (dest / "lib64").string()), std::string::npos) << st.out;
  // a libcudnn_ops of another release copied over the staged one
  fs::remove(dest / "lib64" / "libcudnn_ops.so.9.19.0");
  testing_support::write_file(dest / "lib64" / "libcudnn_ops.so.9.19.0",
                              fixtures::elf_library("libcudnn_ops.so.9", {"libcudnn_graph.so.9"}, "cudnn_version_9_18_1_3_", 4096));
  auto drift = stackpin({"status", "--dest", dest.string()});
  EXPECT_EQ(drift.exit_code, 1) << show(drift);
  EXPECT_NE(drift.out.find("status.modified"), std::string::npos) << drift.out;
  EXPECT_NE(drift.out.find("error [cudnn.whole] cuDNN 9.19.0 in " + (dest / "lib64").string()), std::string::npos) << drift.out;
  EXPECT_NE(drift.out.find("the sub-libraries are of 2 releases"), std::string::npos) << drift.out;
  auto inspected = stackpin({"inspect", (dest / "lib64").string(), "--json"});
  EXPECT_EQ(inspected.exit_code, 1) << show(inspected);
  auto j = json::parse(inspected.out);
  bool found = false;
  for (const auto& f : j["findings"])
    if (f["rule"] == "cudnn.whole") {
      found = true;
      EXPECT_EQ(f["severity"], "error") << f.dump(2);
      EXPECT_NE(f["seen"].get<std::string>().find("libcudnn_ops.so.9.19.0 is named 9.19.0, its bytes say 9.18.1.3"), std::string::npos)
          << f.dump(2);
    }
  EXPECT_TRUE(found) << inspected.out;
}

TEST(CliStage, AWindowsTreeSaysHowToActivateAndCheckItInEachShell) {
  World w(k_windows);
  ScratchDir d;
  auto r = stackpin(w.stage(d.path() / "win"));
  ASSERT_EQ(r.exit_code, 0) << show(r);
  for (const std::string& line : std::vector<std::string>{
           "copy " + (d.path() / "win").string() + " to C:\\tools\\cudnn\\v8.8.0 on the Windows machine",
           "Set-ExecutionPolicy -Scope Process -ExecutionPolicy Bypass; & 'C:\\tools\\cudnn\\v8.8.0\\.stackpin\\activate.ps1'",
           "call \"C:\\tools\\cudnn\\v8.8.0\\.stackpin\\activate.cmd\"",
           "powershell -NoProfile -ExecutionPolicy Bypass -File 'C:\\tools\\cudnn\\v8.8.0\\.stackpin\\check-cudnn.ps1'",
           "powershell -NoProfile -ExecutionPolicy Bypass -File \"C:\\tools\\cudnn\\v8.8.0\\.stackpin\\check-cudnn.ps1\"",
           "powershell.exe -NoProfile -ExecutionPolicy Bypass -File 'C:\\tools\\cudnn\\v8.8.0\\.stackpin\\check-cudnn.ps1'"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  // the check script carries the hash of every staged file, and `generate windows-check --dest` writes the same
  auto check = testing_support::read_text(d.path() / "win" / ".stackpin" / "check-cudnn.ps1");
  auto receipt = testing_support::read_text(d.path() / "win" / ".stackpin" / "receipt.json");
  auto sha = receipt.substr(receipt.find("\"sha256\": \"", receipt.find("\"files\"")) + 11, 64);
  EXPECT_NE(check.find("f " + sha + " "), std::string::npos) << sha;
  auto gen = stackpin({"generate", "windows-check", w.manifest().string(), "--dest", (d.path() / "win").string()});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_EQ(gen.out, check);
}

TEST(CliStage, DryRunPrintsThePlanAndChangesNothing) {
  World w(k_windows, "cuda-merge");
  auto dest = w.dir.path() / "cuda";
  make_fake_cuda_root(dest);
  auto before = testing_support::snapshot(dest);
  auto r = stackpin(w.stage(dest, {"--dry-run"}));
  EXPECT_EQ(r.exit_code, 0) << show(r);
  EXPECT_NE(r.out.find("--dry-run, nothing changed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bin/cudnn64_8.dll -> bin/cudnn64_8.dll  replaces an existing file"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("LICENSE -> LICENSE-cudnn.txt"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bin/cudnn64_7.dll"), std::string::npos) << r.out;  // the stale DLL is named
  EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(dest)), "");
  auto fresh = w.dir.path() / "fresh";
  auto f = stackpin(w.stage(fresh, {"--dry-run"}));
  EXPECT_EQ(f.exit_code, 0) << show(f);
  EXPECT_FALSE(fs::exists(fresh));
}

// --json: exactly one JSON document on stdout (json::parse refuses anything after it), with
// command, ok and report, and nothing on stderr, whether the command succeeds or not.
json expect_one_document(const RunResult& r, const std::string& command, bool ok, int exit_code) {
  EXPECT_EQ(r.exit_code, exit_code) << show(r);
  EXPECT_EQ(r.err, "") << show(r);
  json j;
  try {
    j = json::parse(r.out);
  } catch (const json::exception& e) {
    ADD_FAILURE() << "stdout is not one JSON document (" << e.what() << "):\n" << r.out;
    return j;
  }
  EXPECT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j.value("command", ""), command) << r.out;
  EXPECT_EQ(j.value("ok", !ok), ok) << r.out;
  EXPECT_TRUE(j.contains("report")) << r.out;
  EXPECT_TRUE(j.contains("error")) << r.out;
  EXPECT_EQ(j.value("schema", 0), 1) << r.out;
  return j;
}

TEST(CliStage, JsonIsOneDocumentAndNothingElse) {
  World w(k_windows, "cuda-merge");
  auto dest = w.dir.path() / "cuda";
  make_fake_cuda_root(dest);
  auto dry = expect_one_document(stackpin(w.stage(dest, {"--json", "--dry-run"})), "stage", true, 0);
  EXPECT_EQ(dry["report"]["dry_run"], true);
  EXPECT_EQ(dry["report"]["plan"].size(), 31u);
  auto j = expect_one_document(stackpin(w.stage(dest, {"--json"})), "stage", true, 0);
  EXPECT_EQ(j["report"]["dest"], dest.string());
  EXPECT_EQ(j["report"]["layout"], "cuda-merge");
  EXPECT_EQ(j["report"]["files"], 31);
  EXPECT_EQ(j["report"]["archive"]["sha256"], w.info.sha256);
  EXPECT_EQ(j["report"]["stale"], json::array({"bin/cudnn64_7.dll"}));
  EXPECT_EQ(j["report"]["no_op"], false);
  EXPECT_TRUE(j["error"].is_null());
  auto noop = expect_one_document(stackpin(w.stage(dest, {"--json"})), "stage", true, 0);
  EXPECT_EQ(noop["report"]["no_op"], true);
  auto rs = expect_one_document(stackpin(w.stage(dest, {"--json", "--remove-stale"})), "stage", true, 0);
  EXPECT_EQ(rs["report"]["removed_stale"], json::array({"bin/cudnn64_7.dll"}));
  auto st = expect_one_document(stackpin({"status", "--dest", dest.string(), "--json"}), "status", true, 0);
  EXPECT_EQ(st["report"]["files"], 31);
  EXPECT_EQ(st["report"]["cudnn"], "8.8.0.121");

  testing_support::write_file(dest / "bin" / "cudnn64_8.dll", "MZ edited");
  auto drift = expect_one_document(stackpin({"status", "--dest", dest.string(), "--json"}), "status", false, 1);
  bool seen = false;
  for (const auto& f : drift["findings"])
    if (f["rule"] == "status.modified" && f["subject"] == "bin/cudnn64_8.dll") seen = true;
  EXPECT_TRUE(seen) << drift.dump(1);
  auto refused = expect_one_document(stackpin({"unstage", "--dest", dest.string(), "--json"}), "unstage", false, 1);
  EXPECT_EQ(refused["report"]["modified"], json::array({"bin/cudnn64_8.dll"}));
  EXPECT_EQ(refused["error"]["code"], "conflict") << refused.dump(1);
  auto un = expect_one_document(stackpin({"unstage", "--dest", dest.string(), "--json", "--force"}), "unstage", true, 0);
  EXPECT_EQ(un["report"]["removed"], 31);
  EXPECT_EQ(un["report"]["restored"], 4);  // cudnn64_8.dll, cudnn.h, cudnn.lib, cudnn64_7.dll
  auto nothing = expect_one_document(stackpin({"unstage", "--dest", dest.string(), "--json"}), "unstage", false, 1);
  EXPECT_EQ(nothing["error"]["code"], "not_found") << nothing.dump(1);

  // failures of stage itself
  auto usage = expect_one_document(
      stackpin({"stage", w.manifest().string(), "--archives", w.archives().string(), "--target", "windows", "--json"}), "stage", false, 2);
  EXPECT_EQ(usage["error"]["code"], "usage") << usage.dump(1);
  w.write_manifest(w.info.sha256, w.info.size + 1);
  auto size = expect_one_document(stackpin(w.stage(w.dir.path() / "d2", {"--json"})), "stage", false, 1);
  EXPECT_EQ(size["error"]["code"], "mismatch") << size.dump(1);
  EXPECT_FALSE(fs::exists(w.dir.path() / "d2"));
}

// ---- verify --------------------------------------------------------------------------------------

TEST(CliVerify, ExitCodesAndJson) {
  World w(k_linux);
  auto m = w.manifest().string(), a = w.archives().string();
  auto ok = stackpin({"verify", m, "--archives", a});
  EXPECT_EQ(ok.exit_code, 0) << show(ok);
  EXPECT_NE(ok.out.find("verified: 1 archive(s)"), std::string::npos) << ok.out;
  auto j = expect_one_document(stackpin({"verify", m, "--archives", a, "--json"}), "verify", true, 0);
  EXPECT_EQ(j["report"]["archives"][0]["actual_sha256"], w.info.sha256);
  EXPECT_EQ(j["report"]["archives"][0]["found_by_content"], false);

  // renamed download: found by size and hash
  auto renamed = w.archives() / "download.tar.xz";
  fs::rename(w.archives() / w.info.path.filename(), renamed);
  auto by_content = expect_one_document(stackpin({"verify", m, "--archives", a, "--json"}), "verify", true, 0);
  EXPECT_EQ(by_content["report"]["archives"][0]["found_by_content"], true);
  EXPECT_EQ(by_content["report"]["archives"][0]["path"], renamed.string());

  // mismatch: expected and actual printed, exit 1, file untouched
  auto before = testing_support::snapshot(w.archives());
  fs::rename(renamed, w.archives() / w.info.path.filename());
  w.write_manifest(std::string(64, 'e'), w.info.size);
  auto bad = stackpin({"verify", m, "--archives", a});
  EXPECT_EQ(bad.exit_code, 1) << show(bad);
  EXPECT_NE(bad.out.find(std::string(64, 'e')), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find(w.info.sha256), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("verify.sha256"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("verification failed"), std::string::npos) << bad.out;
  auto badj = expect_one_document(stackpin({"verify", m, "--archives", a, "--json"}), "verify", false, 1);
  EXPECT_EQ(badj["report"]["archives"][0]["expected_sha256"], std::string(64, 'e'));
  EXPECT_EQ(badj["report"]["archives"][0]["actual_sha256"], w.info.sha256);
  EXPECT_EQ(testing_support::snapshot(w.archives()).at(w.info.path.filename().string()), before.at("download.tar.xz"));
  EXPECT_EQ(testing_support::snapshot(w.archives()).size(), 1u);

  // not found
  ScratchDir empty;
  auto nf = stackpin({"verify", m, "--archives", empty.path().string()});
  EXPECT_EQ(nf.exit_code, 1) << show(nf);
  EXPECT_NE(nf.out.find("verify.found"), std::string::npos) << nf.out;
  EXPECT_NE(nf.out.find("no " + w.info.path.filename().string() + " in " + empty.path().string()), std::string::npos) << nf.out;

  // one file
  auto file = (w.archives() / w.info.path.filename()).string();
  EXPECT_EQ(stackpin({"verify", file, "--sha256", w.info.sha256}).exit_code, 0);
  EXPECT_EQ(stackpin({"verify", file, "--sha256", w.info.sha256, "--size", std::to_string(w.info.size)}).exit_code, 0);
  auto wrong_size = stackpin({"verify", file, "--sha256", w.info.sha256, "--size", std::to_string(w.info.size + 1)});
  EXPECT_EQ(wrong_size.exit_code, 1) << show(wrong_size);
  EXPECT_NE(wrong_size.out.find("verify.size"), std::string::npos) << wrong_size.out;
  EXPECT_EQ(stackpin({"verify", file, "--sha256", std::string(64, '0')}).exit_code, 1);
  auto gone = stackpin({"verify", (empty.path() / "x").string(), "--sha256", w.info.sha256});
  EXPECT_EQ(gone.exit_code, 1) << show(gone);
  EXPECT_NE(gone.err.find("no such file"), std::string::npos) << gone.err;

  // usage: 2
  auto malformed = stackpin({"verify", file, "--sha256", "xyz"});
  EXPECT_EQ(malformed.exit_code, 2) << show(malformed);
  EXPECT_NE(malformed.err.find("64 hexadecimal digits"), std::string::npos) << malformed.err;
  // without --archives only the download cache is searched: not found there is 1, and says how
  auto no_archives = stackpin({"verify", m}, {"STACKPIN_CACHE_DIR=" + (empty.path() / "cache").string()});
  EXPECT_EQ(no_archives.exit_code, 1) << show(no_archives);
  EXPECT_NE(no_archives.out.find("download cache " + (empty.path() / "cache").string()), std::string::npos) << no_archives.out;
  EXPECT_NE(no_archives.out.find("--archives"), std::string::npos) << no_archives.out;
  EXPECT_EQ(stackpin({"verify", m, "--archives", a, "--platform", "beos"}).exit_code, 2);
  EXPECT_EQ(stackpin({"verify"}).exit_code, 2);
}

// ---- killed at every journal record --------------------------------------------------------------

using testing_support::kill_at_every_record;

TEST(CliStageCrash, KilledAtEveryJournalRecordOnAFreshDest) {
  World w(k_linux);
  kill_at_every_record([&](const fs::path& d) { return w.stage(d); }, [](const fs::path&) {}, 30);
}

TEST(CliStageCrash, KilledAtEveryJournalRecordOnACudaMergeDest) {
  World w(k_windows, "cuda-merge");
  kill_at_every_record([&](const fs::path& d) { return w.stage(d, {"--remove-stale"}); }, [](const fs::path& d) { make_fake_cuda_root(d); },
                       30);
}

TEST(CliStageCrash, UnstageKilledAtEveryJournalRecordIsFinishedByTheNextOne) {
  World w(k_windows, "cuda-merge");
  ScratchDir work;
  auto original_dir = work.path() / "original";
  make_fake_cuda_root(original_dir);
  const Tree original = testing_support::snapshot(original_dir);
  auto staged = work.path() / "staged";
  make_fake_cuda_root(staged);
  auto r = stackpin(w.stage(staged, {"--remove-stale"}));
  ASSERT_EQ(r.exit_code, 0) << show(r);
  int completed_at = 0;
  for (int n = 1; n < 20 && !completed_at; ++n) {
    SCOPED_TRACE("STACKPIN_TEST_FAULT_AT=" + std::to_string(n));
    auto dest = work.path() / ("u-" + std::to_string(n));
    copy_tree(staged, dest);
    auto u = stackpin({"unstage", "--dest", dest.string()}, {"STACKPIN_TEST_FAULT_AT=" + std::to_string(n)});
    if (u.exit_code == 0) {
      completed_at = n;
    } else {
      ASSERT_EQ(u.exit_code, k_fault_exit) << show(u);
      auto again = stackpin({"unstage", "--dest", dest.string()});
      EXPECT_EQ(again.exit_code, 0) << show(again);
    }
    EXPECT_EQ(testing_support::diff(original, testing_support::snapshot(dest)), "");
  }
  EXPECT_GE(completed_at, 3);
}

// ---- SIGKILL at random moments -------------------------------------------------------------------

// A moment of a stage run, as its progress shows it in DEST: the extraction holds `files` files
// under .stackpin/tmp-*, or the journal holds `records` records. The kills land there, whatever
// the machine's speed, instead of after a time measured on a first run.
struct Moment {
  std::size_t files = 0;    // > 0: during the extraction
  std::size_t records = 0;  // > 0: once the journal has this many records
  std::string text() const {
    return files ? "with " + std::to_string(files) + " file(s) extracted" : "at journal record " + std::to_string(records);
  }
};

bool reached(const fs::path& dest, const Moment& m) {
  std::error_code ec;
  const fs::path state = dest / ".stackpin";
  if (m.files) {
    std::size_t n = 0;
    for (fs::directory_iterator d(state, ec), end; !ec && d != end; d.increment(ec))
      if (d->path().filename().string().rfind("tmp-", 0) == 0)
        for (fs::recursive_directory_iterator f(d->path(), ec), fend; !ec && f != fend; f.increment(ec))
          if (f->is_regular_file(ec)) ++n;
    return n >= m.files;
  }
  std::ifstream in(state / "journal", std::ios::binary);
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines >= m.records;
}

// Kills `p` with SIGKILL once the run reaches `m` in `dest`; a run that ends first is left alone.
// The run's own progress is polled (every 100 us): nothing waits a fixed time.
void kill_at(testing_support::Process& p, const fs::path& dest, const Moment& m) {
  while (p.running()) {
    if (reached(dest, m)) {
      p.kill(SIGKILL);
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

// A random moment of a run that stages `files` files: a third during the extraction, the rest in
// the journal (about two records a file, and a few of its own).
Moment random_moment(std::mt19937& rng, std::size_t files) {
  Moment m;
  if (std::uniform_int_distribution<int>(0, 2)(rng) == 0)
    m.files = std::uniform_int_distribution<std::size_t>(1, files)(rng);
  else
    m.records = std::uniform_int_distribution<std::size_t>(1, 2 * files + 6)(rng);
  return m;
}

TEST(CliStageCrash, SigkillAtRandomMomentsThenStageSucceeds) {
  World w(k_linux, "isolated", 2u << 20);  // 13 files of 2 MiB: the kill lands in the extraction too
  ScratchDir work;
  auto ref = work.path() / "reference";
  auto clean = stackpin(w.stage(ref));
  ASSERT_EQ(clean.exit_code, 0) << show(clean);
  const Tree reference = staged_tree(ref);
  unsigned seed = testing_support::test_seed();
  std::mt19937 rng(seed);
  // At least six kills, and on until two have landed mid-run (the killed run had changed DEST but
  // not finished); a run killed before it touched DEST proves nothing about recovery.
  int mid_run = 0;
  for (int i = 0; i < 16 && (i < 6 || mid_run < 2); ++i) {
    Moment moment = random_moment(rng, reference.size());
    SCOPED_TRACE("seed " + std::to_string(seed) + ", killed " + moment.text());
    auto dest = work.path() / ("k" + std::to_string(i));
    {
      testing_support::Process p(argv(w.stage(dest)));
      kill_at(p, dest, moment);
      auto r = p.wait();
      EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 128 + SIGKILL) << show(r);
      if (r.exit_code == 128 + SIGKILL && fs::exists(dest) && testing_support::snapshot(dest) != Tree{}) ++mid_run;
    }
    auto again = stackpin(w.stage(dest));
    EXPECT_EQ(again.exit_code, 0) << show(again);
    EXPECT_EQ(testing_support::diff(reference, staged_tree(dest)), "");
    auto un = stackpin({"unstage", "--dest", dest.string()});
    EXPECT_EQ(un.exit_code, 0) << show(un);
    EXPECT_EQ(testing_support::snapshot(dest), Tree{});
  }
  EXPECT_GE(mid_run, 2) << "no kill landed while the run was changing DEST (seed " << seed << ")";
}

TEST(CliStageCrash, SigkillDuringACudaMergeThenUnstageRestoresTheOriginal) {
  World w(k_windows, "cuda-merge");
  ScratchDir work;
  auto original_dir = work.path() / "original";
  make_fake_cuda_root(original_dir);
  const Tree original = testing_support::snapshot(original_dir);
  auto ref = work.path() / "reference";
  make_fake_cuda_root(ref);
  auto clean = stackpin(w.stage(ref, {"--remove-stale"}));
  ASSERT_EQ(clean.exit_code, 0) << show(clean);
  const std::size_t staged = staged_tree(ref).size();
  unsigned seed = testing_support::test_seed();
  std::mt19937 rng(seed);
  // On until a kill has landed mid-run: the toolkit tree changed, then restored by unstage.
  int mid_run = 0;
  for (int i = 0; i < 16 && (i < 4 || mid_run < 1); ++i) {
    Moment moment = random_moment(rng, staged);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", killed " + moment.text());
    auto dest = work.path() / ("k" + std::to_string(i));
    make_fake_cuda_root(dest);
    {
      testing_support::Process p(argv(w.stage(dest, {"--remove-stale"})));
      kill_at(p, dest, moment);
      auto r = p.wait();
      if (r.exit_code == 128 + SIGKILL && testing_support::snapshot(dest) != original) ++mid_run;
    }
    auto un = stackpin({"unstage", "--dest", dest.string()});
    // 0 when it had a journal or a receipt to act on; 1 (nothing staged) when killed before
    // either, and then it still clears what the killed run left in .stackpin/
    EXPECT_TRUE(un.exit_code == 0 || (un.exit_code == 1 && un.err.find("nothing staged") != std::string::npos)) << show(un);
    EXPECT_EQ(testing_support::diff(original, testing_support::snapshot(dest)), "");
  }
  EXPECT_GE(mid_run, 1) << "no kill landed while the run was changing the toolkit tree (seed " << seed << ")";
}

// ---- two runs at once ----------------------------------------------------------------------------

void two_at_once(const World& w, const std::function<void(const fs::path&)>& make_original, const std::vector<std::string>& extra) {
  ScratchDir work;
  auto ref = work.path() / "reference";
  make_original(ref);
  auto clean = stackpin(w.stage(ref, extra));
  ASSERT_EQ(clean.exit_code, 0) << show(clean);
  const Tree reference = staged_tree(ref);
  for (int i = 0; i < 3; ++i) {
    auto dest = work.path() / ("d" + std::to_string(i));
    make_original(dest);
    testing_support::Process a(argv(w.stage(dest, extra)));
    testing_support::Process b(argv(w.stage(dest, extra)));
    auto ra = a.wait(), rb = b.wait();
    EXPECT_EQ(ra.exit_code, 0) << show(ra);
    EXPECT_EQ(rb.exit_code, 0) << show(rb);
    // one staged it; the other waited for the lock and found it staged (or staged it again)
    int staged = (ra.out.find("already staged") == std::string::npos) + (rb.out.find("already staged") == std::string::npos);
    EXPECT_GE(staged, 1) << ra.out << rb.out;
    EXPECT_EQ(testing_support::diff(reference, staged_tree(dest)), "");
  }
}

// Runs the binary with a file-size limit of `kib` KiB: the first write past it kills the process
// with SIGXFSZ, in the middle of extracting (what a full quota or `ulimit -f` does to a real run).
RunResult run_with_file_limit(int kib, const std::vector<std::string>& args) {
  std::vector<std::string> a{"/bin/sh", "-c", "ulimit -f " + std::to_string(kib * 2) + "; exec \"$0\" \"$@\""};
  auto full = argv(args);
  a.insert(a.end(), full.begin(), full.end());
  return testing_support::run_process(a);
}

TEST(CliStageCrash, WhatARunKilledWhileExtractingLeftIsRemovedByTheNextRun) {
  World w(k_linux, "isolated", 64 << 10);
  ScratchDir d;
  auto dest = d.path() / "dest";
  {  // a first staging, then a restage of it killed while extracting (--force makes it extract)
    auto ok = stackpin(w.stage(dest));
    ASSERT_EQ(ok.exit_code, 0) << show(ok);
    testing_support::write_file(dest / "lib64" / "libcudnn.so.8.9.7", "edited");
  }
  auto killed = run_with_file_limit(32, w.stage(dest, {"--force"}));
  ASSERT_EQ(killed.exit_code, 128 + SIGXFSZ) << show(killed);
  std::vector<std::string> strays;
  for (auto& e : fs::directory_iterator(dest / ".stackpin"))
    if (e.path().filename().string().rfind("tmp-", 0) == 0) strays.push_back(e.path().filename().string());
  ASSERT_FALSE(strays.empty()) << "the kill landed before extraction: nothing to clean up";
  // the next run of any command that takes DEST's lock removes them, and status finds the restage pending
  auto again = stackpin(w.stage(dest, {"--force"}));
  ASSERT_EQ(again.exit_code, 0) << show(again);
  for (auto& e : fs::directory_iterator(dest / ".stackpin"))
    EXPECT_NE(e.path().filename().string().rfind("tmp-", 0), 0u) << "left behind: " << e.path();
  // and a no-op restage (which takes no lock when nothing is to be done) does not leave them either
  auto killed2 = run_with_file_limit(32, w.stage(dest, {"--force"}));
  (void)killed2;
  testing_support::write_file(dest / ".stackpin" / "tmp-leftover" / "x", "a killed run's");
  auto noop = stackpin(w.stage(dest));
  ASSERT_EQ(noop.exit_code, 0) << show(noop);
  EXPECT_FALSE(fs::exists(dest / ".stackpin" / "tmp-leftover"));
}

TEST(CliStageConcurrency, TwoStagesOnOneFreshDest) {
  World w(k_linux, "isolated", 2u << 20);
  two_at_once(w, [](const fs::path&) {}, {});
}

TEST(CliStageConcurrency, TwoStagesOnOneCudaMergeDest) {
  World w(k_windows, "cuda-merge");
  two_at_once(w, [](const fs::path& d) { make_fake_cuda_root(d); }, {"--remove-stale"});
}

// A DEST the user may not write: the error names it and the hint says how to get the rights (here,
// as a user without them: root drops to nobody through setpriv).
TEST(CliStage, ADestWithoutWriteAccessSaysHowToGetIt) {
  std::vector<std::string> as_user;
  if (::geteuid() == 0) {
    std::string setpriv = testing_support::tool_path("setpriv");
    if (setpriv.empty()) GTEST_SKIP() << "running as root without setpriv (util-linux) to run stackpin as another user";
    as_user = {setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"};
  }
  World w(k_linux);
  fs::path locked = w.dir.path() / "locked";
  fs::create_directories(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);  // 0555: no one but root writes
  auto args = argv(w.stage(locked / "cudnn"));
  args.insert(args.begin(), as_user.begin(), as_user.end());
  auto r = testing_support::run_process(args);
  EXPECT_EQ(r.exit_code, 1) << show(r);
  EXPECT_TRUE(testing_support::contains(r.err, "cannot create " + (locked / "cudnn").string())) << show(r);
  EXPECT_TRUE(testing_support::contains(r.err, "run stackpin as root (sudo)")) << show(r);
  EXPECT_FALSE(fs::exists(locked / "cudnn"));
}

}  // namespace

}  // namespace cli_stage_test
