// core::doctor_linux over fixture machines built here (and over this machine where it has CUDA):
// each scenario asserts the exact rule, its severity and the words that tell the user what is wrong.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/doctor/doctor_linux.hpp"
#include "fixtures.hpp"
#include "format/manifest_reader.hpp"
#include "knowledge/cuda_catalog.hpp"
#include "knowledge/knowledge_base.hpp"
#include "machine_fixtures.hpp"
#include "probe/machine.hpp"
#include "test_support.hpp"
#include "util/env.hpp"

namespace doctor_linux_test {

namespace fs = std::filesystem;
using machine_fixtures::CacheEntry;
using machine_fixtures::Root;
using model::Severity;

namespace {

const std::string k_multiarch = "/usr/lib/x86_64-linux-gnu";
const knowledge::KnowledgeBase& kb() { return knowledge::KnowledgeBase::embedded(); }

model::Manifest manifest(const std::string& cuda, const std::string& cudnn, int cudnn_cuda, const std::string& extra = "") {
  std::string text = "schema = 1\nname = \"doctor\"\n\n[cuda]\nversion = \"" + cuda + "\"\n\n" + extra + "\n[cudnn]\nversion = \"" + cudnn +
                     "\"\ncuda = " + std::to_string(cudnn_cuda) + "\n";
  auto m = format::parse_manifest(text, "stack.toml");
  if (!m) throw std::runtime_error("bad test manifest: " + m.error().message);
  return std::move(m).value();
}

struct Machine {
  testing_support::ScratchDir scratch;
  Root root{scratch.path() / "root"};
  util::MapEnv env;
  std::vector<std::string> site_packages;
  std::string arch = "x86_64";

