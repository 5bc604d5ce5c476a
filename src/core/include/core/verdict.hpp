#pragma once
// The one pass/fail rule of every command that reports findings (check, diff, doctor, apply,
// convtest): an error finding fails; with --strict a warning fails too; notes and oks never do.
// (diff's findings are its differences: breaking is an error, likely breaking a warning.)
#include <vector>

#include "model/finding.hpp"

namespace core {

struct Verdict {
  model::FindingCounts counts;
  bool failed = false;
  bool by_strict = false;  // failed only because --strict made warnings count
};

Verdict verdict(const std::vector<model::Finding>& findings, bool strict);

}  // namespace core
