// The fatbin reader on ELF and PE files built here byte by byte (every field where nvcc 13 puts
// it), the hostile set (truncated, looping, oversized, overlapping), and the rules that turn the
// targets into a verdict for a GPU. Binaries from the real nvcc are in fatbin_nvcc_test.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/inspect/inspect.hpp"
#include "fixtures.hpp"
#include "model/kernels.hpp"
#include "probe/fatbin.hpp"

namespace fatbin_test {

namespace {

using model::Version;

void put(std::string& b, std::size_t at, std::uint64_t v, int bytes) {
  if (b.size() < at + static_cast<std::size_t>(bytes)) b.resize(at + static_cast<std::size_t>(bytes), '\0');
  for (int i = 0; i < bytes; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}

using Image = fixtures::FatbinImage;
using fixtures::fatbin_container;

struct Sec {
  std::string name;
  std::string bytes;
  std::uint64_t type = 1, flags = 2;  // PROGBITS, ALLOC
};

constexpr std::uint64_t k_base = 0x400000;

// An ELF64 file: header, the sections' bytes (8-aligned), a name table, the section headers.
std::string elf(const std::vector<Sec>& secs) {
  std::string f(64, '\0');
  f.replace(0, 4,
            "\x7f"
            "ELF");
  f[4] = 2;
  f[5] = 1;
  f[6] = 1;
  put(f, 16, 3, 2);
  put(f, 18, 62, 2);
  std::vector<std::uint64_t> offsets;
  for (const auto& s : secs) {
    f.resize((f.size() + 7) & ~std::size_t{7}, '\0');
    offsets.push_back(f.size());
    f += s.bytes;
  }
  std::string names(1, '\0');
  std::vector<std::uint64_t> name_at;
  for (const auto& s : secs) {
    name_at.push_back(names.size());
    names += s.name + '\0';
  }
  name_at.push_back(names.size());
  names += std::string(".shstrtab") + '\0';
  const std::uint64_t names_off = f.size();
  f += names;
  f.resize((f.size() + 7) & ~std::size_t{7}, '\0');
  const std::uint64_t shoff = f.size();
  const std::size_t count = secs.size() + 2;
  f.resize(f.size() + 64 * count, '\0');
  for (std::size_t i = 0; i < secs.size(); ++i) {
    std::size_t h = shoff + 64 * (i + 1);
    put(f, h, name_at[i], 4);
    put(f, h + 4, secs[i].type, 4);
    put(f, h + 8, secs[i].flags, 8);
    put(f, h + 16, offsets[i] + k_base, 8);  // loaded at a fixed distance from its file offset
    put(f, h + 24, offsets[i], 8);
    put(f, h + 32, secs[i].bytes.size(), 8);
  }
  std::size_t h = shoff + 64 * (secs.size() + 1);
  put(f, h, name_at.back(), 4);
  put(f, h + 4, 3, 4);
  put(f, h + 24, names_off, 8);
  put(f, h + 32, names.size(), 8);
  put(f, 40, shoff, 8);
  put(f, 58, 64, 2);
  put(f, 60, count, 2);
  put(f, 62, count - 1, 2);
  return f;
}

// A PE file with one section per entry (raw data 512-aligned, as linkers write it).
std::string pe(const std::vector<Sec>& secs) {
  std::string f(0x80, '\0');
  f[0] = 'M';
  f[1] = 'Z';
  put(f, 0x3c, 0x80, 4);
  f += std::string("PE\0\0", 4);
  std::string coff(20, '\0');
  put(coff, 0, 0x8664, 2);
  put(coff, 2, secs.size(), 2);
  put(coff, 16, 0, 2);  // no optional header
  f += coff;
  const std::size_t table = f.size();
  f.resize(table + 40 * secs.size(), '\0');
  for (std::size_t i = 0; i < secs.size(); ++i) {
    f.resize((f.size() + 511) & ~std::size_t{511}, '\0');
    std::size_t at = f.size();
    f += secs[i].bytes;
    std::size_t raw = (secs[i].bytes.size() + 511) & ~std::size_t{511};
    f.resize(at + raw, '\0');
    std::size_t h = table + 40 * i;
    f.replace(h, std::min<std::size_t>(8, secs[i].name.size()), secs[i].name.substr(0, 8));
    put(f, h + 8, secs[i].bytes.size(), 4);
    put(f, h + 16, raw, 4);
    put(f, h + 20, at, 4);
    put(f, h + 36, 0x40000040, 4);  // initialized data, readable
  }
  return f;
}

std::vector<std::string> names(const model::LibraryKernels& k) {
  std::vector<std::string> out;
  for (const auto& t : k.targets) out.push_back(t.target.name());
  return out;
}

const model::TargetImages& target(const model::LibraryKernels& k, const std::string& name) {
  for (const auto& t : k.targets)
    if (t.target.name() == name) return t;
  ADD_FAILURE() << "no target " << name;
  static model::TargetImages none;
  return none;
}

std::string error_of(const std::string& bytes) {
  auto r = probe::read_gpu_code(bytes, "lib.so");
  EXPECT_FALSE(r) << "the reader accepted it";
  return r ? std::string() : r.error().message;
}

TEST(Fatbin, ReadsTargetsVariantsIsaAndCompressionFromTheHeaders) {
  std::string c1 = fatbin_container(
      {{2, 75, 0x11}, {2, 90, 0x100011}, {2, 100, 0x1208011, 9, 0, 48, 4096}, {2, 100, 0x1100011}, {1, 120, 0x8011, 9, 1, 24, 300}});
  std::string c2 = fatbin_container({{2, 86, 0x2011, 9, 0, 16, 200}, {1, 80, 0x11, 8, 8, 100, 0}});
  auto r = probe::read_gpu_code(elf({{".text", "code", 1, 6}, {".nv_fatbin", c1 + std::string(8, '\0') + c2}}), "lib.so");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->format, "ELF");
  EXPECT_EQ(r->containers, 2u);
  EXPECT_EQ(r->sections, std::vector<std::string>{".nv_fatbin"});
  EXPECT_EQ(names(*r), (std::vector<std::string>{"sm_75", "sm_86", "sm_90a", "sm_100a", "sm_100f", "compute_80", "compute_120"}));
  EXPECT_EQ(target(*r, "compute_120").ptx_isa, Version::parse("9.1"));
  EXPECT_EQ(target(*r, "compute_80").ptx_isa, Version::parse("8.8"));
  EXPECT_EQ(target(*r, "compute_120").zstd, 1u);
  EXPECT_EQ(target(*r, "compute_120").uncompressed_bytes, 300u);
  EXPECT_EQ(target(*r, "sm_86").lz4, 1u);
  EXPECT_EQ(target(*r, "sm_100f").uncompressed_bytes, 4096u);
  EXPECT_EQ(target(*r, "sm_75").images, 1u);
  EXPECT_EQ(target(*r, "sm_75").stored_bytes, 40u);
  EXPECT_EQ(target(*r, "sm_75").uncompressed_bytes, 40u);
}

// The offset in `file` of section `name`'s bytes (`marker`, where they start).
std::uint64_t offset_of(const std::string& file, const std::string& marker) { return file.find(marker); }

// A .nvFatBinSegment table: one 24-byte record per address.
std::string wrappers(const std::vector<std::uint64_t>& addrs) {
  std::string t;
  for (std::size_t i = 0; i < addrs.size(); ++i) {
    put(t, i * 24, 0x466243B1, 4);
    put(t, i * 24 + 4, 1, 4);
    put(t, i * 24 + 8, addrs[i], 8);
    put(t, i * 24 + 16, 0, 8);
  }
  return t;
}

TEST(Fatbin, TheWrapperTableIsAShortcutThatNeverHidesOrInventsAContainer) {
  const std::string a = fatbin_container({{2, 75, 0x11}, {2, 80, 0x11}}), b = fatbin_container({{2, 86, 0x11}}),
                    c = fatbin_container({{1, 90, 0x11, 8, 4}});
  const std::string section = a + std::string(8, '\0') + b + c;
  // the layout first, to learn where the section lands; then the table pointing at a and c only
  std::string probe_file = elf({{".nv_fatbin", section}, {".nvFatBinSegment", wrappers({0, 0}), 1, 3}});
  const std::uint64_t at = offset_of(probe_file, a);
  const std::uint64_t a_addr = at + k_base, c_addr = at + a.size() + 8 + b.size() + k_base;
  auto r = probe::read_gpu_code(elf({{".nv_fatbin", section}, {".nvFatBinSegment", wrappers({c_addr, a_addr, a_addr}), 1, 3}}), "lib.so");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->containers, 3u);  // b is read although the table does not list it
  EXPECT_EQ(names(*r), (std::vector<std::string>{"sm_75", "sm_80", "sm_86", "compute_90"}));
  // a container listed inside another one's payload: the listed containers overlap
  const std::string inner = fatbin_container({{2, 89, 0x11}});
  Image holder{2, 70, 0x11};
  holder.payload = inner.size();
  std::string outer = fatbin_container({holder});
  outer.replace(16 + 64, inner.size(), inner);
  auto inside =
      probe::read_gpu_code(elf({{".nv_fatbin", outer}, {".nvFatBinSegment", wrappers({a_addr, a_addr + 16 + 64}), 1, 3}}), "lib.so");
  ASSERT_FALSE(inside);  // the outer one runs past the start of the inner one
  EXPECT_NE(inside.error().message.find("remain"), std::string::npos) << inside.error().message;
  // garbage between listed containers is still refused
  std::string dirty = a + "garbage!" + b;
  auto refused =
      probe::read_gpu_code(elf({{".nv_fatbin", dirty}, {".nvFatBinSegment", wrappers({a_addr, a_addr + a.size() + 8}), 1, 3}}), "lib.so");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("unexpected bytes"), std::string::npos) << refused.error().message;
}

