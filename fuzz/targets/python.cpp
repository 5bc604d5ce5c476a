// The readers of the Python half on arbitrary bytes. The first byte picks one: a Python lock (PEP
// 751) that is accepted renders to text that reads back to itself; a PEP 503 page yields only files
// that are plain names with an absolute URL and a 64-digit hash or none; pip's report yields
// normalized names only.
#include "format/pip_report.hpp"
#include "format/pylock.hpp"
#include "format/simple_index.hpp"
#include "fuzz_support.hpp"
#include "model/pylock.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(fuzz::as_text(data + 1, size - 1));
  switch (data[0] % 3) {
    case 0: {
      auto l = format::parse_pylock(text, "fuzz.pylock.toml");
      if (!l) return 0;
      for (const auto& p : l->packages) {
        FUZZ_CHECK(p.name == model::normalize_python_name(p.name), "an accepted package name is not normalized: " + p.name);
        for (const auto& w : p.wheels)
          FUZZ_CHECK(w.sha256.size() == 64 && w.size > 0, "an accepted wheel without its hash or size: " + w.name);
      }
      std::string out = format::render_pylock(*l);
      auto back = format::parse_pylock(out, "again.pylock.toml");
      if (!back) fuzz::fail("a rendered Python lock does not parse: " + back.error().message + "\n" + out);
      FUZZ_CHECK(format::render_pylock(*back) == out, "render, parse, render differs:\n" + out);
      break;
    }
    case 1: {
      for (const auto& f : format::parse_simple_index(text, "https://index.example/simple/torch/")) {
        FUZZ_CHECK(!f.file.empty() && f.file.find('/') == std::string::npos, "a listed file that is not a plain name: " + f.file);
        FUZZ_CHECK(f.url.find("://") != std::string::npos, "a listed file without an absolute URL: " + f.url);
        FUZZ_CHECK(f.sha256.empty() || f.sha256.size() == 64, "a malformed hash: " + f.sha256);
      }
      break;
    }
    default: {
      auto r = format::parse_pip_report(text, "(fuzz)");
      if (!r) return 0;
      for (const auto& c : *r) {
        FUZZ_CHECK(c.name == model::normalize_python_name(c.name), "a chosen name is not normalized: " + c.name);
        FUZZ_CHECK(c.sha256.empty() || c.sha256.size() == 64, "a malformed hash: " + c.sha256);
      }
      break;
    }
  }
  return 0;
}
