#pragma once
// The rules of `stackpin check`, grouped by what they judge. Each appends findings to the report.
#include <string>

#include "knowledge/cuda_catalog.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/check_report.hpp"
#include "model/manifest.hpp"

namespace core::rules {

struct Ctx {
  const model::Manifest& m;
  const knowledge::KnowledgeBase& kb;
  model::CheckReport& report;
  model::Version cuda;   // [cuda] version
  model::Version cudnn;  // [cudnn] version
  int cudnn_cuda = 0;    // [cudnn] cuda
  const knowledge::CudaCatalog& cuda_catalog;

  model::Finding& add(std::string rule, model::Severity sev, std::string subject, model::Pos where);
  // Records that `rule` applied to this manifest and looked at it (CheckReport::examined).
  void examined(const char* rule) { report.examined.insert(rule); }
};

// CUDA toolkit components (check_rules_cuda.cpp)
void cuda_components(Ctx& c);
// cuDNN pin and archives (check_rules_cudnn.cpp)
void cudnn_cuda_major(Ctx& c);
void cudnn_published(Ctx& c);
void archives(Ctx& c);
// driver, frameworks, targets (check_rules_stack.cpp)
void driver(Ctx& c);
void frameworks(Ctx& c);
void windows_target(Ctx& c);
void linux_target(Ctx& c);
void conda_target(Ctx& c);
void docker_target(Ctx& c);
// [gpus] against cuDNN, nvcc and the framework wheels (check_rules_gpu.cpp); after frameworks()
void gpus(Ctx& c);

}  // namespace core::rules
