// Golden-file comparison and update (golden.hpp).
#include "golden.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "test_support.hpp"
#include "tree.hpp"

namespace testing_support {

void expect_golden(const std::string& text, const std::string& relative) {
  std::filesystem::path file = source_dir() / "tests" / "data" / "golden" / relative;
  if (const char* v = std::getenv("STACKPIN_UPDATE_GOLDEN"); v && *v && std::string(v) != "0") {
    write_file(file, text);
    return;
  }
  EXPECT_EQ(text, read_text(file)) << "tests/data/golden/" << relative
                                   << " differs; rerun with STACKPIN_UPDATE_GOLDEN=1 only for an intended change, and review the diff";
}

}  // namespace testing_support
