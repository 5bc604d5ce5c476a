#pragma once
// The agreement of a stack's two halves: what the Python lock's wheels will load (their own cuDNN,
// cuBLAS and CUDA runtime, before the system's) against what the manifest pins for the system.
#include <vector>

#include "knowledge/cuda_catalog.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/check_report.hpp"
#include "model/manifest.hpp"
#include "model/pylock.hpp"

namespace core {

// Judges the Python lock `py` against the manifest, for each Linux target the lock has (NVIDIA's
// wheels are Linux wheels; torch's Windows wheels carry their DLLs inside). Rules:
//  python.cudnn         the nvidia-cudnn-cuNN wheel against [cudnn] (version, and the CUDA major of its build)
//  python.cuda-runtime  the CUDA runtime wheel against [cuda]
//  python.cublas        the cuBLAS wheel's CUDA major against [cuda]
//  python.cuda-toolkit  the cuda-toolkit release the wheels pin against [cuda]
//  python.driver        the driver the wheels' CUDA runtime needs against the manifest's driver floor
// Appends findings (and the rules it examined) to `report`; findings point at the Python lock's lines.
void check_python_lock(const model::Manifest& m, const model::PyLock& py, const knowledge::KnowledgeBase& kb,
                       const knowledge::CudaCatalog& catalog, model::CheckReport& report);

}  // namespace core
