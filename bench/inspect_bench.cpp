// stackpin's fatbin benchmark: how long reading a library's GPU code takes against reading the
// library once, the target being at most 0.1x (`cat FILE >/dev/null` with a warm page cache).
// Measured side by side in one run, rounds interleaved, medians of N rounds:
//   cat FILE >/dev/null                     the file read once (the baseline)
//   probe::read_gpu_code(FILE), in process  the reader itself: headers only
//   stackpin inspect FILE                   the whole command (start-up and knowledge base included)
//   stackpin --version                      the command's fixed start-up cost, for reference
//
//   stackpin_inspect_bench [--stackpin BIN] [--runs N] [FILE...]
//
// Without FILE it reads cuDNN's largest library under /usr/local/cuda (the 234 MiB
// libcudnn_engines_precompiled.so.9 of cuDNN 9.19 on the CI machine), the one the 0.1x target is
// set for, and, for reference, cuFFT's: its 24,000 containers sit back to back in .ldata, outside
// .nv_fatbin and listed nowhere, so the reader must search that section and follow them one by
// one (each one's header says where the next begins), which no batching can shortcut.
#include <chrono>
#include <cstring>
#include <iostream>

#include "bench_util.hpp"
#include "probe/fatbin.hpp"

namespace fs = std::filesystem;

namespace {

double in_process(const fs::path& f, std::size_t& targets) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = probe::read_gpu_code(f);
  auto t1 = std::chrono::steady_clock::now();
  if (!r) {
    std::cerr << r.error().message << "\n";
    std::exit(2);
  }
  targets = r->targets.size();
  return std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string stackpin = "stackpin";
  int runs = 15;
  std::vector<fs::path> files;
  std::vector<bool> targeted;  // the 0.1x target applies (every file named; of the defaults, cuDNN's)
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--stackpin" && i + 1 < argc) {
      stackpin = fs::absolute(argv[++i]).string();
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::max(3, std::atoi(argv[++i]));
    } else if (a.rfind("--", 0) == 0) {
      std::cerr << "usage: stackpin_inspect_bench [--stackpin BIN] [--runs N] [FILE...]\n";
      return 2;
    } else {
      files.emplace_back(a);
      targeted.push_back(true);
    }
  }
  if (files.empty())
    for (auto [f, target] : {std::pair{"/usr/local/cuda/lib64/libcudnn_engines_precompiled.so.9", true},
                             std::pair{"/usr/local/cuda/lib64/libcufft.so.12", false}})
      if (fs::exists(f)) {
        files.emplace_back(f);
        targeted.push_back(target);
      }
  if (files.empty()) {
    std::cerr << "no library to read: name one (a CUDA library with GPU code)\n";
    return 2;
  }
  int status = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const fs::path& f = files[i];
    bench::warm(f);
    std::vector<double> cat, reader, command, start;
    std::size_t targets = 0;
    for (int r = 0; r < runs; ++r) {
      cat.push_back(bench::run({"cat", f.string()}).seconds);
      reader.push_back(in_process(f, targets));
      command.push_back(bench::run({stackpin, "inspect", f.string()}).seconds);
      start.push_back(bench::run({stackpin, "--version"}).seconds);
    }
    const double c = bench::median(cat), rd = bench::median(reader), cmd = bench::median(command), st = bench::median(start);
    const double ratio = rd / c;
    std::printf("%s (%.1f MiB, %zu targets), medians of %d rounds\n", f.string().c_str(), static_cast<double>(fs::file_size(f)) / (1 << 20),
                targets, runs);
    std::printf("  cat FILE >/dev/null           %8.2f ms   1.00x\n", c * 1e3);
    if (targeted[i])
      std::printf("  fatbin reader (in process)    %8.2f ms   %.3fx   target <= 0.10x  %s\n", rd * 1e3, ratio,
                  ratio <= 0.10 ? "met" : "MISSED");
    else
      std::printf("  fatbin reader (in process)    %8.2f ms   %.3fx   (no target: its containers are searched for)\n", rd * 1e3, ratio);
    std::printf("  stackpin inspect FILE         %8.2f ms   %.3fx\n", cmd * 1e3, cmd / c);
    std::printf("  stackpin --version (start-up) %8.2f ms   %.3fx\n", st * 1e3, st / c);
    if (targeted[i] && ratio > 0.10) status = 1;
  }
  return status;
}
