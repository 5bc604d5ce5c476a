// The conv test end to end, through both binaries. The convolution path runs against the CPU test
// doubles of the CUDA runtime and cuDNN (tests/doubles, not NVIDIA's code), which tests make
// misbehave; the loading and reporting path also runs against the real cuDNN installed under
// /usr/local/cuda when present (no GPU there: the documented exit code 3).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "fixtures.hpp"
#include "test_support.hpp"
#include "tree.hpp"

namespace cli_convtest_test {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string doubles(const char* sub) { return (testing_support::doubles_dir() / sub).string(); }
std::string standalone() { return (testing_support::binary().parent_path() / "stackpin-convtest").string(); }

testing_support::RunResult run_with_doubles(const std::vector<std::string>& args, std::vector<std::string> env = {},
                                            bool use_standalone = false) {
  env.push_back("LD_LIBRARY_PATH=" + doubles("cuda12-cudnn9"));
  std::vector<std::string> argv{use_standalone ? standalone() : testing_support::binary().string()};
  if (!use_standalone) argv.push_back("convtest");
  argv.insert(argv.end(), args.begin(), args.end());
  return testing_support::run_process(argv, env);
}

json findings_of(const testing_support::RunResult& r) {
  json j = json::parse(r.out);
  return j["findings"];
}

bool has(const json& findings, const std::string& rule, const std::string& severity, const std::string& text = "") {
  for (const auto& f : findings)
    if (f["rule"] == rule && f["severity"] == severity &&
        (text.empty() || f["seen"].get<std::string>().find(text) != std::string::npos ||
         f["fix"].get<std::string>().find(text) != std::string::npos || f["subject"].get<std::string>().find(text) != std::string::npos))
      return true;
  return false;
}

}  // namespace

