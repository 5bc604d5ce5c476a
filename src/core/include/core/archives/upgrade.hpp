#pragma once
// `stackpin lock --upgrade`: for a manifest, the newer CUDA, cuDNN and torch releases that exist
// (the knowledge base, stackpin's CUDA manifests and, online, NVIDIA's manifests of releases newer
// than those) and which of them still fit the manifest: each candidate is the manifest with that
// one release changed, judged by the same rules as `check`, against what `check` says of the
// manifest as it is.
#include <string>
#include <vector>

#include "knowledge/cuda_catalog.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/manifest.hpp"
#include "model/upgrade.hpp"
#include "util/result.hpp"

namespace core {

// The candidates: for CUDA, the newest patch release of each newer minor in `cuda` (and of the
// manifest's own minor when it pins X.Y.Z); for cuDNN, the newest build of each newer minor the
// knowledge base has for the build's CUDA major; for torch, each newer release row of the knowledge
// base (its first patch with the manifest's variant). Each is judged on the platforms the manifest
// pins archives for; a CUDA candidate of another major also takes the cuDNN build of that major
// when there is one. Errors: invalid (the manifest as it is cannot be checked: check's own error).
util::Result<model::UpgradeReport> upgrades(const model::Manifest& m, const knowledge::KnowledgeBase& kb,
                                            const knowledge::CudaCatalog& cuda);

}  // namespace core
