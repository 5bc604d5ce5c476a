// Runs a system program found on PATH (the platform files find it and start it).
#include "probe/program.hpp"

#include "process.hpp"

namespace probe {

namespace {

ProgramRun run_found(const std::vector<std::string>& argv, const util::Env& env, int timeout_ms, bool merge_stderr,
                     const std::string& input) {
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
  auto c = detail::run_captured(args, timeout_ms, 1 << 20, merge_stderr, input);
  r.started = c.started;
  r.timed_out = c.timed_out;
  r.exit_code = c.exit_code;
  r.output = std::move(c.out);
  r.error = std::move(c.error);
  return r;
}

}  // namespace

ProgramRun run_program(const std::vector<std::string>& argv, const util::Env& env, int timeout_ms) {
  return run_found(argv, env, timeout_ms, true, {});
}

ProgramRun run_program_with_input(const std::vector<std::string>& argv, const util::Env& env, int timeout_ms, const std::string& input) {
  return run_found(argv, env, timeout_ms, false, input);
}

}  // namespace probe
