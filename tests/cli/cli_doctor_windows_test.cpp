// `stackpin doctor --windows-root` through the real binary: exit codes 0/1/2, the key words of the
// text output and the --json envelope, on fake Windows trees built at test time.
#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "knowledge/knowledge_base.hpp"
#include "test_support.hpp"
#include "windows_tree.hpp"

namespace cli_doctor_windows_test {

using nlohmann::json;
using testing_support::ScratchDir;
using testing_support::stackpin;
using testing_support::WindowsTree;

namespace {

const std::string k_cuda = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA";

std::vector<std::string> dlls(int major) { return knowledge::KnowledgeBase::embedded().cudnn_contents(major)->windows_dlls; }

const char* k_manifest = R"(schema = 1
name = "doctor-cli"
[cuda]
version = "12.1.1"
[cudnn]
version = "8.9.5.30"
cuda = 12
[targets.windows]
layout = "cuda-merge"
cuda_path = 'C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.1'
)";

// cuDNN 8.9.5 merged into CUDA 12.1 (with zlibwapi.dll); CUDA 11.8 carries an old cuDNN 8.7.0.
struct Tree {
  ScratchDir scratch;
  WindowsTree w{scratch.path() / "c"};
  std::string cuda118, cuda121, manifest;
  Tree() {
    w.windows();
    cuda118 = w.cuda("11.8");
    w.cudnn(k_cuda + "\\v11.8", "8.7.0", dlls(8));
    cuda121 = w.cuda("12.1");
    w.cudnn(k_cuda + "\\v12.1", "8.9.5", dlls(8));
    w.pe(cuda121 + "\\zlibwapi.dll", 0x8664);
    manifest = scratch.write("stack.toml", k_manifest).string();
  }
  std::vector<std::string> args(const std::string& path) const {
    return {"doctor", "--manifest", manifest, "--windows-root", w.root().string(), "--path", path};
  }
};

bool has(const std::string& text, const std::string& what) { return testing_support::contains(text, what); }

}  // namespace

TEST(CliDoctorWindows, RightOrderExitsZero) {
  Tree t;
  auto r = stackpin(t.args(t.cuda121 + ";" + t.cuda118));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "ok [windows.cudnn-dll] cudnn64_8.dll")) << r.out;
  EXPECT_TRUE(has(r.out, "DLL search order of a desktop application (SafeDllSearchMode on)")) << r.out;
  EXPECT_TRUE(has(r.out, "loads " + t.cuda121 + "\\cudnn64_8.dll")) << r.out;
  EXPECT_TRUE(has(r.out, "later " + t.cuda118 + "\\cudnn64_8.dll")) << r.out;
  EXPECT_TRUE(has(r.out, "warning [windows.stale-dll]")) << r.out;  // the old copy sits later
  EXPECT_TRUE(has(r.out, "0 errors")) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CliDoctorWindows, OldCudnnFirstExitsOne) {
  Tree t;
  auto r = stackpin(t.args(t.cuda118 + ";" + t.cuda121));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "error [windows.cudnn-dll] cudnn64_8.dll")) << r.out;
  EXPECT_TRUE(has(r.out, "error [windows.stale-dll] " + t.cuda118 + "\\cudnn64_8.dll")) << r.out;
  EXPECT_TRUE(has(r.out, "cuDNN 8.7.0")) << r.out;
  EXPECT_TRUE(has(r.out, "fix:")) << r.out;
}

TEST(CliDoctorWindows, StrictMakesWarningsFail) {
  Tree t;
  EXPECT_EQ(stackpin(t.args(t.cuda121 + ";" + t.cuda118)).exit_code, 0);
  auto args = t.args(t.cuda121 + ";" + t.cuda118);
  args.push_back("--strict");
  EXPECT_EQ(stackpin(args).exit_code, 1);
}

