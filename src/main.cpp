// stackpin's entry point: hands the arguments to cli::run with the real process streams and
// environment.
#include <unistd.h>

#include <iostream>

#include "cli/run.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  util::SystemEnv env;
  cli::Io io{std::cout, std::cerr, env, isatty(STDOUT_FILENO) != 0, isatty(STDERR_FILENO) != 0};
  int code = cli::run(args, io);
  std::cout.flush();
  return code;
}
