#pragma once
// Golden files: generated text compared byte for byte with tests/data/golden/, one way for every test.
#include <string>

namespace testing_support {

// Expects `text` to equal tests/data/golden/<relative> ("activate.sh", "conda/cu121.yml"). With
// STACKPIN_UPDATE_GOLDEN=1 the file is rewritten instead, for an intended change that the diff
// then shows for review.
void expect_golden(const std::string& text, const std::string& relative);

}  // namespace testing_support
