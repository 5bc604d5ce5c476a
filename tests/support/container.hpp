#pragma once
// Helpers for the tests labelled `container`: they run host-built binaries and scripts inside a
// real Docker engine, in the local images scripts/container-engine.sh builds (no registry is
// reachable here; see ../shared/containers.md). Every test skips, saying why and what to run,
// when no engine answers or an image is missing:
//
//   if (auto why = container::unavailable({container::k_debian_image}); !why.empty()) GTEST_SKIP() << why;
//
// or SP_SKIP_WITHOUT_CONTAINERS(container::k_debian_image).
#include <filesystem>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace testing_support::container {

inline constexpr const char* k_debian_image = "local/debian:bookworm";
inline constexpr const char* k_cuda_runtime_image = "local/cuda-runtime:bookworm";
inline constexpr const char* k_stackpin_runtime_image = "local/stackpin-runtime:bookworm";

// The docker client: $STACKPIN_DOCKER, else Debian's /usr/bin/docker when it exists (another
// client without buildx can come first on PATH here), else `docker` found on PATH; empty if none.
std::string docker_binary();

// True when a client exists and an engine answers it; otherwise false, with `why` saying what is
// missing and how to start one. Asked once per test program.
bool engine_available(std::string& why);

// True when the engine holds `image` (name:tag).
bool image_exists(const std::string& image);

// Empty when an engine answers and holds every image; otherwise the reason to skip with.
std::string unavailable(const std::vector<std::string>& images);

// Runs `docker ARGS...`, killed after `timeout_s` seconds (exit code 124 then, and the reason in err).
RunResult docker(const std::vector<std::string>& args, int timeout_s = 120);

struct Mount {
  std::filesystem::path host;
  std::string target;  // absolute path in the container
  bool read_only = true;
};

struct Options {
  std::string image;
  std::vector<Mount> mounts;
  std::vector<std::string> env;  // NAME=value
  std::string network = "none";  // "none", or "bridge" for a run that needs Debian's archive
  std::string workdir;
};

// `docker run --rm` of `command` in a fresh container, removed also when the timeout kills the client.
RunResult run(const Options& o, const std::vector<std::string>& command, int timeout_s = 120);

// A container kept running for several steps (`docker exec`), removed when this goes out of scope.
class Container {
 public:
  explicit Container(const Options& o, int timeout_s = 60);
  ~Container();
  Container(const Container&) = delete;
  Container& operator=(const Container&) = delete;

  bool ok() const { return m_error.empty(); }
  const std::string& error() const { return m_error; }  // why the container did not start
  const std::string& name() const { return m_name; }

  RunResult exec(const std::vector<std::string>& command, int timeout_s = 120, const std::vector<std::string>& env = {});
  // `bash -c SCRIPT` in the container (non-login, non-interactive).
  RunResult bash(const std::string& script, int timeout_s = 120, const std::vector<std::string>& env = {});

 private:
  std::string m_name, m_error;
};

// What a failed step printed, for assertion messages.
std::string describe(const RunResult& r);

}  // namespace testing_support::container

#define SP_SKIP_WITHOUT_CONTAINERS(...)                                                                                     \
  do {                                                                                                                      \
    if (auto sp_why_ = ::testing_support::container::unavailable({__VA_ARGS__}); !sp_why_.empty()) GTEST_SKIP() << sp_why_; \
  } while (0)
