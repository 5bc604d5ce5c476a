// The CUDA release catalog: every embedded NVIDIA manifest reads and is the file in data/redist;
// [cuda] components resolve by set, NVIDIA name and alias, per release and platform, and names that
// cannot be provisioned are reported with what exists. The cuDNN manifests agree with the
// knowledge base's archives.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "format/redistrib.hpp"
#include "knowledge/cuda_catalog.hpp"
#include "knowledge/knowledge_base.hpp"
#include "test_support.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace cuda_catalog_test {

namespace fs = std::filesystem;
using knowledge::CudaCatalog;
using model::Platform;
using testing_support::contains;

namespace {

const format::CudaRedistribRelease& release(const std::string& v) {
  auto r = CudaCatalog::embedded().release(*model::Version::parse(v));
  EXPECT_TRUE(r.ok());
  EXPECT_NE(*r, nullptr) << v;
  return **r;
}

const std::vector<model::CudaComponentSet>& sets() { return knowledge::KnowledgeBase::embedded().facts().cuda_sets; }

knowledge::ComponentResolution resolve(const std::string& v, Platform p, const std::vector<std::string>& names) {
  auto ver = *model::Version::parse(v);
  return knowledge::resolve_components(release(v), static_cast<int>(ver.major()), p, names, sets());
}

std::vector<std::string> ids(const knowledge::ComponentResolution& r) {
  std::vector<std::string> out;
  for (const auto& c : r.components) out.push_back(c.component->id);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

TEST(CudaCatalog, EmbedsEveryManifestOfDataRedistVerbatim) {
  fs::path dir = testing_support::source_dir() / "data" / "redist" / "cuda";
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files.insert(e.path().filename().string());
  const auto& cat = CudaCatalog::embedded();
  auto releases = cat.releases();
  ASSERT_EQ(releases.size(), files.size());
  EXPECT_EQ(releases.size(), 50u);
  EXPECT_EQ(releases.front().text(), "11.4.2");
  EXPECT_EQ(releases.back().text(), "13.4.2");
  EXPECT_TRUE(std::is_sorted(releases.begin(), releases.end()));
  for (const auto& v : releases) {
    std::string name = "redistrib_" + v.text() + ".json";
    ASSERT_TRUE(files.count(name)) << name;
    auto r = cat.release(v);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_NE(*r, nullptr);
    // The embedded text is the file: the same components and archives as parsing the file itself.
    auto text = util::read_file(dir / name);
    ASSERT_TRUE(text.ok());
    auto direct = format::parse_cuda_redistrib(*text, name);
    ASSERT_TRUE(direct.ok());
    ASSERT_EQ((*r)->components.size(), direct->components.size()) << name;
    for (std::size_t i = 0; i < direct->components.size(); ++i) {
      EXPECT_EQ((*r)->components[i].id, direct->components[i].id);
      ASSERT_EQ((*r)->components[i].archives.size(), direct->components[i].archives.size());
      for (std::size_t j = 0; j < direct->components[i].archives.size(); ++j)
        EXPECT_EQ((*r)->components[i].archives[j].sha256, direct->components[i].archives[j].sha256);
    }
    // Where NVIDIA's file states its release, it is the one its name says.
    if (!(*r)->release_label.empty()) {
      EXPECT_EQ((*r)->release_label, v.text()) << name;
    }
    EXPECT_TRUE(contains(cat.source_of(v), "https://developer.download.nvidia.com/compute/cuda/redist/" + name));
  }
  auto none = cat.release(*model::Version::parse("12.7.0"));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
}

TEST(CudaCatalog, RefusesFilesThatDoNotSayTheirRelease) {
  auto bad = CudaCatalog::from_files({{"cuda-12.4.1.json", "{}"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(contains(bad.error().message, "redistrib_<X.Y.Z>.json"));
  auto twice = CudaCatalog::from_files({{"a/redistrib_12.4.1.json", "{}"}, {"b/redistrib_12.4.1.json", "{}"}});
  ASSERT_FALSE(twice.ok());
  EXPECT_TRUE(contains(twice.error().message, "two CUDA redistrib manifests for release 12.4.1"));
  auto broken = CudaCatalog::from_files({{"redistrib_12.4.1.json", "{\"cuda_cudart\": "}});
  ASSERT_TRUE(broken.ok());
  auto r = broken->release(*model::Version::parse("12.4.1"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().where ? r.error().where->file : r.error().message, "redistrib_12.4.1.json"));
}

TEST(CudaCatalog, EverySetResolvesForEveryReleaseAndPlatformItCovers) {
  const auto& cat = CudaCatalog::embedded();
  int resolved = 0;
  for (const auto& v : cat.releases()) {
    const auto& r = release(v.text());
    for (Platform p : {Platform::linux_x86_64, Platform::linux_sbsa, Platform::windows_x86_64, Platform::linux_aarch64}) {
      bool has_cudart = false;
      for (const auto& c : r.components)
        if (c.id == "cuda_cudart" && knowledge::archive_for(c, p)) has_cudart = true;
      if (!has_cudart) {
        EXPECT_EQ(p, Platform::linux_aarch64) << v.text() << ": only Jetson builds are missing from some releases";
        continue;
      }
      for (const char* set : {"runtime", "devel", "torch"}) {
        auto res = resolve(v.text(), p, {set});
        EXPECT_TRUE(res.problems.empty()) << v.text() << " " << model::to_string(p) << " " << set << ": " << res.problems.front().message;
        for (const auto& c : res.components) {
          ASSERT_NE(c.archive, nullptr);
          EXPECT_EQ(c.via, set);
        }
        ++resolved;
      }
    }
  }
  EXPECT_GT(resolved, 300);
}

TEST(CudaCatalog, SetsFollowTheReleaseMajorAndPlatform) {
  auto rt = resolve("12.4.1", Platform::linux_x86_64, {"runtime"});
  EXPECT_EQ(ids(rt), (std::vector<std::string>{"cuda_cudart", "libcublas", "cuda_nvrtc"}));
  EXPECT_EQ(rt.components[0].component->version.text(), "12.4.127");

  auto dev12 = ids(resolve("12.4.1", Platform::linux_x86_64, {"devel"}));
  EXPECT_TRUE(has(dev12, "cuda_nvcc") && has(dev12, "cuda_cccl"));
  EXPECT_FALSE(has(dev12, "cuda_crt") || has(dev12, "libnvvm"));  // inside cuda_nvcc before CUDA 13

  auto dev13 = ids(resolve("13.0.2", Platform::linux_x86_64, {"devel"}));
  EXPECT_TRUE(has(dev13, "cuda_crt") && has(dev13, "libnvvm") && has(dev13, "cuda_culibos"));
  auto dev13w = ids(resolve("13.0.2", Platform::windows_x86_64, {"devel"}));
  EXPECT_TRUE(has(dev13w, "cuda_crt") && has(dev13w, "libnvvm"));
  EXPECT_FALSE(has(dev13w, "cuda_culibos"));  // Linux only: optional

  auto torch11 = ids(resolve("11.8.0", Platform::linux_x86_64, {"torch"}));
  EXPECT_EQ(torch11.size(), 9u);
  EXPECT_FALSE(has(torch11, "libnvjitlink"));
  auto torch12 = ids(resolve("12.8.1", Platform::linux_x86_64, {"torch"}));
  EXPECT_TRUE(has(torch12, "libnvjitlink") && has(torch12, "libcufile"));
  EXPECT_FALSE(has(ids(resolve("12.8.1", Platform::windows_x86_64, {"torch"})), "libcufile"));
}

// NVIDIA renamed CCCL's component (cuda_cccl up to 13.2, cccl from 13.3): the devel set names it
// as a user would, and follows the release's own key.
TEST(CudaCatalog, TheDevelSetFollowsTheCcclRename) {
  auto before = ids(resolve("13.2.2", Platform::linux_x86_64, {"devel"}));
  EXPECT_TRUE(has(before, "cuda_cccl")) << testing::PrintToString(before);
  auto after = resolve("13.3.0", Platform::linux_x86_64, {"devel"});
  EXPECT_TRUE(after.problems.empty()) << after.problems.front().message;
  EXPECT_TRUE(has(ids(after), "cccl") && !has(ids(after), "cuda_cccl")) << testing::PrintToString(ids(after));
  for (const auto& c : after.components) {
    if (c.component->id == "cccl") {
      EXPECT_EQ(c.component->version.text(), "13.3.3.3.1");
    }
  }
  // the user's own spellings reach it too
  auto named = resolve("13.4.2", Platform::windows_x86_64, {"cccl", "cudart"});
  EXPECT_TRUE(named.problems.empty()) << named.problems.front().message;
  EXPECT_EQ(ids(named), (std::vector<std::string>{"cccl", "cuda_cudart"}));
}

// cuda_compat from 13.1 is built per CUDA release: one archive per variant under each platform.
TEST(CudaCatalog, ComponentsBuiltPerCudaVariantAreRead) {
  const auto& r = release("13.1.0");
  const format::CudaComponent* compat = nullptr;
  for (const auto& c : r.components)
    if (c.id == "cuda_compat") compat = &c;
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->version.text(), "590.44.01");
  const auto* a = knowledge::archive_for(*compat, Platform::linux_x86_64);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->variant, "cuda13.1");
  EXPECT_EQ(a->relative_path, "cuda_compat/linux-x86_64/cuda_compat-linux-x86_64-590.44.01_cuda13.1-archive.tar.xz");
  EXPECT_EQ(a->sha256.size(), 64u);
  EXPECT_GT(a->size, 0u);
}

// Windows on Arm (13.4.x) is a platform of its own: 34 components, the runtime among them.
TEST(CudaCatalog, WindowsOnArmArchivesAreListedUnderTheirKey) {
  const auto& r = release("13.4.1");
  int arm = 0;
  for (const auto& c : r.components)
    for (const auto& a : c.archives)
      if (a.platform_key == "windows-arm64") {
        ++arm;
        EXPECT_EQ(a.platform, Platform::windows_arm64);
        EXPECT_EQ(a.relative_path.rfind(c.id + "/windows-arm64/", 0), 0u) << a.relative_path;
      }
  EXPECT_EQ(arm, 34);
  auto runtime = resolve("13.4.1", Platform::windows_arm64, {"runtime"});
  EXPECT_TRUE(runtime.problems.empty());
  ASSERT_FALSE(runtime.components.empty());
  EXPECT_EQ(runtime.components[0].component->id, "cuda_cudart");
}

TEST(CudaCatalog, NamesAliasesAndDuplicates) {
  auto r = resolve("12.1.1", Platform::linux_x86_64, {"runtime", "cudart", "cufft", "libcurand", "nvjitlink"});
  EXPECT_TRUE(r.problems.empty());
  EXPECT_EQ(ids(r), (std::vector<std::string>{"cuda_cudart", "libcublas", "cuda_nvrtc", "libcufft", "libcurand", "libnvjitlink"}));
  EXPECT_EQ(r.components[0].via, "runtime");  // the first name that brings a component keeps it
  EXPECT_EQ(r.components[3].via, "cufft");
  EXPECT_EQ(r.components[3].index, 2u);
  // component versions are their own, not the release's
  EXPECT_EQ(r.components[0].component->version.text(), "12.1.105");
}

TEST(CudaCatalog, ReportsWhatCannotBeProvisionedWithWhatExists) {
  auto r = resolve("12.4.1", Platform::windows_x86_64, {"cudnn", "cuda_gdb", "cudart"});
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_EQ(r.problems[0].index, 0u);
  EXPECT_EQ(r.problems[0].message, "\"cudnn\" is not a component of CUDA 12.4.1");
  EXPECT_TRUE(contains(r.problems[0].hint, "cuda_cudart")) << r.problems[0].hint;
  EXPECT_TRUE(contains(r.problems[0].hint, "sets: runtime, devel, torch")) << r.problems[0].hint;
  EXPECT_EQ(r.problems[1].index, 1u);
  EXPECT_TRUE(contains(r.problems[1].message, "cuda_gdb is not shipped for windows-x86_64 in CUDA 12.4.1")) << r.problems[1].message;
  EXPECT_TRUE(contains(r.problems[1].message, "linux-x86_64")) << r.problems[1].message;
  EXPECT_FALSE(contains(r.problems[1].hint, "cuda_gdb")) << "the list is of what exists for the platform";
  EXPECT_EQ(ids(r), (std::vector<std::string>{"cuda_cudart"}));

  // a set whose required member the platform lacks (CUDA 13 has no Jetson build at all)
  auto jetson = resolve("13.0.2", Platform::linux_aarch64, {"runtime"});
  EXPECT_EQ(jetson.problems.size(), 3u);
  EXPECT_TRUE(contains(jetson.problems[0].message, "set \"runtime\" needs cuda_cudart")) << jetson.problems[0].message;
}

TEST(CudnnRedistribs, AgreeWithTheKnowledgeBase) {
  const auto& kb = knowledge::KnowledgeBase::embedded();
  fs::path dir = testing_support::source_dir() / "data" / "redist" / "cudnn";
  int files = 0, archives = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    auto text = util::read_file(e.path());
    ASSERT_TRUE(text.ok());
    auto r = format::parse_redistrib(*text, e.path().string());
    ASSERT_TRUE(r.ok()) << r.error().message;
    ++files;
    for (const auto& a : r->archives) {
      // by file name: one of NVIDIA's files can hold two builds (9.15.0.57 for CUDA 12, 9.15.0.58 for 13)
      const model::CudnnArchiveFact* f = kb.cudnn_archive_by_file(util::basename_of(a.relative_path));
      ASSERT_NE(f, nullptr) << e.path() << " " << model::to_string(a.platform) << " cuda" << a.cuda;
      EXPECT_EQ(f->cuda, a.cuda);
      EXPECT_EQ(f->platform, a.platform);
      EXPECT_EQ(f->version.major(), r->version.major());
      EXPECT_EQ(f->sha256, a.sha256);
      ASSERT_TRUE(f->size.has_value());
      EXPECT_EQ(*f->size, a.size);
      EXPECT_EQ(f->md5, a.md5);
      EXPECT_EQ(util::basename_of(f->url), util::basename_of(a.relative_path));
      ++archives;
    }
  }
  EXPECT_EQ(files, 48);
  EXPECT_GT(archives, 300);
  // releases the facts lacked, filled from NVIDIA's files
  for (const char* v : {"9.10.2.21", "8.9.2.26", "9.5.0.50", "8.6.0.163"})
    EXPECT_FALSE(kb.cudnn_archives(*model::Version::parse(v)).empty()) << v;
  EXPECT_NE(kb.cudnn_archive(*model::Version::parse("9.10.2.21"), 12, Platform::linux_aarch64), nullptr);
  // the two builds of 9.15.0, each under its own version
  const auto* b57 = kb.cudnn_archive(*model::Version::parse("9.15.0.57"), 12, Platform::linux_x86_64);
  const auto* b58 = kb.cudnn_archive(*model::Version::parse("9.15.0.58"), 13, Platform::linux_x86_64);
  ASSERT_NE(b57, nullptr);
  ASSERT_NE(b58, nullptr);
  EXPECT_TRUE(b57->size.has_value());
  EXPECT_EQ(kb.cudnn_archive(*model::Version::parse("9.15.0.57"), 13, Platform::linux_x86_64), nullptr);
}

}  // namespace cuda_catalog_test
