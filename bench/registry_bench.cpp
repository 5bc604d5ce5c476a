// stackpin's registry mirror benchmark: the CUDA 13 torch set plus cuDNN (11 archives, the
// realistic fixtures of toolkit_bench) in the reference OCI registry (Debian's docker-registry)
// on 127.0.0.1, measured side by side in one run against what a user would otherwise run:
//   pull:  curl of each blob, one after the other (GET /v2/REPO/blobs/sha256:...)
//          against `stackpin fetch --mirror oci+http://...` into an empty cache (every blob's size
//          and SHA-256 checked as it arrives, renamed into the cache under this boot's name)
//          and the same fetch again, everything cached
//   push:  curl -T of each archive (POST an upload, PUT it whole with its digest), one after the other
//          against `stackpin mirror push` (each archive hashed as it is read and committed only
//          when it is its pin; chunked uploads; the manifests and the index tagged last)
// and prints each ratio against its target and stackpin's peak RSS.
//
//   stackpin_registry_bench [--fixtures DIR] [--stackpin BIN] [--runs N] [--work DIR] [--port N]
//
// DIR holds cudnn-linux-x86_64-*_cuda13-archive.tar.xz and cuda13/<component>-linux-x86_64-*.tar.xz
// (../shared/bench/make-cudnn-fixtures.sh DIR, scripts/make-cuda-fixtures.sh DIR/cuda13 bench).
// Rounds are interleaved (each tool once per round), each push goes to a repository of its own
// (the registry holds nothing for it yet), and the median of N rounds is reported.

#include <sstream>
#include <thread>

#include "bench_util.hpp"

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> k_torch{"cuda_nvrtc", "cuda_cudart", "cuda_cupti",  "libcublas", "libcufft",
                                       "libcurand",  "libcusolver", "libcusparse", "cuda_nvtx", "libnvjitlink"};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

struct Archive {
  std::string component;  // "" for cuDNN
  fs::path path;
  std::string sha256;
  std::uint64_t size = 0;
};

}  // namespace

