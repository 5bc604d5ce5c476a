// stackpin's staging benchmark: stages realistic cuDNN archives (NVIDIA's layout, real library
// bytes) and measures, side by side in one run, what users and peer tools otherwise do:
//   by hand:          sha256sum A && tar -xJf A   |   sha256sum A && unzip -q A
//   extraction alone: tar -xJf A                  |   unzip -q A
//   the Python way:   python3 python-peer.py A DEST (hashlib, then tarfile / zipfile)
// and prints each ratio (stackpin / fastest peer, stackpin / the Python peer), the no-op restage
// against a cold stage, and stackpin's peak RSS, each against its target, and what verifying the
// whole archive before any byte of it is decoded costs (the SHA-256 pass `stackpin verify` runs,
// measured alone). The tar.xz is also staged with --decoder-memory 24, the cap for small machines
// (one decoding thread), which must stay under 64 MiB.
//
//   stackpin_bench [--fixtures DIR] [--stackpin BIN] [--peer SCRIPT] [--runs N] [--work DIR]
//
// The fixtures come from ../shared/bench/make-cudnn-fixtures.sh (slow; cache them): DIR holds
// cudnn-linux-x86_64-*.tar.xz and cudnn-windows-x86_64-*.zip. All runs read the archive from the
// page cache (one warm-up read first), write to the same file system, and the median of N runs
// is reported.
#include <iostream>
#include <map>
#include <regex>
#include <sstream>

#include "bench_util.hpp"

namespace fs = std::filesystem;
using bench::find;
using bench::Measure;
using bench::sha256_of;
using bench::warm;

