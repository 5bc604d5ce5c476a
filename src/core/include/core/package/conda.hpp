#pragma once
// `stackpin generate conda`: the conda environment decided from the manifest and the knowledge
// base (channels, cuda-version, cudnn, where each framework comes from), for gen's renderer.
#include <string>
#include <vector>

#include "gen/conda.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/lock.hpp"
#include "model/manifest.hpp"
#include "model/pylock.hpp"
#include "util/result.hpp"

namespace core {

struct CondaOptions {
  std::string manifest_file;  // the name the header carries
  std::string manifest_sha256;
  const model::Lock* lock = nullptr;      // --locked: the framework builds come from it
  const model::PyLock* pylock = nullptr;  // --locked with a Python lock: pip installs its linux-x86_64 wheels, by hash
};

struct CondaPlan {
  gen::CondaSpec spec;
  std::string cuda_version;        // the cuda-version pin, MAJOR.MINOR ("12.1")
  std::string cudnn_version;       // the conda cudnn pin ("8.9.7.29")
  std::vector<std::string> notes;  // decisions the user should read (cuDNN differs, torch's own cuDNN)
};

// Decides the environment:
//  * channels: [targets.conda] channels (default conda-forge), which must include conda-forge,
//    the only channel whose cudnn builds the knowledge base knows;
//  * cuda-version: [cuda] as MAJOR.MINOR (conda-forge's naming);
//  * cudnn: [targets.conda] cudnn when given, else [cudnn] version, which conda-forge must publish
//    for the CUDA major of [cuda];
//  * frameworks: none is claimed from a conda channel (the knowledge base records no conda
//    package of torch, TensorFlow or ONNX Runtime), so each comes from pip: torch (and
//    torchvision/torchaudio) from PyTorch's index for the CUDA variant `check` derives, TensorFlow
//    and onnxruntime-gpu from PyPI where the knowledge base says PyPI has the build.
// Errors, all invalid and located in the manifest where possible: no [cuda] / [cudnn] version and
// cuda; two CUDA majors ([cudnn] cuda, an nvidia/label/cuda-X.Y.Z channel or a framework built
// for another major); a cudnn conda-forge does not publish for that CUDA major (the hint names one
// it does); conda-forge missing from the channels; a framework the knowledge base cannot place
// (unknown release, no build for this CUDA, a cuDNN it cannot load, not on PyPI); frameworks
// without [python] version.
util::Result<CondaPlan> plan_conda(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const CondaOptions& o);

}  // namespace core
