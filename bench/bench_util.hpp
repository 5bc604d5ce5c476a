#pragma once
// Shared by the benchmarks in bench/: running a command with its wall time and peak RSS, medians,
// the fixture lookup and a warm page cache. Benchmarks are programs, not tests (README
// "Performance").
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace bench {
namespace fs = std::filesystem;

// A free TCP port on 127.0.0.1 (bound and released).
inline int free_port() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (s < 0 || ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    std::perror("socket");
    std::exit(2);
  }
  int port = ntohs(a.sin_port);
  ::close(s);
  return port;
}

// Whether something accepts connections on 127.0.0.1:port.
inline bool answers(int port) {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = s >= 0 && ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (s >= 0) ::close(s);
  return ok;
}

// Starts a server (argv, found on PATH, its output to /dev/null) and waits up to 10 s for it to
// accept on `port`. Returns its pid, or 0 when it did not start (a message is printed).
inline pid_t start_server(std::vector<std::string> argv, int port) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    std::fprintf(stderr, "cannot start %s\n", argv[0].c_str());
    return 0;
  }
  for (int i = 0; i < 200 && !answers(port); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (answers(port)) return pid;
  std::fprintf(stderr, "%s did not start on port %d\n", argv[0].c_str(), port);
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
  return 0;
}

inline void stop_server(pid_t pid) {
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
}

struct Run {
  double seconds = 0;
  long max_rss_kb = 0;
  int status = 0;
};

// Runs argv (found on PATH) with stdout to /dev/null and returns its wall time, peak RSS and exit.
inline Run run(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ) != 0) {
    std::perror(args[0]);
    std::exit(2);
  }
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  auto t1 = std::chrono::steady_clock::now();
  posix_spawn_file_actions_destroy(&fa);
  Run r;
  r.seconds = std::chrono::duration<double>(t1 - t0).count();
  r.max_rss_kb = ru.ru_maxrss;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

struct Measure {
  std::string name;
  double median = 0;
  long max_rss_kb = 0;
};

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The fixture's SHA-256, by the tool users know.
inline std::string sha256_of(const fs::path& p) {
  std::string cmd = "sha256sum '" + p.string() + "'";
  FILE* f = popen(cmd.c_str(), "r");
  char buf[128] = {};
  if (!f || !std::fgets(buf, sizeof buf, f)) std::exit(2);
  pclose(f);
  return std::string(buf, 64);
}

// Reads a file once so that every tool measured reads it from the page cache.
inline void warm(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> buf(1 << 20);
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
  }
}

// The first file in dir named prefix...suffix.
inline std::optional<fs::path> find(const fs::path& dir, const std::string& prefix, const std::string& suffix) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      return e.path();
  }
  return std::nullopt;
}

// One tool measured by a staging benchmark: a peer, or stackpin itself (which creates DEST).
struct Tool {
  std::string name;
  std::vector<std::string> argv;
  bool stackpin = false;
  std::vector<double> times;
  long rss = 0;
};

// Runs every tool `runs` times in interleaved rounds (each peer, then stackpin, then again), so that
// a slow moment of the machine hits every tool alike. Before each run DEST is emptied (and made for
// a peer) and dirty pages are flushed, untimed. A tool that fails ends the benchmark (exit 1).
inline void run_interleaved(std::vector<Tool>& tools, int runs, const fs::path& dest) {
  for (int round = 0; round < runs; ++round)
    for (auto& t : tools) {
      fs::remove_all(dest);
      if (!t.stackpin) fs::create_directories(dest);
      sync();
      Run r = run(t.argv);
      if (r.status != 0) {
        std::fprintf(stderr, "%s failed (exit %d)\n", t.name.c_str(), r.status);
        std::exit(1);
      }
      t.times.push_back(r.seconds);
      t.rss = std::max(t.rss, r.max_rss_kb);
    }
}

// The median time and peak RSS of `runs` runs of argv (a failure ends the benchmark, exit 1).
inline Measure measure(const std::string& name, int runs, const std::vector<std::string>& argv) {
  std::vector<double> t;
  long rss = 0;
  for (int i = 0; i < runs; ++i) {
    Run r = run(argv);
    if (r.status != 0) {
      std::fprintf(stderr, "%s failed (exit %d)\n", name.c_str(), r.status);
      std::exit(1);
    }
    t.push_back(r.seconds);
    rss = std::max(rss, r.max_rss_kb);
  }
  return {name, median(t), rss};
}

// The options the benchmarks take. Defaults: the fixtures in /var/cache/stackpin-fixtures, the
// stackpin binary of this build tree, the Python peer in ../shared/bench, 3 runs, a work folder
// named `work_name` in the system's temp folder.
struct Options {
  fs::path fixtures = "/var/cache/stackpin-fixtures";
  fs::path stackpin, peer, work;
  int runs = 3;
  int port = 0;
};

// Parses --fixtures DIR, --stackpin BIN, --runs N, --work DIR, and --peer SCRIPT or --port N
// where the benchmark takes them; prints `usage` and exits 2 on anything else, and on a stackpin
// binary (or peer script) that is not there.
inline Options parse_options(int argc, char** argv, const std::string& work_name, const fs::path& source_dir, bool takes_peer,
                             bool takes_port, const char* usage) {
  Options o;
  o.stackpin = fs::canonical("/proc/self/exe").parent_path().parent_path() / "src" / "stackpin";
  o.peer = source_dir / ".." / "shared" / "bench" / "python-peer.py";
  o.work = fs::temp_directory_path() / work_name;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--fixtures")
      o.fixtures = next();
    else if (a == "--stackpin")
      o.stackpin = next();
    else if (a == "--runs")
      o.runs = std::max(1, std::stoi(next()));
    else if (a == "--work")
      o.work = next();
    else if (takes_peer && a == "--peer")
      o.peer = next();
    else if (takes_port && a == "--port")
      o.port = std::stoi(next());
    else {
      std::fprintf(stderr, "%s\n", usage);
      std::exit(2);
    }
  }
  // the programs measured must be there before anything is built or timed
  std::vector<fs::path> needed{o.stackpin};
  if (takes_peer) needed.push_back(o.peer);
  for (const auto& p : needed) {
    if (!fs::exists(p)) {
      std::fprintf(stderr, "need %s\n", p.c_str());
      std::exit(2);
    }
  }
  return o;
}

}  // namespace bench
