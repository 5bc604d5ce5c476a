#pragma once
// Area core/diff: weighing the differences between two manifests (diff.cpp: components,
// diff_targets.cpp: targets and archives, diff_rows.hpp: the row builder both use).
//
// `stackpin diff A B`: compares two manifests (or captures, which are manifests describing one
// machine) component by component and weighs every difference.
#include "knowledge/knowledge_base.hpp"
#include "model/diff.hpp"
#include "model/lock.hpp"
#include "model/manifest.hpp"

namespace core {

// Compares A with B: CUDA, cuDNN (version, build number, the CUDA major of the build), each
// pinned archive per platform, the driver minimums (pinned, or derived from the knowledge base
// the way `check` derives them), every framework, Python, each [targets.*] section, name and
// description. Returns one row per component either side sets (equal ones as `same`) and one
// finding per difference: rule diff.*, severity error = breaking, warning = likely-breaking,
// note = compatible, `seen` = A's value, `expected` = B's value, `where` = A's line (B's when A
// does not set the component). Never fails: any two manifests the reader accepted compare.
// With the locks of A and B (`lock` read the GPU code of the cuDNN archives it had at hand), the
// code those libraries carry is weighed per platform too (diff.gpu-code): SASS A's libraries
// carry and B's do not is breaking (GPUs of those architectures run B only through the driver's
// JIT, or not at all), SASS only B's carry is compatible.
model::DiffReport diff_manifests(const model::Manifest& a, const model::Manifest& b, const knowledge::KnowledgeBase& kb,
                                 const model::Lock* lock_a = nullptr, const model::Lock* lock_b = nullptr);

}  // namespace core
