#pragma once
// What a crash of `stackpin stage` may leave, checked through the real binary: the run is killed
// right before journal record N (the STACKPIN_TEST_FAULT_AT hook) for N = 1, 2, ... until a run
// completes. After each crash `status` changes nothing and says what is pending, `unstage` rolls
// DEST back to the original byte for byte, and (on a copy of the crashed tree) `stage` succeeds and
// leaves exactly the tree a clean run leaves.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tree.hpp"

namespace testing_support {

constexpr int k_fault_exit = 86;  // what the binary _exit()s with at STACKPIN_TEST_FAULT_AT

// DEST as staged, the receipt left out (it records DEST's own path).
Tree staged_tree(const std::filesystem::path& dest);
void copy_tree(const std::filesystem::path& from, const std::filesystem::path& to);

// Stages with a crash right before journal record 1, 2, ... until a staging completes; after each
// crash `status` must name the interrupted run without changing DEST, and the crash is recovered
// by `unstage` (DEST back to the original) or by a new stage (DEST as a clean staging leaves it),
// the way drawn from the test's seed. `stage` gives the stage command's arguments for a DEST;
// `make_original` fills a DEST with what was there before; a clean staging must write more than
// `min_records` journal records.
void kill_at_every_record(const std::function<std::vector<std::string>(const std::filesystem::path&)>& stage,
                          const std::function<void(const std::filesystem::path&)>& make_original, int min_records);

}  // namespace testing_support
