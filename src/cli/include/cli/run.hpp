#pragma once
// The command line: parses arguments with CLI11, runs one core use case, renders its result.
// This is the only layer that prints; tests drive it in-process through run().
#include <iosfwd>
#include <string>
#include <vector>

#include "util/env.hpp"

namespace cli {

// Exit codes (docs/output.md): the contract every command keeps.
enum ExitCode : int {
  k_exit_ok = 0,        // success; warnings alone do not fail unless --strict
  k_exit_failed = 1,    // the operation ran and found a problem
  k_exit_usage = 2,     // bad command line
  k_exit_nothing = 3,   // nothing to run on (no NVIDIA driver / GPU), only when nothing else failed
  k_exit_internal = 70  // a bug
};

struct Io {
  std::ostream& out;
  std::ostream& err;
  const util::Env& env;
  bool out_is_tty = false;
  bool err_is_tty = false;
};

// Runs `stackpin ARGS...` (args exclude the program name). Returns the exit code.
int run(const std::vector<std::string>& args, Io& io);

}  // namespace cli
