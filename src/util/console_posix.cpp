// The process's entry on Linux: arguments and streams are bytes, and stackpin's are UTF-8.
#include <unistd.h>

#include "util/env.hpp"

namespace util {

std::vector<std::string> program_arguments(int argc, char** argv) {
  return std::vector<std::string>(argv + (argc > 0 ? 1 : 0), argv + argc);
}

bool is_terminal(int stream) { return ::isatty(stream) != 0; }

void prepare_console() {}

}  // namespace util