int main(int argc, char** argv) {
  auto opts = bench::parse_options(argc, argv, "stackpin-registry-bench", ".", false, true,
                                   "usage: stackpin_registry_bench [--fixtures DIR] [--stackpin BIN] [--runs N] [--work DIR] [--port N]");
  const fs::path &fixtures = opts.fixtures, &stackpin = opts.stackpin, &work = opts.work;
  const int runs = opts.runs;
  for (const char* tool : {"curl", "docker-registry"})
    if (std::system((std::string("command -v ") + tool + " >/dev/null").c_str()) != 0) {
      std::fprintf(stderr, "need %s on PATH (scripts/install-deps.sh --tools)\n", tool);
      return 2;
    }
  std::vector<Archive> archives;
  for (const auto& c : k_torch) {
    auto p = bench::find(fixtures / "cuda13", c + "-linux-x86_64-", "-archive.tar.xz");
    if (!p) {
      std::fprintf(stderr, "no %s archive in %s: build them with scripts/make-cuda-fixtures.sh %s bench\n", c.c_str(),
                   (fixtures / "cuda13").c_str(), (fixtures / "cuda13").c_str());
      return 2;
    }
    archives.push_back({c, *p, "", 0});
  }
  auto cudnn = bench::find(fixtures, "cudnn-linux-x86_64-", "_cuda13-archive.tar.xz");
  if (!cudnn) {
    std::fprintf(stderr, "no cuDNN fixture in %s: build it with ../shared/bench/make-cudnn-fixtures.sh %s\n", fixtures.c_str(),
                 fixtures.c_str());
    return 2;
  }
  archives.push_back({"", *cudnn, "", 0});
  fs::remove_all(work);
  fs::create_directories(work / "archives");
  std::uint64_t total = 0;
  for (auto& a : archives) {
    fs::create_hard_link(a.path, work / "archives" / a.path.filename());
    a.sha256 = bench::sha256_of(a.path);
    a.size = fs::file_size(a.path);
    total += a.size;
    bench::warm(a.path);
  }

  // the stack, pinned with NVIDIA's URLs: a mirror serves them in NVIDIA's place
  std::string name = cudnn->filename().string();
  std::string version = name.substr(19, name.find("_cuda") - 19);
  std::ostringstream m;
  m << "schema = 1\nname = \"registry-bench\"\n\n[cuda]\nversion = \"13.0.2\"\ncomponents = [";
  for (std::size_t i = 0; i < k_torch.size(); ++i) m << (i ? ", " : "") << "\"" << k_torch[i] << "\"";
  m << "]\n";
  for (const auto& a : archives) {
    if (a.component.empty()) continue;
    m << "\n[[cuda.archives]]\ncomponent = \"" << a.component << "\"\nplatform = \"linux-x86_64\"\norigin = \"local\"\nurl = \""
      << "https://developer.download.nvidia.com/compute/cuda/redist/" << a.component << "/linux-x86_64/" << a.path.filename().string()
      << "\"\nsha256 = \"" << a.sha256 << "\"\nsize = " << a.size << "\n";
  }
  m << "\n[cudnn]\nversion = \"" << version << "\"\ncuda = 13\n\n[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\n"
    << "url = \"https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-x86_64/" << name << "\"\nsha256 = \""
    << archives.back().sha256 << "\"\nsize = " << archives.back().size << "\n";
  std::ofstream(work / "bench.toml") << m.str();

  // the registry, its storage in the work folder
  int port = opts.port ? opts.port : bench::free_port();
  const std::string host = "127.0.0.1:" + std::to_string(port);
  std::ofstream(work / "registry.yml") << "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n"
                                       << "    rootdirectory: " << (work / "registry").string() << "\nhttp:\n  addr: " << host << "\n";
  pid_t registry = bench::start_server({"docker-registry", "serve", (work / "registry.yml").string()}, port);
  if (!registry) return 2;
  auto stop = [&] { bench::stop_server(registry); };
  const std::string api = "http://" + host + "/v2/";

  // push: curl -T of each archive into repository REPO, one after the other
  auto curl_push = [&](const std::string& repo) {
    std::string sh = "set -e; ";
    for (const auto& a : archives)
      sh += "loc=$(curl -sSf -o /dev/null -w '%header{location}' -X POST " + quoted(api + repo + "/blobs/uploads/") +
            "); curl -sSf -o /dev/null -T " + quoted(a.path.string()) + " \"$loc&digest=sha256:" + a.sha256 + "\"; ";
    return std::vector<std::string>{"sh", "-c", sh};
  };
  auto stackpin_push = [&](const std::string& repo) {
    return std::vector<std::string>{stackpin.string(),
                                    "mirror",
                                    "push",
                                    (work / "bench.toml").string(),
                                    "oci+http://" + host + "/" + repo,
                                    "--archives",
                                    (work / "archives").string(),
                                    "--cache-dir",
                                    (work / "push-cache").string()};
  };
  std::vector<double> push_curl, push_mine;
  long push_rss = 0;
  for (int round = 0; round < runs; ++round) {
    for (int who = 0; who < 2; ++who) {
      std::string repo = std::string(who ? "stackpin" : "curl") + "-push-" + std::to_string(round);
      sync();
      bench::Run r = bench::run(who ? stackpin_push(repo) : curl_push(repo));
      if (r.status != 0) {
        std::fprintf(stderr, "%s push failed (exit %d)\n", who ? "stackpin" : "curl", r.status);
        stop();
        return 1;
      }
      (who ? push_mine : push_curl).push_back(r.seconds);
      if (who) push_rss = std::max(push_rss, r.max_rss_kb);
    }
  }

  // pull from what stackpin pushed: curl of each blob, against fetch into an empty cache
  const std::string repo = "stackpin-push-0";
  std::string curl_pull = "set -e; ";
  for (const auto& a : archives)
    curl_pull += "curl -sSf -o " + quoted((work / "pulled" / a.path.filename()).string()) + " " +
                 quoted(api + repo + "/blobs/sha256:" + a.sha256) + "; ";
  std::vector<std::string> fetch_argv{
      stackpin.string(),        "fetch", (work / "bench.toml").string(), "--mirror", "oci+http://" + host + "/" + repo, "--cache-dir",
      (work / "cache").string()};
  std::vector<double> pull_curl, pull_mine, pull_cached;
  long pull_rss = 0;
  for (int round = 0; round < runs; ++round) {
    fs::remove_all(work / "pulled");
    fs::create_directories(work / "pulled");
    sync();
    bench::Run c = bench::run({"sh", "-c", curl_pull});
    fs::remove_all(work / "cache");
    sync();
    bench::Run s = bench::run(fetch_argv);
    if (c.status != 0 || s.status != 0) {
      std::fprintf(stderr, "pull failed (curl exit %d, stackpin exit %d)\n", c.status, s.status);
      stop();
      return 1;
    }
    pull_curl.push_back(c.seconds);
    pull_mine.push_back(s.seconds);
    pull_rss = std::max(pull_rss, s.max_rss_kb);
  }
  // like every timed run, each starts with nothing waiting to be written back (the last pull's
  // 1.3 GiB would otherwise be written out while these run)
  for (int i = 0; i < std::max(runs, 5); ++i) {
    sync();
    pull_cached.push_back(bench::run(fetch_argv).seconds);
  }
  stop();

  using bench::median;
  std::printf(
      "stackpin registry benchmark: CUDA 13 torch set + cuDNN (%zu archives, %.1f MiB) in docker-registry on 127.0.0.1, median of %d "
      "interleaved runs, %u cores\n\n",
      archives.size(), total / 1048576.0, runs, std::thread::hardware_concurrency());
  std::printf("  %-46s %7.2f s\n", "curl, each blob in turn (pull)", median(pull_curl));
  std::printf("  %-46s %7.2f s   peak RSS %6.1f MiB\n", "stackpin fetch --mirror oci+http:// (pull)", median(pull_mine), pull_rss / 1024.0);
  std::printf("  %-46s %7.3f s\n", "stackpin fetch again (all cached)", median(pull_cached));
  std::printf("  %-46s %7.2f s\n", "curl -T, each archive in turn (push)", median(push_curl));
  std::printf("  %-46s %7.2f s   peak RSS %6.1f MiB\n\n", "stackpin mirror push", median(push_mine), push_rss / 1024.0);
  // every round, in order: how much the medians hide
  auto rounds = [](const char* what, const std::vector<double>& v) {
    std::printf("  %-22s", what);
    for (double x : v) std::printf(" %5.2f", x);
    std::printf("\n");
  };
  rounds("rounds, pull curl", pull_curl);
  rounds("rounds, pull stackpin", pull_mine);
  rounds("rounds, push curl -T", push_curl);
  rounds("rounds, push stackpin", push_mine);
  std::printf("\n");
  struct Check {
    std::string what;
    double value, target;
  };
  std::vector<Check> checks{{"pull: stackpin fetch / curl", median(pull_mine) / median(pull_curl), 1.1},
                            {"pull again, cached / curl", median(pull_cached) / median(pull_curl), 0.02},
                            {"push: stackpin mirror push / curl -T", median(push_mine) / median(push_curl), 1.1}};
  bool ok = true;
  for (const auto& c : checks) {
    bool pass = c.value <= c.target;
    ok = ok && pass;
    std::printf("  ratio %-40s %6.3fx (target <= %.2fx)  %s\n", c.what.c_str(), c.value, c.target, pass ? "PASS" : "FAIL");
  }
  long rss = std::max(pull_rss, push_rss);
  bool rss_ok = rss <= 64 * 1024;
  std::printf("  stackpin peak RSS %32.1f MiB (target <= 64 MiB)  %s\n", rss / 1024.0, rss_ok ? "PASS" : "FAIL");
  fs::remove_all(work);
  return ok && rss_ok ? 0 : 1;
}
