// Finds a program on PATH the way execvp would, without running it.
#include "probe/program.hpp"

#include <unistd.h>

#include <filesystem>

#include "process.hpp"
#include "util/strings.hpp"

namespace probe {

std::optional<std::string> find_program(const std::string& name, const util::Env& env) {
  if (name.find('/') != std::string::npos) return name;
  auto path = env.get("PATH");
  for (const auto& dir : util::split(path ? *path : "/usr/sbin:/usr/bin:/sbin:/bin", ':')) {
    if (dir.empty()) continue;
    std::filesystem::path p = std::filesystem::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(p)) return p.string();
  }
  return std::nullopt;
}

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

bool running_as_root() { return ::geteuid() == 0; }

}  // namespace probe
