#pragma once
// Area core/convtest: the judgement of a conv test. probe::run_convtest observes (which libraries
// loaded, every case's result); this area decides what the run had to find and what each result
// means: the expectations from a manifest (the knowledge base's required driver included) or
// flags, and one finding per library, version, GPU, framework and failed case, each failure with
// its named cause and fix.
#include <optional>
#include <string>
#include <vector>

#include "knowledge/knowledge_base.hpp"
#include "model/convtest.hpp"
#include "model/finding.hpp"
#include "model/manifest.hpp"
#include "probe/convtest.hpp"

namespace core {

struct ConvtestOptions {
  const model::Manifest* manifest = nullptr;  // compare with its pins (--manifest); nullptr: none
  // Explicit expectations (--expect-*), each winning over the manifest's.
  std::optional<std::string> expect_cudnn, expect_driver;
  std::optional<int> expect_cuda;
  // Which column of NVIDIA's driver table applies: Windows' under WSL2 (its driver is Windows'),
  // Linux's otherwise.
  model::Os driver_os = model::Os::linux;
  probe::ConvOptions run;
  std::string framework;  // also run a convolution through torch, tensorflow or onnxruntime
  std::string python = "python3";
};

// What the run must find: the manifest's cuDNN (three parts), the CUDA major of its cuDNN build
// (else of [cuda]), and the driver the knowledge base requires for it (pin, else NVIDIA's release
// minimum, else the major's floor), each replaced by an explicit expectation when given.
model::ConvExpectations convtest_expectations(const ConvtestOptions& o, const knowledge::KnowledgeBase& kb);

// Turns a report into findings, each failure with its named cause and fix: libraries not found
// or of another major, no driver / driver too old for the runtime, CUDNN_STATUS_NOT_INITIALIZED
// and its usual causes, missing sub-libraries, failing or wrong algorithms, NaN/Inf.
std::vector<model::Finding> judge_convtest(const model::ConvReport& report, const model::ConvExpectations& expect);

// Each GPU against the knowledge base: its architecture, whether the loaded cuDNN's support matrix
// includes it (native kernels, binary-compatible ones of a lower minor, dropped, not listed), and
// whether the manifest's [gpus] names it. Fills GpuInfo::architecture and cudnn_kernels.
void judge_gpu_architectures(model::ConvReport& report, const knowledge::KnowledgeBase& kb, const model::Manifest* manifest,
                             std::vector<model::Finding>& out);

struct ConvtestReport {
  model::ConvReport report;
  model::ConvExpectations expected;
  std::vector<model::Finding> findings;
};

// Plans the expectations, runs the test (and the framework's, when asked), judges the result.
ConvtestReport convtest(const ConvtestOptions& o, const knowledge::KnowledgeBase& kb);

}  // namespace core
