// Tests of version parsing and ordering.
#include <gtest/gtest.h>

#include "core/layout/dest.hpp"
#include "model/contracts.hpp"
#include "model/version.hpp"

namespace version_test {

using model::Version;

namespace {
Version v(const char* s) {
  auto r = Version::parse(s);
  EXPECT_TRUE(r.has_value()) << s;
  return r.value_or(Version());
}
}  // namespace

TEST(Version, ParsesDottedNumbers) {
  EXPECT_EQ(v("8.9.5.30").size(), 4u);
  EXPECT_EQ(v("580").size(), 1u);
  EXPECT_EQ(v("530.30.02").part(2), 2u);
  EXPECT_EQ(v("530.30.02").text(), "530.30.02");
}

TEST(Version, RejectsMalformed) {
  for (const char* bad : {"", ".", "1.", ".1", "1..2", "v1", "1.x", "1.2-rc1", "1.2.3.4.5.6.7", "99999999999"})
    EXPECT_FALSE(Version::parse(bad).has_value()) << bad;
}

TEST(Version, ComparesNumericallyPartByPart) {
  EXPECT_LT(v("8.9.5.29"), v("8.9.5.30"));
  EXPECT_LT(v("9.2.0"), v("9.10.0"));
  EXPECT_EQ(v("580"), v("580.0.0"));
  EXPECT_EQ(v("530.30.02"), v("530.30.2"));
  EXPECT_GT(v("531.14"), v("530.30.02"));
}

TEST(Version, ComparesAtThreeParts) {
  EXPECT_EQ(compare_prefix(v("8.9.5.29"), v("8.9.5"), 3), std::strong_ordering::equal);
  EXPECT_EQ(compare_prefix(v("8.9.5.30"), v("8.9.5.29"), 3), std::strong_ordering::equal);
  EXPECT_EQ(v("8.9.5.30").prefix(3), "8.9.5");
}

TEST(Version, Ranges) {
  EXPECT_TRUE(in_range(v("8.3.0"), v("8.3.0"), v("9.2.0")));
  EXPECT_TRUE(in_range(v("9.1.9"), v("8.3.0"), v("9.2.0")));
  EXPECT_FALSE(in_range(v("9.2.0"), v("8.3.0"), v("9.2.0")));
  EXPECT_TRUE(in_range(v("10.0.0"), v("9.18.0"), std::nullopt));
  EXPECT_TRUE(has_prefix(v("2.1.0"), v("2.1")));
  EXPECT_FALSE(has_prefix(v("2.10.0"), v("2.1")));
  EXPECT_FALSE(has_prefix(v("1.17"), v("1.17.3")));
}

TEST(Version, DecodesBothCudnnEncodings) {
  EXPECT_EQ(model::decode_cudnn_version(8907)->text(), "8.9.7");
  EXPECT_EQ(model::decode_cudnn_version(8905)->text(), "8.9.5");
  EXPECT_EQ(model::decode_cudnn_version(90100)->text(), "9.1.0");
  EXPECT_EQ(model::decode_cudnn_version(91002)->text(), "9.10.2");
  EXPECT_EQ(model::decode_cudnn_version(91900)->text(), "9.19.0");
  EXPECT_FALSE(model::decode_cudnn_version(0).has_value());
}

TEST(Contracts, DestAndStateDir) {
  model::Manifest m;
  model::LinuxTarget lt;
  lt.prefix = model::Located<std::string>{"/usr/local/cudnn-9.1.0", {}};
  m.linux = lt;
  EXPECT_EQ(core::default_dest(model::Target::linux, std::nullopt, m)->string(), "/usr/local/cudnn-9.1.0");
  EXPECT_EQ(core::default_dest(model::Target::linux, std::filesystem::path("/tmp/d"), m)->string(), "/tmp/d");
  EXPECT_FALSE(core::default_dest(model::Target::windows, std::nullopt, m).has_value());
  EXPECT_EQ(core::manifest_tree(model::Target::linux, m), "/usr/local/cudnn-9.1.0");
  EXPECT_EQ(core::manifest_tree(model::Target::windows, m), "");  // no [targets.windows]
  model::WindowsTarget wt;
  wt.layout = model::Located<model::WindowsLayout>{model::WindowsLayout::cuda_merge, {}};
  wt.prefix = model::Located<std::string>{"C:\\tools\\cudnn", {}};
  wt.cuda_path = model::Located<std::string>{"C:\\CUDA\\v12.4", {}};
  m.windows = wt;
  EXPECT_EQ(core::manifest_tree(model::Target::windows, m), "C:\\CUDA\\v12.4");  // cuda-merge: the CUDA root
  m.windows->layout.value = model::WindowsLayout::isolated;
  EXPECT_EQ(core::manifest_tree(model::Target::windows, m), "C:\\tools\\cudnn");  // isolated: its own prefix
  model::StateDir s{"/tmp/d"};
  EXPECT_EQ(s.receipt().generic_string(), "/tmp/d/.stackpin/receipt.json");
  EXPECT_EQ(s.journal().generic_string(), "/tmp/d/.stackpin/journal");
  EXPECT_EQ(model::default_platform(m, model::Target::windows, model::Platform::linux_x86_64), model::Platform::windows_x86_64);
  EXPECT_EQ(model::default_platform(m, model::Target::linux, model::Platform::linux_sbsa), model::Platform::linux_sbsa);
  m.windows->platform.value = model::Platform::windows_arm64;  // [targets.windows] arch = "arm64"
  EXPECT_EQ(model::default_platform(m, model::Target::windows, model::Platform::linux_x86_64), model::Platform::windows_arm64);
  EXPECT_NE(model::windows_arch_conflict(m, model::Platform::windows_x86_64).find("contradicts"), std::string::npos);
  EXPECT_EQ(model::windows_arch_conflict(m, model::Platform::windows_arm64), "");
}

}  // namespace version_test
