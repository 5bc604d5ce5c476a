// Finding severities and counting them.
#include "model/finding.hpp"

namespace model {

Finding& add_finding(std::vector<Finding>& to, std::string rule, Severity severity, std::string subject) {
  Finding f;
  f.rule = std::move(rule);
  f.severity = severity;
  f.subject = std::move(subject);
  to.push_back(std::move(f));
  return to.back();
}

const char* to_string(Severity s) {
  switch (s) {
    case Severity::ok: return "ok";
    case Severity::note: return "note";
    case Severity::warning: return "warning";
    case Severity::error: return "error";
  }
  return "?";
}

FindingCounts count(const std::vector<Finding>& findings) {
  FindingCounts c;
  for (const auto& f : findings) {
    switch (f.severity) {
      case Severity::ok: ++c.oks; break;
      case Severity::note: ++c.notes; break;
      case Severity::warning: ++c.warnings; break;
      case Severity::error: ++c.errors; break;
    }
  }
  return c;
}

}  // namespace model
