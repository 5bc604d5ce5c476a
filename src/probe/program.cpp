// Runs a system program found on PATH (the platform files find it and start it).
#include "probe/program.hpp"

#include "process.hpp"

namespace probe {

ProgramRun run_program(const std::vector<std::string>& argv, const util::Env& env, int timeout_ms) {
  ProgramRun r;
  if (argv.empty()) {
    r.error = "nothing to run";
    return r;
  }
  auto exe = find_program(argv[0], env);
  if (!exe) {
    r.error = argv[0] + ": not found on PATH";
    return r;
  }
  std::vector<std::string> args = argv;
  args[0] = *exe;
  auto c = detail::run_captured(args, timeout_ms, 1 << 20, true);
  r.started = c.started;
  r.timed_out = c.timed_out;
  r.exit_code = c.exit_code;
  r.output = std::move(c.out);
  r.error = std::move(c.error);
  return r;
}

}  // namespace probe