TEST(CliDoctorWindows, JsonEnvelope) {
  Tree t;
  auto args = t.args(t.cuda118 + ";" + t.cuda121);
  args.push_back("--json");
  auto r = stackpin(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["schema"], 1);
  EXPECT_EQ(j["command"], "doctor");
  EXPECT_EQ(j["ok"], false);
  EXPECT_TRUE(j["error"].is_null());
  bool cudnn_error = false;
  for (const auto& f : j["findings"])
    if (f["rule"] == "windows.cudnn-dll" && f["severity"] == "error") cudnn_error = true;
  EXPECT_TRUE(cudnn_error) << r.out;
  const auto& rep = j["report"];
  EXPECT_EQ(rep["expected"]["cudnn_version"], "8.9.5.30");
  EXPECT_EQ(rep["expected"]["windows_cudnn_dir"], t.cuda121);
  const auto& desktop = rep["windows"]["desktop"];
  EXPECT_EQ(desktop["dirs"][0]["windows_path"], "C:\\Windows\\System32");
  EXPECT_EQ(desktop["dirs"][3]["windows_path"], t.cuda118);
  EXPECT_EQ(desktop["dirs"][3]["source"], "path");
  EXPECT_EQ(desktop["dirs"][3]["cuda_version"], "11.8");
  EXPECT_EQ(desktop["dirs"][3]["exists"], true);
  bool winner = false;
  for (const auto& l : desktop["dlls"])
    if (l["name"] == "cudnn64_8.dll") {
      winner = true;
      EXPECT_EQ(l["winner"]["windows_path"], t.cuda118 + "\\cudnn64_8.dll");
      EXPECT_EQ(l["winner"]["version"], "8.7.0");
      EXPECT_EQ(l["copies"].size(), 2u);
    }
  EXPECT_TRUE(winner) << r.out;
  EXPECT_TRUE(rep["windows"]["python_order"].is_null());
}

TEST(CliDoctorWindows, PythonNeedsAddDllDirectory) {
  Tree t;
  t.w.file("C:\\Python311\\python.exe");
  auto args = t.args(t.cuda121 + ";" + t.cuda118);
  args.insert(args.end(), {"--python", "C:\\Python311\\python.exe"});
  auto r = stackpin(args);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "error [windows.python-dll-dirs]")) << r.out;
  EXPECT_TRUE(has(r.out, "os.add_dll_directory(r'" + t.cuda121 + "')")) << r.out;
  EXPECT_TRUE(has(r.out, "Python 3.8+ extension modules")) << r.out;
  args.insert(args.end(), {"--dll-dir", t.cuda121});
  auto fixed = stackpin(args);
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out << fixed.err;
  EXPECT_TRUE(has(fixed.out, "ok [windows.python-dll-dirs]")) << fixed.out;
}

TEST(CliDoctorWindows, UserPathComesAfterMachinePath) {
  Tree t;
  auto args = t.args(t.cuda118);
  args.insert(args.end(), {"--user-path", t.cuda121});
  auto r = stackpin(args);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "warning [windows.path-scope]")) << r.out;
  EXPECT_TRUE(has(r.out, "User PATH entry 1")) << r.out;
}

