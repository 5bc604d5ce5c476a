// Names of diff weights and change kinds.
#include "model/diff.hpp"

namespace model {

const char* to_string(DiffWeight w) {
  switch (w) {
    case DiffWeight::same: return "same";
    case DiffWeight::compatible: return "compatible";
    case DiffWeight::likely_breaking: return "likely-breaking";
    case DiffWeight::breaking: return "breaking";
  }
  return "?";
}

Severity severity_of(DiffWeight w) {
  switch (w) {
    case DiffWeight::same: return Severity::ok;
    case DiffWeight::compatible: return Severity::note;
    case DiffWeight::likely_breaking: return Severity::warning;
    case DiffWeight::breaking: return Severity::error;
  }
  return Severity::note;
}

DiffCounts DiffReport::counts() const {
  DiffCounts c;
  for (const auto& r : rows) {
    switch (r.weight) {
      case DiffWeight::same: ++c.same; break;
      case DiffWeight::compatible: ++c.compatible; break;
      case DiffWeight::likely_breaking: ++c.likely_breaking; break;
      case DiffWeight::breaking: ++c.breaking; break;
    }
  }
  return c;
}

}  // namespace model
