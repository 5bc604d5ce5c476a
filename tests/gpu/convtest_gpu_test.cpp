// The conv test on a real GPU with a real cuDNN (label gpu). Each test skips, saying why, on a
// machine without an NVIDIA driver or without a cuDNN to load; on one with both it runs real
// convolutions through `stackpin convtest` and holds the report to what the machine has.
// STACKPIN_GPU_TEST_CUDNN and STACKPIN_GPU_TEST_CUDART choose the libraries (default: the
// toolkit's under /usr/local/cuda/lib64).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace convtest_gpu_test {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {
std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::string cudnn_path() { return env_or("STACKPIN_GPU_TEST_CUDNN", "/usr/local/cuda/lib64/libcudnn.so.9"); }
std::string cudart_path() {
  if (const char* v = std::getenv("STACKPIN_GPU_TEST_CUDART"); v && *v) return v;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/local/cuda/lib64", ec))
    if (e.path().filename().string().rfind("libcudart.so.", 0) == 0) return e.path().string();
  return "/usr/local/cuda/lib64/libcudart.so";
}

// Why these tests cannot run here, or "" when they can.
std::string missing() {
  if (!fs::exists("/proc/driver/nvidia/version") && !fs::exists("/dev/nvidiactl"))
    return "no NVIDIA driver on this machine (/proc/driver/nvidia/version and /dev/nvidiactl are absent)";
  if (!fs::exists(cudnn_path())) return "no cuDNN at " + cudnn_path() + " (set STACKPIN_GPU_TEST_CUDNN)";
  if (!fs::exists(cudart_path())) return "no CUDA runtime at " + cudart_path() + " (set STACKPIN_GPU_TEST_CUDART)";
  return "";
}

#define SP_SKIP_WITHOUT_GPU()                                    \
  do {                                                           \
    if (auto why = missing(); !why.empty()) GTEST_SKIP() << why; \
  } while (0)

// The cuDNN version the header beside the library declares (include/ next to lib64/), or "".
std::string header_version() {
  fs::path header = fs::path(cudnn_path()).parent_path().parent_path() / "include" / "cudnn_version.h";
  std::ifstream in(header);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  auto part = [&](const char* name) {
    std::smatch m;
    std::regex re(std::string("#define ") + name + R"(\s+(\d+))");
    return std::regex_search(text, m, re) ? m[1].str() : std::string();
  };
  auto major = part("CUDNN_MAJOR"), minor = part("CUDNN_MINOR"), patch = part("CUDNN_PATCHLEVEL");
  if (major.empty() || minor.empty() || patch.empty()) return "";
  return major + "." + minor + "." + patch;
}

json run_convtest(std::vector<std::string> extra, int* exit_code) {
  std::vector<std::string> args = {"convtest", "--cudnn", cudnn_path(), "--cudart", cudart_path(), "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = testing_support::stackpin(args);
  *exit_code = r.exit_code;
  auto doc = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << "not JSON:\n" << r.out << "\n" << r.err;
  return doc.is_discarded() ? json::object() : doc;
}
}  // namespace

TEST(GpuConvtest, RealConvolutionsPassOnEveryGpu) {
  SP_SKIP_WITHOUT_GPU();
  int code = -1;
  auto doc = run_convtest({}, &code);
  ASSERT_EQ(code, 0) << doc.dump(1);
  const auto& report = doc["report"];
  ASSERT_FALSE(report["gpus"].empty()) << "a driver but no GPU in the report\n" << doc.dump(1);
  ASSERT_FALSE(report["cases"].empty()) << doc.dump(1);
  std::set<int> devices_run;
  for (const auto& c : report["cases"]) {
    EXPECT_TRUE(c["ok"].get<bool>()) << c.dump();
    EXPECT_EQ(c["non_finite"].get<int>(), 0) << c.dump();
    EXPECT_LE(c["max_abs_err"].get<double>(), c["tolerance"].get<double>()) << c.dump();
    devices_run.insert(c["device"].get<int>());
  }
  for (const auto& g : report["gpus"]) EXPECT_TRUE(devices_run.count(g["index"].get<int>())) << "GPU not tested: " << g.dump();
  EXPECT_EQ(report["cudnn"]["path"].get<std::string>().empty(), false) << doc.dump(1);
  if (auto v = header_version(); !v.empty()) {
    EXPECT_EQ(report["cudnn_version"], v) << "the loaded library is not the header's";
  }
  EXPECT_FALSE(report["driver_version"].get<std::string>().empty()) << doc.dump(1);
}

