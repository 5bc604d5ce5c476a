#pragma once
// The value of `stackpin apply`: each step of provisioning a machine from a manifest, what it
// did, and what is left for the user.
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "model/finding.hpp"
#include "util/result.hpp"

namespace model {

enum class StepStatus {
  done,       // changed something on this run
  unchanged,  // already as the manifest wants it
  passed,     // a check (doctor, conv test) found nothing wrong with what apply put in place
  planned,    // --dry-run: what would be done
  skipped,    // not applicable here (the reason is in detail)
  failed,     // the step ran and failed; the steps after it did not run
};
const char* to_string(StepStatus s);

struct ApplyStep {
  std::string name;  // archive | stage | packages | install | activation | doctor | convtest
  StepStatus status = StepStatus::skipped;
  std::string detail;                // one line
  std::vector<std::string> lines;    // files written, commands run, ...
  std::optional<util::Error> error;  // why a failed step failed
};

struct ApplyReport {
  std::vector<Finding> findings;  // the steps' findings (fetch, doctor, conv test)
  std::string manifest, target, layout, platform;
  std::string dest;    // the local directory staged into ("" for the deb layout)
  std::string prefix;  // where the tree lives on the target machine
  bool dry_run = false;
  // a deque: apply keeps a reference to a step while it adds the next one, which would dangle in
  // a vector that reallocates (AddressSanitizer found exactly that)
  std::deque<ApplyStep> steps;
  std::vector<std::string> remaining;  // what the user still has to do, in order

  bool changed() const;  // some step did something
  bool failed() const;   // some step failed
  const ApplyStep* failed_step() const;
};

}  // namespace model
