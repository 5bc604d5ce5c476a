// The standalone stackpin-convtest goes into NVIDIA's Ubuntu 22.04 CUDA images, which carry none
// of stackpin's libraries and glibc 2.35: read its ELF dynamic section and symbol version needs.
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "model/version.hpp"
#include "test_support.hpp"

namespace convtest_binary_test {

namespace {

struct ElfNeeds {
  std::set<std::string> needed;
  std::set<std::string> versions;  // GLIBC_2.xx and others from .gnu.version_r
};

ElfNeeds read_needs(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string b = ss.str();
  ElfNeeds out;
  if (b.size() < sizeof(Elf64_Ehdr) || std::memcmp(b.data(), ELFMAG, SELFMAG) != 0) return out;
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof eh);
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  for (int i = 0; i < eh.e_shnum; ++i) std::memcpy(&sh[i], b.data() + eh.e_shoff + i * eh.e_shentsize, sizeof(Elf64_Shdr));
  for (const auto& s : sh) {
    if (s.sh_type == SHT_DYNAMIC) {
      const auto& strtab = sh[s.sh_link];
      for (std::size_t off = 0; off + sizeof(Elf64_Dyn) <= s.sh_size; off += sizeof(Elf64_Dyn)) {
        Elf64_Dyn d;
        std::memcpy(&d, b.data() + s.sh_offset + off, sizeof d);
        if (d.d_tag == DT_NULL) break;
        if (d.d_tag == DT_NEEDED) out.needed.insert(b.data() + strtab.sh_offset + d.d_un.d_val);
      }
    }
    if (s.sh_type == SHT_GNU_verneed) {
      const auto& strtab = sh[s.sh_link];
      std::size_t off = s.sh_offset;
      while (true) {
        Elf64_Verneed vn;
        std::memcpy(&vn, b.data() + off, sizeof vn);
        std::size_t aoff = off + vn.vn_aux;
        for (int i = 0; i < vn.vn_cnt; ++i) {
          Elf64_Vernaux va;
          std::memcpy(&va, b.data() + aoff, sizeof va);
          out.versions.insert(b.data() + strtab.sh_offset + va.vna_name);
          aoff += va.vna_next;
        }
        if (!vn.vn_next) break;
        off += vn.vn_next;
      }
    }
  }
  return out;
}

}  // namespace

TEST(ConvtestBinary, NeedsOnlyTheCLibraryAndGlibc235) {
  auto bin = testing_support::binary().parent_path() / "stackpin-convtest";
  ASSERT_TRUE(std::filesystem::exists(bin)) << bin;
  auto needs = read_needs(bin.string());
  ASSERT_FALSE(needs.needed.empty()) << "no dynamic section read from " << bin;
  const std::set<std::string> allowed{"libc.so.6", "libm.so.6", "libdl.so.2", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"};
  for (const auto& n : needs.needed) EXPECT_TRUE(allowed.count(n)) << bin << " needs " << n;
  auto limit = *model::Version::parse("2.35");
  int glibc = 0;
  for (const auto& v : needs.versions) {
    if (v.rfind("GLIBC_", 0) != 0) {
      ADD_FAILURE() << "needs symbol version " << v << " (only glibc's are allowed)";
      continue;
    }
    auto parsed = model::Version::parse(v.substr(6));
    if (!parsed) continue;  // GLIBC_PRIVATE would fail the next line's parse; it is not expected here
    ++glibc;
    EXPECT_LE(*parsed, limit) << "needs " << v << ", newer than Ubuntu 22.04's glibc 2.35";
  }
  EXPECT_GT(glibc, 0);
}

TEST(ConvtestBinary, TheFullStackpinIsNotWhatGoesIntoImages) {
  // sanity of the reader itself: the full binary needs libraries the standalone one must not
  auto needs = read_needs(testing_support::binary().string());
  EXPECT_TRUE(needs.needed.count("libstdc++.so.6")) << "ELF reader found: " << needs.needed.size() << " entries";
}

}  // namespace convtest_binary_test
