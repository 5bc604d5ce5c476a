// The embedded knowledge answers the questions the seeds got wrong, from data.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "knowledge/knowledge_base.hpp"

namespace knowledge_test {

using knowledge::KnowledgeBase;
using model::Os;
using model::Platform;
using model::Version;

namespace {
const KnowledgeBase& kb() { return KnowledgeBase::embedded(); }
Version v(const char* s) { return *Version::parse(s); }
}  // namespace

TEST(Knowledge, EveryEntryCarriesASource) {
  const auto& f = kb().facts();
  for (const auto& a : f.cudnn_archives) EXPECT_FALSE(a.source.empty()) << a.file;
  for (const auto& r : f.driver_releases) EXPECT_FALSE(r.source.empty()) << r.cuda.text();
  for (const auto& t : f.torch) EXPECT_FALSE(t.source.empty()) << t.release.text();
  for (const auto& t : f.tensorflow) EXPECT_FALSE(t.source.empty()) << t.version.text();
  for (const auto& o : f.onnxruntime) EXPECT_FALSE(o.source.empty());
  for (const auto& d : f.docker_tags) EXPECT_FALSE(d.source.empty()) << d.tag;
  EXPECT_GE(f.cudnn_archives.size(), 200u);
  EXPECT_GE(f.driver_releases.size(), 50u);
}

TEST(Knowledge, DriverMinimumForCuda121) {
  auto lin = kb().driver_minimum(v("12.1.1"), Os::linux);
  EXPECT_EQ(lin.release_min->text(), "530.30.02");
  EXPECT_EQ(lin.family_floor->text(), "525.60.13");
  auto win = kb().driver_minimum(v("12.1.1"), Os::windows);
  EXPECT_EQ(win.release_min->text(), "531.14");
  EXPECT_EQ(win.family_floor->text(), "527.41");
}

TEST(Knowledge, Cuda118WindowsMinimumIsNvidiasNotTheSeeds) {
  // The first seed claims "driver >= 522.25"; NVIDIA's table says 520.06 (meson: 522.06).
  auto win = kb().driver_minimum(v("11.8.0"), Os::windows);
  EXPECT_EQ(win.effective, "520.06");
  EXPECT_NE(win.effective, "522.25");
}

TEST(Knowledge, Cuda13OnWindowsFallsBackToTheFamilyFloor) {
  auto win = kb().driver_minimum(v("13.0.2"), Os::windows);
  EXPECT_TRUE(win.release_na);
  EXPECT_FALSE(win.release_min.has_value());
  EXPECT_EQ(win.effective, "580");
  EXPECT_EQ(kb().driver_minimum(v("13.0.2"), Os::linux).effective, "580.95.05");
}

TEST(Knowledge, ReleaseWithoutARowUsesTheNearestEarlierOne) {
  const auto* r = kb().driver_release(v("12.3.2"));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->cuda.text(), "12.3.1");
  EXPECT_EQ(kb().driver_release(v("12.7.0")), nullptr);  // there is no CUDA 12.7
  EXPECT_EQ(kb().driver_minimum(v("12.7.0"), Os::linux).effective, "525.60.13");
}

// 13.2.2's own row (NVIDIA's table, added by hand): not 13.2.1's lower floor through the fallback.
TEST(Knowledge, Cuda1322HasItsOwnDriverFloorAndNoWindowsMinimum) {
  const auto* r = kb().driver_release(v("13.2.2"));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->cuda.text(), "13.2.2");
  EXPECT_EQ(kb().driver_minimum(v("13.2.2"), Os::linux).effective, "595.71.05");
  auto win = kb().driver_minimum(v("13.2.2"), Os::windows);
  EXPECT_TRUE(win.release_na);
  EXPECT_EQ(win.effective, "580");
  EXPECT_TRUE(kb().driver_minimum(v("13.2.1"), Os::windows).release_na);
}

TEST(Knowledge, UnknownCudaMajorIsUnknownNotInvented) {
  auto d = kb().driver_minimum(v("10.2.89"), Os::linux);
  EXPECT_EQ(d.effective, "unknown");
}

