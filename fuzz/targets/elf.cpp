// The ELF reader (what deb and doctor read from libraries) on arbitrary bytes, through a file as
// the commands read it.
#include "probe/elf.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto dir = fuzz::fresh_dir();
  auto p = dir / "lib.so";
  fuzz::write_file(p, fuzz::as_text(data, size));
  (void)probe::is_elf(p);
  auto e = probe::read_elf(p);
  if (e) {
    for (const auto& n : e->needed) FUZZ_CHECK(n.size() <= size, "a DT_NEEDED longer than the file");
    FUZZ_CHECK(e->soname.size() <= size, "a SONAME longer than the file");
  }
  return 0;
}