  Machine() { root.os_release("debian", "12"); }
  model::MachineReport inspect() const {
    probe::MachineOptions o = core::linux_machine_options(env, kb(), nullptr);
    o.root = root.path();
    o.run_programs = false;
    o.use_nvml = false;
    o.arch = arch;
    o.site_packages = site_packages;
    return probe::inspect_machine(o);
  }
  std::vector<model::Finding> doctor(const model::Manifest* m = nullptr) const { return core::doctor_linux(inspect(), m, kb()); }
};

std::string describe(const std::vector<model::Finding>& fs) {
  std::string s;
  for (const auto& f : fs)
    s += std::string(model::to_string(f.severity)) + " " + f.rule + " [" + f.subject + "] seen: " + f.seen + " | expected: " + f.expected +
         " | fix: " + f.fix + "\n";
  return s;
}

std::vector<model::Finding> with_rule(const std::vector<model::Finding>& fs, const std::string& rule,
                                      const std::string& subject_part = "") {
  std::vector<model::Finding> out;
  for (const auto& f : fs)
    if (f.rule == rule && f.subject.find(subject_part) != std::string::npos) out.push_back(f);
  return out;
}

// The one finding of `rule` (whose subject contains `subject_part`); fails the test when there is not exactly one.
model::Finding one(const std::vector<model::Finding>& fs, const std::string& rule, const std::string& subject_part = "") {
  auto found = with_rule(fs, rule, subject_part);
  EXPECT_EQ(found.size(), 1u) << rule << " [" << subject_part << "]\n" << describe(fs);
  return found.empty() ? model::Finding{} : found.front();
}

void has(const std::string& text, const std::string& words) {
  EXPECT_NE(text.find(words), std::string::npos) << "'" << words << "' not in: " << text;
}

bool any_error(const std::vector<model::Finding>& fs, const std::string& rule) {
  return std::any_of(fs.begin(), fs.end(), [&](const auto& f) { return f.rule == rule && f.severity == Severity::error; });
}

}  // namespace

TEST(DoctorLinux, LdLibraryPathCopyHidingThePinnedCachedOneIsAnError) {
  Machine mc;
  mc.root.cudnn_libs(k_multiarch, "9.1.0");
  mc.root.cudnn_libs("/opt/cudnn-9.3/lib", "9.3.0");
  mc.root.cudnn_headers("/opt/cudnn-9.3/include", "9.3.0");
  mc.root.ld_cache({{"libcudnn.so.9", k_multiarch + "/libcudnn.so.9"}});
  mc.env.set("LD_LIBRARY_PATH", "/opt/cudnn-9.3/lib");
  auto m = manifest("12.4.1", "9.1.0.70", 12);
  auto fs = mc.doctor(&m);
  auto f = one(fs, "linux.loader", "libcudnn.so.9");
  EXPECT_EQ(f.severity, Severity::error) << describe(fs);
  has(f.seen,
      "/opt/cudnn-9.3/lib/libcudnn.so.9 -> /opt/cudnn-9.3/lib/libcudnn.so.9.3.0 (LD_LIBRARY_PATH entry 1 (/opt/cudnn-9.3/lib)), cuDNN "
      "9.3.0");
  has(f.seen, "shadows " + k_multiarch + "/libcudnn.so.9 -> " + k_multiarch + "/libcudnn.so.9.1.0 (ld.so cache), cuDNN 9.1.0");
  has(f.expected, "cuDNN 9.1.0.70");
  has(f.fix, "the loader picks cuDNN 9.3.0 from /opt/cudnn-9.3/lib");
  has(f.fix, "LD_LIBRARY_PATH");
  ASSERT_TRUE(f.where);
  EXPECT_EQ(f.where->line, 9);  // [cudnn] version in the manifest
  // the pinned copy itself is fine, the other one is noted as not pinned
  EXPECT_EQ(one(fs, "linux.cudnn-copy", k_multiarch).severity, Severity::ok);
  EXPECT_EQ(one(fs, "linux.cudnn-copy", "/opt/cudnn-9.3/lib").severity, Severity::note);

  // without a manifest: two versions on the search path is a warning
  auto plain = mc.doctor();
  auto w = one(plain, "linux.loader", "libcudnn.so.9");
  EXPECT_EQ(w.severity, Severity::warning) << describe(plain);
  has(w.fix, "several cuDNN 9 versions are on the search path");
}

TEST(DoctorLinux, ThePinnedCopyWinningIsOk) {
  Machine mc;
  mc.root.cudnn_libs(k_multiarch, "9.1.0");
  mc.root.ld_cache({{"libcudnn.so.9", k_multiarch + "/libcudnn.so.9"}});
  auto m = manifest("12.4.1", "9.1.0.70", 12);
  auto fs = mc.doctor(&m);
  auto f = one(fs, "linux.loader", "libcudnn.so.9");
  EXPECT_EQ(f.severity, Severity::ok) << describe(fs);
  has(f.seen, "(ld.so cache), cuDNN 9.1.0");
  // the pinned CUDA major's runtime is not on the loader path: a note, frameworks bring their own
  EXPECT_EQ(one(fs, "linux.loader", "libcudart.so.12").severity, Severity::note);
}

TEST(DoctorLinux, NoPinnedCudnnForTheLoaderIsAnError) {
  Machine mc;
  mc.root.cudnn_libs(k_multiarch, "8.9.7");
  auto m = manifest("12.4.1", "9.1.0.70", 12);
  auto fs = mc.doctor(&m);
  auto f = one(fs, "linux.loader", "libcudnn.so.9");
  EXPECT_EQ(f.severity, Severity::error) << describe(fs);
  has(f.seen, "the loader finds no libcudnn.so.9");
  has(f.fix, "stackpin stage");
  EXPECT_EQ(one(fs, "linux.loader", "libcudnn.so.8").severity, Severity::ok);
}

TEST(DoctorLinux, MixedHeaderAndLibraryVersions) {
  Machine mc;
  mc.root.file("/usr/local/cuda-12.4/version.json", R"({"cuda": {"version": "12.4.1"}})");
  mc.root.link("/usr/local/cuda", "cuda-12.4");
  mc.root.cudnn_libs("/usr/local/cuda-12.4/lib64", "9.1.0");
  mc.root.cudnn_headers("/usr/local/cuda-12.4/include", "9.3.0");
  auto fs = mc.doctor();
  auto f = one(fs, "linux.cudnn-header-library-mismatch");
  EXPECT_EQ(f.severity, Severity::error) << describe(fs);
  EXPECT_EQ(f.subject, "cuDNN 9 in /usr/local/cuda-12.4/lib64");
  has(f.seen, "header 9.3.0 (/usr/local/cuda-12.4/include/cudnn_version.h), library 9.1.0 (file name libcudnn.so.9.1.0)");
  has(f.fix, "restage the whole archive");

  mc.root.cudnn_headers("/usr/local/cuda-12.4/include", "9.1.0");
  EXPECT_EQ(one(mc.doctor(), "linux.cudnn-header-library-mismatch").severity, Severity::ok);
}

TEST(DoctorLinux, HalfCopiedTreesAreErrors) {
  Machine mc;
  mc.root.cudnn_libs("/opt/cudnn9/lib", "9.1.0", true, {"libcudnn_graph"});
  mc.root.cudnn_headers("/opt/cudnn9/include", "9.1.0", {"cudnn_version.h"});
  mc.root.cudnn_libs("/opt/cudnn8/lib64", "8.9.7", true, {"libcudnn_ops_infer"});
  mc.root.cudnn_headers("/opt/cudnn8/include", "8.9.7");
  mc.env.set("LD_LIBRARY_PATH", "/opt/cudnn9/lib:/opt/cudnn8/lib64");
  auto fs = mc.doctor();
  auto v9 = one(fs, "linux.cudnn-copy", "/opt/cudnn9/lib");
  EXPECT_EQ(v9.severity, Severity::error) << describe(fs);
  has(v9.seen, "half-copied: missing libcudnn_graph.so.9, /opt/cudnn9/include/cudnn_version.h");
  has(v9.fix, "stage one archive whole");
  auto v8 = one(fs, "linux.cudnn-copy", "/opt/cudnn8/lib64");
  EXPECT_EQ(v8.severity, Severity::error);
  has(v8.seen, "half-copied: missing libcudnn_ops_infer.so.8");
  // the same read from the files: what is missing, and which sub-library needs it
  auto w9 = one(fs, "cudnn.whole", "/opt/cudnn9/lib");
  EXPECT_EQ(w9.severity, Severity::error) << describe(fs);
  has(w9.seen, "missing libcudnn_graph.so.9, libcudnn_graph.so.9 (needed by libcudnn_adv.so.9)");
  EXPECT_EQ(one(fs, "cudnn.whole", "/opt/cudnn8/lib64").severity, Severity::error);
}

TEST(DoctorLinux, MixedVersionsInOneDirectoryAreAnError) {
  Machine mc;
  mc.root.cudnn_libs("/opt/cudnn/lib", "9.1.0");
  mc.root.cudnn_libs("/opt/cudnn/lib", "9.3.0", true, {"libcudnn"});
  mc.root.cudnn_headers("/opt/cudnn/include", "9.1.0");
  mc.env.set("LD_LIBRARY_PATH", "/opt/cudnn/lib");
  auto fs = mc.doctor();
  auto f = one(fs, "linux.cudnn-copy", "/opt/cudnn/lib");
  EXPECT_EQ(f.severity, Severity::error);
  has(f.seen, "mixed: files of 9.1.0 and 9.3.0 side by side");
  auto w = one(fs, "cudnn.whole", "/opt/cudnn/lib");
  EXPECT_EQ(w.severity, Severity::error) << describe(fs);
  has(w.seen, "the sub-libraries are of 2 releases: libcudnn_graph.so.9 9.1.0.0");
}

// A wheel's files are named by soname only: what each really is shows in its bytes.
TEST(DoctorLinux, AWheelTreeWithAForeignSubLibraryIsFoundByTheFilesBytes) {
  Machine mc;
  const std::string site = "/opt/venv/lib/python3.11/site-packages", lib = site + "/nvidia/cudnn/lib";
  mc.root.cudnn_libs(lib, "9.1.0", false);
  mc.root.cudnn_headers(site + "/nvidia/cudnn/include", "9.1.0");
  mc.root.dist_info(site, "nvidia-cudnn-cu12", "9.1.0.70", {{"nvidia/cudnn/lib/libcudnn.so.9", mc.root.size_of(lib + "/libcudnn.so.9")}});
  mc.site_packages = {site};
  EXPECT_EQ(one(mc.doctor(), "cudnn.whole", lib).severity, Severity::ok);
  // libcudnn_graph of 9.0.0 copied in, and libcudnn_ops over libcudnn_cnn
  mc.root.file(lib + "/libcudnn_graph.so.9", fixtures::elf_library("libcudnn_graph.so.9", {}, "cudnn_version_9_0_0_312_", 0));
  mc.root.file(lib + "/libcudnn_cnn.so.9", fixtures::elf_library("libcudnn_ops.so.9", {"libcudnn_graph.so.9"}, "", 0));
  auto fs = mc.doctor();
  EXPECT_EQ(one(fs, "linux.cudnn-copy", lib).severity, Severity::ok) << "the names alone look whole\n" << describe(fs);
  auto w = one(fs, "cudnn.whole", lib);
  EXPECT_EQ(w.severity, Severity::error) << describe(fs);
  has(w.seen, "missing libcudnn_cnn.so.9");
  has(w.seen, "libcudnn_cnn.so.9 is libcudnn_ops.so.9 by its own bytes");
  has(w.seen, "the bytes are of 9.0.0 (libcudnn_graph.so.9 9.0.0.312 (the string cudnn_version_9_0_0_312_))");
  has(w.seen, "says 9.1.0.70");
}

TEST(DoctorLinux, WheelStyleTreeIsNotHalfCopiedAndTorchsBundledCudnnIsJudged) {
  Machine mc;
  const std::string site = "/opt/venv/lib/python3.11/site-packages";
  mc.root.cudnn_libs(site + "/nvidia/cudnn/lib", "9.1.0", false);
  mc.root.cudnn_headers(site + "/nvidia/cudnn/include", "9.1.0");
  mc.root.dist_info(site, "nvidia-cudnn-cu12", "9.1.0.70",
                    {{"nvidia/cudnn/lib/libcudnn.so.9", mc.root.size_of(site + "/nvidia/cudnn/lib/libcudnn.so.9")}});
  mc.root.dist_info(site, "torch", "2.5.1+cu124");
  mc.site_packages = {site};
  auto pinned = manifest("12.4.1", "9.1.0.70", 12);
  auto fs = mc.doctor(&pinned);
  auto copy = one(fs, "linux.cudnn-copy", site + "/nvidia/cudnn/lib");
  EXPECT_EQ(copy.severity, Severity::ok) << describe(fs);
  has(copy.seen, "cuDNN 9.1.0 (package 9.1.0.70), pip-wheel");
  auto t = one(fs, "linux.framework-bundled-cudnn", "torch 2.5.1+cu124");
  EXPECT_EQ(t.severity, Severity::ok) << describe(fs);
  has(t.seen, "bundles cuDNN 9.1.0.70 in " + site + "/nvidia/cudnn/lib");
  has(t.seen, "the knowledge base lists 9.1.0.70 for this wheel");

  auto other = manifest("12.4.1", "9.3.0.75", 12);
  fs = mc.doctor(&other);
  t = one(fs, "linux.framework-bundled-cudnn", "torch 2.5.1+cu124");
  EXPECT_EQ(t.severity, Severity::warning) << describe(fs);
  has(t.expected, "cuDNN 9.3.0.75");
  has(t.fix, "torch loads its own cuDNN 9.1.0.70");
}

// The environment's packages are judged as a Python lock would be, and a cuDNN wheel that lacks a
// sub-library the system copy has is one cuDNN from two places.
TEST(DoctorLinux, APythonEnvironmentIsJudgedByItsPackagesAndAWheelMissingASubLibraryIsSplit) {
  Machine mc;
  const std::string site = "/opt/venv/lib/python3.11/site-packages", lib = site + "/nvidia/cudnn/lib";
  mc.root.cudnn_libs(lib, "9.1.0", false, {"libcudnn_engines_precompiled"});
  mc.root.dist_info(site, "nvidia-cudnn-cu12", "9.1.0.70", {{"nvidia/cudnn/lib/libcudnn.so.9", mc.root.size_of(lib + "/libcudnn.so.9")}});
  mc.root.dist_info(site, "nvidia-cuda-runtime-cu12", "12.8.90");
  mc.root.dist_info(site, "torch", "2.5.1+cu124");
  mc.root.cudnn_libs(k_multiarch, "9.3.0");
  mc.site_packages = {site};
  auto pinned = manifest("12.4.1", "9.1.0.70", 12);
  auto fs = mc.doctor(&pinned);
  auto split = one(fs, "python.cudnn-split", "cuDNN 9.1.0 in " + lib);
  EXPECT_EQ(split.severity, Severity::error) << describe(fs);
  has(split.seen, "lacks libcudnn_engines_precompiled.so.9");
  has(split.seen, "the loader takes it from " + k_multiarch);
  has(split.fix, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH");
  auto cudnn = one(fs, "python.cudnn", "nvidia-cudnn-cu12 9.1.0.70 (linux-x86_64)");
  EXPECT_EQ(cudnn.severity, Severity::ok) << describe(fs);
  auto runtime = one(fs, "python.cuda-runtime", "nvidia-cuda-runtime-cu12 12.8.90 (linux-x86_64)");
  EXPECT_EQ(runtime.severity, Severity::warning) << describe(fs);
  has(runtime.fix, "CUDA 12.8's runtime");
  auto driver = one(fs, "python.driver", "nvidia-cuda-runtime-cu12 12.8.90 (linux-x86_64)");
  EXPECT_EQ(driver.severity, Severity::warning) << describe(fs);
  has(driver.seen, "CUDA 12.8.1's: it needs a driver >= 570.124.06");
  has(driver.source, site);
}

TEST(DoctorLinux, CondaCudatoolkitOfAnotherMajorIsAnError) {
  Machine mc;
  const std::string prefix = "/opt/conda/envs/legacy";
  mc.root.file(prefix + "/conda-meta/cudatoolkit-11.8.0-h6a678d5_0.json",
               R"({"name": "cudatoolkit", "version": "11.8.0", "build": "h6a678d5_0"})");
  mc.root.file(prefix + "/conda-meta/cudnn-8.9.2.26-cuda11_0.json", R"({"name": "cudnn", "version": "8.9.2.26", "build": "cuda11_0"})");
  mc.env.set("CONDA_PREFIX", prefix);
  auto m = manifest("12.4.1", "9.1.0.70", 12);
  auto fs = mc.doctor(&m);
  auto conda = with_rule(fs, "linux.conda");
  ASSERT_EQ(conda.size(), 2u) << describe(fs);
  EXPECT_EQ(conda[0].severity, Severity::error);
  EXPECT_EQ(conda[0].subject, "conda environment " + prefix);
  EXPECT_EQ(conda[0].seen, "cudatoolkit 11.8.0");
  has(conda[0].expected, "CUDA 12.x (the manifest's CUDA 12.4.1)");
  has(conda[0].fix, "conda remove cudatoolkit");
  EXPECT_EQ(conda[1].seen, "cudnn 8.9.2.26");
  EXPECT_EQ(conda[1].severity, Severity::error);  // another cuDNN major than the pin
  has(conda[1].fix, "cudnn=9.1.0.70");
}

TEST(DoctorLinux, Wsl2WithAStrayLinuxLibcuda) {
  Machine mc;
  mc.root.file("/proc/sys/kernel/osrelease", "5.15.153.1-microsoft-standard-WSL2\n");
  mc.root.file("/usr/lib/wsl/lib/libcuda.so.1", "windows driver's libcuda");
  mc.root.file(k_multiarch + "/libcuda.so.550.54.15", "a Linux driver's libcuda");
  mc.root.link(k_multiarch + "/libcuda.so.1", "libcuda.so.550.54.15");
  mc.root.ld_cache({{"libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"}, {"libcuda.so.1", k_multiarch + "/libcuda.so.1"}});
  auto fs = mc.doctor();
  EXPECT_EQ(one(fs, "linux.wsl").severity, Severity::ok);
  has(one(fs, "linux.wsl").seen, "WSL 2 (/proc/sys/kernel/osrelease: 5.15.153.1-microsoft-standard-WSL2)");
  EXPECT_EQ(one(fs, "linux.wsl-driver").severity, Severity::ok);
  auto stray = one(fs, "linux.linux-driver-in-wsl");
  EXPECT_EQ(stray.severity, Severity::error) << describe(fs);
  has(stray.seen, k_multiarch + "/libcuda.so.1 -> " + k_multiarch + "/libcuda.so.550.54.15");
  has(stray.fix, "remove the Linux NVIDIA driver packages inside WSL");
  EXPECT_EQ(stray.seen.find("it is the one the loader picks"), std::string::npos) << stray.seen;

  // the stray copy first on LD_LIBRARY_PATH wins: said so
  mc.env.set("LD_LIBRARY_PATH", k_multiarch);
  has(one(mc.doctor(), "linux.linux-driver-in-wsl").seen, "it is the one the loader picks");

  // without the Windows driver mapped
  mc.root.remove("/usr/lib/wsl");
  mc.root.remove(k_multiarch + "/libcuda.so.1");
  auto gone = one(mc.doctor(), "linux.wsl-driver");
  EXPECT_EQ(gone.severity, Severity::error);
  has(gone.seen, "/usr/lib/wsl/lib/libcuda.so.1 is absent");
  has(gone.fix, "on Windows");
}

TEST(DoctorLinux, Wsl1HasNoGpu) {
  Machine mc;
  mc.root.file("/proc/sys/kernel/osrelease", "4.4.0-19041-Microsoft\n");
  auto f = one(mc.doctor(), "linux.wsl");
  EXPECT_EQ(f.severity, Severity::error);
  has(f.seen, "WSL 1");
  has(f.fix, "wsl --set-version");
}

TEST(DoctorLinux, NativeLinuxHasNoWslDriverChecks) {
  Machine mc;
  auto fs = mc.doctor();
  EXPECT_EQ(one(fs, "linux.wsl").severity, Severity::ok);
  EXPECT_TRUE(with_rule(fs, "linux.wsl-driver").empty());
  EXPECT_TRUE(with_rule(fs, "linux.linux-driver-in-wsl").empty());
}

TEST(DoctorLinux, LdLibraryPathEntriesThatDoNotExist) {
  Machine mc;
  mc.root.dir("/opt/here");
  mc.env.set("LD_LIBRARY_PATH", "/opt/here:/opt/gone:");
  auto fs = mc.doctor();
  auto found = with_rule(fs, "linux.ld-library-path-missing");
  ASSERT_EQ(found.size(), 2u) << describe(fs);
  EXPECT_EQ(found[0].severity, Severity::warning);
  EXPECT_EQ(found[0].subject, "LD_LIBRARY_PATH entry 2");
  EXPECT_EQ(found[0].seen, "/opt/gone does not exist");
  EXPECT_EQ(found[1].subject, "LD_LIBRARY_PATH entry 3");
  has(found[1].seen, "an empty entry");
  has(found[1].seen, "current directory");

  mc.env.set("LD_LIBRARY_PATH", "/opt/here");
  auto ok = one(mc.doctor(), "linux.ld-library-path-missing");
  EXPECT_EQ(ok.severity, Severity::ok);
  EXPECT_EQ(ok.seen, "1 entries, all existing directories");
}

TEST(DoctorLinux, DriverAgainstTheManifestAndEachToolkit) {
  Machine mc;
  mc.root.file("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n");
  mc.root.file("/usr/local/cuda-13.0/version.json", R"({"cuda": {"version": "13.0.2"}})");
  mc.root.file("/usr/local/cuda-12.4/version.json", R"({"cuda": {"version": "12.4.1"}})");
  auto m = manifest("12.4.1", "9.1.0.70", 12);
  auto fs = mc.doctor(&m);
  auto pinned = one(fs, "linux.driver", "the manifest's CUDA 12.4.1");
  EXPECT_EQ(pinned.severity, Severity::warning) << describe(fs);  // above the 12.x floor, below 12.4.1's own minimum
  EXPECT_EQ(pinned.seen, "535.104.05 (from /proc/driver/nvidia/version)");
  has(pinned.expected, ">= 550.54.15 (NVIDIA's minimum for CUDA 12.4.1)");
  auto t13 = one(fs, "linux.driver", "CUDA 13.0.2 at /usr/local/cuda-13.0");
  EXPECT_EQ(t13.severity, Severity::error);
  has(t13.expected, ">= 580 (no CUDA 13.x program runs on an older driver)");
  has(t13.fix, "580.95.05");
  EXPECT_TRUE(with_rule(fs, "linux.driver", "/usr/local/cuda-12.4").empty());  // the same release as the manifest: judged once

  // a pinned minimum above the release's: below the pin is a warning
  auto strict = manifest("12.4.1", "9.1.0.70", 12, "[driver]\nlinux = \"560.28.03\"\n");
  mc.root.file("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  555.42.02  Release Build\n");
  fs = mc.doctor(&strict);
  auto p = one(fs, "linux.driver", "the manifest's CUDA 12.4.1");
  EXPECT_EQ(p.severity, Severity::warning);
  has(p.expected, ">= 560.28.03 (the manifest's [driver] pin)");
  ASSERT_TRUE(p.where);

  mc.root.file("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.239.06  Wed Feb 28 2024\n");
  EXPECT_EQ(one(mc.doctor(&m), "linux.driver", "the manifest's").severity, Severity::error);

  mc.root.file("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Release Build\n");
  fs = mc.doctor(&m);
  EXPECT_EQ(one(fs, "linux.driver", "the manifest's").severity, Severity::ok);
  EXPECT_EQ(one(fs, "linux.driver", "/usr/local/cuda-13.0").severity, Severity::ok);

  mc.root.remove("/proc");
  auto none = one(mc.doctor(&m), "linux.driver");
  EXPECT_EQ(none.severity, Severity::note);
  has(none.seen, "no NVIDIA driver found");
  has(none.expected, "550.54.15 or newer");
}

TEST(DoctorLinux, DefaultToolkitAndNvccAgainstTheManifest) {
  Machine mc;
  mc.root.file("/usr/local/cuda-11.8/version.json", R"({"cuda": {"version": "11.8.0"}})");
  mc.root.file("/usr/local/cuda-11.8/bin/nvcc", "#!/bin/sh\n");
  mc.root.file("/usr/local/cuda-12.1/version.txt", "CUDA Version 12.1.1\n");
  mc.root.file("/usr/local/cuda-12.4/version.json", R"({"cuda": {"version": "12.4.1"}})");
  mc.root.file("/usr/local/cuda-12.4/include/cuda.h", "#define CUDA_VERSION 12020\n");  // headers of another release
  mc.root.link("/usr/local/cuda", "cuda-11.8");
  mc.env.set("PATH", "/usr/local/cuda/bin:/usr/bin");
  auto m = manifest("12.4.1", "9.1.0.70", 12);
  auto fs = mc.doctor(&m);
  auto def = one(fs, "linux.default-toolkit");
  EXPECT_EQ(def.severity, Severity::error) << describe(fs);
  EXPECT_EQ(def.seen, "/usr/local/cuda -> /usr/local/cuda-11.8 (CUDA 11.8.0)");
  has(def.fix, "point /usr/local/cuda at a CUDA 12.4 toolkit");
  auto nvcc = one(fs, "linux.nvcc");
  EXPECT_EQ(nvcc.severity, Severity::error);
  has(nvcc.seen, "/usr/local/cuda/bin/nvcc -> /usr/local/cuda-11.8/bin/nvcc, CUDA 11.8.0 (toolkit)");
  auto mixed = one(fs, "linux.toolkit", "/usr/local/cuda-12.4");
  EXPECT_EQ(mixed.severity, Severity::warning);
  has(mixed.seen, "include/cuda.h is CUDA 12.2");
  EXPECT_EQ(one(fs, "linux.toolkit", "/usr/local/cuda-12.1").severity, Severity::ok);

  mc.root.link("/usr/local/cuda", "cuda-12.1");
  fs = mc.doctor(&m);
  EXPECT_EQ(one(fs, "linux.default-toolkit").severity, Severity::warning);
  EXPECT_TRUE(with_rule(fs, "linux.nvcc").size() == 1 && one(fs, "linux.nvcc").severity == Severity::note);  // 12.1 has no nvcc

  // without a manifest: nvcc of another toolkit than /usr/local/cuda
  mc.env.set("PATH", "/usr/local/cuda-11.8/bin:/usr/bin");
  auto other = one(mc.doctor(), "linux.nvcc");
  EXPECT_EQ(other.severity, Severity::warning);
  has(other.fix, "PATH finds the nvcc of /usr/local/cuda-11.8 first while /usr/local/cuda points to /usr/local/cuda-12.1");
}

TEST(DoctorLinux, OsAndArchitecture) {
  Machine mc;
  auto fs = mc.doctor();
  has(one(fs, "linux.os", "operating system").seen, "Fixture debian 12 (ID=debian, VERSION_ID=12, from /etc/os-release)");
  EXPECT_EQ(one(fs, "linux.os", "architecture").severity, Severity::ok);

  mc.root.remove("/etc/os-release");
  mc.arch = "riscv64";
  fs = mc.doctor();
  EXPECT_EQ(one(fs, "linux.os", "operating system").severity, Severity::warning);
  auto arch = one(fs, "linux.os", "architecture");
  EXPECT_EQ(arch.severity, Severity::error);
  has(arch.fix, "NVIDIA publishes no CUDA or cuDNN for this architecture");

  // a manifest with cuDNN archives for other platforms only
  mc.arch = "x86_64";
  auto m = format::parse_manifest(
      "schema = 1\nname = \"sbsa\"\n[cuda]\nversion = \"12.4.1\"\n[cudnn]\nversion = \"9.1.0.70\"\ncuda = 12\n"
      "[[cudnn.archives]]\nplatform = \"linux-sbsa\"\norigin = \"local\"\nfile = \"x.tar.xz\"\nsha256 = \"" +
          std::string(64, 'a') + "\"\nsize = 1\n",
      "sbsa.toml");
  ASSERT_TRUE(m.ok()) << m.error().message;
  auto a = one(mc.doctor(&m.value()), "linux.os", "architecture");
  EXPECT_EQ(a.severity, Severity::warning);
  has(a.fix, "add the linux-x86_64 archive");
}

TEST(DoctorLinux, NothingFoundIsNotedNotInvented) {
  Machine mc;
  auto fs = mc.doctor();
  EXPECT_EQ(one(fs, "linux.cudnn-copy").severity, Severity::note);
  EXPECT_EQ(one(fs, "linux.toolkit").severity, Severity::note);
  EXPECT_EQ(one(fs, "linux.default-toolkit").severity, Severity::note);
  EXPECT_EQ(one(fs, "linux.nvcc").severity, Severity::note);
  EXPECT_EQ(one(fs, "linux.driver").severity, Severity::note);
  EXPECT_TRUE(with_rule(fs, "linux.loader").empty()) << describe(fs);
  EXPECT_TRUE(with_rule(fs, "linux.conda").empty());
  for (const auto& f : fs) EXPECT_NE(f.severity, Severity::error) << describe(fs);
}

// --- this machine -------------------------------------------------------------------------------

TEST(DoctorLinuxReal, TheInstalledCudnnIsConsistentAndHeldAgainstAManifest) {
  if (!fs::exists("/usr/local/cuda/lib64/libcudnn.so.9") || !fs::exists("/usr/local/cuda/include/cudnn_version.h"))
    GTEST_SKIP() << "no cuDNN 9 under /usr/local/cuda on this machine";
  util::MapEnv env(std::map<std::string, std::string>{{"PATH", "/usr/local/cuda/bin:/usr/bin:/bin"}});
  probe::MachineOptions o = core::linux_machine_options(env, kb(), nullptr);
  o.run_programs = false;
  o.use_nvml = false;
  auto report = probe::inspect_machine(o);
  auto fs = core::doctor_linux(report, nullptr, kb());
  std::string lib = fs::canonical("/usr/local/cuda/lib64").string();
  auto copy = one(fs, "linux.cudnn-copy", lib);
  EXPECT_EQ(copy.severity, Severity::ok) << describe(fs);
  EXPECT_EQ(one(fs, "linux.cudnn-header-library-mismatch", lib).severity, Severity::ok) << describe(fs);
  EXPECT_FALSE(any_error(fs, "linux.loader")) << describe(fs);
  EXPECT_EQ(one(fs, "linux.default-toolkit").severity, Severity::ok);

  // held against the cu130-cudnn913 stack (cuDNN 9.13.0.50): a machine with another cuDNN 9 first on the loader path fails
  auto m = format::load_manifest(testing_support::source_dir() / "manifests" / "cu130-cudnn913.toml");
  ASSERT_TRUE(m.ok());
  auto held = core::doctor_linux(report, &m.value(), kb());
  const model::CudnnCopy* c = nullptr;
  for (const auto& cp : report.cudnn)
    if (cp.dir == lib && cp.major == 9) c = &cp;
  ASSERT_TRUE(c);
  auto loader = with_rule(held, "linux.loader", "libcudnn.so.9");
  ASSERT_EQ(loader.size(), 1u) << describe(held);
  if (c->library_version != "9.13.0" && loader[0].seen.find(lib) != std::string::npos) {
    EXPECT_EQ(loader[0].severity, Severity::error) << describe(held);
    has(loader[0].fix, "the loader picks cuDNN " + c->library_version);
  }
}

namespace {
std::string version_json(const std::vector<std::pair<std::string, std::string>>& components) {
  std::string s = R"({"cuda": {"name": "CUDA SDK", "version": "12.4.1"})";
  for (const auto& [id, v] : components) s += ", \"" + id + "\": {\"name\": \"" + id + "\", \"version\": \"" + v + "\"}";
  return s + "}";
}
}  // namespace

// version.json's components held against NVIDIA's manifest of CUDA 12.4.1: cuFFT 11.x is what that
// release ships, a cuBLAS 11 is a library of another release copied in; with [cuda] components,
// the pinned ones the toolkit lacks.
TEST(DoctorLinux, ToolkitComponentsOfAnotherMajorAndMissingOnes) {
  Machine mc;
  mc.root.file(
      "/usr/local/cuda-12.4/version.json",
      version_json({{"cuda_cudart", "12.4.127"}, {"libcublas", "11.11.3.6"}, {"libcufft", "11.2.1.3"}, {"nvidia_driver", "550.54.15"}}));
  auto m = manifest("12.4.1", "9.1.0.70", 12);
  auto fs = mc.doctor(&m);
  auto mixed = one(fs, "linux.toolkit-components", "/usr/local/cuda-12.4");
  EXPECT_EQ(mixed.severity, Severity::warning) << describe(fs);
  EXPECT_EQ(mixed.seen, "libcublas 11.11.3.6 (CUDA 12.4.1 ships 12.4.5.8) in /usr/local/cuda-12.4/version.json");
  has(mixed.fix, "mixes releases");
  ASSERT_TRUE(mixed.where);

  mc.root.file("/usr/local/cuda-12.4/version.json",
               version_json({{"cuda_cudart", "12.4.127"}, {"libcublas", "12.4.5.8"}, {"libcufft", "11.2.1.3"}}));
  auto ok = one(mc.doctor(&m), "linux.toolkit-components");
  EXPECT_EQ(ok.severity, Severity::ok);
  EXPECT_EQ(ok.seen, "3 components in version.json, each of the major NVIDIA ships in CUDA 12.4.1");
  // without a manifest, against the toolkit's own release
  EXPECT_EQ(one(mc.doctor(), "linux.toolkit-components").severity, Severity::ok);

  auto runtime = manifest("12.4.1", "9.1.0.70", 12, "components = [\"runtime\"]\n");
  auto lacking = one(mc.doctor(&runtime), "linux.toolkit-components");
  EXPECT_EQ(lacking.severity, Severity::warning);
  EXPECT_EQ(lacking.seen, "/usr/local/cuda-12.4/version.json lists no cuda_nvrtc");
  ASSERT_TRUE(lacking.where);
  EXPECT_EQ(lacking.where->line, 7);

  // a toolkit of another major is linux.toolkit's to report, not compared component by component
  auto cu13 = manifest("13.0.2", "9.13.0.50", 13);
  EXPECT_TRUE(with_rule(mc.doctor(&cu13), "linux.toolkit-components").empty());
}

// A component of the right major at another release's exact version: cuBLAS of CUDA 12.4.0 copied
// into a 12.4.1 tree is named with the release that ships it.
TEST(DoctorLinux, AComponentOfAnotherReleaseOfTheSameMajorIsNamedWithItsRelease) {
  const auto& catalog = knowledge::CudaCatalog::embedded();
  auto older = catalog.release(*model::Version::parse("12.4.0"));
  ASSERT_TRUE(older && *older);
  const auto* cublas = knowledge::find_component(**older, "libcublas");
  ASSERT_TRUE(cublas);
  ASSERT_NE(cublas->version_text, "12.4.5.8");  // 12.4.1's
  Machine mc;
  mc.root.file("/usr/local/cuda-12.4/version.json",
               version_json({{"cuda_cudart", "12.4.127"}, {"libcublas", cublas->version_text}, {"libcufft", "11.2.1.3"}}));
  auto m = manifest("12.4.1", "9.1.0.70", 12);
  auto fs = mc.doctor(&m);
  auto mixed = one(fs, "linux.toolkit-components", "/usr/local/cuda-12.4");
  EXPECT_EQ(mixed.severity, Severity::warning) << describe(fs);
  EXPECT_EQ(mixed.seen,
            "libcublas " + cublas->version_text + " (CUDA 12.4.0's; CUDA 12.4.1 ships 12.4.5.8) in /usr/local/cuda-12.4/version.json");
  has(mixed.fix, "mixes releases");
  // a runfile install's version.json gives a date, no release: it is held against the releases
  // whose runtime is the tree's cuda_cudart (12.4.127 is 12.4.1's)
  mc.root.file("/usr/local/cuda-12.4/version.json", std::string(R"j({"cuda": {"name": "CUDA SDK", "version": "12.4.20240412"}, )j") +
                                                        R"j("cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "12.4.127"}, )j" +
                                                        R"j("libcublas": {"name": "CUDA cuBLAS", "version": ")j" + cublas->version_text +
                                                        "\"}}");
  auto runfile = one(mc.doctor(), "linux.toolkit-components");
  EXPECT_EQ(runfile.severity, Severity::warning);
  EXPECT_EQ(runfile.seen,
            "libcublas " + cublas->version_text + " (CUDA 12.4.0's; CUDA 12.4.1 ships 12.4.5.8) in /usr/local/cuda-12.4/version.json");
  has(runfile.expected, "the releases whose runtime is the tree's cuda_cudart");
  // a version no manifest lists is said so
  mc.root.file("/usr/local/cuda-12.4/version.json",
               version_json({{"cuda_cudart", "12.4.127"}, {"libcublas", "12.4.9.99"}, {"libcufft", "11.2.1.3"}}));
  auto unknown = one(mc.doctor(&m), "linux.toolkit-components");
  EXPECT_EQ(unknown.seen,
            "libcublas 12.4.9.99 (a version no NVIDIA manifest of CUDA 12 lists; CUDA 12.4.1 ships 12.4.5.8) in "
            "/usr/local/cuda-12.4/version.json");
}

