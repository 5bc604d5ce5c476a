// The GPU knowledge (data/knowledge/gpus.toml, gpu-support.toml) against the verbatim excerpts of
// its sources in data/sources/gpu/: every `source` names an excerpt by its first line, and every
// value is found in an excerpt the row cites (a model's name next to its compute capability, each
// architecture of an nvcc, cuDNN or torch list). Also what the data must hold for the rules to be
// sound: one compute capability per name, lists in the form the rules read.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "knowledge/knowledge_base.hpp"
#include "test_support.hpp"

namespace gpu_facts_test {

namespace {
namespace fs = std::filesystem;
using model::Version;

// "NVIDIA  GeForce\nRTX 4090" -> "geforce rtx 4090"
std::string norm(const std::string& s) {
  std::string out;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isspace(c)) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += static_cast<char>(std::tolower(c));
    }
  }
  std::string::size_type at;
  while ((at = out.find("nvidia ")) != std::string::npos) out.erase(at, 7);
  return out;
}

struct Excerpt {
  std::string text;                // the body, normalized
  std::vector<std::string> lines;  // its lines, normalized
};

class GpuFacts : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fs::path dir = testing_support::source_dir() / "data" / "sources" / "gpu";
    for (const auto& e : fs::directory_iterator(dir)) {
      std::string t = testing_support::read_text(e.path());
      auto nl = t.find('\n');
      ASSERT_EQ(t.rfind("source: ", 0), 0u) << e.path() << " must start with 'source: '";
      auto sep = t.find("\n---\n");
      ASSERT_NE(sep, std::string::npos) << e.path() << " has no '---' line before its excerpt";
      std::string source = t.substr(8, nl - 8);
      while (!source.empty() && source.back() == ' ') source.pop_back();
      Excerpt x;
      std::string body = t.substr(sep + 5);
      x.text = norm(body);
      std::size_t a = 0;
      while (a <= body.size()) {
        auto b = body.find('\n', a);
        if (b == std::string::npos) b = body.size();
        x.lines.push_back(norm(body.substr(a, b - a)));
        a = b + 1;
      }
      excerpts()[source].push_back(std::move(x));
    }
  }
  static std::map<std::string, std::vector<Excerpt>>& excerpts() {
    static std::map<std::string, std::vector<Excerpt>> m;
    return m;
  }
  const model::Facts& f = knowledge::KnowledgeBase::embedded().facts();

  static void expect_sources(const model::Sources& s, const std::string& row) {
    EXPECT_FALSE(s.empty()) << row;
    for (const auto& src : s)
      EXPECT_TRUE(excerpts().count(src)) << row << ": no excerpt in data/sources/gpu/ has the source line \"" << src << "\"";
  }
  // `re` found in some excerpt of the row's sources
  static bool cited(const model::Sources& s, const std::regex& re) {
    for (const auto& src : s) {
      auto it = excerpts().find(src);
      if (it == excerpts().end()) continue;
      for (const auto& x : it->second)
        if (std::regex_search(x.text, re)) return true;
    }
    return false;
  }
};

std::string esc(const std::string& s) {
  static const std::regex k_special(R"([.^$|()\[\]{}*+?\\])");
  return std::regex_replace(s, k_special, R"(\$&)");
}

// 8.6 as the sources write it: "8.6", sm_86, compute_86, and (bare: in CMake/Python lists) 86.
// A footnote digit glued to the value ("9.03" for 9.0 with note 3) is allowed, a longer number is not.
std::regex cc_re(const Version& cc, bool bare) {
  std::string digits = std::to_string(cc.major()) + std::to_string(cc.minor());
  std::string alts = esc(cc.text()) + "|sm_" + digits + "|compute_" + digits + (bare ? "|" + digits : "");
  return std::regex("(^|[^0-9.])(" + alts + ")(?!\\.[0-9]|[0-9][0-9]" + (bare ? "|[0-9]" : "") + ")");
}