// A container whose entries' payloads each hold a container header that claims the rest of the
// chain: every 8-aligned candidate frames for a while, and the last entry (architecture 0) makes
// each of them fail at the very end. `starts` receives the inner headers' offsets in the string.
std::string nested_chain(std::size_t n, std::vector<std::uint64_t>* starts = nullptr) {
  std::vector<Image> images;
  for (std::size_t i = 0; i < n; ++i) {
    Image e{2, i + 1 == n ? 0u : 86u, 0x11};
    e.payload = 16;
    images.push_back(e);
  }
  std::string c = fatbin_container(images);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const std::size_t at = 16 + i * 80 + 64;  // entry i's payload
    put(c, at, 0xBA55ED50, 4);
    put(c, at + 4, 1, 2);
    put(c, at + 6, 16, 2);
    put(c, at + 8, c.size() - (at + 16), 8);
    if (starts) starts->push_back(at);
  }
  return c;
}

TEST(Fatbin, TheWrapperTableAgreesWithThePlainWalkOnTheRealCudnn) {
  const char* path = "/usr/local/cuda/lib64/libcudnn_cnn.so.9";
  std::ifstream in(path, std::ios::binary);
  if (!in) GTEST_SKIP() << "no " << path << " on this machine";
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto listed = probe::read_gpu_code(bytes, path), plain = probe::read_gpu_code(bytes, path, false);
  auto file = probe::read_gpu_code(std::filesystem::path(path));
  ASSERT_TRUE(listed && plain && file);
  EXPECT_GT(listed->containers, 0u);
  EXPECT_EQ(listed->containers, plain->containers);
  EXPECT_EQ(names(*listed), names(*plain));
  EXPECT_EQ(names(*listed), names(*file));
  for (std::size_t i = 0; i < listed->targets.size(); ++i) EXPECT_EQ(listed->targets[i].images, plain->targets[i].images);
}