TEST(Knowledge, CudnnArchiveOfTheSecondSeed) {
  const auto* a = kb().cudnn_archive(v("8.9.5.30"), 12, Platform::windows_x86_64);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->file, "cudnn-windows-x86_64-8.9.5.30_cuda12-archive.zip");
  EXPECT_EQ(a->size, 705347747u);
  EXPECT_EQ(a->sha256, "be76d407ce0e609f94688aa45bfd5648fd21a4d9f84a588fad10aa4802ca1301");
  EXPECT_EQ(kb().cudnn_archive_by_file(a->file), a);
  EXPECT_EQ(kb().cudnn_archive_by_sha256("BE76D407CE0E609F94688AA45BFD5648FD21A4D9F84A588FAD10AA4802CA1301"), a);
  EXPECT_EQ(KnowledgeBase::cudnn_archive_file_name(v("8.9.5.30"), 12, Platform::windows_x86_64), a->file);
  EXPECT_EQ(kb().cudnn_archive_url(v("8.9.5.30"), 12, Platform::windows_x86_64), a->url);
}

TEST(Knowledge, TwoBuildsOf895AreDifferentArchives) {
  const auto* a = kb().cudnn_archive(v("8.9.5.29"), 11, Platform::linux_x86_64);
  const auto* b = kb().cudnn_archive(v("8.9.5.30"), 11, Platform::linux_x86_64);
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->sha256, b->sha256);
}

// NVIDIA's manifest read at run time adds the archives the knowledge lacks and completes the ones
// without a size; one whose SHA-256 disagrees with the knowledge base is refused, not taken.
TEST(Knowledge, ArchivesReadFromNvidiasManifestMustAgreeWithTheKnowledge) {
  const auto* known = kb().cudnn_archive(v("9.1.0.70"), 12, model::Platform::linux_x86_64);
  ASSERT_NE(known, nullptr);
  model::CudnnArchiveFact same = *known, added = *known, other = *known;
  same.size.reset();
  same.source = {"NVIDIA redistrib_9.1.0.json, read from https://mirror.example/compute/cudnn/redist/redistrib_9.1.0.json (sha256 0)"};
  added.version = v("9.98.0.12");
  added.file = "cudnn-linux-x86_64-9.98.0.12_cuda12-archive.tar.xz";
  added.sha256 = std::string(64, 'a');
  auto with = kb().with_cudnn_archives({same, added});
  ASSERT_TRUE(with.ok()) << with.error().message;
  const auto* kept = with->cudnn_archive(v("9.1.0.70"), 12, model::Platform::linux_x86_64);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->size, known->size);  // the knowledge's own, kept
  EXPECT_EQ(kept->source.back(), same.source.front());
  ASSERT_NE(with->cudnn_archive(v("9.98.0.12"), 12, model::Platform::linux_x86_64), nullptr);
  EXPECT_EQ(kb().cudnn_archive(v("9.98.0.12"), 12, model::Platform::linux_x86_64), nullptr);  // the embedded one is unchanged
  other.sha256 = std::string(64, 'b');
  other.source = same.source;
  auto refused = kb().with_cudnn_archives({other});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, util::ErrorCode::mismatch);
  EXPECT_NE(refused.error().message.find("gives sha256 " + std::string(64, 'b') + ", the knowledge base " + known->sha256),
            std::string::npos)
      << refused.error().message;
}

