#pragma once
// Running a system program on behalf of a command (dpkg for `stackpin apply`), with its output.
#include <optional>
#include <string>
#include <vector>

#include "util/env.hpp"

namespace probe {

struct ProgramRun {
  bool started = false;
  bool timed_out = false;
  int exit_code = -1;  // 128 + signal when killed
  std::string output;  // stdout and stderr, interleaved
  std::string error;   // why it did not start or finish
};

// The program `name` on the PATH of `env` (a name with a '/' is taken as it is); nullopt when no
// PATH entry holds an executable of that name.
std::optional<std::string> find_program(const std::string& name, const util::Env& env);

// Runs argv (argv[0] found with find_program) with stdin closed, killed after `timeout_ms`; its
// stderr joins `output`. Never fails as a whole: a program that cannot start has started = false
// and error set.
ProgramRun run_program(const std::vector<std::string>& argv, const util::Env& env, int timeout_ms);

// The same with `input` (at most 4 KiB) on its stdin and only its stdout in `output` (stderr is
// dropped): a credential helper's answer, which is JSON.
ProgramRun run_program_with_input(const std::vector<std::string>& argv, const util::Env& env, int timeout_ms, const std::string& input);

// Whether this process runs as root (installing packages needs it).
bool running_as_root();

}  // namespace probe
