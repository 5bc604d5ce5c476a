// The fatbin reader (inspect: the GPU code of a library) on arbitrary bytes, in memory and through
// a file as the command reads it, and without its wrapper-table shortcut: all must agree, and what
// is reported lies inside the input.
#include <optional>

#include "fuzz_support.hpp"
#include "probe/fatbin.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(fuzz::as_text(data, size));
  auto mem = probe::read_gpu_code(bytes, "lib.so");
  // through a file (its window, batched reads and threads) for inputs up to 64 KiB: larger ones
  // (the seeds of real libraries) would spend the run writing files
  std::optional<util::Result<model::LibraryKernels>> file;
  if (size <= (64u << 10)) {
    auto dir = fuzz::fresh_dir();
    auto p = dir / "lib.so";
    fuzz::write_file(p, bytes);
    file = probe::read_gpu_code(p);
    FUZZ_CHECK(static_cast<bool>(mem) == static_cast<bool>(*file), "memory and file readers disagree");
  }
  if (mem) {
    std::uint64_t images = 0, stored = 0;
    for (const auto& t : mem->targets) {
      images += t.images;
      stored += t.stored_bytes;
      FUZZ_CHECK(t.lz4 + t.zstd <= t.images, "more compressed images than images");
    }
    FUZZ_CHECK(images * 64 <= size, "more images than headers fit in the file");
    FUZZ_CHECK(stored <= size, "payloads larger than the file");
    FUZZ_CHECK(mem->containers * 80 <= size || mem->containers == 0, "more containers than fit in the file");
    if (file) FUZZ_CHECK((*file)->targets.size() == mem->targets.size(), "memory and file readers found different targets");
    // the wrapper table is a shortcut: the plain walk accepts what it accepts, and finds the same
    auto plain = probe::read_gpu_code(bytes, "lib.so", false);
    FUZZ_CHECK(static_cast<bool>(plain), "accepted with the wrapper table, refused without it");
    FUZZ_CHECK(plain->containers == mem->containers && plain->targets.size() == mem->targets.size(),
               "the wrapper table changed what was found");
  }
  return 0;
}
