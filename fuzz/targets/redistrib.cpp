// NVIDIA's redistrib JSON reader on arbitrary bytes (the cuDNN form: one archive per platform, or
// one per CUDA major with cuda_variant; the seeds hold NVIDIA's files of both kinds).
#include "format/redistrib.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto r = format::parse_redistrib(fuzz::as_text(data, size), "fuzz.json");
  if (!r) FUZZ_CHECK(!r.error().message.empty(), "an error without a message");
  return 0;
}