TEST(Knowledge, ArchiveLayoutsByVersion) {
  // 8.8.0's import library lives in lib\x64 (the first seed says lib)
  const auto x64 = model::Platform::windows_x86_64, arm = model::Platform::windows_arm64;
  EXPECT_EQ(kb().windows_import_lib_dir(v("8.8.0.121"), x64)->dirs.front(), "lib/x64");
  EXPECT_EQ(kb().windows_import_lib_dir(v("8.4.1.50"), x64)->dirs.front(), "lib");
  EXPECT_FALSE(kb().windows_import_lib_dir(v("8.6.0.163"), x64)->verified);
  EXPECT_EQ(kb().windows_dll_dir(v("9.17.1.4"), x64)->dirs.front(), "bin");
  EXPECT_EQ(kb().windows_dll_dir(v("9.18.0.77"), x64)->dirs.front(), "bin/x64");
  EXPECT_EQ(kb().linux_lib_dir(v("9.1.0.70"))->dirs.front(), "lib");
  EXPECT_EQ(kb().windows_import_lib_dir(v("7.6.5.32"), x64), nullptr);  // unknown layout: no guess
  // Windows on Arm has rows of its own, from the first windows-arm64 archive NVIDIA published (9.25)
  EXPECT_EQ(kb().windows_dll_dir(v("9.27.0.42"), arm)->dirs.front(), "bin/arm64");
  EXPECT_EQ(kb().windows_import_lib_dir(v("9.27.0.42"), arm)->dirs.front(), "lib/arm64");
  EXPECT_EQ(kb().windows_dll_dir(v("9.27.0.42"), x64)->dirs.front(), "bin/x64");
  EXPECT_EQ(kb().windows_dll_dir(v("9.20.0.48"), arm), nullptr);
  ASSERT_NE(kb().cudnn_archive(v("9.27.0.42"), 13, arm), nullptr);
  EXPECT_EQ(kb().cudnn_archive(v("9.27.0.42"), 13, arm)->sha256, "c34d906b19df16d370d31b78b1ee480a07e6f827fdabfea63acb914528a9b85c");
  EXPECT_EQ(kb().cudnn_archive(v("9.27.0.42"), 12, arm), nullptr);  // no CUDA 12 build for Windows on Arm
  EXPECT_EQ(kb().cudnn_contents(8)->main_dll, "cudnn64_8.dll");
  EXPECT_EQ(kb().cudnn_contents(9)->soname, "libcudnn.so.9");
}

TEST(Knowledge, ZlibwapiFrom83To91) {
  EXPECT_FALSE(kb().zlibwapi_needed(v("8.2.4.15")));
  EXPECT_TRUE(kb().zlibwapi_needed(v("8.3.2.44")));
  EXPECT_TRUE(kb().zlibwapi_needed(v("9.1.0.70")));
  EXPECT_FALSE(kb().zlibwapi_needed(v("9.2.1.18")));
}

TEST(Knowledge, Torch21WheelsAndBundledCudnn) {
  const auto* t = kb().torch_release(v("2.1.0"));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->variants, (std::vector<std::string>{"cu118", "cu121"}));
  EXPECT_EQ(t->cudnn.at("cu121").text(), "8.9.2.26");
  EXPECT_EQ(kb().torch_release(v("2.10.0"))->release.text(), "2.10");
  EXPECT_EQ(kb().torch_index_url("cu121"), "https://download.pytorch.org/whl/cu121");
}

TEST(Knowledge, TensorflowAndOnnxRuntime) {
  auto tf = kb().tensorflow_builds(v("2.15.0"), Os::linux);
  ASSERT_FALSE(tf.empty());
  EXPECT_EQ(tf.front()->cudnn.text(), "8.9");
  EXPECT_EQ(kb().facts().tensorflow_windows_native_gpu_last->text(), "2.10.0");
  auto ort = kb().onnxruntime_rows(v("1.18.1"));
  bool cuda12_cudnn9 = false;
  for (auto* r : ort) cuda12_cudnn9 |= r->cuda_major == 12 && r->cudnn_major == 9;
  EXPECT_TRUE(cuda12_cudnn9);
  auto ort16 = kb().onnxruntime_rows(v("1.16.3"));
  ASSERT_EQ(ort16.size(), 1u);
  EXPECT_EQ(ort16.front()->cuda_major, 11);
}

TEST(Knowledge, CondaForgeHasNo895) {
  EXPECT_EQ(kb().conda_forge_cudnn(v("8.9.5.30")), nullptr);
  ASSERT_NE(kb().conda_forge_cudnn(v("8.9.7.29")), nullptr);
  EXPECT_NE(kb().conda_forge_cudnn(v("8.9.1.23")), nullptr);
}

TEST(Knowledge, DockerTags) {
  const auto* t = kb().docker_tag("12.1.1-cudnn8-runtime-ubuntu22.04");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->cudnn.text(), "8.9.0.131");
}