TEST(GpuConvtest, AnotherCudnnThanTheOneLoadedFails) {
  SP_SKIP_WITHOUT_GPU();
  int code = -1;
  auto doc = run_convtest({"--expect-cudnn", "1.0.0", "--quick"}, &code);
  EXPECT_EQ(code, 1) << doc.dump(1);
  bool named = false;
  for (const auto& f : doc["findings"])
    if (f["rule"] == "convtest.cudnn-version" && f["severity"] == "error") named = true;
  EXPECT_TRUE(named) << doc.dump(1);
}

TEST(GpuConvtest, ADriverNewerThanAnyReleaseIsRequiredAndFound) {
  SP_SKIP_WITHOUT_GPU();
  int code = -1;
  auto doc = run_convtest({"--expect-driver", "9999.0", "--quick"}, &code);
  EXPECT_EQ(code, 1) << doc.dump(1);
  bool named = false;
  for (const auto& f : doc["findings"])
    if (f["rule"] == "convtest.driver" && f["severity"] == "error") named = true;
  EXPECT_TRUE(named) << doc.dump(1);
}

// The compute capability the runtime reports is the one nvidia-smi reports, and convtest names the
// architecture and says whether the loaded cuDNN's support matrix includes it.
TEST(GpuConvtest, TheRealComputeCapabilityIsReadAndJudged) {
  SP_SKIP_WITHOUT_GPU();
  int code = -1;
  auto doc = run_convtest({"--quick"}, &code);
  ASSERT_FALSE(doc["report"]["gpus"].empty()) << doc.dump(1);
  std::vector<std::string> smi;
  if (testing_support::have_tool("nvidia-smi")) {
    auto r = testing_support::run_process({"nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"});
    std::stringstream lines(r.out);
    for (std::string l; std::getline(lines, l);)
      if (!l.empty()) smi.push_back(l.substr(0, l.find_last_not_of(" \r") + 1));
  }
  for (const auto& g : doc["report"]["gpus"]) {
    const auto cc = g["compute_capability"].get<std::string>();
    if (!smi.empty()) {
      EXPECT_NE(std::find(smi.begin(), smi.end(), cc), smi.end()) << cc << " is not among nvidia-smi's " << testing::PrintToString(smi);
    }
    EXPECT_FALSE(g["architecture"].get<std::string>().empty()) << "the knowledge base has no architecture for " << cc;
    EXPECT_FALSE(g["cudnn_kernels"].get<std::string>().empty()) << g.dump();
    std::cout << "GPU " << g["index"] << ": " << g["name"] << ", compute capability " << cc << " (" << g["architecture"]
              << "), cuDNN kernels: " << g["cudnn_kernels"] << "\n";
  }
}

// What inspect reads from the loaded cuDNN's libraries against what the device did: every GPU ran
// the convolutions, so no library with GPU code may be judged to carry nothing for it, and the
// verdict convtest gives from the same bytes is inspect's. The compute capability inspect is asked
// about is the one the device reported through the runtime.
TEST(GpuConvtest, InspectOfTheLoadedCudnnAgreesWithTheDevice) {
  SP_SKIP_WITHOUT_GPU();
  int code = -1;
  auto doc = run_convtest({"--quick"}, &code);
  ASSERT_EQ(code, 0) << doc.dump(1);
  const std::string dir = fs::path(doc["report"]["cudnn"]["path"].get<std::string>()).parent_path().string();
  for (const auto& g : doc["report"]["gpus"]) {
    const auto cc = g["compute_capability"].get<std::string>();
    auto r = testing_support::stackpin({"inspect", dir, "--gpu", cc, "--json"});
    auto j = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
    std::size_t cudnn_with_code = 0;
    std::set<std::string> fits;
    for (const auto& lib : j["report"]["libraries"]) {
      const auto name = fs::path(lib["path"].get<std::string>()).filename().string();
      if (name.rfind("libcudnn", 0) != 0 || lib["gpus"].empty()) continue;
      const auto fit = lib["gpus"][0]["fit"].get<std::string>();
      EXPECT_NE(fit, "none") << name << " ran convolutions on GPU " << g["index"] << " (" << cc << "), yet inspect finds nothing for it\n"
                             << lib.dump(1);
      fits.insert(fit);
      ++cudnn_with_code;
    }
    const auto verdict = g["cudnn_kernels"].get<std::string>();
    std::cout << "GPU " << g["index"] << " (" << cc << "): convtest says " << verdict << "; inspect read " << cudnn_with_code
              << " cuDNN libraries with GPU code in " << dir << ", fits " << testing::PrintToString(fits) << "\n";
    if (cudnn_with_code == 0) continue;  // a cuDNN without GPU code of its own: convtest used the support matrix
    const std::string expected = fits.count("none")         ? "none"
                                 : fits.count("jit")        ? "jit"
                                 : fits.count("compatible") ? "compatible"
                                                            : "native";
    EXPECT_EQ(verdict, expected + " (read from the libraries)") << g.dump(1);
  }
}

}  // namespace convtest_gpu_test
