// Archive bytes pinned by a manifest (origin = "local", its own hash and size) through the whole
// of `stackpin stage --target linux`, into a DEST that already holds a file of the user's. After
// every input: a refusal left DEST exactly as it was, a success staged what the receipt lists
// (status finds it intact) and unstage returns DEST to what it was; nothing outside DEST changed.
#include <string>

#include "core/provision/stage.hpp"
#include "crypto/sha256.hpp"
#include "format/manifest_reader.hpp"
#include "fuzz_support.hpp"
#include "knowledge/knowledge_base.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace fs = std::filesystem;
  if (size == 0) return 0;  // a pin needs a positive size
  auto dir = fuzz::fresh_dir();
  auto archives = dir / "archives", dest = dir / "dest", outside = dir / "outside";
  fs::create_directories(archives);
  fs::create_directories(outside);
  fs::create_directories(dest / "include");
  fuzz::write_file(outside / "keep.txt", "untouched\n");
  fuzz::write_file(dest / "include" / "mine.h", "the user's\n");
  auto bytes = fuzz::as_text(data, size);
  const std::string name = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz";
  fuzz::write_file(archives / name, bytes);
  std::string text =
      "schema = 1\nname = \"fuzz\"\n[cuda]\nversion = \"12.4.1\"\n[cudnn]\nversion = \"9.1.0.70\"\ncuda = 12\n"
      "[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\nfile = \"" +
      name + "\"\nsha256 = \"" + crypto::to_hex(crypto::sha256_of(bytes)) + "\"\nsize = " + std::to_string(size) + "\n";
  auto m = format::parse_manifest(text, "fuzz.toml");
  if (!m) fuzz::fail("the harness's manifest does not parse: " + m.error().message);
  auto before_dest = fuzz::snapshot(dest), before_outside = fuzz::snapshot(outside);
  core::StageOptions o;
  o.archives_dir = archives;
  o.target = model::Target::linux;
  o.dest = dest;
  o.max_unpacked = 64u << 20;
  o.stackpin_version = "fuzz";
  o.manifest_sha256 = std::string(64, '0');
  auto r = core::stage(*m, knowledge::KnowledgeBase::embedded(), o);
  FUZZ_CHECK(fuzz::snapshot(outside) == before_outside, "stage changed something outside DEST");
  if (!r) {
    FUZZ_CHECK(r.error().code != util::ErrorCode::internal, "an internal error: " + r.error().message);
    FUZZ_CHECK(fuzz::snapshot(dest) == before_dest, "a refused archive changed DEST: " + r.error().message);
    return 0;
  }
  auto st = core::status(dest, knowledge::KnowledgeBase::embedded());
  FUZZ_CHECK(st.ok(), "status of a fresh staging fails");
  for (const auto& f : st->findings)
    FUZZ_CHECK(f.severity != model::Severity::error, "a fresh staging drifted: " + f.rule + " " + f.subject);
  model::UnstageReport ur;
  auto u = core::unstage({dest, false, {}, {}}, ur);
  FUZZ_CHECK(u.ok(), "unstage of a fresh staging fails: " + (u ? std::string() : u.error().message));
  FUZZ_CHECK(fuzz::snapshot(dest) == before_dest, "unstage did not return DEST to what it was");
  FUZZ_CHECK(fuzz::snapshot(outside) == before_outside, "unstage changed something outside DEST");
  return 0;
}
