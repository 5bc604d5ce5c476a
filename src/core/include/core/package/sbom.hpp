#pragma once
// `stackpin sbom --dest DIR`: what a staged tree redistributes, as an SPDX 2.3 document.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gen/dockerfile.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/manifest.hpp"
#include "model/platform.hpp"
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
// file with its SHA-1 and SHA-256 (in byte order of its path), read from DEST and proved equal to
// the receipt's SHA-256 first.
// Errors: those of staged_receipt (nothing staged, a receipt that does not validate), mismatch (a
// staged file changed since staging: the document would describe other bytes), invalid (a receipt
// that attributes a file to an archive it does not list), io.
util::Result<SbomResult> sbom_for_dest(const std::filesystem::path& dest, const knowledge::KnowledgeBase& kb, const SbomOptions& o);

// The document of a generated image's runtime stage (what `generate dockerfile --context` puts at
// /usr/share/doc/stackpin/sbom.spdx.json): the archives, found in `archives_dir` or `cache_dir`,
// are staged into a temporary folder as `stackpin stage` lays them out for Linux (the layout the
// image's stages reproduce), and the files the runtime stage keeps are listed under their paths in
// the image: cuDNN's versioned libraries and licence under its prefix, and for a hermetic image the
// toolkit's run-time files, licences and version.json under /usr/local/cuda-X.Y. Errors: those of
// stage (an archive missing or not the pinned one) and of sbom_for_dest.
util::Result<SbomResult> sbom_for_image(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const gen::DockerfileSpec& spec,
                                        model::Platform platform, const std::filesystem::path& archives_dir,
                                        const std::filesystem::path& cache_dir, const SbomOptions& o);

// The plan of the document an image build writes itself (--from-url, the archives not at hand):
// what src/gen/spdx-writer.sh, run in the Dockerfile's `sbom` stage, needs to write the document
// sbom_for_image writes from local copies of the archives, byte for byte, from the files the
// runtime stage receives. Errors: invalid (a value the plan cannot carry).
util::Result<std::string> sbom_plan_for_image(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const gen::DockerfileSpec& spec,
                                              model::Platform platform, const SbomOptions& o);

}  // namespace core
