#pragma once
// The Linux/WSL2 half of `stackpin doctor`: judges what probe::inspect_machine found, against the
// manifest when there is one and against the knowledge base always.
#include <vector>

#include "knowledge/knowledge_base.hpp"
#include "model/finding.hpp"
#include "model/machine.hpp"
#include "model/manifest.hpp"
#include "probe/machine.hpp"
#include "util/env.hpp"

namespace core {

// The options that inspect this machine ("/") for doctor: the environment `env` (which must
// outlive the options), the knowledge base's cuDNN file lists, and the manifest's
// [targets.linux] prefix (lib64 and lib) as one more place cuDNN may be. Programs are run and
// NVML is asked; tests switch those off.
probe::MachineOptions linux_machine_options(const util::Env& env, const knowledge::KnowledgeBase& kb, const model::Manifest* manifest);

// One finding per check, each with seen / expected / fix (rules linux.os, linux.wsl,
// linux.wsl-driver, linux.linux-driver-in-wsl, linux.driver, linux.toolkit,
// linux.default-toolkit, linux.nvcc, linux.cudnn-copy, linux.cudnn-header-library-mismatch,
// linux.loader, linux.ld-library-path-missing, linux.conda, linux.framework-bundled-cudnn).
// `manifest` may be null: then the machine is judged on its own (consistency, the driver against
// the toolkits found). The manifest needs no particular section: each rule uses what it pins.
// Never fails: unknowns are notes, never guesses.
std::vector<model::Finding> doctor_linux(const model::MachineReport& report, const model::Manifest* manifest,
                                         const knowledge::KnowledgeBase& kb);

}  // namespace core