TEST(Fatbin, NestedCandidatesAreReadOnceNotOverAndOver) {
  // in a data section: each failed candidate is skipped past everything it looked at
  std::string chain = nested_chain(4000);
  auto r = probe::read_gpu_code(elf({{".nv_fatbin", fatbin_container({{2, 80, 0x11}})}, {".rodata", chain}}), "lib.so");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->containers, 1u);  // nothing in .rodata frames exactly
  // in a fatbin section, with every nested header listed in the wrapper table: each listed
  // container must end before the next listed one, so the first one fails at once
  std::vector<std::uint64_t> inner;
  std::string section = nested_chain(4000, &inner);
  std::string layout = elf({{".nv_fatbin", section}, {".nvFatBinSegment", wrappers(std::vector<std::uint64_t>(inner.size(), 0)), 1, 3}});
  const std::uint64_t base = offset_of(layout, section.substr(0, 64)) + k_base;
  std::vector<std::uint64_t> addrs{base};
  for (auto at : inner) addrs.push_back(base + at);
  auto listed = probe::read_gpu_code(elf({{".nv_fatbin", section}, {".nvFatBinSegment", wrappers(addrs), 1, 3}}), "lib.so");
  ASSERT_FALSE(listed);
  EXPECT_NE(listed.error().message.find("remain"), std::string::npos) << listed.error().message;
}

