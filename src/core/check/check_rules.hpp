#pragma once
// The rules of `stackpin check`, grouped by what they judge. Each appends findings to the report.
#include <string>

#include "knowledge/cuda_catalog.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/check_report.hpp"
#include "model/lock.hpp"
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
  const model::Lock* lock = nullptr;  // the manifest's lock: the GPU code read from its archives

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

// The GPU code `stackpin lock` read from the archives (check_rules_kernels.cpp): the locked cuDNN
// archives (with `cuda`, the CUDA component archives) whose libraries were read and that are the
// archives this manifest pins (the same SHA-256 as the manifest or stackpin's NVIDIA manifests
// give, and the same release).
std::vector<const model::LockedArchive*> archives_read(const Ctx& c, bool cuda);

// How the libraries of some archives fare on one GPU.
struct LibraryFits {
  struct One {
    const model::LockedArchive* archive = nullptr;
    const model::LockedLibrary* library = nullptr;
    model::GpuFit fit;
  };
  std::vector<One> none, jit;  // libraries that cannot run there, or only through the driver's JIT
  std::size_t with_code = 0;   // the others carry SASS that runs there (their own or binary compatible)
};
LibraryFits fits_of(const std::vector<const model::LockedArchive*>& archives, const model::Version& gpu);
// "lib/libcudnn_cnn.so.9 (sm_75 sm_80 ... compute_121)" for messages.
std::string library_targets(const LibraryFits::One& x);
// Where the evidence comes from, for a finding's source: "the libraries of FILE, read by `stackpin lock` (LOCK)".
std::string evidence_source(const Ctx& c, const std::vector<const model::LockedArchive*>& archives);

}  // namespace core::rules
