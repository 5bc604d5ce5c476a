// Tests of util's string helpers.
#include <gtest/gtest.h>

#include "util/strings.hpp"

TEST(Strings, SplitJoinTrim) {
  EXPECT_EQ(util::split("a,b,,c", ',').size(), 4u);
  EXPECT_EQ(util::join({"a", "b"}, ", "), "a, b");
  EXPECT_EQ(util::trim("  x \r\n"), "x");
}

TEST(Strings, ParseU64RejectsOverflowAndJunk) {
  EXPECT_EQ(util::parse_u64("705347747"), 705347747u);
  EXPECT_FALSE(util::parse_u64("18446744073709551616").has_value());
  EXPECT_FALSE(util::parse_u64("-1").has_value());
  EXPECT_FALSE(util::parse_u64("").has_value());
}

TEST(Strings, BasenameOfUrlsAndWindowsPaths) {
  EXPECT_EQ(util::basename_of("https://h/x/cudnn-a.zip?sig=1"), "cudnn-a.zip");
  EXPECT_EQ(util::basename_of("C:\\tools\\cudnn.zip"), "cudnn.zip");
  EXPECT_EQ(util::one_of({"a", "b", "c"}), "a, b or c");
}

TEST(Strings, FormatsBytes) { EXPECT_EQ(util::format_bytes(705347747), "705,347,747 bytes (672.7 MiB)"); }