TEST(CliDoctorWindows, UsageErrorsExitTwo) {
  Tree t;
  auto no_root = stackpin({"doctor", "--path", "C:\\x"});
  EXPECT_EQ(no_root.exit_code, 2) << no_root.err;
  EXPECT_TRUE(has(no_root.err, "--windows-root")) << no_root.err;
  auto no_path = stackpin({"doctor", "--windows-root", t.w.root().string()});
  EXPECT_EQ(no_path.exit_code, 2) << no_path.err;
  auto missing = stackpin({"doctor", "--windows-root", (t.scratch.path() / "nope").string(), "--path", "C:\\x"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(has(missing.err, "no such directory")) << missing.err;
  auto relative = stackpin({"doctor", "--windows-root", t.w.root().string(), "--path", "C:\\x", "--app-dir", "app"});
  EXPECT_EQ(relative.exit_code, 2);
  EXPECT_TRUE(has(relative.err, "not an absolute Windows path")) << relative.err;
  auto drive = stackpin({"doctor", "--windows-root", t.w.root().string(), "--path", "C:\\x", "--drive", "DD=/tmp"});
  EXPECT_EQ(drive.exit_code, 2);
  EXPECT_TRUE(has(drive.err, "--drive DD=/tmp")) << drive.err;
  auto json_usage = stackpin({"doctor", "--json", "--windows-root", (t.scratch.path() / "nope").string(), "--path", "C:\\x"});
  EXPECT_EQ(json_usage.exit_code, 2);
  json j = json::parse(json_usage.out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["error"]["code"], "usage");
}

TEST(CliDoctorWindows, MissingManifestExitsOne) {
  Tree t;
  auto r = stackpin({"doctor", "--manifest", "/nonexistent/m.toml", "--windows-root", t.w.root().string(), "--path", "C:\\x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.err, "/nonexistent/m.toml")) << r.err;
}

TEST(CliDoctor, WithoutWindowsRootInspectsThisMachine) {
  auto r = stackpin({"doctor"});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "[linux.os]")) << r.out;
  EXPECT_FALSE(has(r.out, "[doctor.linux]")) << r.out;
  auto j = json::parse(stackpin({"doctor", "--json"}).out);
  EXPECT_TRUE(j["report"]["windows"].is_null());
  EXPECT_TRUE(j["report"]["machine"].is_object()) << j.dump(1);
}

TEST(CliDoctorWindows, TheWinningCudnnsDllsAreJudgedByTheirGpuCodeForEachGpu) {
  ScratchDir scratch;
  WindowsTree w{scratch.path() / "c"};
  w.windows();
  const std::string cuda = w.cuda("12.4");
  const std::string bin = w.cudnn("C:\\tools\\cudnn", "9.1.0", dlls(9));
  // cudnn_cnn64_9.dll carries SASS for sm_86 and PTX for compute_90 (ISA 8.0); the others none
  w.file(bin + "\\cudnn_cnn64_9.dll",
         fixtures::pe_library("cudnn_cnn64_9.dll", {}, fixtures::fatbin_container({{2, 86, 0x11}, {1, 90, 0x11, 8, 0}}), 0));
  auto manifest = scratch.write("stack.toml", R"(schema = 1
name = "gpu-code"
[cuda]
version = "12.4.1"
[cudnn]
version = "9.1.0.70"
cuda = 12
[gpus]
arch = ["8.6", "8.9", "9.0", "6.1"]
)");
  auto r = stackpin({"doctor", "--manifest", manifest.string(), "--windows-root", w.root().string(), "--path", bin + ";" + cuda, "--json"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  std::map<std::string, json> by_gpu;
  const json report = json::parse(r.out);
  for (const auto& f : report["findings"])
    if (f["rule"] == "windows.gpu-kernels")
      by_gpu[f["subject"].get<std::string>().substr(std::string("[gpus] compute capability ").size(), 3)] = f;
  ASSERT_EQ(by_gpu.size(), 4u) << r.out;
  EXPECT_EQ(by_gpu["8.6"]["severity"], "ok") << by_gpu["8.6"].dump(2);
  EXPECT_TRUE(has(by_gpu["8.6"]["seen"],
                  "cuDNN in C:\\tools\\cudnn\\bin (cudnn64_9.dll wins): its one library with GPU code carries SASS that runs on 8.6"))
      << by_gpu["8.6"].dump(2);
  EXPECT_EQ(by_gpu["8.9"]["severity"], "ok") << by_gpu["8.9"].dump(2);  // sm_86 is binary compatible with 8.9
  EXPECT_EQ(by_gpu["9.0"]["severity"], "warning") << by_gpu["9.0"].dump(2);
  EXPECT_TRUE(has(by_gpu["9.0"]["seen"], "no sm_90 SASS in cudnn_cnn64_9.dll (PTX compute_90, ISA 8.0)")) << by_gpu["9.0"].dump(2);
  EXPECT_TRUE(has(by_gpu["9.0"]["fix"], "%APPDATA%\\NVIDIA\\ComputeCache")) << by_gpu["9.0"].dump(2);
  EXPECT_EQ(by_gpu["6.1"]["severity"], "error") << by_gpu["6.1"].dump(2);
  EXPECT_TRUE(has(by_gpu["6.1"]["seen"], "cudnn_cnn64_9.dll (sm_86 compute_90) carry nothing that runs on 6.1")) << by_gpu["6.1"].dump(2);

  // a DLL that cannot be read is named; the rest are still judged
  w.file(bin + "\\cudnn_ops64_9.dll", "MZ, and nothing of a DLL after it");
  auto again =
      stackpin({"doctor", "--manifest", manifest.string(), "--windows-root", w.root().string(), "--path", bin + ";" + cuda, "--json"});
  bool named = false, judged = false;
  const json second = json::parse(again.out);
  for (const auto& f : second["findings"]) {
    if (f["rule"] != "windows.gpu-kernels") continue;
    if (has(f["subject"], "cudnn_ops64_9.dll")) named = has(f["seen"], "its GPU code cannot be read");
    if (has(f["subject"], "6.1")) judged = f["severity"] == "error";
  }
  EXPECT_TRUE(named) << again.out;
  EXPECT_TRUE(judged) << again.out;
}

}  // namespace cli_doctor_windows_test
