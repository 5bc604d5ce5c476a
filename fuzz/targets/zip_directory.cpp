// The zip central-directory reader on arbitrary bytes: every entry it returns lies inside the
// file, and its declared total is the sum of the entries' sizes.
#include "zip_directory.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto d = archive_io::detail::read_zip_directory(std::string(fuzz::as_text(data, size)));
  if (!d) return 0;
  std::uint64_t sum = 0;
  for (const auto& e : d->entries) {
    FUZZ_CHECK(e.local_offset < size && e.compressed <= size, "an entry outside the file");
    FUZZ_CHECK(e.method == 0 || e.method == 8, "a method the reader should have refused");
    sum += e.uncompressed;
  }
  FUZZ_CHECK(sum == d->declared_bytes, "declared_bytes is not the sum of the sizes");
  return 0;
}
