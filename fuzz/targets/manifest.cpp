// The manifest reader on arbitrary bytes: it returns a manifest or an error, never crashes; an
// error always carries a location inside the text; and a manifest it accepts, written back by the
// writer `capture` uses (gen::render_manifest) and read again, is the same manifest in every field
// that writer covers.
#include "format/manifest_reader.hpp"
#include "fuzz_support.hpp"
#include "gen/manifest_toml.hpp"
#include "model/platform.hpp"

namespace {

gen::ManifestSpec spec_of(const model::Manifest& m) {
  gen::ManifestSpec s;
  s.name = m.name.value;
  if (m.description) s.description = m.description->value;
  if (m.cuda) s.cuda = m.cuda->version.value.text();
  if (m.driver && m.driver->linux) s.driver_linux = m.driver->linux->value.text();
  if (m.cudnn) {
    s.cudnn = m.cudnn->version.value.text();
    s.cudnn_cuda = m.cudnn->cuda ? m.cudnn->cuda->value : 0;
    for (const auto& a : m.cudnn->archives) {
      gen::ManifestArchive g;
      g.platform = model::to_string(a.platform.value);
      g.origin = a.origin.value == model::Origin::local ? "local" : "nvidia";
      if (a.url) g.url = a.url->value;
      if (a.file) g.file = a.file->value;
      if (a.sha256) g.sha256 = a.sha256->value;
      if (a.size) g.size = a.size->value;
      s.archives.push_back(std::move(g));
    }
  }
  for (const auto& [k, v] : m.frameworks) s.frameworks.emplace_back(k, v.value.text());
  if (m.python) s.python = m.python->value.text();
  if (m.linux) {
    s.linux_layout = model::to_string(m.linux->layout.value);
    if (m.linux->prefix) s.linux_prefix = m.linux->prefix->value;
  }
  if (m.driver && m.driver->windows) s.driver_windows = m.driver->windows->value.text();
  if (m.windows) {
    s.windows_layout = model::to_string(m.windows->layout.value);
    if (m.windows->prefix) s.windows_prefix = m.windows->prefix->value;
    if (m.windows->cuda_path) s.windows_cuda_path = m.windows->cuda_path->value;
  }
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = fuzz::as_text(data, size);
  auto m = format::parse_manifest(text, "fuzz.toml");
  if (!m) {
    const auto& e = m.error();
    FUZZ_CHECK(!e.message.empty(), "an error without a message");
    if (e.where) FUZZ_CHECK(e.where->line >= 0 && e.where->excerpt.size() <= 170, "an excerpt that is not cut");
    return 0;
  }
  // the capture writer renders only manifests whose cuDNN section it can say (four-part version)
  if (m->cudnn && !m->cudnn->cuda) return 0;
  auto spec = spec_of(*m);
  std::string again = gen::render_manifest(spec);
  auto back = format::parse_manifest(again, "again.toml");
  if (!back) fuzz::fail("the manifest written back does not parse: " + back.error().message + "\n" + again);
  std::string twice = gen::render_manifest(spec_of(*back));
  FUZZ_CHECK(twice == again, "write, read, write gives other text:\n" + again + "\n---\n" + twice);
  return 0;
}
