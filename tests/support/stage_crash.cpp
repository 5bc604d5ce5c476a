// The crash loop shared by the stage tests (stage_crash.hpp).
#include "stage_crash.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "test_support.hpp"

namespace testing_support {
namespace fs = std::filesystem;

Tree staged_tree(const fs::path& dest) {
  EXPECT_TRUE(fs::is_regular_file(dest / ".stackpin" / "receipt.json")) << dest;
  return snapshot(dest, {".stackpin/receipt.json"});
}

void copy_tree(const fs::path& from, const fs::path& to) {
  fs::remove_all(to);
  if (fs::exists(from)) fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
}

void kill_at_every_record(const std::function<std::vector<std::string>(const fs::path&)>& stage,
                          const std::function<void(const fs::path&)>& make_original, int min_records) {
  ScratchDir work;
  auto original_dir = work.path() / "original";
  make_original(original_dir);
  const Tree original = snapshot(original_dir);
  auto ref = work.path() / "reference";
  make_original(ref);
  auto clean = stackpin(stage(ref));
  ASSERT_EQ(clean.exit_code, 0) << show(clean);
  const Tree reference = staged_tree(ref);

  // Each crash is recovered one way: `unstage` rolls it back (DEST is the original, byte for byte),
  // or a new `stage` rolls it back and stages (DEST is the staged tree). Both run the same
  // rollback, so recovering every crash both ways doubled the test's cost for little; the way is
  // drawn per record from the test's seed (printed; STACKPIN_TEST_SEED replays it) rather than
  // alternated, so that it cannot fall into step with a journal that writes its records in pairs,
  // and each run recovers about half the records each way, every record both ways over runs.
  std::mt19937 rng(test_seed());
  int completed_at = 0, unstaged = 0, restaged = 0;
  for (int n = 1; n < 500 && !completed_at; ++n) {
    SCOPED_TRACE("STACKPIN_TEST_FAULT_AT=" + std::to_string(n));
    auto dest = work.path() / ("crash-" + std::to_string(n));
    make_original(dest);
    auto r = stackpin(stage(dest), {"STACKPIN_TEST_FAULT_AT=" + std::to_string(n)});
    if (r.exit_code == 0) {
      completed_at = n;
      EXPECT_EQ(diff(reference, staged_tree(dest)), "");
      break;
    }
    ASSERT_EQ(r.exit_code, k_fault_exit) << show(r);
    ASSERT_TRUE(fs::exists(dest / ".stackpin" / "journal"));

    // status: read-only, exit 1 (nothing committed), names the interrupted run
    auto crashed = snapshot(dest);
    auto st = stackpin({"status", "--dest", dest.string()});
    EXPECT_EQ(st.exit_code, 1) << show(st);
    EXPECT_NE(st.err.find("interrupted stage or unstage"), std::string::npos) << show(st);
    EXPECT_EQ(diff(crashed, snapshot(dest)), "");

    if (rng() % 2 == 0) {
      SCOPED_TRACE("recovered by unstage");
      ++unstaged;
      auto un = stackpin({"unstage", "--dest", dest.string()});
      EXPECT_EQ(un.exit_code, 0) << show(un);
      if (n > 2) {  // records 1 and 2 are the journal's header: nothing had changed yet
        EXPECT_NE(un.out.find("rolled back an interrupted stage"), std::string::npos) << show(un);
      }
      EXPECT_EQ(diff(original, snapshot(dest)), "");
    } else {
      SCOPED_TRACE("recovered by stage");
      ++restaged;
      auto again = stackpin(stage(dest));
      EXPECT_EQ(again.exit_code, 0) << show(again);
      if (n > 2) {
        EXPECT_NE(again.out.find("recovered: rolled back an interrupted stage"), std::string::npos) << show(again);
      }
      EXPECT_EQ(diff(reference, staged_tree(dest)), "");
    }
    fs::remove_all(dest);
  }
  std::cerr << "[ recovery ] " << unstaged << " crashes undone by unstage, " << restaged << " by a new stage\n";
  EXPECT_GT(completed_at, min_records) << "a staging of these archives writes more journal records than that";
}

}  // namespace testing_support
