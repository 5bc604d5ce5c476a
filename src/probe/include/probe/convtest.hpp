#pragma once
// The convolution test: loads the CUDA runtime and cuDNN with dlopen (as an application would,
// or from given paths), reports what was really loaded, and runs forward, backward-data and
// backward-filter convolutions through every algorithm cuDNN offers, against a CPU reference.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/convtest.hpp"
#include "model/finding.hpp"

namespace probe {

struct ConvOptions {
  std::string cudnn_path;   // load this file instead of searching (--cudnn)
  std::string cudart_path;  // (--cudart)
  std::optional<int> device;
  bool quick = false;  // one shape per operation and type
};

// Never fails as a whole: what could not be loaded or run is recorded in the report.
model::ConvReport run_convtest(const ConvOptions& options);

// Runs a convolution through `framework` (torch, tensorflow, onnxruntime) in `python`, reporting
// the cuDNN it really uses. Never fails as a whole: problems are in the result's error.
model::FrameworkRun run_framework(const std::string& framework, const std::string& python);

// CUDA's integer versions (12080 -> "12.8"); "" for 0.
std::string cuda_version_text(int v);

}  // namespace probe
