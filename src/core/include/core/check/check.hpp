#pragma once
// Area core/check: judging a manifest against the knowledge base (`stackpin check`). check.cpp
// runs the rules; check_rules_cudnn.cpp (archives, cuDNN against CUDA) and check_rules_stack.cpp
// (driver, frameworks, targets, conda) hold them, each a function that adds findings.
//
// `stackpin check`: judges a manifest against the knowledge base.
#include "knowledge/knowledge_base.hpp"
#include "model/check_report.hpp"
#include "model/manifest.hpp"
#include "util/result.hpp"

namespace core {

// Judges one manifest. Every rule adds findings (error, warning, note, ok) with its source and a
// fix; the report also carries the resolved facts for --explain.
// Errors: invalid (with location) when the manifest lacks what check needs ([cuda] version,
// [cudnn] version and cuda).
util::Result<model::CheckReport> check_manifest(const model::Manifest& manifest, const knowledge::KnowledgeBase& kb);

}  // namespace core
