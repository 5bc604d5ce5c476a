// `stackpin generate activate` and `generate ldconfig` through the real binary.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace cli_generate_test {

using testing_support::stackpin;

namespace {
std::string example(const char* name) { return (testing_support::source_dir() / "manifests" / name).string(); }
}  // namespace

TEST(CliGenerate, ActivateToStdoutAndToAFile) {
  auto r = stackpin({"generate", "activate", "--shell", "sh", example("cu124-cudnn91-torch25-docker.toml")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("stackpin_cudnn_root='/usr/local/cudnn-9.1.0'"), std::string::npos) << r.out;
  testing_support::ScratchDir dir;
  auto out = dir.path() / "activate.sh";
  auto w = stackpin({"generate", "activate", example("cu124-cudnn91-torch25-docker.toml"), "--prefix", "/opt/cudnn", "-o", out.string()});
  EXPECT_EQ(w.exit_code, 0) << w.err;
  EXPECT_TRUE(w.out.empty());
  EXPECT_NE(testing_support::read_text(out).find("stackpin_cudnn_root='/opt/cudnn'"), std::string::npos) << testing_support::read_text(out);
}

TEST(CliGenerate, UsageAndMissingPrefix) {
  EXPECT_EQ(stackpin({"generate", "activate", "--shell", "fish", example("cu124-cudnn91-torch25-docker.toml")}).exit_code, 2);
  EXPECT_EQ(stackpin({"generate"}).exit_code, 2);
  auto rel = stackpin({"generate", "activate", example("cu124-cudnn91-torch25-docker.toml"), "--prefix", "relative/dir"});
  EXPECT_EQ(rel.exit_code, 2);
  testing_support::ScratchDir dir;
  auto m = dir.write("m.toml", "schema = 1\nname = \"x\"\n[cudnn]\nversion = \"9.1.0.70\"\ncuda = 12\n");
  auto r = stackpin({"generate", "ldconfig", m.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no [targets.linux] prefix"), std::string::npos) << r.err;
}

TEST(CliGenerate, Ldconfig) {
  auto r = stackpin({"generate", "ldconfig", example("cu124-cudnn91-torch25-docker.toml")});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("/usr/local/cudnn-9.1.0/lib64\n"), std::string::npos) << r.out;
  auto bad = stackpin({"generate", "ldconfig", example("cu124-cudnn91-torch25-docker.toml"), "--prefix", "/opt/with space"});
  EXPECT_EQ(bad.exit_code, 1);
}

TEST(CliGenerate, WindowsScriptsFollowTheLayout) {
  // cuda-merge: the CUDA root's bin (the second seed's stack)
  auto r = stackpin({"generate", "activate", "--shell", "powershell", example("cu121-cudnn895-torch21.toml")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("$CudnnBin = 'C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.1\\bin'"), std::string::npos) << r.out;
  // CUDA 13 keeps DLLs in bin\x64; the isolated cuDNN 9.13 keeps its own in bin
  auto c = stackpin({"generate", "activate", "--shell", "cmd", example("cu130-cudnn913.toml")});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("\\bin\"\r\n"), std::string::npos) << c.out;
  // no [targets.windows]
  auto none = stackpin({"generate", "activate", "--shell", "powershell", example("cu124-cudnn91-torch25-docker.toml")});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no [targets.windows]"), std::string::npos) << none.err;
}

TEST(CliGenerate, WindowsScriptsHonourPrefix) {
  const std::string prefix = "D:\\Users\\Jos\xC3\xA9 O'Brien\\cudnn v8";
  for (const std::string shell : {"powershell", "cmd"}) {
    auto r = stackpin({"generate", "activate", "--shell", shell, "--prefix", prefix, example("cu118-cudnn880-win.toml")});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(shell == "cmd" ? "CUDNN_PATH=" + prefix + "\"" : "$CudnnRoot = 'D:\\Users\\Jos\xC3\xA9 O''Brien\\cudnn v8'"),
              std::string::npos)
        << shell << "\n"
        << r.out;
    EXPECT_EQ(r.out.find("C:\\tools\\cudnn"), std::string::npos) << shell << ": the manifest's prefix is still there";
  }
  auto chk = stackpin({"generate", "windows-check", "--prefix", prefix, example("cu118-cudnn880-win.toml")});
  EXPECT_EQ(chk.exit_code, 0) << chk.err;
  EXPECT_NE(chk.out.find("$CudnnBin = 'D:\\Users\\Jos\xC3\xA9 O''Brien\\cudnn v8\\bin'"), std::string::npos) << chk.out;
  EXPECT_NE(chk.err.find("without --dest"), std::string::npos) << chk.err;
  // a prefix that cannot be a PATH entry, or is not a Windows path
  for (const std::string bad : {"D:\\a;b", "relative\\dir", "/opt/cudnn"}) {
    auto r = stackpin({"generate", "activate", "--shell", "powershell", "--prefix", bad, example("cu118-cudnn880-win.toml")});
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_TRUE(r.out.empty()) << bad;
  }
}

}  // namespace cli_generate_test
