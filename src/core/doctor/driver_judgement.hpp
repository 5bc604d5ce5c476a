#pragma once
// One driver version against the minimum for one CUDA release, for doctor on Linux/WSL2 and on a
// live Windows machine alike. The minimum is the knowledge base's (KnowledgeBase::driver_minimum),
// the one `check` and `convtest` use: below the CUDA major's floor an error, below the release's
// own minimum (or the manifest's [driver] pin) a warning, unknown a note.
#include <optional>
#include <string>

#include "knowledge/knowledge_base.hpp"
#include "model/finding.hpp"
#include "model/version.hpp"

namespace core::doctor_rules {

struct DriverJudgement {
  model::Severity severity = model::Severity::note;
  std::string expected, fix, source;
  bool against_pin = false;  // the manifest's pin decided: the finding points at it
};

// `os` is the driver table's column (Windows for WSL2 too); `wsl` words the advice for WSL2.
DriverJudgement judge_driver(const knowledge::KnowledgeBase& kb, model::Os os, bool wsl, const model::Version& have,
                             const model::Version& cuda, const std::optional<model::Version>& pin);

}  // namespace core::doctor_rules
