#pragma once
// Runs a program and captures its standard output, with a deadline: the machine inspection asks
// nvidia-smi, python3 and nvcc, any of which can hang (a wedged driver, a broken interpreter).
#include <string>
#include <vector>

namespace probe::detail {

struct Captured {
  bool started = false;
  bool timed_out = false;
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string error;  // why it did not start or finish
};

// argv[0] is a path (no PATH search). stdin is /dev/null, or a pipe that holds `input` (at most
// k_max_input bytes, written before the program starts, so it never blocks); stderr is /dev/null
// too unless `merge_stderr` (then it joins stdout); the process environment is inherited. Killed
// (SIGKILL) after `timeout_ms`; at most `max_output` bytes are kept.
constexpr std::size_t k_max_input = 4096;
Captured run_captured(const std::vector<std::string>& argv, int timeout_ms, std::size_t max_output = 1 << 20, bool merge_stderr = false,
                      const std::string& input = {});

}  // namespace probe::detail
