// The library identity reader (what stage, deb, status, inspect and doctor judge a cuDNN's
// sub-libraries by: soname, needs, the release the bytes name) on arbitrary bytes, through a file
// as the commands read it. For an ELF file its soname and needs are the ELF reader's; whatever it
// reports fits inside the input, and a release always comes with the evidence it was read from.
#include "probe/library_identity.hpp"
#include "fuzz_support.hpp"
#include "probe/elf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto dir = fuzz::fresh_dir();
  auto p = dir / "libcudnn_graph.so.9";
  fuzz::write_file(p, fuzz::as_text(data, size));
  auto id = probe::read_library_identity(p);
  if (!id) {
    FUZZ_CHECK(!id.error().message.empty(), "a refusal that does not say why");
    return 0;
  }
  FUZZ_CHECK(id->format == "ELF" || id->format == "PE", "neither ELF nor PE, yet accepted");
  FUZZ_CHECK(id->soname.size() <= size, "a soname longer than the file");
  for (const auto& n : id->needed) FUZZ_CHECK(n.size() <= size, "a needed name longer than the file");
  FUZZ_CHECK(!id->cudnn_version == id->version_evidence.empty(), "a release without its evidence, or evidence without a release");
  if (id->cudnn_version) FUZZ_CHECK(id->cudnn_version->size() >= 3, "a release of fewer than three parts");
  if (id->format == "ELF") {
    auto elf = probe::read_elf(p);
    FUZZ_CHECK(static_cast<bool>(elf), "the identity reader accepted an ELF file the ELF reader refuses");
    FUZZ_CHECK(elf->soname == id->soname && elf->needed == id->needed, "the identity and the ELF reader disagree on soname or needs");
  }
  return 0;
}
