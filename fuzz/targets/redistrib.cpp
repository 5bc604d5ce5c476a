// NVIDIA's redistrib JSON readers on arbitrary bytes: cuDNN's (one archive per platform, or one per
// CUDA major with cuda_variant) and CUDA's (one object per component, each with its own version);
// the seeds hold NVIDIA's files of both kinds. Each reader returns a release or an error that
// says why, and every archive it accepts has a relative path inside the redist tree (or in a
// pool beside it: leading "../" only), 64 hex digits and a size; resolved against a URL, such a
// path stays on the URL's host or is refused. Every cuDNN archive's file name is NVIDIA's, of the
// manifest's platform key and release, and gives the archive's build. The same bytes read as the
// HTML listing of NVIDIA's redist folder give releases of three parts, ascending, each named there.
#include "format/redistrib.hpp"
#include "fuzz_support.hpp"

namespace {

// Inside the tree, after any leading "../": no ".." anywhere else, no leading '/'.
bool inside_tree(std::string p) {
  while (p.rfind("../", 0) == 0) p.erase(0, 3);
  return !p.empty() && p.front() != '/' && p.find("..") == std::string::npos;
}

// Resolved against a manifest's URL, a path lands on that host or is refused.
bool stays_on_host(const std::string& relative) {
  const std::string base = "https://host.example/a/b/c/";
  auto url = format::redist_url(base, relative);
  return !url || url->rfind("https://host.example/", 0) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = fuzz::as_text(data, size);
  auto r = format::parse_redistrib(text, "fuzz.json");
  if (!r) FUZZ_CHECK(!r.error().message.empty(), "an error without a message");
  if (r) {
    for (const auto& a : r->archives) {
      FUZZ_CHECK(inside_tree(a.relative_path) && a.sha256.size() == 64 && a.size > 0 && a.cuda > 0, "a cuDNN archive accepted incomplete");
      FUZZ_CHECK(stays_on_host(a.relative_path), "a relative path resolved off its host");
      const std::string file = a.relative_path.substr(a.relative_path.rfind('/') + 1);
      FUZZ_CHECK(file.rfind(std::string("cudnn-") + model::to_string(a.platform) + "-" + a.build.text() + "_cuda", 0) == 0 &&
                     a.build.prefix(3) == r->version.prefix(3),
                 "a cuDNN archive accepted under another name than NVIDIA's for its entry");
    }
  }
  const auto listed = format::listed_releases(text);
  for (std::size_t i = 0; i < listed.size(); ++i) {
    FUZZ_CHECK(listed[i].size() == 3 && (i == 0 || listed[i - 1] < listed[i]), "listed releases not three parts, ascending, once each");
    FUZZ_CHECK(text.find("redistrib_" + listed[i].text() + ".json") != std::string_view::npos, "a release the listing does not name");
  }
  auto c = format::parse_cuda_redistrib(text, "fuzz.json");
  if (!c) FUZZ_CHECK(!c.error().message.empty(), "an error without a message");
  if (c) {
    FUZZ_CHECK(!c->components.empty(), "a CUDA release without components");
    for (const auto& comp : c->components) {
      for (const auto& a : comp.archives) {
        const bool pool = a.relative_path.rfind("../", 0) == 0;
        FUZZ_CHECK(
            inside_tree(a.relative_path) && (pool || a.relative_path.rfind(comp.id + "/", 0) == 0) && a.sha256.size() == 64 && a.size > 0,
            "a CUDA archive accepted outside its component's folder or incomplete");
        FUZZ_CHECK(stays_on_host(a.relative_path), "a relative path resolved off its host");
      }
    }
  }
  return 0;
}
