#pragma once
// `stackpin sbom --dest DIR`: what a staged tree redistributes, as an SPDX 2.3 document.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "knowledge/knowledge_base.hpp"
#include "util/result.hpp"

namespace core {

struct SbomOptions {
  std::string stackpin_version;
  std::optional<std::int64_t> created;  // seconds since 1970 (SOURCE_DATE_EPOCH); now when absent
};

struct SbomResult {
  std::string text;  // the SPDX 2.3 JSON document
  std::size_t packages = 0, files = 0;
  std::vector<std::string> notes;
};

// One package per archive the receipt lists (cuDNN's and each CUDA component's: NVIDIA's download
// URL from stackpin's copies of the redistrib manifests, the archive's SHA-256, NVIDIA's licence
// name as a LicenseRef- with the licence text the archive carries), one file per staged regular
// file with its SHA-1 and SHA-256, read from DEST and proved equal to the receipt's SHA-256 first.
// Errors: those of staged_receipt (nothing staged, a receipt that does not validate), mismatch (a
// staged file changed since staging: the document would describe other bytes), invalid (a receipt
// that attributes a file to an archive it does not list), io.
util::Result<SbomResult> sbom_for_dest(const std::filesystem::path& dest, const knowledge::KnowledgeBase& kb, const SbomOptions& o);

}  // namespace core
