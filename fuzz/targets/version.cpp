// Version parsing: whatever parses prints back as text that parses to an equal version, and
// comparison is a strict weak order on the parsed values.
#include "model/version.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = fuzz::as_text(data, size);
  auto cut = text.find('\n');
  auto a = model::Version::parse(text.substr(0, cut));
  auto b = cut == std::string_view::npos ? std::nullopt : model::Version::parse(text.substr(cut + 1));
  if (a) {
    auto again = model::Version::parse(a->text());
    FUZZ_CHECK(again && *again == *a, "text() of a version does not parse back: " + a->text());
  }
  if (a && b) {
    FUZZ_CHECK(!(*a < *b && *b < *a), "a < b and b < a");
    FUZZ_CHECK((*a == *b) == (!(*a < *b) && !(*b < *a)), "== disagrees with <");
  }
  return 0;
}