TEST_F(GpuFacts, EveryModelIsFoundNearItsComputeCapabilityInACitedExcerpt) {
  ASSERT_GT(f.gpu_models.size(), 150u);
  for (const auto& g : f.gpu_models) {
    expect_sources(g.source, g.name);
    std::vector<std::string> names;
    if (!g.listed_as.empty()) {
      names.push_back(norm(g.listed_as));
      // the driver's name itself is in a cited excerpt (its product table)
      EXPECT_TRUE(cited(g.source, std::regex(esc(norm(g.name))))) << g.name;
    } else {
      names.push_back(norm(g.name));
      for (const auto& a : g.aliases) names.push_back(norm(a));
    }
    // Where the name is on a line with compute capabilities (a table row), its own must be among
    // them; on a line without any, the nearest one above (a table's continuation rows) or below
    // (a comment above a record's field); a name broken over lines, the nearest before it.
    static const std::regex k_cc("(^|[^0-9.])([0-9]{1,2}\\.[0-9])(?![0-9.])|sm_([0-9]{2,3})(?![0-9])");
    auto ccs_in = [](const std::string& text) {
      std::vector<std::string> out;
      for (auto t = std::sregex_iterator(text.begin(), text.end(), k_cc); t != std::sregex_iterator(); ++t) {
        if ((*t)[2].matched) {
          out.push_back((*t)[2].str());
        } else {
          std::string d = (*t)[3].str();
          out.push_back(d.substr(0, d.size() - 1) + "." + d.substr(d.size() - 1));
        }
      }
      return out;
    };
    auto join = [](const std::vector<std::string>& lines, std::size_t from, std::size_t to) {
      std::string out;
      for (std::size_t i = from; i < to && i < lines.size(); ++i) out += lines[i] + " ";
      return out;
    };
    const std::string want = g.cc.text();
    bool found = false;
    for (const auto& src : g.source) {
      auto it = excerpts().find(src);
      if (it == excerpts().end()) continue;
      for (const auto& x : it->second)
        for (const auto& n : names) {
          std::regex name("(^|[^a-z0-9])" + esc(n) + "(?![a-z0-9])");
          bool on_a_line = false;
          for (std::size_t i = 0; i < x.lines.size(); ++i) {
            if (!std::regex_search(x.lines[i], name)) continue;
            on_a_line = true;
            auto on = ccs_in(x.lines[i]);
            if (!on.empty()) {
              found = found || std::find(on.begin(), on.end(), want) != on.end();
              continue;
            }
            auto above = ccs_in(join(x.lines, i > 8 ? i - 8 : 0, i)), below = ccs_in(join(x.lines, i + 1, i + 9));
            found = found || (!above.empty() && above.back() == want) || (!below.empty() && below.front() == want);
          }
          for (auto m = std::sregex_iterator(x.text.begin(), x.text.end(), name); !on_a_line && !found && m != std::sregex_iterator();
               ++m) {
            const auto at = static_cast<std::size_t>(m->position());
            auto before = ccs_in(x.text.substr(at > 600 ? at - 600 : 0, at > 600 ? 600 : at));
            found = !before.empty() && before.back() == want;
          }
        }
    }
    EXPECT_TRUE(found) << g.name << " (" << g.cc.text() << "): no cited excerpt shows the name with its compute capability";
  }
}

TEST_F(GpuFacts, EveryNameDenotesOneComputeCapabilityAndEveryArchitectureIsKnown) {
  const auto& kb = knowledge::KnowledgeBase::embedded();
  std::set<std::string> segments{"geforce", "workstation", "datacenter", "jetson"};
  for (const auto& g : f.gpu_models) {
    EXPECT_TRUE(segments.count(g.segment)) << g.name;
    EXPECT_NE(kb.gpu_arch(g.cc), nullptr) << g.name << ": compute capability " << g.cc.text() << " has no [[arch]] row";
    std::vector<std::string> names{g.name};
    names.insert(names.end(), g.aliases.begin(), g.aliases.end());
    for (const auto& n : names) {
      auto rows = kb.gpu_models(n);
      ASSERT_FALSE(rows.empty()) << n;
      for (const auto* r : rows) EXPECT_EQ(r->cc, g.cc) << "\"" << n << "\" names " << r->name << " (" << r->cc.text() << ") too";
    }
  }
  for (const auto& a : f.gpu_archs) {
    expect_sources(a.source, "arch " + a.cc.text());
    EXPECT_TRUE(cited(a.source, cc_re(a.cc, false))) << "arch " << a.cc.text();
    if (!a.name.empty()) {
      EXPECT_TRUE(cited(a.source, std::regex(esc(norm(a.name))))) << "arch " << a.cc.text() << " " << a.name;
    }
    for (const auto& t : a.targets) {
      bool specific = t.back() == 'a' || t.back() == 'f';
      EXPECT_TRUE(cited(a.source, specific ? std::regex("(^|[^0-9a-z])" + esc(t) + "(?![0-9a-z])") : cc_re(a.cc, true)))
          << "arch " << a.cc.text() << " target " << t;
    }
  }
}

