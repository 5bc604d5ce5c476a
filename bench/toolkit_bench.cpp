// stackpin's toolkit staging benchmark: stages the ten components of the CUDA 13 torch set
// (scripts/make-cuda-fixtures.sh DIR/cuda13 bench: NVIDIA's layout, the real libraries of the
// toolkit on this machine) plus the realistic cuDNN archive (../shared/bench/make-cudnn-fixtures.sh)
// into one tree, and measures side by side in one run what a user would otherwise do:
//   by hand:        for each archive: sha256sum A && tar -xJf A      (one after the other)
//   the Python way: for each archive: python3 python-peer.py A D     (hashlib, then tarfile)
// and prints each ratio against its target, stackpin's peak RSS, and the no-op restage against a
// cold stage.
//
//   stackpin_toolkit_bench [--fixtures DIR] [--stackpin BIN] [--peer SCRIPT] [--runs N] [--work DIR]
//
// DIR holds cudnn-linux-x86_64-*_cuda13-archive.tar.xz and cuda13/<component>-linux-x86_64-*.tar.xz.
// Every run reads the archives from the page cache (one warm-up read first), writes to the same
// file system, and the median of N interleaved runs is reported.
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "bench_util.hpp"

namespace fs = std::filesystem;
using bench::find;
using bench::sha256_of;
using bench::warm;

namespace {

// The CUDA 13 torch set's required components (data/knowledge/cuda-components.toml); its optional
// libcufile is not part of the toolkit the fixtures are made from.
const std::vector<std::string> k_torch{"cuda_nvrtc", "cuda_cudart", "cuda_cupti",  "libcublas", "libcufft",
                                       "libcurand",  "libcusolver", "libcusparse", "cuda_nvtx", "libnvjitlink"};

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

}  // namespace