namespace {

TEST(DoctorLinuxGpus, NvidiaSmiOutputIsParsedAndHostileLinesSkipped) {
  // recorded: nvidia-smi --query-gpu=index,name,compute_cap --format=csv,noheader (driver 580, two GPUs)
  const std::string recorded = "0, NVIDIA H200, 9.0\r\n1, NVIDIA GeForce RTX 4090, 8.9\n\n";
  auto gpus = probe::parse_nvidia_smi_gpus(recorded);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(gpus[0].cc, "9.0");
  EXPECT_EQ(gpus[1].index, 1);
  EXPECT_EQ(gpus[1].cc, "8.9");
  std::vector<std::string> skipped;
  auto bad = probe::parse_nvidia_smi_gpus(
      "x, NVIDIA A100, 8.0\n0, , 8.0\n0, A100, [N/A]\n0, evil\x1b[2J, 8.0\n2, NVIDIA A100-SXM4-80GB, 8.0\n", &skipped);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(skipped.size(), 4u);
  std::string many;
  for (int i = 0; i < 100; ++i) many += std::to_string(i) + ", NVIDIA H100, 9.0\n";
  EXPECT_EQ(probe::parse_nvidia_smi_gpus(many).size(), 64u);
}

TEST(DoctorLinuxGpus, EachGpuIsJudgedAgainstTheInstalledCudnnAndTheManifest) {
  model::MachineReport r;
  r.gpus = {{0, "Tesla V100-SXM2-16GB", "7.0"}, {1, "NVIDIA H100 80GB HBM3", "9.0"}};
  model::CudnnCopy copy;
  copy.dir = "/opt/venv/lib/python3.11/site-packages/nvidia/cudnn/lib";
  copy.major = 9;
  copy.library_version = "9.11.0";
  copy.kind_detail = "nvidia-cudnn-cu12 wheel";
  r.cudnn.push_back(copy);
  auto m = manifest("12.8.1", "9.11.0.98", 12, "[gpus]\narch = [\"9.0\"]\n");
  auto findings = core::doctor_linux(r, &m, kb());
  auto find = [&](const std::string& rule, model::Severity sev, const std::string& subject) {
    return std::find_if(findings.begin(), findings.end(), [&](const model::Finding& f) {
             return f.rule == rule && f.severity == sev && f.subject.find(subject) != std::string::npos;
           }) != findings.end();
  };
  EXPECT_TRUE(find("linux.gpu", model::Severity::ok, "Tesla V100")) << describe(findings);
  EXPECT_TRUE(find("linux.gpu-cudnn", model::Severity::error, "Tesla V100")) << describe(findings);
  EXPECT_TRUE(find("linux.gpu-cudnn", model::Severity::ok, "H100")) << describe(findings);
  EXPECT_TRUE(find("linux.gpu-pinned", model::Severity::warning, "Tesla V100")) << describe(findings);
  EXPECT_FALSE(find("linux.gpu-pinned", model::Severity::warning, "H100")) << describe(findings);
}

// The cuDNN the loader resolves, judged by the GPU code its libraries carry: nothing for the GPU
// (error), SASS that runs there (ok), only PTX (warning with the JIT's cost; an error when the
// driver is older than that PTX needs).
TEST(DoctorLinuxGpus, TheLoadedCudnnIsJudgedByItsLibrariesGpuCode) {
  model::MachineReport r;
  r.gpus = {{0, "Tesla P100", "6.0"}, {1, "RTX 3090", "8.6"}, {2, "RTX 4090", "8.9"}, {3, "H100", "9.0"}};
  r.driver.version = "580.65.06";
  model::CudnnCopy copy;
  copy.dir = "/opt/cudnn/lib";
  copy.major = 9;
  copy.library_version = "9.1.0";
  auto target = [](const char* name, std::uint64_t bytes, std::optional<model::Version> isa = std::nullopt) {
    model::TargetImages t;
    t.target = *model::parse_gpu_target(name);
    t.images = 1;
    t.stored_bytes = t.uncompressed_bytes = bytes;
    t.ptx_isa = isa;
    return t;
  };
  model::LibraryKernels cnn;
  cnn.path = "/opt/cudnn/lib/libcudnn_cnn.so.9";
  cnn.targets = {target("sm_75", 1000), target("sm_86", 1000), target("compute_86", 3u << 20, model::Version::parse("8.0"))};
  model::LibraryKernels shim;  // no GPU code: not judged
  shim.path = "/opt/cudnn/lib/libcudnn.so.9";
  copy.kernels = {shim, cnn};
  r.cudnn.push_back(copy);
  model::LoaderResolution l;
  l.soname = "libcudnn.so.9";
  l.winner = model::LoaderCandidate{"/opt/cudnn/lib/libcudnn.so.9", "/opt/cudnn/lib/libcudnn.so.9.1.0", "LD_LIBRARY_PATH entry 1"};
  r.loader.push_back(l);

  auto findings = core::doctor_linux(r, nullptr, kb());
  auto p100 = one(findings, "linux.gpu-kernels", "Tesla P100");
  EXPECT_EQ(p100.severity, Severity::error) << describe(findings);
  has(p100.seen, "cuDNN in /opt/cudnn/lib (the loader resolves libcudnn.so.9 there): libcudnn_cnn.so.9 (sm_75 sm_86 compute_86)");
  has(p100.seen, "carry nothing that runs on 6.0");
  EXPECT_EQ(one(findings, "linux.gpu-kernels", "RTX 3090").severity, Severity::ok) << describe(findings);
  auto ada = one(findings, "linux.gpu-kernels", "RTX 4090");
  EXPECT_EQ(ada.severity, Severity::ok) << "sm_86 SASS runs on 8.9\n" << describe(findings);
  auto h100 = one(findings, "linux.gpu-kernels", "H100");
  EXPECT_EQ(h100.severity, Severity::warning) << describe(findings);
  has(h100.seen, "no sm_90 SASS in libcudnn_cnn.so.9 (PTX compute_86, ISA 8.0)");
  has(h100.fix, "the driver compiles 3.0 MiB of PTX at first use");

  r.driver.version = "450.51.06";  // older than CUDA 12.0's, which PTX ISA 8.0 needs
  findings = core::doctor_linux(r, nullptr, kb());
  auto old = one(findings, "linux.gpu-kernels", "H100");
  EXPECT_EQ(old.severity, Severity::error) << describe(findings);
  has(old.seen, "libcudnn_cnn.so.9 (PTX compute_86, ISA 8.0) needs driver 525.60.13 (CUDA 12.0");
  has(old.fix, "update the driver to 525.60.13 or newer");
}

TEST(DoctorLinuxGpus, EachInstalledFrameworkBuildIsJudgedForEachGpu) {
  if (model::host_linux_platform() != model::Platform::linux_x86_64) GTEST_SKIP() << "the lists below are the x86_64 builds'";
  model::MachineReport r;
  r.gpus = {{0, "Tesla V100-SXM2-16GB", "7.0"}, {1, "NVIDIA GeForce RTX 5090", "12.0"}};
  const std::string site = "/opt/venv/lib/python3.11/site-packages";
  r.python.frameworks = {
      {"torch", "2.7.1+cu128", site}, {"onnxruntime-gpu", "1.23.0", site}, {"tensorflow", "2.18.0", site}, {"torch", "2.7.1", site + "2"}};
  auto findings = core::doctor_linux(r, nullptr, kb());
  auto find = [&](model::Severity sev, const std::string& subject, const std::string& seen) {
    return std::find_if(findings.begin(), findings.end(), [&](const model::Finding& f) {
             return f.rule == "linux.gpu-framework-kernels" && f.severity == sev && f.subject.find(subject) != std::string::npos &&
                    f.seen.find(seen) != std::string::npos;
           }) != findings.end();
  };
  // torch 2.7's cu128 wheels dropped Volta; Blackwell has its own kernels
  EXPECT_TRUE(find(model::Severity::error, "Tesla V100", "torch 2.7.1+cu128")) << describe(findings);
  EXPECT_TRUE(find(model::Severity::ok, "RTX 5090", "torch 2.7.1+cu128")) << describe(findings);
  // onnxruntime-gpu 1.23 (compute_90a PTX only): nothing for Blackwell
  EXPECT_TRUE(find(model::Severity::ok, "Tesla V100", "onnxruntime-gpu 1.23.0")) << describe(findings);
  EXPECT_TRUE(find(model::Severity::error, "RTX 5090", "onnxruntime-gpu 1.23.0")) << describe(findings);
  // TensorFlow 2.18 reaches Blackwell through compute_90 PTX
  EXPECT_TRUE(find(model::Severity::warning, "RTX 5090", "tensorflow 2.18.0")) << describe(findings);
  EXPECT_TRUE(find(model::Severity::warning, "RTX 5090", "only compute_90 PTX")) << describe(findings);
  // PyPI's torch names no variant: said, not guessed
  EXPECT_TRUE(find(model::Severity::note, "RTX 5090", "names no CUDA variant")) << describe(findings);
}

}  // namespace

}  // namespace doctor_linux_test
