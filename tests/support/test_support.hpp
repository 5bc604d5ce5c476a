#pragma once
// Helpers shared by the test programs: paths of the tree, temporary directories, running the
// real stackpin binary and capturing what it prints.
#include <filesystem>
#include <string>
#include <vector>

#include "model/finding.hpp"
#include "util/result.hpp"

// Ends a test (or the rest of it) in the Windows build, saying why: for what only Linux has (POSIX
// modes, symlinks that Wine's file system does not report as such, mounts). The Linux build runs it.
#ifdef _WIN32
#define STACKPIN_SKIP_ON_WINDOWS(why) GTEST_SKIP() << (why)
#else
#define STACKPIN_SKIP_ON_WINDOWS(why) static_cast<void>(0)
#endif

namespace testing_support {

// Where this build's files are. tests/CMakeLists.txt writes them into one generated source
// (build_paths.cpp), so that no other test object's compile command names the checkout and a
// second clone reuses the compiler cache's objects.
std::filesystem::path source_dir();
std::filesystem::path shared_dir();
std::filesystem::path binary();
std::filesystem::path doubles_dir();        // the CUDA runtime and cuDNN test doubles (tests/doubles)
std::filesystem::path man_page();           // stackpin.1 as the default target writes it
std::filesystem::path windows_build_dir();  // the Windows build the windows tests run
std::string project_version();              // project(VERSION) of CMakeLists.txt

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs `argv[0] argv[1..]` with stdin closed, extra environment `env` ("NAME=value"), in `cwd`.
RunResult run_process(const std::vector<std::string>& argv, const std::vector<std::string>& env = {},
                      const std::filesystem::path& cwd = {});
// A run's exit code, stdout and stderr, for a failure message.
std::string show(const RunResult& r);
// Whether `text` holds `part`.
inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Runs the stackpin binary.
RunResult stackpin(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

// A process started without waiting for it (to kill it, or to run two at once).
class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::vector<std::string>& env = {}, const std::filesystem::path& cwd = {});
  ~Process();  // kills (SIGKILL) and reaps a process that was not waited for
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  int pid() const { return m_pid; }
  void kill(int signal);
  // Whether it has not exited yet (it stays waitable either way).
  bool running();
  RunResult wait();  // exit_code is 128 + signal for a killed process

 private:
  int m_pid = -1;
  [[maybe_unused]] void* m_handle = nullptr;  // the process handle on Windows (unused on POSIX)
  bool m_done = false;
  std::string m_out, m_err;
};

// A fresh directory under the test temp root, removed at exit of the test.
// A fresh directory under the system's temp folder, removed when the test passes and kept, with its
// path printed, when it fails.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  const std::filesystem::path& path() const { return m_path; }
  std::filesystem::path write(const std::string& name, const std::string& content) const;

 private:
  std::filesystem::path m_path;
};

std::string read_text(const std::filesystem::path& p);

// Where a download cache holds the archive `file` with `sha256`: CACHE/sha256/<hex>/<file> when it
// is there, else this boot's unsynced entry (CACHE/sha256/<hex>/.unsynced/<boot>/<file>), the one
// fetch writes where the kernel names its boot.
std::filesystem::path cached_archive(const std::filesystem::path& cache, const std::string& sha256, const std::string& file);

// The findings a command's report carries, none when it failed as a whole.
template <class Report>
std::vector<model::Finding> findings_of(const util::Result<Report>& r) {
  return r ? r->findings : std::vector<model::Finding>{};
}

// The seed of a test's random choices: STACKPIN_TEST_SEED when set, else a fresh one; printed (and
// recorded in the test's XML properties) so that a failure can be repeated.
unsigned test_seed();

// The path of a program on PATH ("" when absent; run_process needs the path, not the name).
std::string tool_path(const std::string& name);
// Whether a program is on PATH (tests of optional checkers skip without it).
bool have_tool(const std::string& name);

// Validates `file` (JSON or YAML) against tests/data/schemas/<schema> with
// tests/support/schema_check.js (node with Debian's node-ajv and node-js-yaml). Returns "" when it
// is valid, the validator's errors otherwise; `skip` gets the reason when the validator cannot run.
std::string schema_errors(const std::string& schema, const std::filesystem::path& file, std::string& skip);

}  // namespace testing_support
