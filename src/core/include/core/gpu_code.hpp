#pragma once
// GPU code judged for GPUs, shared by the areas that read it (inspect, convtest, doctor): the
// driver a library's PTX needs, and one copy of a library set judged for one GPU.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "knowledge/knowledge_base.hpp"
#include "model/finding.hpp"
#include "model/kernels.hpp"
#include "model/platform.hpp"

namespace core {

// For a library that runs on a GPU only through the driver's JIT (f.fit == jit, f.ptx_isa set): the
// CUDA release whose driver first compiles that PTX ISA (f.jit_cuda, "at least" when the ISA is
// newer than the knowledge base's table) and that release's minimum driver on `driver_os`.
void add_jit_driver(model::GpuFit& f, model::Os driver_os, const knowledge::KnowledgeBase& kb);

// One copy of a library set (a cuDNN directory) judged for one GPU by the code its libraries
// carry: error when one carries nothing that runs there, or only PTX newer than the driver
// compiles (the driver that does is named); warning when the driver must compile PTX at first use
// (its size and the cache it lands in, per `os`); ok when every library has SASS for it. The
// driver is its version (`driver`) or, where only that is known, the CUDA release it supports
// (`driver_cuda`, as cudaDriverGetVersion tells it). `seen` names the libraries but not the copy.
// with_code == 0: no library carries SASS or PTX (not judged).
struct LibrarySetJudgement {
  std::size_t with_code = 0;
  model::Severity severity = model::Severity::ok;
  // "native" (SASS built for the GPU in every library), "compatible" (some only binary-compatible
  // SASS of a lower minor), "jit" (some only PTX), "driver too old" (PTX the driver cannot
  // compile), "none" (a library with nothing for it)
  std::string verdict;
  std::string seen, expected, fix;
};
LibrarySetJudgement judge_library_set(const std::vector<model::LibraryKernels>& libraries, const model::Version& cc,
                                      const std::optional<model::Version>& driver, model::Os os, const knowledge::KnowledgeBase& kb,
                                      const std::optional<model::Version>& driver_cuda = std::nullopt);

}  // namespace core
