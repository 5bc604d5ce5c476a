#pragma once
// A BuildKit bake definition (docker-bake.json) for a matrix of generated images (bake.cpp): one
// target per manifest and platform, groups over them, registry-backed build caches. Pure: the
// same targets always give the same bytes.
#include <string>
#include <vector>

#include "util/result.hpp"

namespace gen {

struct BakeImage {
  std::string name;      // the target's name: "<manifest name>-<arch>" (cu124-torch25-amd64)
  std::string context;   // the build context, relative to the bake file's folder ("contexts/cu124-torch25/linux-x86_64")
  std::string platform;  // linux/amd64, linux/arm64
  std::string base_image;
  std::string image;      // the image's repository ("ghcr.io/org/cu124-torch25", or a local name)
  std::string tag;        // its tag for this platform ("amd64")
  std::string cache_ref;  // a registry reference for the build cache ("" = none)
  bool devel = false;     // the Dockerfile has a devel stage (hermetic images)
  bool test = false;      // the context holds a stackpin-convtest for this platform: a -test target
};

// Targets <name> (stage runtime), <name>-devel and <name>-test where they exist, and the groups
// "default" (every runtime target), "devel" and "test". Errors: invalid (a name, path or reference
// bake or Docker would read otherwise: the names must be letters, digits, '-', '_', '.').
util::Result<std::string> render_bake(const std::vector<BakeImage>& images);

}  // namespace gen