TEST_F(GpuFacts, EverySupportListIsFoundInACitedExcerpt) {
  ASSERT_FALSE(f.cudnn_arch.empty());
  for (const auto& c : f.cudnn_arch) {
    std::string row = "cudnn " + c.from.text() + " cuda" + std::to_string(c.cuda_major);
    expect_sources(c.source, row);
    EXPECT_TRUE(cited(c.source, cc_re(c.min_cc, false))) << row << " min_cc " << c.min_cc.text();
    for (const auto& v : c.ccs) EXPECT_TRUE(cited(c.source, cc_re(v, false))) << row << " " << v.text();
    if (!c.ccs.empty()) {
      EXPECT_EQ(*std::min_element(c.ccs.begin(), c.ccs.end()), c.min_cc) << row;
    }
  }
  ASSERT_FALSE(f.nvcc_archs.empty());
  for (const auto& n : f.nvcc_archs) {
    std::string row = "nvcc " + n.cuda.text();
    expect_sources(n.source, row);
    for (const auto* list : {&n.sass, &n.ptx, &n.deprecated, &n.removed_since})
      for (const auto& v : *list) EXPECT_TRUE(cited(n.source, cc_re(v, true))) << row << " " << v.text();
    for (const auto& v : n.deprecated)
      EXPECT_NE(std::find(n.sass.begin(), n.sass.end(), v), n.sass.end()) << row << ": deprecated " << v.text() << " is not compiled";
    for (const auto& v : n.family) EXPECT_TRUE(cited(n.source, std::regex("(^|[^0-9])" + esc(v) + "(?![0-9a-z])"))) << row << " " << v;
  }
  ASSERT_GT(f.torch_archs.size(), 50u);
  std::set<std::string> seen;
  for (const auto& t : f.torch_archs) {
    std::string row = "torch " + t.release.text() + " " + t.variant + " " + model::to_string(t.platform);
    EXPECT_TRUE(seen.insert(row).second) << row << " twice";
    expect_sources(t.source, row);
    EXPECT_FALSE(t.sass.empty()) << row;
    for (const auto* list : {&t.sass, &t.ptx})
      for (const auto& v : *list) EXPECT_TRUE(cited(t.source, cc_re(v, true))) << row << " " << v.text();
  }
}

TEST_F(GpuFacts, OtherFrameworksArchitecturesAreInTheirExcerpts) {
  std::set<std::string> names;
  for (const auto& a : f.framework_archs) {
    std::string row = a.framework + " " + a.from.text() + " cuda" + std::to_string(a.cuda_major) + " " + model::to_string(a.platform);
    names.insert(a.framework);
    expect_sources(a.source, row);
    EXPECT_FALSE(a.sass.empty() && a.sass_a.empty()) << row;
    if (a.until) {
      EXPECT_LT(a.from, *a.until) << row;
    }
    for (const auto* list : {&a.sass, &a.ptx})
      for (const auto& v : *list) EXPECT_TRUE(cited(a.source, cc_re(v, true))) << row << " " << v.text();
    // 90a as CMake writes it (90a-real, 90a), or sm_90a / compute_90a
    for (const auto* list : {&a.sass_a, &a.ptx_a})
      for (const auto& v : *list) {
        std::string digits = std::to_string(v.major()) + std::to_string(v.minor()) + "a";
        EXPECT_TRUE(cited(a.source, std::regex("(^|[^0-9])" + digits + "(?![0-9a-z])"))) << row << " " << v.text() << "a";
      }
    for (const auto& b : f.framework_archs)  // one row per release, CUDA major and platform
      if (&b < &a && b.framework == a.framework && b.cuda_major == a.cuda_major && b.platform == a.platform) {
        EXPECT_TRUE((b.until && !(a.from < *b.until)) || (a.until && !(b.from < *a.until))) << row << " overlaps " << b.from.text();
      }
  }
  EXPECT_EQ(names, (std::set<std::string>{"onnxruntime-gpu", "tensorflow"}));
}

TEST_F(GpuFacts, OnnxRuntimeBuildsAfterTheFactsTableAreInTheirExcerpts) {
  int rows = 0;
  for (const auto& o : f.onnxruntime) {
    bool excerpted = std::all_of(o.source.begin(), o.source.end(), [](const std::string& s) { return excerpts().count(s) > 0; });
    if (!excerpted) continue;  // the facts' rows, checked against the facts file
    ++rows;
    std::string row = "onnxruntime " + o.first.text() + "-" + o.last.text() + " cuda" + std::to_string(o.cuda_major);
    EXPECT_TRUE(cited(o.source, std::regex("cuda " + esc(o.cuda) + "|cuda_version " + esc(o.cuda)))) << row << " " << o.cuda;
    EXPECT_TRUE(cited(o.source, std::regex("cudnn[^0-9]{0,12}" + std::to_string(o.cudnn_major) + "(\\.|~)"))) << row;
    EXPECT_FALSE(o.last < o.first) << row;
  }
  EXPECT_GE(rows, 4);
}