TEST(Fatbin, FindsContainersInDataSectionsAndIgnoresMagicThatDoesNotFrame) {
  std::string stray;
  put(stray, 0, 0xBA55ED50, 4);  // the magic, then nonsense
  put(stray, 4, 7, 4);
  stray.resize(64, '\x11');
  std::string data =
      stray + fatbin_container({{2, 80, 0x2011}}) + std::string(24, '\0') + fatbin_container({{2, 89, 0x2011}, {1, 75, 0x2011, 7, 0}});
  auto r = probe::read_gpu_code(elf({{".nv_fatbin", fatbin_container({{2, 75, 0x11}})}, {".ldata", data, 1, 3}}), "libcufft.so");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->containers, 3u);
  EXPECT_EQ(r->sections, (std::vector<std::string>{".nv_fatbin", ".ldata"}));
  EXPECT_EQ(names(*r), (std::vector<std::string>{"sm_75", "sm_80", "sm_89", "compute_75"}));
  EXPECT_EQ(target(*r, "sm_80").lz4, 1u);
}

TEST(Fatbin, ReadsThePeSectionOfAWindowsDll) {
  auto r =
      probe::read_gpu_code(pe({{".text", "code"}, {".nv_fatb", fatbin_container({{2, 86, 0x1}, {1, 86, 0x1, 8, 0}})}}), "cudnn64_9.dll");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->format, "PE");
  EXPECT_EQ(r->sections, std::vector<std::string>{".nv_fatb"});
  EXPECT_EQ(names(*r), (std::vector<std::string>{"sm_86", "compute_86"}));
}

TEST(Fatbin, ALibraryWithoutGpuCodeHasNoTargets) {
  auto r = probe::read_gpu_code(elf({{".rodata", std::string(4096, 'x')}}), "libcudnn.so.9");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->has_gpu_code());
}

TEST(Fatbin, RefusesTruncatedLoopingOversizedAndOverlappingContainers) {
  const std::string good = fatbin_container({{2, 86, 0x11}});
  // truncated: the container claims more bytes than its section has
  EXPECT_NE(error_of(elf({{".nv_fatbin", fatbin_container({{2, 86, 0x11}}, 4096)}})).find("truncated"), std::string::npos);
  // looping: an entry whose header size is 0 would never advance
  Image loop{2, 86, 0x11};
  loop.header = 0;
  std::string looping = fatbin_container({loop});
  EXPECT_NE(error_of(elf({{".nv_fatbin", looping}})).find("loop"), std::string::npos);
  // oversized: an entry header of 1 MiB
  Image big{2, 86, 0x11};
  std::string oversized = fatbin_container({big});
  put(oversized, 16 + 4, 1u << 20, 4);
  EXPECT_NE(error_of(elf({{".nv_fatbin", oversized}})).find("oversized"), std::string::npos);
  // an entry running past its container into the next one
  std::string overlapping = fatbin_container({{2, 86, 0x11}}) + good;
  put(overlapping, 16 + 8, 200, 8);
  EXPECT_NE(error_of(elf({{".nv_fatbin", overlapping}})).find("overlaps"), std::string::npos);
  // bytes between containers that are neither padding nor a container
  EXPECT_NE(error_of(elf({{".nv_fatbin", good + "garbage!" + good}})).find("unexpected bytes"), std::string::npos);
  // a container version stackpin does not read
  std::string v2 = good;
  put(v2, 4, 2, 2);
  EXPECT_NE(error_of(elf({{".nv_fatbin", v2}})).find("version 2"), std::string::npos);
  // two sections over the same bytes
  std::string f = elf({{".nv_fatbin", good}, {".rodata", good}});
  std::uint64_t shoff = 0;
  for (int i = 7; i >= 0; --i) shoff = (shoff << 8) | static_cast<unsigned char>(f[40 + static_cast<std::size_t>(i)]);
  std::string first_offset = f.substr(shoff + 64 + 24, 8);
  f.replace(shoff + 128 + 24, 8, first_offset);
  EXPECT_NE(error_of(f).find("overlap in the file"), std::string::npos);
}

