#pragma once
// `stackpin generate bake` and `generate ci`: the matrix of images a set of manifests makes, one
// per manifest and platform, each planned and its Dockerfile rendered; nothing is written here
// (bake.cpp). The bake file and the contexts are written by the command from this plan, after every
// context's archives have been found and verified.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/package/docker.hpp"
#include "gen/bake.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/lock.hpp"
#include "model/manifest.hpp"
#include "util/result.hpp"

namespace core {

// One manifest as the command takes it (its lock applied where one was asked for).
struct BakeManifest {
  model::Manifest manifest;
  std::optional<model::Lock> lock;
  std::optional<model::PyLock> pylock;  // --locked with a Python lock: every image installs its wheels
};

struct BakeMatrixOptions {
  std::vector<std::string> manifests;                 // paths, in the order given
  std::vector<std::string> platforms;                 // --platform values; empty: both, where the archives exist
  std::filesystem::path output = "docker-bake.json";  // the bake file: the contexts' paths are relative to its folder
  std::filesystem::path context_dir;                  // "" = contexts/ beside the bake file
  std::string registry;                               // "" = local image names, no shared cache
  bool from_url = false;                              // the images' builds download their archives
  std::string archive_registry;                       // with from_url: from this registry (DockerOptions::archive_registry)
  std::filesystem::path convtest;                     // stackpin-convtest for the -test targets ("" = none)
  ContextFiles files;                                 // where the archives are, for the contexts' SBOMs
  // Reads one manifest; called once per path, in order. Its errors are plan_bake_matrix's.
  std::function<util::Result<BakeManifest>(const std::string& path)> load;
};

// One image of the matrix: its manifest, plan, rendered Dockerfile and where its context goes.
struct BakeImagePlan {
  model::Manifest m;
  std::optional<model::Lock> lock;
  DockerPlan plan;
  std::string text;
  std::filesystem::path dir;
  ContextFiles files;  // where its archives are; with from_url, its SBOM or the SBOM's plan
};

struct BakeMatrix {
  std::vector<BakeImagePlan> planned;
  std::vector<gen::BakeImage> images;  // in the same order
  std::vector<std::string> notes;
  std::filesystem::path convtest;  // for the -test targets of the host's architecture ("" = none)
};

// Every manifest for every platform asked for, each planned and rendered. Errors: usage (a platform
// that is not an image's, contexts outside the bake file's folder), invalid (a manifest's name that
// cannot name an image, two manifests naming one image), and those of loading and planning a
// manifest and rendering its Dockerfile (the message then names the manifest).
util::Result<BakeMatrix> plan_bake_matrix(const BakeMatrixOptions& o, const knowledge::KnowledgeBase& kb);

}  // namespace core
