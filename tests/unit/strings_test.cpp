// Tests of util's string helpers.
#include <gtest/gtest.h>

#include "util/strings.hpp"

namespace strings_test {

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

// The conversions every Windows call goes through (paths, arguments, the environment, messages).
TEST(Strings, Utf8AndUtf16RoundTrip) {
  const std::string text = "C:\\Users\\\xe5\xbc\xa0\xe4\xb8\x89\\cuDNN v9 \xc3\xa9 \xf0\x9f\x98\x80";  // 张三, é, U+1F600
  const std::u16string wide = util::utf8_to_utf16(text);
  EXPECT_EQ(wide, u"C:\\Users\\\u5f20\u4e09\\cuDNN v9 \u00e9 \U0001F600");
  EXPECT_EQ(util::utf16_to_utf8(wide), text);
  // bytes that are not UTF-8 become U+FFFD one by one; an unpaired surrogate too
  EXPECT_EQ(util::utf8_to_utf16("a\xff"
                                "b\xc3"),
            u"a\uFFFDb\uFFFD");
  EXPECT_EQ(util::utf8_to_utf16("\xed\xa0\x80"), u"\uFFFD\uFFFD\uFFFD");  // an encoded surrogate is not UTF-8
  EXPECT_EQ(util::utf16_to_utf8(std::u16string(1, char16_t(0xD800)) + u"x"), "\xef\xbf\xbdx");
  EXPECT_EQ(util::utf16_to_utf8(u""), "");
}

}  // namespace strings_test
