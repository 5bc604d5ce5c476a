// The tar header scan (archive/tar_scan.cpp) on arbitrary bytes, fed whole and fed in chunks whose
// sizes come from the input itself: both give the same entry names in the same order, or the same
// error, since libarchive hands it a stream cut wherever its buffers end. Every name it gives is
// at most as long as the stream, and the names waiting never outnumber the entries seen.
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "tar_scan.hpp"

namespace {

struct Outcome {
  std::vector<std::string> names;
  std::string error;  // "" when the stream was accepted
};

Outcome scan(std::string_view bytes, std::size_t first_chunk) {
  archive_io::detail::TarHeaderScan s;
  Outcome out;
  std::size_t at = 0, chunk = first_chunk;
  util::Status st;
  while (at < bytes.size() && st) {
    std::size_t n = std::min(chunk, bytes.size() - at);
    st = s.feed(bytes.data() + at, n);
    at += n;
    chunk = chunk * 3 % 4093 + 1;  // sizes that wander across the 512-byte blocks
    while (auto name = s.take_name()) out.names.push_back(*name);
  }
  if (st) st = s.finish();
  while (auto name = s.take_name()) out.names.push_back(*name);
  if (!st) out.error = st.error().message;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  std::string_view bytes = fuzz::as_text(data + 1, size - 1);
  Outcome whole = scan(bytes, bytes.size() + 1);
  Outcome chunked = scan(bytes, static_cast<std::size_t>(data[0]) + 1);
  FUZZ_CHECK(whole.error == chunked.error,
             "the scan's verdict depends on how the stream was cut: \"" + whole.error + "\" vs \"" + chunked.error + "\"");
  FUZZ_CHECK(whole.names == chunked.names, "the scan's names depend on how the stream was cut");
  for (const auto& n : whole.names) FUZZ_CHECK(n.size() <= bytes.size(), "a name longer than the stream");
  return 0;
}