TEST(Fatbin, RefusesFilesThatAreNotWhatTheyClaim) {
  EXPECT_NE(error_of("#!/bin/sh\necho hi\n").find("not an ELF or PE file"), std::string::npos);
  std::string f = elf({{".nv_fatbin", fatbin_container({{2, 86, 0x11}})}});
  EXPECT_NE(error_of(f.substr(0, f.size() - 100)).find("outside the file"), std::string::npos);
  EXPECT_NE(error_of(f.substr(0, 40)).find("too short"), std::string::npos);
  std::string no_sections = f;
  put(no_sections, 40, 0, 8);
  auto r = probe::read_gpu_code(no_sections, "stripped.so");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, util::ErrorCode::unsupported);
  std::string mz = "MZ" + std::string(100, '\0');
  EXPECT_NE(error_of(mz).find("PE"), std::string::npos);
  std::string section_outside = pe({{".nv_fatb", fatbin_container({{2, 86, 0x1}})}});
  EXPECT_NE(error_of(section_outside.substr(0, section_outside.size() - 400)).find("outside the file"), std::string::npos);
}

TEST(Fatbin, TargetNamesRoundTrip) {
  for (const char* n : {"sm_86", "sm_90a", "sm_100f", "sm_121", "compute_121", "compute_90a", "lto_80"}) {
    auto t = model::parse_gpu_target(n);
    ASSERT_TRUE(t) << n;
    EXPECT_EQ(t->name(), n);
  }
  for (const char* bad : {"sm_", "sm_8", "sm_086", "sm_86x", "gfx90a", "compute_12345", ""})
    EXPECT_FALSE(model::parse_gpu_target(bad)) << bad;
}

std::vector<model::TargetImages> targets(const std::vector<std::string>& list) {
  std::vector<model::TargetImages> out;
  for (const auto& n : list) {
    model::TargetImages t;
    t.target = *model::parse_gpu_target(n);
    t.images = 1;
    t.uncompressed_bytes = 1000;
    if (t.target.kind == model::CodeKind::ptx) t.ptx_isa = Version::parse("9.0");
    out.push_back(t);
  }
  return out;
}

std::string verdict(const std::string& gpu, const std::vector<std::string>& list) {
  auto f = model::fit_for(*Version::parse(gpu), targets(list));
  return std::string(model::to_string(f.fit)) + (f.via.empty() ? "" : " " + f.via);
}

TEST(Fatbin, GpuVerdictsFollowNvidiasCompatibilityRules) {
  EXPECT_EQ(verdict("8.6", {"sm_80", "sm_86"}), "native sm_86");
  EXPECT_EQ(verdict("8.9", {"sm_80", "sm_86"}), "compatible sm_86");  // same major, older minor
  EXPECT_EQ(verdict("9.0", {"sm_86", "compute_80"}), "jit compute_80");
  EXPECT_EQ(verdict("9.0", {"sm_90a"}), "native sm_90a");
  EXPECT_EQ(verdict("10.0", {"sm_90a", "compute_90a"}), "none");  // architecture-specific: 9.0 only
  EXPECT_EQ(verdict("10.3", {"sm_100f"}), "compatible sm_100f");  // the family
  EXPECT_EQ(verdict("12.0", {"sm_100f", "sm_100a"}), "none");     // another family
  EXPECT_EQ(verdict("12.1", {"sm_120", "compute_121"}), "compatible sm_120");
  EXPECT_EQ(verdict("6.1", {"sm_75", "sm_80", "compute_121"}), "none");  // a CUDA 13 build on Pascal
  EXPECT_EQ(verdict("8.0", {"lto_80"}), "none");                         // LTO IR is linked, not loaded
  EXPECT_EQ(verdict("7.5", {"sm_70"}), "compatible sm_70");
  auto f = model::fit_for(*Version::parse("12.0"), targets({"compute_80"}));
  EXPECT_EQ(f.ptx_isa, Version::parse("9.0"));
  EXPECT_EQ(f.ptx_bytes, 1000u);
}

}  // namespace

}  // namespace fatbin_test
