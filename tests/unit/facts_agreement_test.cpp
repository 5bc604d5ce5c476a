// The embedded knowledge agrees with the shared, sourced facts file wherever both have an entry.
// Reads ../shared/data/gpu-stack-facts.toml directly with toml++; skipped when it is absent.
#include <gtest/gtest.h>

#include <toml++/toml.h>
#include <algorithm>
#include <set>

#include <filesystem>

#include "knowledge/knowledge_base.hpp"
#include "test_support.hpp"

namespace facts_agreement_test {

namespace {

class FactsAgreement : public ::testing::Test {
 protected:
  void SetUp() override {
    auto path = testing_support::shared_dir() / "data" / "gpu-stack-facts.toml";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "no shared facts file at " << path;
    m_facts = toml::parse_file(path.string());
  }
  toml::table m_facts;
  const knowledge::KnowledgeBase& kb = knowledge::KnowledgeBase::embedded();
};

std::string str(const toml::node_view<const toml::node>& n) { return n.value_or(std::string()); }

bool from_redistrib(const model::CudnnArchiveFact& a) {
  return std::any_of(a.source.begin(), a.source.end(),
                     [](const std::string& s) { return s.find("data/redist/cudnn/redistrib_") != std::string::npos; });
}

}  // namespace

TEST_F(FactsAgreement, EveryCudnnArchiveMatchesHashSizeAndUrl) {
  int compared = 0, in_facts = 0;
  std::set<std::string> in_facts_files;
  const toml::table* versions = m_facts["cudnn"]["archives"].as_table();
  ASSERT_NE(versions, nullptr);
  for (auto&& [ver, variants] : *versions)
    for (auto&& [cuda, platforms] : *variants.as_table())
      for (auto&& [platform, entry] : *platforms.as_table()) {
        ++in_facts;
        const auto& e = *entry.as_table();
        auto v = model::Version::parse(ver.str());
        auto p = model::parse_platform(platform.str());
        ASSERT_TRUE(v && p) << ver.str() << " " << platform.str();
        int major = std::stoi(std::string(cuda.str()).substr(4));
        const auto* a = kb.cudnn_archive(*v, major, *p);
        ASSERT_NE(a, nullptr) << ver.str() << " " << cuda.str() << " " << platform.str() << " missing from the knowledge base";
        in_facts_files.insert(a->file);
        EXPECT_EQ(a->sha256, str(toml::node_view<const toml::node>(e["sha256"].node())));
        EXPECT_EQ(a->url, str(toml::node_view<const toml::node>(e["url"].node())));
        if (auto size = e["size"].value<std::int64_t>()) {
          ASSERT_TRUE(a->size.has_value()) << a->file;
          EXPECT_EQ(*a->size, static_cast<std::uint64_t>(*size)) << a->file;
        } else if (a->size) {
          // the facts record no size: the knowledge base's can only come from NVIDIA's manifest
          EXPECT_TRUE(from_redistrib(*a)) << a->file << ": a size the facts do not record, without NVIDIA's manifest as a source";
        }
        ++compared;
      }
  EXPECT_EQ(compared, in_facts);
  // The other archives come from NVIDIA's manifests in data/redist/cudnn alone.
  EXPECT_GT(kb.facts().cudnn_archives.size(), static_cast<std::size_t>(compared));
  for (const auto& a : kb.facts().cudnn_archives)
    if (!in_facts_files.count(a.file)) {
      EXPECT_TRUE(from_redistrib(a)) << a.file;
    }
}

TEST_F(FactsAgreement, EveryDriverMinimumMatches) {
  const toml::table* rows = m_facts["cuda"]["driver_minimums"].as_table();
  ASSERT_NE(rows, nullptr);
  int compared = 0;
  std::set<std::string> in_facts;
  for (auto&& [cuda, entry] : *rows) {
    in_facts.insert(std::string(cuda.str()));
    const auto& e = *entry.as_table();
    const auto* r = kb.driver_release(*model::Version::parse(cuda.str()));
    ASSERT_NE(r, nullptr) << cuda.str();
    ASSERT_EQ(r->cuda.text(), std::string(cuda.str()));
    std::string lin = e["linux_x86_64_min"].value_or(std::string());
    std::string win = e["windows_x86_64_min"].value_or(std::string());
    if (lin == "unknown" || lin.empty())
      EXPECT_FALSE(r->linux.has_value());
    else
      EXPECT_EQ(r->linux->text(), lin) << cuda.str();
    if (win == "N/A")
      EXPECT_TRUE(r->windows_na) << cuda.str();
    else if (win == "unknown" || win.empty())
      EXPECT_FALSE(r->windows.has_value());
    else
      EXPECT_EQ(r->windows->text(), win) << cuda.str();
    ++compared;
  }
  // A release the facts do not have yet was added by hand from NVIDIA's own table, and says so.
  EXPECT_GE(kb.facts().driver_releases.size(), static_cast<std::size_t>(compared));
  for (const auto& r : kb.facts().driver_releases) {
    if (in_facts.count(r.cuda.text())) continue;
    bool cites_nvidia = false;
    for (const auto& s : r.source)
      if (s.find("https://docs.nvidia.com/cuda/archive/" + r.cuda.text() + "/cuda-toolkit-release-notes/") != std::string::npos)
        cites_nvidia = true;
    EXPECT_TRUE(cites_nvidia) << r.cuda.text()
                              << ": a driver minimum the facts do not have, without NVIDIA's release notes of that release as a source";
    EXPECT_NE(r.note.find("added by hand"), std::string::npos) << r.cuda.text() << ": " << r.note;
  }
}

TEST_F(FactsAgreement, TorchVariantsAndBundledCudnnMatch) {
  const toml::table* rel = m_facts["frameworks"]["pytorch"]["releases"].as_table();
  ASSERT_NE(rel, nullptr);
  for (auto&& [release, entry] : *rel) {
    const auto* t = kb.torch_release(*model::Version::parse(std::string(release.str()) + ".0"));
    ASSERT_NE(t, nullptr) << release.str();
    const auto& e = *entry.as_table();
    std::vector<std::string> variants;
    for (auto&& x : *e["wheel_variants"].as_array()) variants.push_back(x.value_or(std::string()));
    EXPECT_EQ(t->variants, variants) << release.str();
    for (auto&& [variant, cudnn] : *e["cudnn_by_variant"].as_table())
      EXPECT_EQ(t->cudnn.at(std::string(variant.str())).text(), cudnn.value_or(std::string())) << release.str();
  }
}

TEST_F(FactsAgreement, TensorflowBuildsMatch) {
  for (const char* os : {"linux_gpu", "windows_gpu"}) {
    const toml::table* rows = m_facts["frameworks"]["tensorflow"][os].as_table();
    ASSERT_NE(rows, nullptr);
    for (auto&& [name, entry] : *rows) {
      std::string n(name.str());
      auto dash = n.rfind('-');
      auto ver = model::Version::parse(n.substr(dash + 1));
      ASSERT_TRUE(ver) << n;
      auto builds = kb.tensorflow_builds(*ver, std::string(os) == "linux_gpu" ? model::Os::linux : model::Os::windows);
      bool found = false;
      for (auto* b : builds)
        if (b->version == *ver) {
          found = true;
          EXPECT_EQ(b->cudnn.text(), entry.as_table()->get("cudnn")->value_or(std::string())) << n;
          EXPECT_EQ(b->cuda.text(), entry.as_table()->get("cuda")->value_or(std::string())) << n;
        }
      EXPECT_TRUE(found) << n;
    }
  }
}

TEST_F(FactsAgreement, CondaForgeVersionsMatch) {
  const toml::array* versions = m_facts["conda"]["conda_forge_cudnn"]["versions_in_feedstock_history"].as_array();
  ASSERT_NE(versions, nullptr);
  for (auto&& x : *versions) {
    auto v = model::Version::parse(x.value_or(std::string()));
    ASSERT_TRUE(v);
    EXPECT_NE(kb.conda_forge_cudnn(*v), nullptr) << v->text();
  }
  EXPECT_EQ(kb.facts().conda_forge_cudnn.size(), versions->size());
}

TEST_F(FactsAgreement, DockerTagsMatch) {
  const toml::table* tags = m_facts["docker_tags"]["tags"].as_table();
  ASSERT_NE(tags, nullptr);
  for (auto&& [tag, entry] : *tags) {
    const auto* t = kb.docker_tag(tag.str());
    ASSERT_NE(t, nullptr) << tag.str();
    EXPECT_EQ(t->cudnn.text(), entry.as_table()->get("cudnn_version")->value_or(std::string()));
  }
  EXPECT_EQ(kb.facts().docker_tags.size(), tags->size());
}

}  // namespace facts_agreement_test
