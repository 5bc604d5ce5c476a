// stackpin-convtest: the conv test alone, for container images and machines without stackpin.
// Its only shared-library needs are the C library, libm and libdl (C++ runtime linked
// statically), so it runs on NVIDIA's Ubuntu 22.04 based CUDA images (glibc 2.35).
#if defined(__linux__)
#include <sys/random.h>
#endif

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "convtest_render.hpp"
#include "core/convtest/convtest.hpp"
#include "probe/convtest.hpp"
#include "util/env.hpp"

// The statically linked C++ runtime's std::random_device refers to arc4random, which glibc only
// has from 2.36; defining it here keeps the binary's glibc floor at 2.35 (Ubuntu 22.04). Nothing
// in the conv test draws random numbers; this is what the C++ runtime would get if it asked.
#if defined(__linux__)
extern "C" std::uint32_t arc4random(void) {
  std::uint32_t v = 0;
  while (getrandom(&v, sizeof v, 0) != static_cast<ssize_t>(sizeof v)) {
  }
  return v;
}
#endif

namespace {
const char* k_usage =
    "usage: stackpin-convtest [--cudnn PATH] [--cudart PATH] [--expect-cudnn V] [--expect-cuda N]\n"
    "                         [--expect-driver V] [--device N] [--quick] [--verbose] [--json]\n"
    "Loads the CUDA runtime and cuDNN as an application would, reports what was loaded, and runs\n"
    "forward, backward-data and backward-filter convolutions through every cuDNN algorithm against a\n"
    "CPU reference. Exit codes: 0 passed, 1 failed, 2 usage, 3 nothing to run on (no driver / GPU).\n";
}

int main(int argc, char** argv) {
  probe::ConvOptions o;
  model::ConvExpectations e;  // from the flags alone: there is no manifest here
  bool json = false, verbose = false;
  util::prepare_console();
  const std::vector<std::string> args = util::program_arguments(argc, argv);
  const std::size_t n = args.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= n) {
        std::cerr << a << " needs a value\n" << k_usage;
        std::exit(2);
      }
      return args[++i];
    };
    auto number = [&](const std::string& v) {
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end) {
        std::cerr << a << " needs a number, got \"" << v << "\"\n";
        std::exit(2);
      }
      return static_cast<int>(n);
    };
    if (a == "--cudnn")
      o.cudnn_path = value();
    else if (a == "--cudart")
      o.cudart_path = value();
    else if (a == "--expect-cudnn")
      e.cudnn = value();
    else if (a == "--expect-cuda")
      e.cuda_major = number(value());
    else if (a == "--expect-driver")
      e.min_driver = value();
    else if (a == "--device")
      o.device = number(value());
    else if (a == "--quick")
      o.quick = true;
    else if (a == "--verbose")
      verbose = true;
    else if (a == "--json")
      json = true;
    else if (a == "--help" || a == "-h") {
      std::cout << k_usage;
      return 0;
    } else {
      std::cerr << "unknown option " << a << "\n" << k_usage;
      return 2;
    }
  }
  util::SystemEnv env;
  cli::Io io{std::cout, std::cerr, env, util::is_terminal(1), util::is_terminal(2)};
  auto report = probe::run_convtest(o);
  int code = cli::finish_convtest(io, report, core::judge_convtest(report, e), json, verbose);
  std::cout.flush();
  return code;
}
