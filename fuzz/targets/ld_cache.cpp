// The ld.so.cache parser on arbitrary bytes: every entry it returns lies inside the file.
#include "probe/ld_cache.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto c = probe::parse_ld_cache(fuzz::as_text(data, size));
  if (!c) return 0;
  for (const auto& e : c->entries) FUZZ_CHECK(e.key.size() <= size && e.value.size() <= size, "an entry longer than the file");
  return 0;
}
