// capture's decisions over machine reports built by hand, and the TOML it writes read back by the
// manifest reader (hostile values included).
#include <gtest/gtest.h>

#include <set>

#include "core/capture/capture.hpp"
#include "core/check/check.hpp"
#include "fixtures.hpp"
#include "format/manifest_reader.hpp"
#include "gen/manifest_toml.hpp"
#include "test_support.hpp"

namespace capture_test {

namespace {

const knowledge::KnowledgeBase& kb() { return knowledge::KnowledgeBase::embedded(); }

// A machine whose loader resolves libcudnn.so.<major> from `dir`.
model::MachineReport machine_with(const std::string& dir, const std::string& library_version, const std::string& package_version,
                                  int major = 8) {
  model::MachineReport m;
  m.arch = "x86_64";
  m.os.id = "ubuntu";
  m.os.version_id = "22.04";
  model::ToolkitInfo t;
  t.root = "/usr/local/cuda-12.2";
  t.version = "12.2.2";
  t.is_default = true;
  m.toolkits.push_back(t);
  model::CudnnCopy c;
  c.dir = dir;
  c.kind = model::CudnnKind::system;
  c.major = major;
  c.library_version = library_version;
  c.package_version = package_version;
  c.package_source = package_version.empty() ? "" : "dpkg: libcudnn8";
  m.cudnn.push_back(c);
  model::LoaderResolution r;
  r.soname = "libcudnn.so." + std::to_string(major);
  r.winner = model::LoaderCandidate{dir + "/libcudnn.so." + std::to_string(major), dir + "/libcudnn.so." + library_version, "ld.so cache"};
  m.loader.push_back(r);
  m.driver.version = "535.104.05";
  m.driver.source = model::DriverSource::proc;
  return m;
}

}  // namespace

TEST(Capture, PinsTheLoadersCudnnWithNvidiasArchive) {
  auto cap = core::capture(machine_with("/usr/lib/x86_64-linux-gnu", "8.9.7", "8.9.7.29"), kb(), {});
  ASSERT_TRUE(cap) << cap.error().message;
  EXPECT_EQ(cap->spec.cudnn, "8.9.7.29");
  EXPECT_EQ(cap->spec.cudnn_cuda, 12);
  EXPECT_EQ(cap->spec.cuda, "12.2.2");
  EXPECT_EQ(cap->spec.driver_linux, "535.104.05");
  EXPECT_EQ(cap->spec.name, "captured-ubuntu22.04-cudnn8.9.7");
  // NVIDIA's archive of exactly this build, from the knowledge base (complete or left as a comment).
  std::string pinned = cap->spec.archives.empty() ? "" : cap->spec.archives[0].url;
  for (const auto& c : cap->spec.archive_comments) pinned += c;
  EXPECT_NE(pinned.find("cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz"), std::string::npos) << pinned;
  if (!cap->spec.archives.empty()) {
    EXPECT_EQ(cap->spec.archives[0].origin, "nvidia");
  }
  EXPECT_TRUE(cap->spec.linux_layout.empty()) << "a system copy is not a staged tree";
}

TEST(Capture, RefusesToGuessBetweenTwoBuilds) {
  // Only three parts known and no metadata: NVIDIA published 8.9.5.29 and 8.9.5.30 (knowledge base).
  std::set<std::string> builds;
  for (const auto& a : kb().facts().cudnn_archives)
    if (a.version.prefix(3) == "8.9.5" && a.platform == model::Platform::linux_x86_64) builds.insert(a.version.text());
  ASSERT_EQ(builds, (std::set<std::string>{"8.9.5.29", "8.9.5.30"})) << "the case this test is about left the knowledge base";
  auto cap = core::capture(machine_with("/usr/lib/x86_64-linux-gnu", "8.9.5", ""), kb(), {});
  ASSERT_FALSE(cap) << "picked " << cap->spec.cudnn << " of two builds";
  EXPECT_EQ(cap.error().code, util::ErrorCode::invalid);
  EXPECT_NE(cap.error().message.find("several builds"), std::string::npos) << cap.error().message;
}

TEST(Capture, NoCudnnForTheLoaderIsNotFound) {
  model::MachineReport m;
  auto cap = core::capture(m, kb(), {});
  ASSERT_FALSE(cap);
  EXPECT_EQ(cap.error().code, util::ErrorCode::not_found);
}

TEST(Capture, WrittenManifestReadsBackWithHostileValues) {
  gen::ManifestSpec s;
  s.header = {"line one\nline two"};
  s.name = "captured";
  s.description = "team \"gpu\" \\ $HOME `id` caf\u00e9\ttab\nnewline # not a comment";
  s.cuda = "12.2.2";
  s.cudnn = "8.9.6.50";
  s.cudnn_cuda = 12;
  s.cudnn_comment = "from\nsomewhere";
  s.frameworks = {{"torch", "2.1.0"}, {"onnxruntime-gpu", "1.17.1"}};
  testing_support::ScratchDir dir;
  auto path = dir.write("m.toml", gen::render_manifest(s));
  auto m = format::load_manifest(path.string());
  ASSERT_TRUE(m) << m.error().message << "\n" << testing_support::read_text(path);
  ASSERT_TRUE(m->description);
  EXPECT_EQ(m->description->value, s.description);
  EXPECT_EQ(m->cudnn->version.value.text(), "8.9.6.50");
  EXPECT_EQ(m->frameworks.at("onnxruntime-gpu").value.text(), "1.17.1");
}

// The toolkit's version.json components become [cuda] components, so that `apply` stages the same
// toolkit from NVIDIA's archives: the driver's own components (NVIDIA licenses them with the driver) and a
// version that is not the release's are said in notes; the manifest reads back with them and
// check resolves every one.
TEST(Capture, TheToolkitsComponentsAreWrittenForApply) {
  auto m = machine_with("/usr/lib/x86_64-linux-gnu", "8.9.7", "8.9.7.29");
  m.toolkits[0].components = {{"cuda_cudart", "CUDA Runtime (cudart)", "12.2.140"},
                              {"libcublas", "CUDA cuBLAS", "12.2.5.1"},
                              {"cuda_nvcc", "CUDA NVCC", "12.2.140"},
                              {"nvidia_driver", "NVIDIA Linux Driver", "535.104.05"}};
  auto cap = core::capture(m, kb(), {});
  ASSERT_TRUE(cap) << cap.error().message;
  EXPECT_EQ(cap->spec.cuda_components, (std::vector<std::string>{"cuda_cudart", "libcublas", "cuda_nvcc"}));
  std::string notes;
  for (const auto& n : cap->notes) notes += n + "\n";
  EXPECT_NE(notes.find("licenses them with the driver (installed with it, not staged): nvidia_driver"), std::string::npos) << notes;
  EXPECT_NE(notes.find("libcublas 12.2.5.1 (CUDA 12.2.2: 12.2.5.6)"), std::string::npos) << notes;

  testing_support::ScratchDir dir;
  auto path = dir.write("m.toml", gen::render_manifest(cap->spec));
  auto back = format::load_manifest(path.string());
  ASSERT_TRUE(back) << back.error().message << "\n" << testing_support::read_text(path);
  ASSERT_TRUE(back->cuda);
  ASSERT_EQ(back->cuda->components.size(), 3u);
  EXPECT_EQ(back->cuda->components[1].value, "libcublas");
  auto checked = core::check_manifest(*back, kb());
  ASSERT_TRUE(checked) << checked.error().message;
  std::set<std::string> resolved;
  for (const auto& p : checked->cuda_components)
    if (p.platform == model::Platform::linux_x86_64) resolved.insert(p.component);
  EXPECT_EQ(resolved, (std::set<std::string>{"cuda_cudart", "libcublas", "cuda_nvcc"}));
  for (const auto& f : checked->findings) {
    if (f.rule == "cuda.components") {
      EXPECT_EQ(f.severity, model::Severity::ok) << f.seen;
    }
  }

  // a release stackpin has no NVIDIA manifest of: nothing guessed, the note says what to do
  m.toolkits[0].version = "12.7.0";
  auto unknown = core::capture(m, kb(), {});
  ASSERT_TRUE(unknown);
  EXPECT_TRUE(unknown->spec.cuda_components.empty());
  notes.clear();
  for (const auto& n : unknown->notes) notes += n + "\n";
  EXPECT_NE(notes.find("stackpin has no NVIDIA manifest of CUDA 12.7.0"), std::string::npos) << notes;
}

// A toolkit assembled from NVIDIA's pip wheels (as /usr/local/cuda is on the development machine)
// says only 13.0 through its runtime wheel; its wheels' versions are those of exactly one release.
TEST(Capture, AToolkitOfPipWheelsIsPinnedToTheReleaseItsWheelsAre) {
  auto m = machine_with("/usr/lib/x86_64-linux-gnu", "8.9.7", "8.9.7.29");
  auto& t = m.toolkits[0];
  t.root = "/usr/local/cuda";
  t.version = "13.0";
  t.version_source = model::ToolkitVersionSource::pip_wheel;
  t.wheels = {{"nvidia-cublas", "", "13.1.0.3"},      {"nvidia-cuda-cccl", "", "13.0.85"},
              {"nvidia-cuda-nvcc", "", "13.0.88"},    {"nvidia-cuda-profiler-api", "", "13.0.85"},
              {"nvidia-cuda-runtime", "", "13.0.96"}, {"nvidia-cudnn-cu13", "", "9.19.0.56"},
              {"nvidia-nvtx", "", "13.0.85"},         {"nvidia-nvvm", "", "13.0.88"}};
  auto cap = core::capture(m, kb(), {});
  ASSERT_TRUE(cap) << cap.error().message;
  EXPECT_EQ(cap->spec.cuda, "13.0.2");
  EXPECT_EQ(cap->spec.cuda_components,
            (std::vector<std::string>{"libcublas", "cuda_cccl", "cuda_nvcc", "cuda_profiler_api", "cuda_cudart", "cuda_nvtx", "libnvvm"}));
  EXPECT_NE(cap->spec.cuda_components_comment.find("pip wheels"), std::string::npos) << cap->spec.cuda_components_comment;

  // without cuBLAS, 13.0.2 and 13.0.3 fit alike: nothing chosen for the user
  t.wheels.erase(t.wheels.begin());
  auto two = core::capture(m, kb(), {});
  ASSERT_TRUE(two);
  EXPECT_EQ(two->spec.cuda, "13.0");
  EXPECT_TRUE(two->spec.cuda_components.empty());
  std::string notes;
  for (const auto& n : two->notes) notes += n + "\n";
  EXPECT_NE(notes.find("fit CUDA 13.0.2 and 13.0.3 alike"), std::string::npos) << notes;

  // a wheel of no release (upgraded alone): the runtime wheel's major.minor stays, said in a note
  t.wheels.push_back({"nvidia-cublas", "", "13.9.9.9"});
  auto none = core::capture(m, kb(), {});
  ASSERT_TRUE(none);
  EXPECT_EQ(none->spec.cuda, "13.0");
  notes.clear();
  for (const auto& n : none->notes) notes += n + "\n";
  EXPECT_NE(notes.find("match no single release of CUDA 13.0"), std::string::npos) << notes;
}

TEST(Capture, TheMachinesGpusBecomeTheManifestsGpus) {
  auto m = machine_with("/usr/lib/x86_64-linux-gnu", "8.9.7", "8.9.7.29");
  m.gpus = {{0, "NVIDIA H100 80GB HBM3", "9.0"}, {1, "NVIDIA H100 80GB HBM3", "9.0"}, {2, "NVIDIA L4", "8.9"}};
  auto cap = core::capture(m, kb(), {});
  ASSERT_TRUE(cap) << cap.error().message;
  EXPECT_EQ(cap->spec.gpu_arch, (std::vector<std::string>{"9.0", "8.9"}));
  std::string text = gen::render_manifest(cap->spec);
  auto back = format::parse_manifest(text, "captured.toml");
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << text;
  ASSERT_TRUE(back->gpus.has_value()) << text;
  EXPECT_EQ(back->gpus->arch.size(), 2u);
  EXPECT_NE(text.find("# the GPUs of the captured machine (nvidia-smi): NVIDIA H100 80GB HBM3"), std::string::npos) << text;
}

// What the captured cuDNN's libraries carry is recorded beside its pin: a teammate's GPU is judged
// against it, not against a support matrix.
TEST(Capture, TheCapturedCudnnsGpuCodeIsRecorded) {
  auto m = machine_with("/usr/lib/x86_64-linux-gnu", "8.9.7", "8.9.7.29");
  model::LibraryKernels k;
  k.path = "/usr/lib/x86_64-linux-gnu/libcudnn_cnn_infer.so.8";
  for (const char* t : {"sm_86", "sm_70", "compute_90"}) {
    model::TargetImages x;
    x.target = *model::parse_gpu_target(t);
    k.targets.push_back(x);
  }
  m.cudnn[0].kernels = {model::LibraryKernels{}, k};
  auto cap = core::capture(m, kb(), {});
  ASSERT_TRUE(cap) << cap.error().message;
  EXPECT_NE(cap->spec.cudnn_comment.find("; its libraries carry SASS sm_70 sm_86 and PTX compute_90 (read from their fatbin containers)"),
            std::string::npos)
      << cap->spec.cudnn_comment;
  auto back = format::parse_manifest(gen::render_manifest(cap->spec), "captured.toml");
  EXPECT_TRUE(back.ok()) << back.error().message;
}

// The Python environment: its NVIDIA wheels pinned exactly in [python] packages (the frameworks'
// builds follow from [cuda]), where each came from and the digest of its RECORD said in comments, and
// [python] version read from the site-packages path; the manifest reads back.
TEST(Capture, ThePythonEnvironmentsWheelsArePinnedWithWhereTheyCameFrom) {
  testing_support::ScratchDir dir;
  auto m = machine_with("/usr/lib/x86_64-linux-gnu", "8.9.7", "8.9.7.29");
  const std::string site = "/opt/venv/lib/python3.12/site-packages";
  m.python.site_packages = {site};
  model::PythonPackage torch{"torch", "2.9.0+cu130", site};
  model::PythonPackage cudnn{"nvidia-cudnn-cu13", "9.13.0.50", site};
  cudnn.url = "https://pypi.example/nvidia_cudnn_cu13-9.13.0.50-py3-none-manylinux_2_27_x86_64.whl";
  cudnn.wheel_sha256 = std::string(64, 'e');
  cudnn.record_path = dir.write("RECORD", "nvidia/cudnn/lib/libcudnn.so.9,sha256=abc,3\n").string();
  m.python.frameworks = {torch, cudnn};
  auto cap = core::capture(m, kb(), {});
  ASSERT_TRUE(cap) << cap.error().message;
  EXPECT_EQ(cap->spec.python, "3.12");
  EXPECT_EQ(cap->spec.python_packages, std::vector<std::string>{"nvidia-cudnn-cu13==9.13.0.50"});
  std::string comments;
  for (const auto& c : cap->spec.python_comments) comments += c + "\n";
  EXPECT_NE(comments.find("nvidia-cudnn-cu13 9.13.0.50: " + cudnn.url + ", wheel sha256 " + cudnn.wheel_sha256 + ", RECORD sha256 " +
                          fixtures::info(cudnn.record_path).sha256),
            std::string::npos)
      << comments;
  EXPECT_NE(comments.find("torch 2.9.0+cu130: an index (no direct_url.json)"), std::string::npos) << comments;
  auto path = dir.write("m.toml", gen::render_manifest(cap->spec));
  auto back = format::load_manifest(path.string());
  ASSERT_TRUE(back) << back.error().message << "\n" << testing_support::read_text(path);
  ASSERT_EQ(back->python_packages.size(), 1u);
  EXPECT_EQ(back->python_packages[0].value, "nvidia-cudnn-cu13==9.13.0.50");
}

}  // namespace capture_test
