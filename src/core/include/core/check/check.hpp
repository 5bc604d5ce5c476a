#pragma once
// Area core/check: judging a manifest against the knowledge base (`stackpin check`). check.cpp
// runs the rules; check_rules_cudnn.cpp (archives, cuDNN against CUDA) and check_rules_stack.cpp
// (driver, frameworks, targets, conda) hold them, each a function that adds findings.
//
// `stackpin check`: judges a manifest against the knowledge base.
#include "format/redistrib.hpp"
#include "knowledge/cuda_catalog.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/check_report.hpp"
#include "model/lock.hpp"
#include "model/manifest.hpp"
#include "util/result.hpp"

namespace core {

// Judges one manifest. Every rule adds findings (error, warning, note, ok) with its source and a
// fix; the report also carries the resolved facts for --explain. `lock` (the manifest's lock, when
// it has one) brings the GPU code `stackpin lock` read from the archives: [gpus] is then judged by
// the libraries of the archives the manifest pins, before NVIDIA's support matrices.
// Errors: invalid (with location) when the manifest lacks what check needs ([cuda] version,
// [cudnn] version and cuda; [cudnn] may be left out when [cuda] lists components).
util::Result<model::CheckReport> check_manifest(const model::Manifest& manifest, const knowledge::KnowledgeBase& kb,
                                                const knowledge::CudaCatalog& cuda = knowledge::CudaCatalog::embedded(),
                                                const model::Lock* lock = nullptr);

// The platforms a manifest's CUDA components are provisioned for: those its [[cuda.archives]] and
// targets name ([targets.windows]: windows-x86_64; [targets.linux]: this machine's Linux platform;
// [targets.docker]: linux-x86_64). `stated` is false when it names none; every platform the
// release builds cudart for is then taken.
std::vector<model::Platform> cuda_platforms(const model::Manifest& m, const format::CudaRedistribRelease& release, bool& stated);

// What a manifest's [cuda] components resolve to in one release, per platform of cuda_platforms:
// the picks, and for each platform the names that cannot be provisioned there.
struct CudaPlatformProblem {
  model::Platform platform = model::Platform::linux_x86_64;
  knowledge::ComponentProblem problem;
};
struct CudaComponents {
  std::vector<model::CudaComponentPick> picks;
  std::vector<CudaPlatformProblem> problems;
  bool stated = false;  // the manifest names its platforms (problems are then errors)
};
// With `every_platform`, each platform the release builds cudart for is resolved instead, whatever
// the manifest names (to stage for another architecture with --platform).
CudaComponents resolve_cuda_components(const model::Manifest& m, const format::CudaRedistribRelease& release,
                                       const std::vector<model::CudaComponentSet>& sets, const std::string& source,
                                       bool every_platform = false);

}  // namespace core