int main(int argc, char** argv) {
  auto opts =
      bench::parse_options(argc, argv, "stackpin-toolkit-bench", STACKPIN_SOURCE_DIR, true, false,
                           "usage: stackpin_toolkit_bench [--fixtures DIR] [--stackpin BIN] [--peer SCRIPT] [--runs N] [--work DIR]");
  const fs::path &fixtures = opts.fixtures, &stackpin = opts.stackpin, &peer = opts.peer, &work = opts.work;
  const int runs = opts.runs;
  auto cudnn = find(fixtures, "cudnn-linux-x86_64-", "_cuda13-archive.tar.xz");
  std::vector<std::pair<std::string, fs::path>> components;
  for (const auto& c : k_torch) {
    auto p = find(fixtures / "cuda13", c + "-linux-x86_64-", "-archive.tar.xz");
    if (!p) {
      std::fprintf(stderr, "no %s archive in %s: build them with scripts/make-cuda-fixtures.sh %s bench\n", c.c_str(),
                   (fixtures / "cuda13").c_str(), (fixtures / "cuda13").c_str());
      return 2;
    }
    components.push_back({c, *p});
  }
  if (!cudnn) {
    std::fprintf(stderr, "no cuDNN fixture in %s: build it with ../shared/bench/make-cudnn-fixtures.sh %s\n", fixtures.c_str(),
                 fixtures.c_str());
    return 2;
  }
  fs::remove_all(work);
  fs::create_directories(work / "archives");
  // every archive in one folder (hard links), as a download cache or a user's folder holds them
  std::vector<fs::path> archives;
  for (const auto& [c, p] : components) archives.push_back(p);
  archives.push_back(*cudnn);
  std::uint64_t total = 0;
  for (const auto& p : archives) {
    fs::create_hard_link(p, work / "archives" / p.filename());
    total += fs::file_size(p);
  }

  std::string name = cudnn->filename().string();
  std::string version = name.substr(19, name.find("_cuda") - 19);
  std::ostringstream m;
  m << "schema = 1\nname = \"toolkit-bench\"\n\n[cuda]\nversion = \"13.0.2\"\ncomponents = [";
  for (std::size_t i = 0; i < k_torch.size(); ++i) m << (i ? ", " : "") << "\"" << k_torch[i] << "\"";
  m << "]\n";
  for (const auto& [c, p] : components)
    m << "\n[[cuda.archives]]\ncomponent = \"" << c << "\"\nplatform = \"linux-x86_64\"\norigin = \"local\"\nfile = \""
      << p.filename().string() << "\"\nsha256 = \"" << sha256_of(p) << "\"\nsize = " << fs::file_size(p) << "\n";
  m << "\n[cudnn]\nversion = \"" << version << "\"\ncuda = 13\n\n[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\n"
    << "file = \"" << name << "\"\nsha256 = \"" << sha256_of(*cudnn) << "\"\nsize = " << fs::file_size(*cudnn) << "\n";
  std::ofstream(work / "bench.toml") << m.str();

  for (const auto& p : archives) warm(p);
  fs::path dest = work / "dest";
  // the peers, one archive after the other, as a setup script does
  std::string by_hand = "set -e; D=" + quoted(dest) + "; ", python = "set -e; D=" + quoted(dest) + "; i=0; ";
  for (const auto& p : archives) {
    by_hand += "sha256sum " + quoted(p) + " >/dev/null; tar -xJf " + quoted(p) + " -C \"$D\"; ";
    python += "i=$((i+1)); python3 " + quoted(peer) + " " + quoted(p) + " \"$D/$i\" >/dev/null; ";
  }
  std::vector<std::string> stage_argv{
      stackpin.string(), "stage",      (work / "bench.toml").string(), "--archives", (work / "archives").string(), "--target", "linux",
      "--dest",          dest.string()};
  std::vector<bench::Tool> tools{{"sha256sum && tar -xJf, each in turn", {"sh", "-c", by_hand}, false, {}, 0},
                                 {"python3 python-peer.py, each in turn", {"sh", "-c", python}, false, {}, 0},
                                 {"stackpin stage (verify included)", stage_argv, true, {}, 0}};
  bench::run_interleaved(tools, runs, dest);
  // the no-op restage of the tree the last stackpin run left
  auto noop = bench::measure("stackpin stage again (no-op)", std::max(runs, 5), stage_argv);
  using bench::median;
  double hand = median(tools[0].times), py = median(tools[1].times), stage = median(tools[2].times), again = noop.median;
  std::printf(
      "stackpin toolkit staging benchmark: CUDA 13 torch set (%zu archives) + %s, %.1f MiB of tar.xz, median of %d interleaved "
      "runs, warm page cache, %u cores\n\n",
      components.size(), name.c_str(), total / 1048576.0, runs, std::thread::hardware_concurrency());
  for (const auto& t : tools) std::printf("  %-40s %7.2f s   peak RSS %6.1f MiB\n", t.name.c_str(), median(t.times), t.rss / 1024.0);
  std::printf("  %-40s %7.3f s   peak RSS %6.1f MiB\n\n", noop.name.c_str(), again, noop.max_rss_kb / 1024.0);
  long rss = std::max(tools[2].rss, noop.max_rss_kb);
  struct Check {
    std::string what;
    double value, target;
  };
  std::vector<Check> checks{{"stage / sequential sha256sum && tar -xJf", stage / hand, 0.6},
                            {"stage / Python peer", stage / py, 0.6},
                            {"no-op restage / cold stage", again / stage, 0.02}};
  bool ok = true;
  for (const auto& c : checks) {
    bool pass = c.value <= c.target;
    ok = ok && pass;
    std::printf("  ratio %-40s %6.3fx (target <= %.2fx)  %s\n", c.what.c_str(), c.value, c.target, pass ? "PASS" : "FAIL");
  }
  bool rss_ok = rss <= 192 * 1024;
  std::printf("  stackpin peak RSS %32.1f MiB (target <= 192 MiB)  %s\n", rss / 1024.0, rss_ok ? "PASS" : "FAIL");
  fs::remove_all(work);
  return ok && rss_ok ? 0 : 1;
}