TEST_F(GpuFacts, TorchWheelsBesideReleaseMdAreInTheirExcerpts) {
  int rows = 0;
  for (const auto& t : f.torch) {
    if (t.wheels_source.empty()) continue;
    ++rows;
    std::string row = "torch-wheels " + t.release.text();
    expect_sources(t.wheels_source, row);
    for (const auto& v : t.extra_variants) {
      // cu129 as the sources write it: cu129, or CUDA 12.9 in a build matrix
      std::string ver = v.substr(2, v.size() - 3) + "." + v.substr(v.size() - 1);
      EXPECT_TRUE(cited(t.wheels_source, std::regex(esc(v) + "|" + esc(ver)))) << row << " " << v;
    }
    for (const auto& v : t.linux_only)
      EXPECT_TRUE(std::find(t.variants.begin(), t.variants.end(), v) != t.variants.end() ||
                  std::find(t.extra_variants.begin(), t.extra_variants.end(), v) != t.extra_variants.end())
          << row << ": linux_only " << v << " is not a published variant";
  }
  EXPECT_GE(rows, 5);
}

TEST_F(GpuFacts, EveryPtxIsaReleaseIsInItsExcerpt) {
  ASSERT_GE(f.ptx_isa.size(), 20u);
  for (const auto& x : f.ptx_isa) {
    const std::string row = "ptx " + x.isa.text();
    expect_sources(x.source, row);
    // "9.1": (13, 1),
    std::regex re("\"" + esc(x.isa.text()) + "\": \\(" + std::to_string(x.cuda.major()) + ", " + std::to_string(x.cuda.minor()) + "\\)");
    EXPECT_TRUE(cited(x.source, re)) << row << " -> CUDA " << x.cuda.text();
  }
  const auto& kb = knowledge::KnowledgeBase::embedded();
  ASSERT_NE(kb.ptx_isa(*Version::parse("8.6")), nullptr);
  EXPECT_EQ(kb.ptx_isa(*Version::parse("8.6"))->cuda, Version::parse("12.7"));  // ISA 8.6 came with CUDA 12.7
  EXPECT_EQ(kb.ptx_isa(*Version::parse("9.9")), nullptr);
  EXPECT_EQ(kb.newest_ptx_isa()->isa, Version::parse("9.1"));
}

TEST(GpuKernels, NativeBinaryCompatiblePtxOrNone) {
  auto v = [](const char* s) { return *Version::parse(s); };
  using knowledge::KernelFit;
  std::vector<Version> sass{v("7.5"), v("8.0"), v("8.6"), v("9.0")}, ptx{v("9.0")};
  EXPECT_EQ(knowledge::kernels_for(v("8.6"), sass, ptx).fit, KernelFit::native);
  auto k = knowledge::kernels_for(v("8.9"), sass, ptx);  // sm_86 cubins run on 8.9
  EXPECT_EQ(k.fit, KernelFit::compatible);
  EXPECT_EQ(k.via, v("8.6"));
  k = knowledge::kernels_for(v("12.0"), sass, ptx);  // only compute_90 PTX, JIT-compiled
  EXPECT_EQ(k.fit, KernelFit::ptx);
  EXPECT_EQ(k.via, v("9.0"));
  EXPECT_EQ(knowledge::kernels_for(v("7.0"), sass, ptx).fit, KernelFit::none);  // nothing as old
  EXPECT_EQ(knowledge::kernels_for(v("12.0"), sass, {}).fit, KernelFit::none);  // another major, no PTX
  EXPECT_EQ(knowledge::kernels_for(v("10.3"), {v("10.0")}, {}).fit, KernelFit::compatible);
}

TEST(GpuKernels, ArchitectureSpecificTargetsRunOnTheirOwnArchitectureOnly) {
  auto v = [](const char* s) { return *Version::parse(s); };
  using knowledge::KernelFit;
  model::FrameworkArchs b;  // "75;80;90a;100a+120" and compute_90a
  b.sass = {v("7.5"), v("8.0")};
  b.sass_a = {v("9.0"), v("10.0")};
  b.ptx = {v("12.0")};
  EXPECT_EQ(knowledge::kernels_for(v("9.0"), b).fit, KernelFit::native);
  EXPECT_EQ(knowledge::kernels_for(v("10.0"), b).fit, KernelFit::native);
  EXPECT_EQ(knowledge::kernels_for(v("10.3"), b).fit, KernelFit::none);  // sm_100a cubins do not run on 10.3
  EXPECT_EQ(knowledge::kernels_for(v("8.6"), b).fit, KernelFit::compatible);
  auto k = knowledge::kernels_for(v("12.1"), b);
  EXPECT_EQ(k.fit, KernelFit::ptx);
  EXPECT_EQ(k.via, v("12.0"));
  b.ptx.clear();
  b.ptx_a = {v("9.0")};
  EXPECT_EQ(knowledge::kernels_for(v("12.0"), b).fit, KernelFit::none);  // compute_90a PTX is for Hopper only
  b.sass_a.clear();
  k = knowledge::kernels_for(v("9.0"), b);
  EXPECT_EQ(k.fit, KernelFit::ptx);
  EXPECT_EQ(k.via, v("9.0"));
}

}  // namespace

}  // namespace gpu_facts_test