// The embedded data is read a file at a time as questions need it; whatever the order of the
// questions, and from several threads at once, the answers are those of the data read whole.
TEST(Knowledge, DataReadAsNeededAnswersAsTheWholeData) {
  std::vector<std::pair<std::string, std::string_view>> named;
  for (auto [name, text] : KnowledgeBase::embedded_files()) named.emplace_back(std::string(name), text);
  auto whole = KnowledgeBase::from_files(named);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  const auto& w = whole->facts();
  for (int round = 0; round < 3; ++round) {
    const KnowledgeBase lazy = KnowledgeBase::read_as_needed(KnowledgeBase::embedded_files());
    std::vector<std::thread> threads;
    std::vector<int> answers(4, 0);
    threads.emplace_back([&] { answers[0] = lazy.cudnn_archive_by_file(w.cudnn_archives.front().file) != nullptr; });
    threads.emplace_back([&] { answers[1] = lazy.cuda_sets().size() == w.cuda_sets.size(); });
    threads.emplace_back([&] { answers[2] = lazy.driver_family(12) != nullptr; });
    threads.emplace_back([&] { answers[3] = lazy.gpu_models("H100").size() == whole->gpu_models("H100").size(); });
    if (round == 1) std::reverse(threads.begin(), threads.end());  // (joined in another order)
    for (auto& t : threads) t.join();
    EXPECT_EQ(answers, std::vector<int>(4, 1)) << "round " << round;
    EXPECT_EQ(lazy.cudnn_base_url(), w.cudnn_base_url);
    const auto& f = lazy.facts();
    EXPECT_EQ(f.cudnn_archives.size(), w.cudnn_archives.size());
    EXPECT_EQ(f.driver_releases.size(), w.driver_releases.size());
    EXPECT_EQ(f.torch.size(), w.torch.size());
    EXPECT_EQ(f.gpu_models.size(), w.gpu_models.size());
    EXPECT_EQ(f.docker_tags.size(), w.docker_tags.size());
    EXPECT_EQ(f.apt_pins.size(), w.apt_pins.size());
    auto from_wheels = [](const model::Facts& x) {  // what torch-wheels.toml adds to frameworks.toml's rows
      std::size_t n = 0;
      for (const auto& t : x.torch) n += t.extra_variants.size() + t.wheel_cudnn.size() + t.first_patch.size();
      return n;
    };
    EXPECT_GT(from_wheels(w), 0u);
    EXPECT_EQ(from_wheels(f), from_wheels(w));
    KnowledgeBase copy = lazy;  // a copy holds everything
    EXPECT_EQ(copy.facts().conda_forge_cudnn.size(), w.conda_forge_cudnn.size());
  }
}

TEST(Knowledge, MalformedDataIsRefusedWithItsLocation) {
  std::vector<std::pair<std::string, std::string_view>> files;
  std::vector<std::string> keep;
  for (auto [name, text] : KnowledgeBase::embedded_files()) files.emplace_back(std::string(name), text);
  std::string broken = "schema = 1\n[[family]]\ncuda_major = 11\nlinux = \"450.x\"\nwindows = \"452.39\"\nsource = [\"s\"]\n";
  for (auto& [name, text] : files)
    if (name == "drivers.toml") text = broken;
  auto r = KnowledgeBase::from_files(files);
  ASSERT_FALSE(r.ok());
  ASSERT_TRUE(r.error().where);
  EXPECT_EQ(r.error().where->file, "drivers.toml");
  EXPECT_EQ(r.error().where->line, 4);
}

TEST(Knowledge, DataWithoutSourceIsRefused) {
  std::vector<std::pair<std::string, std::string_view>> files;
  for (auto [name, text] : KnowledgeBase::embedded_files()) files.emplace_back(std::string(name), text);
  std::string no_source = "schema = 1\n[[family]]\ncuda_major = 11\nlinux = \"450.80.02\"\nwindows = \"452.39\"\n";
  for (auto& [name, text] : files)
    if (name == "drivers.toml") text = no_source;
  auto r = KnowledgeBase::from_files(files);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("family[1].source"), std::string::npos) << r.error().message;
}

}  // namespace knowledge_test
