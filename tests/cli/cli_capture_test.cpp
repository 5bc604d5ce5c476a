// stackpin capture: this machine as a manifest that check accepts, and capture -> stage on a
// second tree reproducing a staged tree exactly (same archive, same files).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "test_support.hpp"
#include "util/fs.hpp"
#include "windows_tree.hpp"

namespace cli_capture_test {

namespace fs = std::filesystem;
using testing_support::read_text;
using testing_support::ScratchDir;
using testing_support::stackpin;

TEST(CaptureCli, ThisMachineGivesAManifestCheckAccepts) {
  ScratchDir dir;
  fs::path out = dir.path() / "captured.toml";
  auto r = stackpin({"capture", "-o", out.string()});
  if (r.exit_code == 1 && r.err.find("finds no cuDNN") != std::string::npos)
    GTEST_SKIP() << "the loader finds no cuDNN on this machine: " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string text = read_text(out);
  EXPECT_NE(text.find("[cudnn]\nversion = \""), std::string::npos) << text;
  auto check = stackpin({"check", out.string()});
  EXPECT_EQ(check.exit_code, 0) << "check must accept what capture writes\n" << text << "\n" << check.out << check.err;
  if (fs::exists("/usr/local/cuda/lib64/libcudnn.so.9") &&
      read_text("/usr/local/cuda/include/cudnn_version.h").find("CUDNN_MINOR 19") != std::string::npos) {
    EXPECT_NE(text.find("version = \"9.19.0."), std::string::npos) << "this machine's cuDNN 9.19\n" << text;
  }
  // the development machine's toolkit is NVIDIA's CUDA 13.0.2 pip wheels: the release, not "13.0"
  if (fs::exists("/usr/local/cuda/dist-info/nvidia_cuda_runtime-13.0.96.dist-info") &&
      fs::exists("/usr/local/cuda/dist-info/nvidia_cublas-13.1.0.3.dist-info") && !fs::exists("/usr/local/cuda/version.json")) {
    EXPECT_NE(text.find("[cuda]\nversion = \"13.0.2\"\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\"cuda_cudart\""), std::string::npos) << text;
  }
}

TEST(CaptureCli, CaptureThenStageReproducesAStagedTree) {
  ScratchDir dir;
  fs::path archives = dir.path() / "archives", first = dir.path() / "machine-a/cudnn", second = dir.path() / "machine-b/cudnn";
  fs::create_directories(archives);
  auto archive = fixtures::make_cudnn_linux_elf(archives, testing_support::doubles_dir() / "stems");
  auto manifest = dir.write("stack.toml", fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"linux-x86_64", archive}}));
  auto staged = stackpin({"stage", manifest.string(), "--archives", archives.string(), "--target", "linux", "--dest", first.string()});
  ASSERT_EQ(staged.exit_code, 0) << staged.out << staged.err;

  // Machine A uses that tree (first on LD_LIBRARY_PATH); capture it.
  fs::path captured = dir.path() / "captured.toml";
  auto cap = stackpin({"capture", "-o", captured.string(), "--name", "machine-a"}, {"LD_LIBRARY_PATH=" + (first / "lib64").string()});
  ASSERT_EQ(cap.exit_code, 0) << cap.out << cap.err;
  std::string text = read_text(captured);
  EXPECT_NE(text.find("name = \"machine-a\""), std::string::npos) << text;
  EXPECT_NE(text.find("version = \"9.1.0.70\"\ncuda = 12\n"), std::string::npos) << text;
  EXPECT_NE(text.find("origin = \"local\""), std::string::npos) << text;
  EXPECT_NE(text.find("sha256 = \"" + archive.sha256 + "\""), std::string::npos) << text;
  EXPECT_NE(text.find("size = " + std::to_string(archive.size)), std::string::npos) << text;
  EXPECT_NE(text.find("prefix = \"" + first.string() + "\""), std::string::npos) << text;
  auto check = stackpin({"check", captured.string(), "--json"});
  auto doc = nlohmann::json::parse(check.out);
  for (const auto& f : doc["findings"])
    if (f["severity"] == "error") {
      EXPECT_NE(f["rule"].get<std::string>().rfind("archive.", 0), 0u) << f.dump();
    }

  // Machine B: stage from the capture; the receipts name the same archive and the same files. B
  // keeps its own toolkit: the captured toolkit components (this machine's, when capture can tell
  // its release) are taken out, as their comment says to do, since only cuDNN's archive is at hand.
  if (auto at = text.find("\ncomponents = ["); at != std::string::npos) {
    text.erase(at, text.find('\n', at + 1) - at);
    ASSERT_TRUE(util::write_file_atomic(captured, text).ok());
  }
  auto again = stackpin({"stage", captured.string(), "--archives", archives.string(), "--target", "linux", "--dest", second.string()});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  auto a = nlohmann::json::parse(read_text(first / ".stackpin/receipt.json"));
  auto b = nlohmann::json::parse(read_text(second / ".stackpin/receipt.json"));
  EXPECT_EQ(a["archive"]["sha256"], b["archive"]["sha256"]);
  EXPECT_EQ(a["cudnn"], b["cudnn"]);
  ASSERT_EQ(a["files"].size(), b["files"].size());
  for (std::size_t i = 0; i < a["files"].size(); ++i) {
    EXPECT_EQ(a["files"][i]["path"], b["files"][i]["path"]);
    EXPECT_EQ(a["files"][i]["sha256"], b["files"][i]["sha256"]);
  }
}

