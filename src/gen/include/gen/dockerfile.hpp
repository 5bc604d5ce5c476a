#pragma once
// A multi-stage Dockerfile for a GPU image built from a manifest, and its .dockerignore
// (dockerfile.cpp). Pure: the spec holds every decision (base image, where the archive comes
// from, which cuDNN frameworks load); the same spec always gives the same bytes.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace gen {

struct DockerFramework {
  std::string name, version;    // torch, 2.5.1
  std::string pip_requirement;  // torch==2.5.1
  std::string index_url;        // "" = PyPI
  std::string cudnn_note;       // which cuDNN this framework loads, and why (a comment)
};

// One CUDA toolkit component's archive in a hermetic image (cuda = "archive").
struct DockerCudaArchive {
  std::string component;  // NVIDIA's id: cuda_cudart
  std::string file, url, sha256;
  std::uint64_t size = 0;
};

struct DockerfileSpec {
  std::string manifest_file, manifest_sha256, manifest_name, manifest_description;
  std::string base_image;               // default of ARG BASE_IMAGE (with @sha256:... when pinned)
  std::vector<std::string> base_notes;  // comment lines about the base image (digest, where the tag comes from)
  std::string cuda_version;             // 12.4.1
  std::string cudnn_version;            // 9.1.0.70
  std::vector<std::string> gpu_archs;   // [gpus] compute capabilities check judged ("8.9"): io.stackpin.gpu.arch
  int cudnn_major = 0, cuda_major = 0;
  // cuDNN from the archive (mode "archive") ...
  bool from_url = false;  // ADD the URL instead of COPY from the build context
  std::string archive_file, archive_url, archive_sha256;
  std::uint64_t archive_size = 0;
  std::string archive_lib_dir = "lib";  // the library directory inside the archive's top directory
  bool include_dev = false;             // headers and static libraries too
  std::string prefix;                   // where cuDNN lives in the image (/opt/cudnn-9.1.0.70)
  // ... or from NVIDIA's apt repository (mode "apt").
  bool apt = false;
  std::string apt_package, apt_package_dev;  // name=version
  // The CUDA toolkit from its components' archives on a plain distribution base (cuda = "archive"),
  // instead of the base image's own.
  bool hermetic = false;
  std::vector<DockerCudaArchive> cuda_archives;
  std::string cuda_prefix;                // /usr/local/cuda-13.0 (/usr/local/cuda links to it)
  std::vector<std::string> version_json;  // the lines of the toolkit's version.json
  std::string require_cuda;               // NVIDIA_REQUIRE_CUDA: cuda>=13.0,driver>=580.65.06
  std::vector<DockerFramework> frameworks;
  std::string python;  // the manifest's pin ("3.12"), "" when none
  // --locked with a Python lock: each package of the image's platform as "name @ URL --hash=sha256:HEX".
  // The frameworks are then installed from these alone (pip --require-hashes --no-deps --no-index).
  std::vector<std::string> python_requirements;
  std::string convtest_expect_cudnn;  // 9.1.0 (three parts, as libraries report)
  // The `test` stage (stackpin-convtest). A dev container builds `runtime` only, and Docker's
  // classic builder builds every stage before the target it is asked for (the Dev Containers CLI
  // appends its own), so its Dockerfile has none.
  bool test_stage = true;
  // The context holds sbom.spdx.json (the runtime stage's SPDX document), copied to
  // /usr/share/doc/stackpin/ after the frameworks (it carries its creation time) and labelled.
  bool sbom = false;
  // Or the archives were not at hand (--from-url): the context holds stackpin/spdx-plan.tsv and
  // stackpin/spdx-writer.sh, and stage `sbom` writes the document from the files the runtime stage
  // receives (stage `cuda` records which component gave each file).
  bool sbom_in_build = false;
};

// The Dockerfile: in a hermetic spec, stage `cuda` checks every component archive's size and
// SHA-256 in one RUN step before any is unpacked, lays them out as the toolkit's tree and splits it
// into the run-time files (versioned shared libraries, licences, version.json) and the rest, which
// only stage `devel` (FROM runtime) receives. Stage `cudnn` verifies the archive's SHA-256 in a RUN step and unpacks it;
// stage `runtime` (FROM ${BASE_IMAGE}) receives only the runtime libraries, the loader path, an
// ld.so.conf.d entry + ldconfig, the frameworks and OCI labels; stage `test` runs
// stackpin-convtest against the manifest's expectations. Errors: invalid (a value that cannot be
// written into a Dockerfile, e.g. a line break in a URL or path).
util::Result<std::string> render_dockerfile(const DockerfileSpec& s);

// Whether the Dockerfile copies archives from its build context (archives/): the cuDNN archive
// unless cuDNN comes from apt, the CUDA components' in a hermetic image, none with --from-url.
bool copies_archives(const DockerfileSpec& s);

// stackpin's SPDX writer (src/gen/spdx-writer.sh), which stage `sbom` runs.
std::string_view spdx_writer_script();

// An allow-list .dockerignore: everything is excluded but what the Dockerfile copies.
std::string render_dockerignore(const DockerfileSpec& s);

// .devcontainer/devcontainer.json for the generated Dockerfile beside it: builds its `runtime`
// target with the same BASE_IMAGE and asks for the GPU (hostRequirements and --gpus all).
std::string render_devcontainer(const DockerfileSpec& s);

}  // namespace gen
