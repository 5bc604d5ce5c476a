#pragma once
// Maps an extracted NVIDIA archive's entries onto a target's layout (layout_plan.cpp).
#include <filesystem>
#include <string>
#include <vector>

#include "archive/extract.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/contracts.hpp"
#include "model/manifest.hpp"
#include "model/staging.hpp"
#include "util/result.hpp"

namespace core::detail {

struct LayoutPlan {
  std::string top;                        // the archive's single top directory
  std::vector<model::PlannedFile> files;  // files and symlinks; parents are created as needed
};

util::Result<LayoutPlan> plan_layout(const std::vector<archive_io::Entry>& entries, const model::Manifest& m,
                                     model::Target target, const knowledge::KnowledgeBase& kb);

// Checks the version in the extracted include/cudnn_version.h against the pin (three parts).
util::Status check_header_version(const std::filesystem::path& header, const model::Version& pinned);

}  // namespace core::detail
