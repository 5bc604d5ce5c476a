#pragma once
// `stackpin generate dockerfile`: the image spec decided from the manifest and the knowledge
// base, and the build context laid out for it.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gen/dockerfile.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/lock.hpp"
#include "model/manifest.hpp"
#include "model/pylock.hpp"
#include "util/result.hpp"

namespace core {

struct DockerOptions {
  model::Platform platform = model::Platform::linux_x86_64;  // the image's architecture
  bool from_url = false;                                     // ADD the archive from its URL instead of the build context
  // With from_url: ADD each archive from this registry repository (oci://HOST/REPO, filled by
  // `stackpin mirror push`) by its digest, over HTTPS (HTTP for oci+http://), instead of its URL.
  // Docker's ADD sends no credentials: the repository must allow anonymous pulls.
  std::string archive_registry;
  bool include_dev = false;   // headers and static libraries in the image too
  std::string manifest_file;  // the name the labels carry
  std::string manifest_sha256;
  const model::Lock* lock = nullptr;      // --locked: the framework builds come from it
  const model::PyLock* pylock = nullptr;  // --locked with a Python lock: the image installs its wheels for `platform`
};

struct DockerPlan {
  gen::DockerfileSpec spec;
  model::Platform platform = model::Platform::linux_x86_64;
  std::vector<std::string> notes;  // decisions the user should read (bundled cuDNN, base image)
};

// Decides the Dockerfile: base image ([targets.docker] base_image, pinned by base_digest, else
// NVIDIA's CUDA runtime image without cuDNN for [cuda], from the tags the knowledge base knows),
// where cuDNN comes from ([targets.docker] cudnn = "archive" | "apt"), the frameworks and their
// indexes, and which cuDNN each framework loads. Errors: invalid (no [cuda]/[cudnn], no archive
// for the platform, no URL with from_url, no apt package known for the pin, no base image known
// for the CUDA release), unsupported (a Windows platform).
util::Result<DockerPlan> plan_dockerfile(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const DockerOptions& o);

struct ContextFiles {
  std::filesystem::path archives_dir;     // where the pinned archive is found (verified before it is copied)
  std::filesystem::path cache_dir;        // the download cache, searched after archives_dir (either may be empty)
  std::filesystem::path convtest_binary;  // stackpin-convtest to put into the context
  bool convtest_optional = false;         // a runtime-only context (devcontainer): leave it out when not given
  // for sbom.spdx.json, when the plan's spec asks for it (core::sbom_for_image)
  std::string stackpin_version;
  std::optional<std::int64_t> sbom_created;  // SOURCE_DATE_EPOCH; now when absent
  std::optional<std::string> sbom_text;      // made already (url_image_sbom): used as is
  std::optional<std::string> sbom_plan;      // for stage sbom (url_image_sbom): used as is
};

// The SBOM of an image whose Dockerfile downloads the archives (--from-url): made here when copies
// of them are in files.archives_dir or files.cache_dir (files.sbom_text, spec.sbom), else planned
// for the build's `sbom` stage to write from the files it unpacks, the same document
// (files.sbom_plan, spec.sbom_in_build); none when cuDNN comes from apt. Returns what the user
// should read about it ("" = nothing).
std::string url_image_sbom(DockerPlan& plan, const model::Manifest& m, const knowledge::KnowledgeBase& kb, ContextFiles& files);

// What a build context copies, found and verified: the cuDNN archive, the CUDA component archives
// (each with its name in the context), whether the conv test goes in.
struct ContextInputs {
  std::optional<std::filesystem::path> archive;
  std::vector<std::pair<std::filesystem::path, std::string>> cuda_archives;
  bool convtest = false;
  std::string sbom;       // the SPDX document, when the spec asks for one
  std::string sbom_plan;  // its plan, when the build writes it (spec.sbom_in_build)
};
// Finds every archive the context needs and proves each by size and SHA-256, writing nothing.
// Errors: not_found (archive, convtest binary), mismatch (hash/size), io.
util::Result<ContextInputs> prepare_context(const DockerPlan& plan, const model::Manifest& m, const knowledge::KnowledgeBase& kb,
                                            const ContextFiles& files);
// Lays out the context from inputs prepare_context gave. Errors: io.
util::Status write_prepared_context(const DockerPlan& plan, const std::string& dockerfile, const ContextInputs& in,
                                    const ContextFiles& files, const std::filesystem::path& dir);

// Lays out a ready build context in `dir`: Dockerfile, .dockerignore, archives/<file> (found by
// name or content in archives_dir, verified by size and SHA-256, then hard-linked or copied),
// stackpin/stackpin-convtest. Existing files are replaced atomically. Errors: not_found (archive,
// convtest binary), mismatch (hash/size), io.
util::Status write_context(const DockerPlan& plan, const std::string& dockerfile, const model::Manifest& m,
                           const knowledge::KnowledgeBase& kb, const ContextFiles& files, const std::filesystem::path& dir);

}  // namespace core
