// Windows on Arm (windows-arm64: CUDA 13.4, cuDNN 9.27) through the real binary: a manifest's
// [targets.windows] arch = "arm64" checked and locked to NVIDIA's own archives, Arm64 archives
// staged into bin\arm64 and lib\arm64 with activation scripts that know the machine, and doctor and
// capture telling an Arm64 machine from System32's own DLLs.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "fixtures.hpp"
#include "test_support.hpp"
#include "windows_tree.hpp"

namespace cli_windows_arm64_test {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing_support::ScratchDir;
using testing_support::stackpin;
using testing_support::WindowsTree;

constexpr std::uint16_t k_arm64 = 0xAA64, k_x64 = 0x8664;

const char* k_stack = R"(schema = 1
name = "woa"
[cuda]
version = "13.4.2"
components = ["cudart"]
[cudnn]
version = "9.27.0.42"
cuda = 13
[targets.windows]
arch = "arm64"
layout = "isolated"
prefix = 'C:\tools\cudnn\v9.27'
)";

std::string read(const fs::path& p) { return testing_support::read_text(p); }

// NVIDIA's own entry for a component on a platform, from the copy of its 13.4.2 manifest.
json nvidia_cuda_archive(const std::string& component, const std::string& platform) {
  auto doc = json::parse(read(testing_support::source_dir() / "data/redist/cuda/redistrib_13.4.2.json"));
  return doc[component][platform];
}

bool has(const std::string& text, const std::string& what) { return testing_support::contains(text, what); }

}  // namespace

TEST(CliWindowsArm64, AStackForWindowsOnArmIsCheckedAndLockedToNvidiasArchives) {
  ScratchDir dir;
  auto m = dir.write("stack.toml", k_stack);
  auto check = stackpin({"check", m.string(), "--json"});
  ASSERT_NE(check.exit_code, 1) << check.out << check.err;
  json report = json::parse(check.out)["report"]["manifests"][0];
  EXPECT_EQ(report["windows"]["dll_dir"], "bin\\arm64") << report["windows"].dump();
  EXPECT_EQ(report["windows"]["import_lib_dir"], "lib\\arm64") << report["windows"].dump();
  for (const auto& f : report["findings"]) EXPECT_NE(f["rule"], "windows.archive") << f.dump();

  auto lock = stackpin({"lock", m.string(), "--json"});
  ASSERT_EQ(lock.exit_code, 0) << lock.out << lock.err;
  std::string text = read(dir.path() / "stack.lock");
  // cuDNN: the cuda13 archive of NVIDIA's windows-arm64 entry, not the _cuda13.4 build beside it
  EXPECT_TRUE(has(text, "c34d906b19df16d370d31b78b1ee480a07e6f827fdabfea63acb914528a9b85c")) << text;
  EXPECT_TRUE(has(text, "cudnn/windows-arm64/cudnn-windows-arm64-9.27.0.42_cuda13-archive.zip")) << text;
  EXPECT_FALSE(has(text, "1fe473fc57095ac23ff39b2709edd5f8c3dec8376e6a6f3b812cf4617a29060d")) << text;
  // the toolkit component: NVIDIA's windows-arm64 archive of cuda_cudart, hash and size
  json cudart = nvidia_cuda_archive("cuda_cudart", "windows-arm64");
  ASSERT_TRUE(cudart.is_object());
  EXPECT_TRUE(has(text, cudart["sha256"].get<std::string>())) << text;
  EXPECT_TRUE(has(text, "size = " + cudart["size"].get<std::string>())) << text;
  EXPECT_EQ(stackpin({"lock", "--check", m.string()}).exit_code, 0);

  // CUDA 13.4's driver floor is NVIDIA's R615 branch, not a guess from the 13.x family
  auto explain = stackpin({"check", m.string()});
  EXPECT_TRUE(has(explain.out, "615")) << explain.out;
  EXPECT_FALSE(has(explain.out, "no CUDA 13.4 release in NVIDIA's driver table")) << explain.out;

  // the example manifest of such a stack checks clean
  auto example = stackpin({"check", (testing_support::source_dir() / "manifests/cu134-cudnn927-woa.toml").string()});
  EXPECT_EQ(example.exit_code, 0) << example.out << example.err;
  EXPECT_TRUE(has(example.out, "0 errors, 0 warnings")) << example.out;

  // x64 and Arm64 do not mix: the manifest's arch, a contradicting --platform, a bad arch
  std::string x64_pin = std::string(k_stack) + R"(
[[cudnn.archives]]
platform = "windows-x86_64"
url = "https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/windows-x86_64/cudnn-windows-x86_64-9.27.0.42_cuda13-archive.zip"
sha256 = "15595c7b52896262a0e590f02b3b3851c6a2c9046a72047526deaf59a9cbf7d5"
size = 1330803635
)";
  auto mixed = stackpin({"check", dir.write("mixed.toml", x64_pin).string()});
  EXPECT_TRUE(has(mixed.out, "pins a windows-x86_64 archive, but [targets.windows] targets windows-arm64")) << mixed.out;
  auto platform = stackpin({"stage", m.string(), "--target", "windows", "--platform", "windows-x86_64", "--dest",
                            (dir.path() / "d").string(), "--archives", dir.path().string()});
  EXPECT_EQ(platform.exit_code, 2) << platform.err;
  EXPECT_TRUE(has(platform.err, "contradicts [targets.windows] in " + m.string() + " (arch = \"arm64\", line 10)")) << platform.err;
  EXPECT_FALSE(fs::exists(dir.path() / "d"));
  std::string bad = k_stack;
  bad.replace(bad.find("\"arm64\""), 7, "\"ia64\"");
  auto refused = stackpin({"check", dir.write("bad.toml", bad).string()});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_TRUE(has(refused.err + refused.out, "bad.toml:10")) << refused.err << refused.out;
  EXPECT_TRUE(has(refused.err + refused.out, "arm64")) << refused.err << refused.out;
}

