// The pass/fail rule every reporting command applies (core/verdict.hpp).
#include "core/verdict.hpp"

namespace core {

Verdict verdict(const std::vector<model::Finding>& findings, bool strict) {
  Verdict v;
  v.counts = model::count(findings);
  v.by_strict = v.counts.errors == 0 && strict && v.counts.warnings > 0;
  v.failed = v.counts.errors > 0 || v.by_strict;
  return v;
}

}  // namespace core