TEST(CliConvtest, AllAlgorithmsPassOnTheDoubles) {
  auto r = run_with_doubles({"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json j = json::parse(r.out);
  const auto& rep = j["report"];
  EXPECT_EQ(rep["cudnn_version"], "9.19.0");
  EXPECT_EQ(rep["runtime_version"], "12.8");
  EXPECT_EQ(rep["gpus"][0]["name"], "stackpin test double GPU");
  EXPECT_EQ(rep["gpus"][0]["compute_capability"], "8.0");
  EXPECT_NE(rep["cudnn"]["path"].get<std::string>().find("cuda12-cudnn9/libcudnn.so.9"), std::string::npos)
      << rep["cudnn"]["path"].get<std::string>();
  std::set<std::string> ops, types;
  std::set<int> algos;
  for (const auto& c : rep["cases"]) {
    EXPECT_TRUE(c["ok"].get<bool>()) << c.dump();
    ops.insert(c["op"]);
    types.insert(c["dtype"]);
    algos.insert(c["algo"].get<int>());
  }
  EXPECT_EQ(ops, (std::set<std::string>{"fwd", "bwd_data", "bwd_filter"}));
  EXPECT_EQ(types, (std::set<std::string>{"float32", "float16"}));
  EXPECT_EQ(algos, (std::set<int>{0, 1, 2}));  // every algorithm Find offered, not only the first
  EXPECT_GE(rep["cases"].size(), 5u * 3u * 2u * 3u);
}

TEST(CliConvtest, StandaloneBinaryGivesTheSameResult) {
  auto r = run_with_doubles({"--json", "--quick"}, {}, true);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(json::parse(r.out)["report"]["cudnn_version"], "9.19.0");
  auto t = run_with_doubles({"--quick"}, {}, true);
  EXPECT_NE(t.out.find("convtest passed"), std::string::npos) << t.out;
  EXPECT_EQ(testing_support::run_process({standalone(), "--bogus"}).exit_code, 2);
}

TEST(CliConvtest, WrongResultsOfOneAlgorithmAreCaughtAndNamed) {
  auto r = run_with_doubles({"--json", "--quick"}, {"STACKPIN_FAKE_CUDNN_WRONG_ALGO=1"});
  EXPECT_EQ(r.exit_code, 1);
  auto f = findings_of(r);
  EXPECT_TRUE(has(f, "convtest.case", "error", "algo 1")) << f.dump(1);
  EXPECT_FALSE(has(f, "convtest.case", "error", "algo 0"));
}

TEST(CliConvtest, NanIsCaught) {
  auto r = run_with_doubles({"--json", "--quick"}, {"STACKPIN_FAKE_CUDNN_NAN_ALGO=2", "STACKPIN_FAKE_CUDNN_ONLY=fwd"});
  EXPECT_EQ(r.exit_code, 1);
  auto f = findings_of(r);
  EXPECT_TRUE(has(f, "convtest.nan", "error", "NaN")) << f.dump(1);
  EXPECT_TRUE(has(f, "convtest.nan", "error", "fwd"));
}

TEST(CliConvtest, FailingAlgorithmReportsItsStatus) {
  auto r = run_with_doubles({"--json", "--quick"}, {"STACKPIN_FAKE_CUDNN_FAIL_ALGO=0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(findings_of(r), "convtest.case", "error", "EXECUTION_FAILED")) << r.out;
}

TEST(CliConvtest, NotInitializedGetsACause) {
  auto r = run_with_doubles({"--json", "--quick"}, {"STACKPIN_FAKE_CUDNN_CREATE=1001"});
  EXPECT_EQ(r.exit_code, 1);
  auto f = findings_of(r);
  EXPECT_TRUE(has(f, "convtest.setup", "error", "CUDNN_STATUS_NOT_INITIALIZED")) << f.dump(1);
  EXPECT_TRUE(has(f, "convtest.setup", "error", "driver too old")) << f.dump(1);
  // a cuDNN built for another CUDA major than the loaded runtime: said explicitly
  auto r2 = run_with_doubles({"--json", "--quick", "--cudart", doubles("cuda12-cudnn9") + "/libcudart.so.12"},
                             {"STACKPIN_FAKE_CUDNN_CREATE=1001", "STACKPIN_FAKE_CUDNN_CUDART=11080"});
  EXPECT_TRUE(has(findings_of(r2), "convtest.setup", "error", "built for CUDA 11.8 but the CUDA 12.8 runtime")) << r2.out;
}

TEST(CliConvtest, NoGpuIsExitThreeWithTheReason) {
  auto r = run_with_doubles({"--json"}, {"STACKPIN_FAKE_CUDA_DEVICES=0"});
  EXPECT_EQ(r.exit_code, 3) << r.out;
  auto j = json::parse(r.out);
  EXPECT_NE(j["report"]["nothing_to_run"].get<std::string>().find("no CUDA-capable GPU"), std::string::npos)
      << j["report"]["nothing_to_run"].get<std::string>();
  auto d = run_with_doubles({}, {"STACKPIN_FAKE_CUDA_DRIVER=0"});
  EXPECT_EQ(d.exit_code, 3);
  EXPECT_NE(d.out.find("driver is missing"), std::string::npos) << d.out;
}

TEST(CliConvtest, DriverOlderThanTheRuntime) {
  auto r = run_with_doubles({"--json", "--quick"}, {"STACKPIN_FAKE_CUDA_DRIVER=11080"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(findings_of(r), "convtest.driver", "error", "CUDA 11.8")) << r.out;
}

TEST(CliConvtest, ExpectationsFromFlagsAndManifest) {
  auto r = run_with_doubles({"--json", "--quick", "--expect-cudnn", "9.1.0.70", "--expect-cuda", "12"});
  EXPECT_EQ(r.exit_code, 1);
  auto f = findings_of(r);
  EXPECT_TRUE(has(f, "convtest.cudnn-version", "error")) << f.dump(1);
  EXPECT_FALSE(has(f, "convtest.cuda-runtime", "error"));
  auto ok = run_with_doubles({"--json", "--quick", "--expect-cudnn", "9.19.0.56", "--expect-cuda", "12"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  auto major = run_with_doubles({"--json", "--quick", "--expect-cuda", "13"});
  EXPECT_TRUE(has(findings_of(major), "convtest.cuda-runtime", "error")) << major.out;
  // a manifest pinning cuDNN 9.1 for CUDA 12.4: both the cuDNN and the driver minimum are judged
  testing_support::ScratchDir dir;
  auto m = dir.write("m.toml", "schema = 1\nname = \"m\"\n[cuda]\nversion = \"12.4.1\"\n[cudnn]\nversion = \"9.1.0.70\"\ncuda = 12\n");
  auto mr = run_with_doubles({"--json", "--quick", "--manifest", m.string()});
  EXPECT_EQ(mr.exit_code, 1);
  EXPECT_TRUE(has(findings_of(mr), "convtest.cudnn-version", "error", "9.19.0")) << mr.out;
}

TEST(CliConvtest, CudnnEightEncodingIsDecoded) {
  auto r = run_with_doubles({"--json", "--quick", "--cudnn", doubles("cudnn8") + "/libcudnn.so.8"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["report"]["cudnn_version"], "8.9.7") << r.out;
  EXPECT_EQ(j["report"]["cudnn_version_raw"], 8907);
}

TEST(CliConvtest, MissingCudnnIsNamed) {
  auto r = run_with_doubles({"--json", "--cudnn", "/nonexistent/libcudnn.so.9"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(findings_of(r), "convtest.cudnn-missing", "error", "/nonexistent/libcudnn.so.9")) << r.out;
}

// --- the real cuDNN of this machine (no GPU) ----------------------------------------------

TEST(CliConvtestReal, ReportsTheInstalledCudnnAndNoGpu) {
  fs::path cudnn = "/usr/local/cuda/lib64/libcudnn.so.9", header = "/usr/local/cuda/include/cudnn_version.h";
  fs::path cudart_dir = "/usr/local/cuda/lib64";
  if (!fs::exists(cudnn) || !fs::exists(header)) GTEST_SKIP() << "no cuDNN installed under /usr/local/cuda";
  std::string cudart;
  for (const char* so : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"})
    if (fs::exists(cudart_dir / so)) {
      cudart = (cudart_dir / so).string();
      break;
    }
  if (cudart.empty()) GTEST_SKIP() << "no CUDA runtime under /usr/local/cuda/lib64";
  std::ifstream in(header);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string h = ss.str();
  auto def = [&](const char* n) {
    std::smatch m;
    std::regex_search(h, m, std::regex(std::string("#define ") + n + " ([0-9]+)"));
    return m[1].str();
  };
  std::string want = def("CUDNN_MAJOR") + "." + def("CUDNN_MINOR") + "." + def("CUDNN_PATCHLEVEL");
  auto r = testing_support::run_process(
      {testing_support::binary().string(), "convtest", "--json", "--cudnn", cudnn.string(), "--cudart", cudart});
  json j = json::parse(r.out);
  EXPECT_EQ(j["report"]["cudnn_version"], want);
  EXPECT_EQ(j["report"]["cudnn"]["path"], fs::canonical(cudnn).string());
  if (!fs::exists("/dev/nvidia0") && !fs::exists("/usr/lib/wsl/lib")) {
    EXPECT_EQ(r.exit_code, 3) << r.out;
    EXPECT_FALSE(j["report"]["nothing_to_run"].get<std::string>().empty());
  }
  // the same through the system loader with LD_LIBRARY_PATH, as an application would load it
  auto s = testing_support::run_process({standalone(), "--json"}, {"LD_LIBRARY_PATH=" + cudart_dir.string()});
  json js = json::parse(s.out);
  EXPECT_EQ(js["report"]["cudnn_version"], want);
  EXPECT_EQ(js["report"]["cudnn"]["requested"], "libcudnn.so.9");
}

// --- --framework, against the stand-in torch module of tests/data/frameworks (not PyTorch) ---

namespace {
std::vector<std::string> standin_env(std::vector<std::string> extra = {}) {
  extra.push_back("PYTHONPATH=" + (testing_support::source_dir() / "tests" / "data" / "frameworks").string());
  return extra;
}
}  // namespace

TEST(CliConvtestFramework, ReportsTheCudnnTheFrameworkReallyLoaded) {
  if (!testing_support::have_tool("python3")) GTEST_SKIP() << "no python3 on PATH";
  // the stand-in "wheel" bundles cuDNN 8.9.7 while the system test loads 9.19.0
  auto r = run_with_doubles({"--json", "--quick", "--framework", "torch"},
                            standin_env({"STACKPIN_STANDIN_CUDNN=" + doubles("cudnn8") + "/libcudnn.so.8"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;  // a warning, not a failure
  auto j = json::parse(r.out);
  const auto& fw = j["report"]["framework"];
  EXPECT_EQ(fw["installed"], true);
  EXPECT_EQ(fw["version"], "2.1.0+cu121.standin");
  EXPECT_EQ(fw["cudnn_version"], "8.9.7");
  EXPECT_TRUE(fw["ran"].get<bool>());
  ASSERT_FALSE(fw["loaded_cudnn"].empty());
  EXPECT_NE(fw["loaded_cudnn"][0].get<std::string>().find("cudnn8/libcudnn.so.8"), std::string::npos)
      << fw["loaded_cudnn"][0].get<std::string>();
  EXPECT_TRUE(has(j["findings"], "convtest.framework-cudnn", "warning", "brings its own cuDNN")) << j["findings"].dump(1);
  EXPECT_TRUE(has(j["findings"], "convtest.framework-conv", "ok"));
}

TEST(CliConvtestFramework, SameCudnnIsOk) {
  if (!testing_support::have_tool("python3")) GTEST_SKIP() << "no python3 on PATH";
  auto r = run_with_doubles({"--json", "--quick", "--framework", "torch"},
                            standin_env({"STACKPIN_STANDIN_CUDNN=" + doubles("cuda12-cudnn9") + "/libcudnn.so.9"}));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(has(json::parse(r.out)["findings"], "convtest.framework-cudnn", "ok"));
}

TEST(CliConvtestFramework, WrongResultsNanAndNoGpu) {
  if (!testing_support::have_tool("python3")) GTEST_SKIP() << "no python3 on PATH";
  auto wrong = run_with_doubles({"--json", "--quick", "--framework", "torch"}, standin_env({"STACKPIN_STANDIN_WRONG=0.5"}));
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_TRUE(has(json::parse(wrong.out)["findings"], "convtest.framework-conv", "error")) << wrong.out;
  auto nan = run_with_doubles({"--json", "--quick", "--framework", "torch"}, standin_env({"STACKPIN_STANDIN_NAN=1"}));
  EXPECT_TRUE(has(json::parse(nan.out)["findings"], "convtest.framework-conv", "error", "NaN")) << nan.out;
  auto nogpu = run_with_doubles({"--json", "--quick", "--framework", "torch"}, standin_env({"STACKPIN_STANDIN_GPU=0"}));
  EXPECT_TRUE(has(json::parse(nogpu.out)["findings"], "convtest.framework-gpu", "warning", "+cuXYZ")) << nogpu.out;
}

TEST(CliConvtestFramework, NotInstalledIsANote) {
  if (!testing_support::have_tool("python3")) GTEST_SKIP() << "no python3 on PATH";
  auto r = run_with_doubles({"--json", "--quick", "--framework", "tensorflow"}, standin_env());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(has(json::parse(r.out)["findings"], "convtest.framework-missing", "note", "tensorflow")) << r.out;
  EXPECT_EQ(run_with_doubles({"--framework", "caffe"}).exit_code, 2);
}

// The doubles report a configurable device (STACKPIN_FAKE_GPU_CC, STACKPIN_FAKE_GPU_NAME); convtest
// judges it against the loaded cuDNN's support matrix (9.19.0 for CUDA 12: the nearest matrix the
// knowledge base has is 9.17.0's) and against the manifest's [gpus].
TEST(CliConvtest, TheGpuArchitectureIsJudgedAgainstTheLoadedCudnn) {
  auto ok = run_with_doubles({"--json", "--quick"});
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  json j = json::parse(ok.out);
  EXPECT_EQ(j["report"]["gpus"][0]["architecture"], "Ampere");
  EXPECT_EQ(j["report"]["gpus"][0]["cudnn_kernels"], "native");
  EXPECT_TRUE(has(j["findings"], "convtest.gpu-arch", "ok", "nearest")) << j["findings"].dump(1);

  auto volta = run_with_doubles({"--json", "--quick"}, {"STACKPIN_FAKE_GPU_CC=70", "STACKPIN_FAKE_GPU_NAME=Tesla V100-SXM2-16GB"});
  EXPECT_EQ(volta.exit_code, 1) << volta.out;
  json v = json::parse(volta.out);
  EXPECT_TRUE(has(v["findings"], "convtest.gpu-arch", "error", "supports compute capability 7.5 and newer")) << v["findings"].dump(1);
  EXPECT_EQ(v["report"]["gpus"][0]["cudnn_kernels"], "below 7.5");

  auto orin = run_with_doubles({"--json", "--quick"}, {"STACKPIN_FAKE_GPU_CC=8.7"});
  json o = json::parse(orin.out);
  EXPECT_EQ(o["report"]["gpus"][0]["cudnn_kernels"], "compatible 8.6") << orin.out;

  auto text = run_with_doubles({"--quick"}, {"STACKPIN_FAKE_GPU_CC=120"});
  EXPECT_NE(text.out.find("compute capability 12.0 (Blackwell)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("cuDNN kernels: native"), std::string::npos) << text.out;

  testing_support::ScratchDir dir;
  auto m = dir.write("m.toml",
                     "schema = 1\nname = \"m\"\n[cuda]\nversion = \"12.8.1\"\n[cudnn]\nversion = \"9.19.0.56\"\ncuda = 12\n"
                     "[gpus]\narch = [\"9.0\"]\nmodels = [\"H100\"]\n");
  auto other = run_with_doubles({"--json", "--quick", "--manifest", m.string()});
  EXPECT_TRUE(has(findings_of(other), "convtest.gpu-pinned", "warning", "not among the GPUs")) << other.out;
  auto same = run_with_doubles({"--json", "--quick", "--manifest", m.string()}, {"STACKPIN_FAKE_GPU_CC=90"});
  EXPECT_FALSE(has(findings_of(same), "convtest.gpu-pinned", "warning")) << same.out;
  // [gpus] naming models only is read the same way (an 8.9 GPU named by nvidia-smi's long form)
  auto models = dir.write("models.toml",
                          "schema = 1\nname = \"m\"\n[cuda]\nversion = \"12.8.1\"\n[cudnn]\nversion = \"9.19.0.56\"\ncuda = 12\n"
                          "[gpus]\nmodels = [\"NVIDIA GeForce RTX 4090 Laptop GPU\"]\n");
  EXPECT_TRUE(has(findings_of(run_with_doubles({"--json", "--quick", "--manifest", models.string()})), "convtest.gpu-pinned", "warning"));
  EXPECT_FALSE(has(findings_of(run_with_doubles({"--json", "--quick", "--manifest", models.string()}, {"STACKPIN_FAKE_GPU_CC=89"})),
                   "convtest.gpu-pinned", "warning"));
}

TEST(CliConvtest, EachGpuIsJudgedByTheGpuCodeTheLoadedCudnnCarries) {
  // the doubles, and beside them a cuDNN sub-library whose bytes carry SASS for sm_86 and PTX for
  // compute_90 (ISA 8.0): what the loaded cuDNN carries decides, not the support matrix
  testing_support::ScratchDir dir;
  fs::copy(doubles("cuda12-cudnn9"), dir.path(), fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  testing_support::write_file(dir.path() / "libcudnn_cnn.so.9",
                              fixtures::elf_library("libcudnn_cnn.so.9", {"libcudnn_graph.so.9"},
                                                    fixtures::fatbin_container({{2, 86, 0x11}, {1, 90, 0x11, 8, 0}}), 0));
  // a cuDNN 8 library left beside it is not the loaded cuDNN's: its sm_50 code is no verdict
  testing_support::write_file(dir.path() / "libcudnn_cnn_infer.so.8",
                              fixtures::elf_library("libcudnn_cnn_infer.so.8", {}, fixtures::fatbin_container({{2, 50, 0x11}}), 0));
  auto run = [&](const std::string& cc, std::vector<std::string> env = {}) {
    env.push_back("LD_LIBRARY_PATH=" + dir.path().string());
    env.push_back("STACKPIN_FAKE_GPU_CC=" + cc);
    auto r = testing_support::run_process({testing_support::binary().string(), "convtest", "--json", "--quick"}, env);
    return std::pair{r, json::parse(r.out, nullptr, false)};
  };
  auto [ampere, a] = run("8.6");
  ASSERT_FALSE(a.is_discarded()) << ampere.out << ampere.err;
  EXPECT_EQ(ampere.exit_code, 0) << ampere.out;
  EXPECT_EQ(a["report"]["gpus"][0]["cudnn_kernels"], "native (read from the libraries)") << ampere.out;
  EXPECT_TRUE(has(a["findings"], "convtest.gpu-kernels", "ok", "its one library with GPU code carries SASS that runs on 8.6"))
      << a["findings"].dump(1);
  EXPECT_FALSE(has(a["findings"], "convtest.gpu-arch", "ok")) << "the support matrix is not consulted\n" << a["findings"].dump(1);

  auto [ada, b] = run("8.9");
  EXPECT_EQ(b["report"]["gpus"][0]["cudnn_kernels"], "compatible (read from the libraries)") << ada.out;

  auto [hopper, h] = run("9.0");
  EXPECT_EQ(h["report"]["gpus"][0]["cudnn_kernels"], "jit (read from the libraries)") << hopper.out;
  EXPECT_TRUE(has(h["findings"], "convtest.gpu-kernels", "warning", "no sm_90 SASS in libcudnn_cnn.so.9 (PTX compute_90, ISA 8.0)"))
      << h["findings"].dump(1);

  // on a 6.1 GPU whose convolutions failed (as they would with nothing to run), the library with
  // nothing for it is the error; where they all ran (the doubles compute on the CPU), what that
  // library serves is all that fails, a warning
  auto [pascal, p] = run("6.1", {"STACKPIN_FAKE_CUDNN_FAIL_ALGO=0"});
  EXPECT_EQ(pascal.exit_code, 1) << pascal.out;
  EXPECT_EQ(p["report"]["gpus"][0]["cudnn_kernels"], "none (read from the libraries)") << pascal.out;
  EXPECT_TRUE(has(p["findings"], "convtest.gpu-kernels", "error", "libcudnn_cnn.so.9 (sm_86 compute_90) carry nothing that runs on 6.1"))
      << p["findings"].dump(1);
  auto [ran, q] = run("6.1");
  EXPECT_TRUE(has(q["findings"], "convtest.gpu-kernels", "warning", "the convolutions above ran on it")) << q["findings"].dump(1);

  auto text = testing_support::run_process({testing_support::binary().string(), "convtest", "--quick"},
                                           {"LD_LIBRARY_PATH=" + dir.path().string(), "STACKPIN_FAKE_GPU_CC=9.0"});
  EXPECT_NE(text.out.find("cuDNN kernels: jit (read from the libraries)"), std::string::npos) << text.out;
}

}  // namespace cli_convtest_test
