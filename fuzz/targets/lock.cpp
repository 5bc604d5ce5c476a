// The lock reader on arbitrary bytes; a lock it accepts renders to text that reads back to the
// same lock (render, parse, render is a fixed point).
#include "format/lock_file.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto l = format::parse_lock(fuzz::as_text(data, size), "fuzz.lock");
  if (!l) return 0;
  std::string text = format::render_lock(*l);
  auto back = format::parse_lock(text, "again.lock");
  if (!back) fuzz::fail("a rendered lock does not parse: " + back.error().message + "\n" + text);
  FUZZ_CHECK(format::render_lock(*back) == text, "render, parse, render differs:\n" + text);
  return 0;
}
