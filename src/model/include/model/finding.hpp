#pragma once
// One type for every judgement stackpin makes (check, doctor, convtest, status, diff).
#include <optional>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace model {

enum class Severity { ok, note, warning, error };
const char* to_string(Severity s);

struct Finding {
  std::string rule;  // stable identifier, e.g. "cudnn.cuda-major"
  Severity severity = Severity::note;
  std::string subject;                        // what is judged ("cuDNN 8.9.5.30", "[[cudnn.archives]] windows-x86_64")
  std::string seen;                           // what stackpin found
  std::string expected;                       // what it should be
  std::string fix;                            // what to do
  std::string source;                         // where the fact comes from
  std::optional<util::SourceLocation> where;  // manifest location when there is one
};

// The one way a finding is made: appended to `to` with its rule, severity and subject, and
// returned for the rest (seen, expected, fix, source, where). The reference is valid until the
// next finding is added to `to`.
Finding& add_finding(std::vector<Finding>& to, std::string rule, Severity severity, std::string subject);

struct FindingCounts {
  int errors = 0, warnings = 0, notes = 0, oks = 0;
};
FindingCounts count(const std::vector<Finding>& findings);

}  // namespace model