TEST(CaptureCli, NoCudnnIsAClearError) {
  // A machine's root with a loader cache and libraries, but no cuDNN anywhere the loader looks.
  ScratchDir dir;
  auto root = dir.path() / "root";
  fs::create_directories(root / "etc");
  fs::create_directories(root / "usr/lib/x86_64-linux-gnu");
  dir.write("root/etc/os-release", "ID=debian\nVERSION_ID=12\nPRETTY_NAME=\"Debian GNU/Linux 12\"\n");
  auto r = stackpin({"capture", "--root", root.string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("stackpin doctor"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << "nothing half-written on stdout";
}

TEST(CaptureCli, RootThatIsNotADirectoryIsAUsageError) {
  auto r = stackpin({"capture", "--root", "/nonexistent/stackpin-root"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/stackpin-root"), std::string::npos) << r.err;
  EXPECT_EQ(stackpin({"capture", "--root", "/", "--windows-root", "/"}).exit_code, 2) << "one machine at a time";
}

// capture --windows-root: a Windows machine mounted at a directory (WSL2's /mnt/c), its cuDNN
// found by the DLL search order of its PATH, written as a manifest with [targets.windows] that
// check accepts; a tree stackpin staged carries its exact build and archive in its receipt.
TEST(CaptureCli, AWindowsTreeGivesAManifestWithItsLayout) {
  ScratchDir dir;
  auto c = dir.path() / "c";
  testing_support::WindowsTree w(c);
  w.windows();
  std::string cuda = w.cuda("11.8");
  w.file("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\version.json",
         "{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"11.8.0\"}}\n");
  std::string bin = w.cudnn("C:\\tools\\cudnn\\v8.8.0", "8.8.0", {"cudnn64_8.dll", "cudnn_ops_infer64_8.dll"});
  auto r = stackpin({"capture", "--windows-root", c.string(), "--path", bin + ";" + cuda + ";C:\\Windows\\system32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string want : {"[cudnn]\nversion = \"8.8.0.121\"\ncuda = 11\n", "[cuda]\nversion = \"11.8.0\"\n",
                                 "[targets.windows]\nlayout = \"isolated\"\nprefix = \"C:\\\\tools\\\\cudnn\\\\v8.8.0\"\n",
                                 "platform = \"windows-x86_64\"\norigin = \"nvidia\"\n"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  EXPECT_NE(r.err.find("[driver] windows"), std::string::npos) << r.err;
  auto out = dir.write("captured.toml", r.out);
  auto check = stackpin({"check", out.string()});
  EXPECT_NE(check.exit_code, 1) << r.out << check.out << check.err;

  // merged into the CUDA toolkit: cuda-merge, cuda_path the toolkit
  ScratchDir merged;
  testing_support::WindowsTree m(merged.path() / "c");
  m.windows();
  std::string cuda121 = m.cuda("12.1");
  m.file("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.1\\version.json", "{\"cuda\": {\"version\": \"12.1.1\"}}");
  m.cudnn("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.1", "8.9.5", {"cudnn64_8.dll"});
  auto r2 = stackpin({"capture", "--windows-root", (merged.path() / "c").string(), "--path", cuda121});
  ASSERT_EQ(r2.exit_code, 0) << r2.err;
  EXPECT_NE(r2.out.find("layout = \"cuda-merge\"\ncuda_path = \"C:\\\\Program Files\\\\NVIDIA GPU Computing Toolkit\\\\CUDA\\\\v12.1\"\n"),
            std::string::npos)
      << r2.out;
  EXPECT_NE(r2.out.find("version = \"8.9.5.30\""), std::string::npos) << r2.out;

  // nothing on the search path, a root that is not there
  auto none = stackpin({"capture", "--windows-root", (merged.path() / "c").string(), "--path", "C:\\nowhere"});
  EXPECT_EQ(none.exit_code, 1) << none.err;
  EXPECT_NE(none.err.find("no cudnn64_N.dll in the DLL search order"), std::string::npos) << none.err;
  auto bad = stackpin({"capture", "--windows-root", (dir.path() / "missing").string()});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

TEST(CaptureCli, AStagedWindowsTreeKeepsItsArchive) {
  ScratchDir dir;
  auto archives = dir.path() / "archives";
  fs::create_directories(archives);
  auto archive = fixtures::make_cudnn_windows(archives, "8.8.0.121", 11);
  auto manifest =
      dir.write("stack.toml", fixtures::local_manifest("8.8.0.121", 11, "11.8.0", {{"windows-x86_64", archive}},
                                                       "[targets.windows]\nlayout = \"isolated\"\nprefix = 'C:\\tools\\cudnn\\v8.8.0'\n"));
  auto c = dir.path() / "c";
  auto staged = stackpin({"stage", manifest.string(), "--archives", archives.string(), "--target", "windows", "--dest",
                          (c / "tools" / "cudnn" / "v8.8.0").string()});
  ASSERT_EQ(staged.exit_code, 0) << staged.err;
  auto r = stackpin({"capture", "--windows-root", c.string(), "--path", "C:\\tools\\cudnn\\v8.8.0\\bin"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("origin = \"local\"\nfile = \"" + archive.path.filename().string() + "\"\nsha256 = \"" + archive.sha256 + "\""),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("build from stackpin's receipt"), std::string::npos) << r.out;
}

}  // namespace cli_capture_test
