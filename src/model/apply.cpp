// Names of apply's step states.
#include "model/apply.hpp"

#include <algorithm>

namespace model {

const char* to_string(StepStatus s) {
  switch (s) {
    case StepStatus::done: return "done";
    case StepStatus::unchanged: return "unchanged";
    case StepStatus::passed: return "passed";
    case StepStatus::planned: return "planned";
    case StepStatus::skipped: return "skipped";
    case StepStatus::failed: return "failed";
  }
  return "?";
}

bool ApplyReport::changed() const {
  return std::any_of(steps.begin(), steps.end(), [](const ApplyStep& s) { return s.status == StepStatus::done; });
}

bool ApplyReport::failed() const { return failed_step() != nullptr; }

const ApplyStep* ApplyReport::failed_step() const {
  for (const auto& s : steps)
    if (s.status == StepStatus::failed) return &s;
  return nullptr;
}

}  // namespace model