int main(int argc, char** argv) {
  auto opts = bench::parse_options(argc, argv, "stackpin-bench", STACKPIN_SOURCE_DIR, true, false,
                                   "usage: stackpin_bench [--fixtures DIR] [--stackpin BIN] [--peer SCRIPT] [--runs N] [--work DIR]");
  const fs::path &fixtures = opts.fixtures, &stackpin = opts.stackpin, &peer = opts.peer, &work = opts.work;
  const int runs = opts.runs;
  auto txz = find(fixtures, "cudnn-linux-x86_64-", "-archive.tar.xz");
  auto zip = find(fixtures, "cudnn-windows-x86_64-", "-archive.zip");
  if (!txz || !zip) {
    std::fprintf(stderr, "no fixtures in %s: build them with ../shared/bench/make-cudnn-fixtures.sh %s\n", fixtures.c_str(),
                 fixtures.c_str());
    return 2;
  }
  fs::remove_all(work);
  fs::create_directories(work);

  // version and CUDA major from NVIDIA's file name
  std::smatch mm;
  std::string name = txz->filename().string();
  std::regex re(R"(cudnn-linux-x86_64-([0-9.]+)_cuda([0-9]+)-archive\.tar\.xz)");
  if (!std::regex_match(name, mm, re)) return 2;
  std::string version = mm[1], cuda = mm[2];
  std::ofstream(work / "bench.toml") << "schema = 1\nname = \"bench\"\n[cuda]\nversion = \"" << cuda << ".0.0\"\n[cudnn]\nversion = \""
                                     << version << "\"\ncuda = " << cuda << "\n"
                                     << "[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\nfile = \""
                                     << txz->filename().string() << "\"\nsha256 = \"" << sha256_of(*txz)
                                     << "\"\nsize = " << fs::file_size(*txz) << "\n"
                                     << "[[cudnn.archives]]\nplatform = \"windows-x86_64\"\norigin = \"local\"\nfile = \""
                                     << zip->filename().string() << "\"\nsha256 = \"" << sha256_of(*zip)
                                     << "\"\nsize = " << fs::file_size(*zip) << "\n";

  // A single-block stream of the same tar (`XZ_THREADS=1` in the fixture script, or
  // `xz -dc A | xz -T1 -6 > single-block/A`), when DIR/single-block/ has one: decoded on one
  // thread whatever the bound, its goal is 1.10x `xz -dc` alone.
  auto single = find(fixtures / "single-block", "cudnn-linux-x86_64-", "-archive.tar.xz");
  if (single)
    std::ofstream(work / "bench-single.toml") << "schema = 1\nname = \"bench\"\n[cudnn]\nversion = \"" << version << "\"\ncuda = " << cuda
                                              << "\n[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\nfile = \""
                                              << single->filename().string() << "\"\nsha256 = \"" << sha256_of(*single)
                                              << "\"\nsize = " << fs::file_size(*single) << "\n";

  struct Case {
    std::string label, target;
    fs::path archive;
    std::vector<std::pair<std::string, std::string>> peers;  // name -> shell command with $A and $D
    double ratio_target;                                     // stage / fastest peer
    double python_ratio_target;                              // stage / the Python peer (0: no goal)
    fs::path manifest;
    bool capped_run = false;  // also stage with --decoder-memory 24
  };
  std::vector<Case> cases{
      {"tar.xz (Linux)",
       "linux",
       *txz,
       {{"sha256sum A && tar -xJf A", "sha256sum \"$A\" >/dev/null && tar -xJf \"$A\" -C \"$D\""},
        {"tar -xJf A", "tar -xJf \"$A\" -C \"$D\""},
        {"python3 python-peer.py A D", "python3 \"$P\" \"$A\" \"$D\""}},
       0.95,
       0.60,
       work / "bench.toml",
       true},
      {"zip (Windows)",
       "windows",
       *zip,
       {{"sha256sum A && unzip -q A", "sha256sum \"$A\" >/dev/null && unzip -q \"$A\" -d \"$D\""},
        {"unzip -q A", "unzip -q \"$A\" -d \"$D\""},
        {"python3 python-peer.py A D", "python3 \"$P\" \"$A\" \"$D\""}},
       0.80,
       0.50,
       work / "bench.toml"},
  };
  if (single)
    cases.push_back({"tar.xz, one xz block (Linux)",
                     "linux",
                     *single,
                     {{"xz -dc A", "xz -T1 -dc \"$A\" >/dev/null"},
                      {"tar -xJf A", "tar -xJf \"$A\" -C \"$D\""},
                      {"python3 python-peer.py A D", "python3 \"$P\" \"$A\" \"$D\""}},
                     1.10,
                     0,
                     work / "bench-single.toml"});

  bool all_ok = true;
  long peak_rss = 0, capped_rss = 0;
  std::printf("stackpin staging benchmark: %s and %s, median of %d interleaved runs, warm page cache\n\n", txz->filename().c_str(),
              zip->filename().c_str(), runs);
  for (const auto& c : cases) {
    warm(c.archive);
    fs::path dest = work / "dest";
    std::vector<bench::Tool> tools;
    for (const auto& [pname, cmd] : c.peers) {
      std::string script = "A='" + c.archive.string() + "'; D='" + dest.string() + "'; P='" + peer.string() + "'; " + cmd;
      tools.push_back({pname, {"sh", "-c", script}, false, {}, 0});
    }
    std::vector<std::string> stage_argv{
        stackpin.string(), "stage",  c.manifest.string(), "--archives", c.archive.parent_path().string(), "--target",
        c.target,          "--dest", dest.string()};
    const bool xz = c.capped_run;
    if (xz) {
      auto capped_argv = stage_argv;
      capped_argv.insert(capped_argv.end(), {"--decoder-memory", "24"});
      tools.push_back({"stackpin stage --decoder-memory 24", capped_argv, true, {}, 0});
    }
    tools.push_back({"stackpin stage (verify included)", stage_argv, true, {}, 0});
    bench::run_interleaved(tools, runs, dest);
    using bench::median;
    std::vector<Measure> peers;
    const Measure* python = nullptr;
    for (const auto& t : tools)
      if (!t.stackpin) peers.push_back({t.name, median(t.times), t.rss});
    for (const auto& p : peers)
      if (p.name.rfind("python3", 0) == 0) python = &p;
    Measure stage{tools.back().name, median(tools.back().times), tools.back().rss};
    std::optional<Measure> capped;
    if (xz) capped = Measure{tools[tools.size() - 2].name, median(tools[tools.size() - 2].times), tools[tools.size() - 2].rss};
    Measure noop = bench::measure("stackpin stage again (no-op)", std::max(runs, 5), stage_argv);
    // What proving the archive before a decoder sees it costs: the same SHA-256 pass over the
    // same file, alone (stage runs it first, then decodes, checking each chunk against the keyed
    // tag taken in that pass).
    std::vector<std::string> verify_argv{stackpin.string(),
                                         "verify",
                                         c.archive.string(),
                                         "--sha256",
                                         sha256_of(c.archive),
                                         "--size",
                                         std::to_string(fs::file_size(c.archive))};
    Measure hash_first = bench::measure("  of which the hash first (verify)", std::max(runs, 3), verify_argv);
    const Measure* fastest = &peers.front();
    for (const auto& p : peers)
      if (p.median < fastest->median) fastest = &p;
    double ratio = stage.median / fastest->median;
    double noop_ratio = noop.median / stage.median;
    peak_rss = std::max({peak_rss, stage.max_rss_kb, noop.max_rss_kb});
    std::printf("%s: %s (%.1f MiB)\n", c.label.c_str(), c.archive.filename().c_str(), fs::file_size(c.archive) / 1048576.0);
    for (const auto& p : peers) std::printf("  %-34s %7.2f s   peak RSS %6.1f MiB\n", p.name.c_str(), p.median, p.max_rss_kb / 1024.0);
    std::printf("  %-34s %7.2f s   peak RSS %6.1f MiB\n", stage.name.c_str(), stage.median, stage.max_rss_kb / 1024.0);
    if (capped) {
      std::printf("  %-34s %7.2f s   peak RSS %6.1f MiB\n", capped->name.c_str(), capped->median, capped->max_rss_kb / 1024.0);
      capped_rss = std::max(capped_rss, capped->max_rss_kb);
    }
    std::printf("  %-34s %7.2f s   (%.0f%% of the stage)\n", hash_first.name.c_str(), hash_first.median,
                100.0 * hash_first.median / stage.median);
    std::printf("  %-34s %7.3f s   peak RSS %6.1f MiB\n", noop.name.c_str(), noop.median, noop.max_rss_kb / 1024.0);
    bool ok1 = ratio <= c.ratio_target, ok2 = noop_ratio <= 0.05;
    std::printf("  ratio stage / fastest peer (%s): %.2fx  (target <= %.2fx)  %s\n", fastest->name.c_str(), ratio, c.ratio_target,
                ok1 ? "PASS" : "FAIL");
    double python_ratio = python ? stage.median / python->median : 0;
    bool ok3 = c.python_ratio_target == 0 || (python && python_ratio <= c.python_ratio_target);
    if (c.python_ratio_target > 0)
      std::printf("  ratio stage / the Python peer:     %.2fx  (target <= %.2fx)  %s\n", python_ratio, c.python_ratio_target,
                  ok3 ? "PASS" : "FAIL");
    else
      std::printf("  ratio stage / the Python peer:     %.2fx\n", python_ratio);
    std::printf("  ratio no-op restage / cold stage:  %.3fx (target <= 0.05x)  %s\n\n", noop_ratio, ok2 ? "PASS" : "FAIL");
    all_ok = all_ok && ok1 && ok2 && ok3;
    fs::remove_all(dest);
  }
  bool rss_ok = peak_rss <= 192 * 1024, capped_ok = capped_rss < 64 * 1024;
  std::printf("stackpin peak RSS: %.1f MiB (target <= 192 MiB)  %s\n", peak_rss / 1024.0, rss_ok ? "PASS" : "FAIL");
  std::printf("stackpin peak RSS with --decoder-memory 24: %.1f MiB (target < 64 MiB)  %s\n", capped_rss / 1024.0,
              capped_ok ? "PASS" : "FAIL");
  rss_ok = rss_ok && capped_ok;
  fs::remove_all(work);
  return all_ok && rss_ok ? 0 : 1;
}
