// The driver rule every doctor shares (driver_judgement.hpp).
#include "doctor/driver_judgement.hpp"

namespace core::doctor_rules {

using model::Severity;

DriverJudgement judge_driver(const knowledge::KnowledgeBase& kb, model::Os os, bool wsl, const model::Version& have,
                             const model::Version& cuda, const std::optional<model::Version>& pin) {
  model::DriverMinimum dm = kb.driver_minimum(cuda, os, pin);
  DriverJudgement j;
  const std::optional<model::Version>& effective = dm.required;
  const std::string& effective_text = dm.effective;
  std::string column = wsl ? " (WSL2 uses the Windows driver: NVIDIA's Windows column applies)" : "";
  if (!effective) {
    j.expected = "unknown: the knowledge base has no driver minimum for CUDA " + cuda.text();
    j.fix = "check NVIDIA's CUDA release notes for this release's minimum driver";
    return j;
  }
  j.source = dm.source;
  if (dm.family_floor && have < *dm.family_floor) {
    j.severity = Severity::error;
    j.expected =
        ">= " + dm.family_floor->text() + " (no CUDA " + std::to_string(cuda.major()) + ".x program runs on an older driver)" + column;
    j.fix =
        std::string("upgrade the NVIDIA driver") + (wsl ? " on Windows (never inside WSL)" : "") + " to " + effective->text() + " or newer";
    j.against_pin = pin.has_value();
    return j;
  }
  if (have < *effective) {
    j.severity = Severity::warning;
    j.expected =
        ">= " + effective_text + (pin ? " (the manifest's [driver] pin)" : " (NVIDIA's minimum for CUDA " + cuda.text() + ")") + column;
    j.fix = "minor-version compatibility runs most programs from " +
            (dm.family_floor ? dm.family_floor->text() : std::string("the family floor")) + " on, but PTX JIT and newer APIs need " +
            effective_text + ": upgrade the driver" + (wsl ? " on Windows" : "");
    j.against_pin = pin.has_value();
    return j;
  }
  j.severity = Severity::ok;
  j.expected = ">= " + effective_text + column;
  return j;
}

}  // namespace core::doctor_rules
