#pragma once
// CI definitions that build a bake matrix and run each image's conv test on GPU runners
// (ci.cpp): a GitHub Actions workflow and a GitLab CI pipeline. Pure: the same spec always gives
// the same bytes. Every value is written as a double-quoted YAML scalar.
#include <string>
#include <vector>

#include "util/result.hpp"

namespace gen {

struct CiTest {
  std::string target;                  // the bake target ("stack-amd64-test")
  std::string image;                   // the image it tags ("ghcr.io/acme/stack:amd64-test")
  std::vector<std::string> gpu_archs;  // the compute capabilities check judged it for ([gpus]; "8.9"), may be empty
};

struct CiSpec {
  std::vector<std::string> manifests;      // for the header comment
  std::string bake_dir;                    // the bake file's folder, relative to the repository root ("ci"; "." for the root)
  std::string bake_file;                   // its name ("docker-bake.json")
  std::string registry;                    // where images and the build cache are pushed ("" = nothing is pushed)
  std::vector<std::string> runner_labels;  // the GPU runners' labels (GitHub runs-on, GitLab tags)
  std::vector<CiTest> tests;               // one conv-test job per test target
  bool arm64 = false;                      // some target is linux/arm64: QEMU is set up first
};

// .github/workflows/<name>.yml: job `images` builds the bake file's default group (pushed with a
// registry), then job `conv-test`, one per test target on the GPU runners, builds that target
// (from the registry cache when there is one), loads it and runs it with --gpus all. A job is
// named after the GPU architectures its image was checked for, and warns when the runner's GPU is
// not one of them (a pass there says nothing about those GPUs). Errors:
// invalid (a value YAML or the shell would read otherwise, no test target).
util::Result<std::string> render_github_workflow(const CiSpec& s);

// .gitlab-ci.yml: the same two stages; the tests as one job with parallel:matrix (TARGET, IMAGE).
util::Result<std::string> render_gitlab_pipeline(const CiSpec& s);

}  // namespace gen
