// Running programs on Linux: posix_spawn with a pipe and poll() for the deadline (nvidia-smi,
// ldconfig, the conv test), and finding them on PATH the way execvp would.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "probe/program.hpp"
#include "process.hpp"
#include "util/strings.hpp"

extern char** environ;

namespace probe::detail {

Captured run_captured(const std::vector<std::string>& argv, int timeout_ms, std::size_t max_output, bool merge_stderr,
                      const std::string& input) {
  Captured c;
  if (argv.empty()) {
    c.error = "nothing to run";
    return c;
  }
  if (input.size() > k_max_input) {
    c.error = "the input for " + argv[0] + " is longer than " + std::to_string(k_max_input) + " bytes";
    return c;
  }
  // the input waits in a pipe (far below its capacity), so writing it before the start never blocks
  int in[2] = {-1, -1};
  if (!input.empty()) {
    if (pipe2(in, O_CLOEXEC) != 0) {
      c.error = std::string("pipe: ") + std::strerror(errno);
      return c;
    }
    ssize_t w = write(in[1], input.data(), input.size());
    close(in[1]);
    if (w != static_cast<ssize_t>(input.size())) {
      close(in[0]);
      c.error = std::string("cannot write the input of ") + argv[0];
      return c;
    }
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    c.error = std::string("pipe: ") + std::strerror(errno);
    if (in[0] >= 0) close(in[0]);
    return c;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (in[0] >= 0)
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  else
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  if (merge_stderr)
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  else
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (in[0] >= 0) close(in[0]);
  if (rc != 0) {
    close(fds[0]);
    c.error = argv[0] + ": " + std::strerror(rc);
    return c;
  }
  c.started = true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      c.timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;  // timeout is handled at the loop's top
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (c.out.size() < max_output) c.out.append(buf, std::min<std::size_t>(static_cast<std::size_t>(got), max_output - c.out.size()));
  }
  close(fds[0]);
  int status = 0;
  // the output is closed; the process may still linger: give it what is left of the deadline
  while (!c.timed_out) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline)
      c.timed_out = true;
    else
      usleep(2000);
  }
  if (c.timed_out) {
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    c.error = argv[0] + ": no answer within " + std::to_string(timeout_ms) + " ms (killed)";
  }
  if (WIFEXITED(status))
    c.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    c.exit_code = 128 + WTERMSIG(status);
  return c;
}

}  // namespace probe::detail

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

bool running_as_root() { return ::geteuid() == 0; }

}  // namespace probe
