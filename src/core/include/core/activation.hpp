#pragma once
// What the activation scripts need, derived once from a manifest and the knowledge base.
#include "gen/activate.hpp"
#include "gen/activate_windows.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/manifest.hpp"
#include "util/result.hpp"

namespace core {

// The Windows tree's root and DLL directory: the isolated prefix with this cuDNN version's
// DLL directory ("bin", or "bin\x64" from 9.18), or for cuda-merge the CUDA root's "bin"
// ("bin\x64" from CUDA 13). Errors: invalid (no [targets.windows], or no prefix / cuda_path for its layout),
// unsupported (a cuDNN version whose Windows layout the knowledge base does not know).
util::Result<gen::WindowsActivation> windows_activation(const model::Manifest& m, const knowledge::KnowledgeBase& kb);

}  // namespace core
