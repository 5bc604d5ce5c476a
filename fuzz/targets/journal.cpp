// DEST/.stackpin/journal left by a crashed run, or from elsewhere: the replay and rollback
// decisions of the next command (State::recover) on arbitrary records, beside a sentinel tree
// that nothing may touch. A journal that is refused leaves DEST as it was, and a user's file in
// DEST that no record proves stackpin placed (its SHA-256 is nowhere in the journal) survives.
#include "crypto/sha256.hpp"
#include "fuzz_support.hpp"
#include "provision/state.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace fs = std::filesystem;
  auto dir = fuzz::fresh_dir();
  auto dest = dir / "dest", outside = dir / "outside";
  fs::create_directories(outside);
  fuzz::write_file(outside / "victim.txt", "must stay\n");
  fs::create_directories(dest / ".stackpin" / "backup" / "include");
  fs::create_directories(dest / "include");
  fuzz::write_file(dest / "include" / "cudnn.h", "staged");
  fuzz::write_file(dest / "notes.txt", "mine\n");
  fuzz::write_file(dest / ".stackpin" / "backup" / "include" / "cudnn.h", "original");
  fs::create_directories(dest / ".stackpin" / "tmp-abc");
  fuzz::write_file(dest / ".stackpin" / "journal", fuzz::as_text(data, size));
  auto before_outside = fuzz::snapshot(outside);
  auto before_dest = fuzz::snapshot(dest);
  model::StateDir dirs{dest};
  auto recs = core::detail::read_journal(dirs, std::string(fuzz::as_text(data, size)));
  auto state = core::detail::State::open(dest, {});
  if (!state) fuzz::fail("cannot open the state: " + state.error().message);
  auto done = state->recover();
  FUZZ_CHECK(fuzz::snapshot(outside) == before_outside, "a journal made stackpin change something outside DEST");
  const std::string text(fuzz::as_text(data, size));
  if (text.find(crypto::to_hex(crypto::sha256_of("mine\n"))) == std::string::npos) {
    auto after = fuzz::snapshot(dest);
    FUZZ_CHECK(after.count("notes.txt") && after.at("notes.txt") == before_dest.at("notes.txt"),
               "a journal made stackpin remove or replace a user's file it cannot prove it placed");
  }
  if (!recs) {
    FUZZ_CHECK(!done, "recover() acted on a journal that read_journal() refuses");
    auto after = fuzz::snapshot(dest);
    after.erase(".stackpin/lock");
    FUZZ_CHECK(after == before_dest, "a refused journal changed DEST");
  }
  return 0;
}
