#pragma once
// Area core/layout: what a target's tree looks like, for every area that writes or judges one
// (provision, package, doctor sit above it). layout_plan.cpp maps an extracted NVIDIA archive's
// entries onto a target's layout; activation.hpp derives where a tree's libraries are for the
// activation scripts.
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

// The plan also proves that every symlink, judged where it will live in DEST (the archive's top
// directory stripped, lib/ renamed lib64/), resolves to a file the plan stages. Errors:
// unsupported (a layout stackpin does not know), invalid (incomplete archive), unsafe (a link that
// would leave DEST or point at something not staged).
// `platform`: the archive's (a Windows platform lays out for Windows, with its own architecture's
// bin\ and lib\ directories; a Linux one for Linux).
util::Result<LayoutPlan> plan_layout(const std::vector<archive_io::Entry>& entries, const model::Manifest& m, model::Platform platform,
                                     const knowledge::KnowledgeBase& kb);

// Maps one CUDA toolkit component's archive (NVIDIA's redist layout: one top directory named like
// the file, holding bin/, include/, lib/ (Linux) or lib/x64/ (Windows), nvvm/, ... and LICENSE)
// onto the toolkit's tree: Linux renames lib/ to lib64/ (lib/stubs/ to lib64/stubs/), Windows keeps
// NVIDIA's layout (bin\, include\, lib\x64\, CUDA 13's bin\x64\; bin\arm64\ and lib\arm64\ on Arm), and the files directly in the
// top directory (LICENSE) go to share/doc/<component>/, so that every component's licence is kept.
// Errors: unsupported (not NVIDIA's layout: entries outside one top directory, an empty archive),
// unsafe (a link that would leave DEST or point at nothing staged).
util::Result<LayoutPlan> plan_cuda_component(const std::vector<archive_io::Entry>& entries, const std::string& component,
                                             model::Target target);

// One node of a tree as it will be laid out: a regular file, or a symlink to `link`.
struct TreeNode {
  std::string path;  // tree-relative, '/'-separated
  bool symlink = false;
  std::string link;
  std::string shown;  // how errors name it (the archive entry it comes from)
};

// Every symlink of `nodes` resolves, lexically and through the other symlinks of the tree, to a
// regular file of the tree: never above its root, never into a directory or at nothing. `where`
// names the tree in messages ("DEST", "the package"). Errors: unsafe, naming the entry, where it
// would live and where it would point.
util::Status check_links_in_tree(const std::vector<TreeNode>& nodes, const std::string& where);

// Checks the version in the extracted include/cudnn_version.h against the pin (three parts).
util::Status check_header_version(const std::filesystem::path& header, const model::Version& pinned);

}  // namespace core::detail