// An Arm64 cuDNN archive in NVIDIA's windows-arm64 layout (bin\arm64, lib\arm64) staged as an
// isolated tree and merged into a toolkit: the activation scripts put bin\arm64 on PATH and check
// the machine; an archive in the x64 layout is refused, naming what was expected.
TEST(CliWindowsArm64, ArmArchivesAreStagedIntoTheirOwnArchitectureDirectories) {
  ScratchDir dir;
  auto archives = dir.path() / "archives";
  fs::create_directories(archives);
  auto arm = fixtures::make_cudnn_windows(archives, "9.27.0.42", 13, {}, "windows-arm64");
  auto cudart = fixtures::make_cuda_component(archives, "cuda_cudart", "13.4.92", {}, "windows-arm64");
  std::string targets = "[targets.windows]\narch = \"arm64\"\nlayout = \"isolated\"\nprefix = 'C:\\tools\\cudnn\\v9.27'\n";
  auto m = dir.write("stack.toml", fixtures::local_manifest("9.27.0.42", 13, "13.4.2", {{"windows-arm64", arm}}, targets));
  fs::path dest = dir.path() / "isolated";
  auto r = stackpin({"stage", m.string(), "--target", "windows", "--dest", dest.string(), "--archives", archives.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::is_regular_file(dest / "bin/arm64/cudnn64_9.dll"));
  EXPECT_TRUE(fs::is_regular_file(dest / "lib/arm64/cudnn.lib"));
  EXPECT_FALSE(fs::exists(dest / "bin/x64"));
  std::string activate = read(dest / ".stackpin/activate.ps1");
  EXPECT_TRUE(has(activate, "$CudnnBin = 'C:\\tools\\cudnn\\v9.27\\bin\\arm64'")) << activate;
  std::string check = read(dest / ".stackpin/check-cudnn.ps1");
  EXPECT_TRUE(has(check, "$Arch = 'arm64'")) << check;
  EXPECT_TRUE(has(check, "$ImportLib = 'C:\\tools\\cudnn\\v9.27\\lib\\arm64\\cudnn.lib'")) << check;
  EXPECT_TRUE(has(check, "Test-Architecture")) << check;
  EXPECT_TRUE(has(check, "if ($machine -eq 0xAA64) { return 'arm64' }")) << check;

  // merged into the Arm64 toolkit staged beside it: bin\arm64 and lib\arm64 of the toolkit
  std::string merge =
      "[targets.windows]\narch = \"arm64\"\nlayout = \"cuda-merge\"\n"
      "cuda_path = 'C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v13.4'\n"
      "[cudnn]\nversion = \"9.27.0.42\"\ncuda = 13\n[[cudnn.archives]]\nplatform = \"windows-arm64\"\norigin = \"local\"\n"
      "file = \"" +
      arm.path.filename().string() + "\"\nsha256 = \"" + arm.sha256 + "\"\nsize = " + std::to_string(arm.size) + "\n";
  auto merged_manifest = dir.write(
      "merged.toml", fixtures::local_toolkit_manifest("13.4.2", {"cuda_cudart"}, {{"cuda_cudart", cudart}}, merge, "windows-arm64"));
  fs::path merged = dir.path() / "merged";
  auto mr =
      stackpin({"stage", merged_manifest.string(), "--target", "windows", "--dest", merged.string(), "--archives", archives.string()});
  ASSERT_EQ(mr.exit_code, 0) << mr.out << mr.err;
  EXPECT_TRUE(fs::is_regular_file(merged / "bin/arm64/cudnn64_9.dll"));
  EXPECT_TRUE(fs::is_regular_file(merged / "lib/arm64/cudnn.lib"));
  EXPECT_TRUE(fs::is_regular_file(merged / "bin/arm64/cudart64_13.dll"));
  EXPECT_TRUE(fs::is_regular_file(merged / "lib/arm64/cudart.lib"));
  std::string merged_activate = read(merged / ".stackpin/activate.ps1");
  EXPECT_TRUE(has(merged_activate, "CUDA\\v13.4\\bin\\arm64")) << merged_activate;

  // the x64 archive of the release where the Arm64 one is pinned: not NVIDIA's windows-arm64 layout
  ScratchDir other;
  auto x64_dir = other.path() / "archives";
  fs::create_directories(x64_dir);
  auto x64 = fixtures::make_cudnn_windows(x64_dir, "9.27.0.42", 13);
  fs::path renamed = x64_dir / arm.path.filename();
  fs::rename(x64.path, renamed);
  x64.path = renamed;
  auto wrong = other.write("stack.toml", fixtures::local_manifest("9.27.0.42", 13, "13.4.2", {{"windows-arm64", x64}}, targets));
  fs::path wrong_dest = other.path() / "dest";
  auto w = stackpin({"stage", wrong.string(), "--target", "windows", "--dest", wrong_dest.string(), "--archives", x64_dir.string()});
  EXPECT_EQ(w.exit_code, 1) << w.out << w.err;
  EXPECT_TRUE(has(w.err, "windows-arm64 layout")) << w.err;
  EXPECT_TRUE(has(w.err, "bin/arm64/")) << w.err;
  EXPECT_FALSE(fs::exists(wrong_dest / "bin"));
}

// doctor and capture tell the machine from System32's ntdll.dll: an Arm64 machine with the Arm64
// tree first on PATH is fine; the x64 tree there loads only into emulated programs; an Arm64 tree
// on an x64 machine loads nowhere. capture writes arch = "arm64" and the windows-arm64 archive.
TEST(CliWindowsArm64, DoctorAndCaptureTellAnArmMachineAndItsDlls) {
  ScratchDir dir;
  auto m = dir.write("stack.toml", k_stack);
  WindowsTree arm(dir.path() / "arm");
  arm.windows();
  arm.pe("C:\\Windows\\System32\\ntdll.dll", k_arm64);
  const std::string cuda = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v13.4";
  arm.pe(cuda + "\\bin\\arm64\\cudart64_13.dll", k_arm64);
  arm.file(cuda + "\\version.json", "{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"13.4.2\"}}\n");
  std::string bin = arm.cudnn("C:\\tools\\cudnn\\v9.27", "9.27.0", {"cudnn64_9.dll"}, "bin\\arm64");
  arm.pe(bin + "\\cudnn64_9.dll", k_arm64);
  auto ok = stackpin({"doctor", "--manifest", m.string(), "--windows-root", arm.root().string(), "--path", bin, "--json"});
  json doc = json::parse(ok.out);
  EXPECT_EQ(doc["report"]["windows"]["machine"], "arm64") << ok.out;
  EXPECT_EQ(doc["report"]["expected"]["windows_arch"], "arm64") << ok.out;
  int seen = 0;
  for (const auto& f : doc["findings"])
    if (f["rule"] == "windows.architecture") {
      ++seen;
      EXPECT_EQ(f["severity"], "ok") << f.dump();
    }
  EXPECT_EQ(seen, 1) << ok.out;

  // the x64 cuDNN first on an Arm64 machine: a warning, with the way to the Arm64 build
  arm.pe(bin + "\\cudnn64_9.dll", k_x64);
  auto emulated = stackpin({"doctor", "--windows-root", arm.root().string(), "--path", bin});
  EXPECT_TRUE(has(emulated.out, "warning [windows.architecture] " + bin + "\\cudnn64_9.dll")) << emulated.out;
  EXPECT_TRUE(has(emulated.out, "only emulated x64 programs can load it")) << emulated.out;
  EXPECT_TRUE(has(emulated.out, "arch = \"arm64\"")) << emulated.out;

  // the Arm64 manifest and DLL on an x64 machine: errors
  WindowsTree x64(dir.path() / "x64");
  x64.windows();
  x64.pe("C:\\Windows\\System32\\ntdll.dll", k_x64);
  std::string xbin = x64.cudnn("C:\\tools\\cudnn\\v9.27", "9.27.0", {"cudnn64_9.dll"}, "bin\\arm64");
  x64.pe(xbin + "\\cudnn64_9.dll", k_arm64);
  auto wrong = stackpin({"doctor", "--manifest", m.string(), "--windows-root", x64.root().string(), "--path", xbin});
  EXPECT_EQ(wrong.exit_code, 1) << wrong.out << wrong.err;
  EXPECT_TRUE(has(wrong.out, "error [windows.architecture] the machine (x64)")) << wrong.out;
  EXPECT_TRUE(has(wrong.out, "no program here can load it")) << wrong.out;

  // capture of the Arm64 machine: arch and NVIDIA's windows-arm64 archive
  arm.pe(bin + "\\cudnn64_9.dll", k_arm64);
  auto cap = stackpin({"capture", "--windows-root", arm.root().string(), "--path", bin + ";" + cuda + "\\bin\\arm64"});
  ASSERT_EQ(cap.exit_code, 0) << cap.err;
  EXPECT_TRUE(has(cap.out, "[targets.windows]\nlayout = \"isolated\"\narch = \"arm64\"\n")) << cap.out;
  EXPECT_TRUE(has(cap.out, "[cuda]\nversion = \"13.4.2\"\n")) << cap.out;
  EXPECT_TRUE(has(cap.out, "platform = \"windows-arm64\"")) << cap.out;
  EXPECT_TRUE(has(cap.out, "c34d906b19df16d370d31b78b1ee480a07e6f827fdabfea63acb914528a9b85c")) << cap.out;
  auto captured = dir.write("captured.toml", cap.out);
  auto recheck = stackpin({"check", captured.string()});
  EXPECT_NE(recheck.exit_code, 1) << cap.out << recheck.out << recheck.err;
}

}  // namespace cli_windows_arm64_test
