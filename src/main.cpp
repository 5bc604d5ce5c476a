// stackpin's entry point: hands the arguments to cli::run with the real process streams and
// environment.
#include <cstdlib>  // defines __GLIBC__ where it applies
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <iostream>

#include "cli/run.hpp"
#include "util/env.hpp"

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // stage decodes several archives at once, each on threads of its own (reader, decoder, writers)
  // that allocate MiB-sized buffers; glibc gives every thread an arena of its own and keeps what is
  // freed there resident. Two arenas hold the peak of a toolkit stage near 120 MiB instead of
  // 160 to 210 MiB, at no cost in time (bench/toolkit_bench.cpp).
  mallopt(M_ARENA_MAX, 2);
  // liblzma's threaded decoder takes a 24 MiB buffer per block; after the first is freed glibc's
  // dynamic threshold would serve the next ones from the heap and keep them resident. A fixed
  // threshold maps and unmaps each: the multi-block tar.xz stage peaks near 155 MiB, not 185-205.
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
#endif
  std::ios::sync_with_stdio(false);
  util::prepare_console();
  std::vector<std::string> args = util::program_arguments(argc, argv);
  util::SystemEnv env;
  cli::Io io{std::cout, std::cerr, env, util::is_terminal(1), util::is_terminal(2)};
  int code = cli::run(args, io);
  std::cout.flush();
  return code;
}
