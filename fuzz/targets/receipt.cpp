// DEST/.stackpin/receipt.json from elsewhere (a tree copied from another machine): read, then used
// the way status and unstage --force use it, beside a sentinel tree that nothing may touch.
#include <vector>

#include "core/provision/stage.hpp"
#include "fuzz_support.hpp"
#include "provision/state.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto dir = fuzz::fresh_dir();
  auto dest = dir / "dest", outside = dir / "outside";
  fuzz::write_file((std::filesystem::create_directories(outside), outside / "victim.txt"), "must stay\n");
  std::filesystem::create_directories(dest / ".stackpin");
  std::filesystem::create_directories(dest / "lib64");
  fuzz::write_file(dest / "lib64" / "libcudnn.so.9", "staged");
  fuzz::write_file(dest / ".stackpin" / "receipt.json", fuzz::as_text(data, size));
  auto before = fuzz::snapshot(outside);
  model::StateDir dirs{dest};
  auto r = core::detail::load_receipt(dirs);
  (void)core::status(dest, knowledge::KnowledgeBase::embedded());
  if (r && *r) {
    model::UnstageReport report;
    (void)core::unstage({dest, true, {}, {}}, report);
  }
  FUZZ_CHECK(fuzz::snapshot(outside) == before, "a receipt made stackpin change something outside DEST");
  return 0;
}
