// stackpin's image benchmark: the runtime image of the CUDA 13 torch component set plus cuDNN,
// built hermetically (`[targets.docker] cuda = "archive"`, `stackpin generate dockerfile
// --context`) from the fixture archives (scripts/make-cuda-fixtures.sh DIR/cuda13 bench) on the
// local Debian base (scripts/container-engine.sh images), against the Dockerfile a user would
// otherwise write: COPY the archives, unpack every one into /usr/local/cuda, delete the archives
// in a later RUN. Both are built in one run with the same engine and base, without cache; the
// benchmark prints what each adds to the base, the archives' total, the run-time files the image
// holds, the ratios, the build times, and every layer of stackpin's image.
//
//   stackpin_image_bench [--fixtures DIR] [--stackpin BIN] [--work DIR] [--base IMAGE] [--docker BIN]
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "bench_util.hpp"

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> k_torch{"cuda_nvrtc", "cuda_cudart", "cuda_cupti",  "libcublas", "libcufft",
                                       "libcurand",  "libcusolver", "libcusparse", "cuda_nvtx", "libnvjitlink"};

// stdout of a shell command ("" on failure).
std::string capture(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    if (pclose(p) != 0) return {};
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::uint64_t to_u64(const std::string& s) { return s.empty() ? 0 : std::stoull(s); }
double mib(std::uint64_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); }

}  // namespace

int main(int argc, char** argv) {
  fs::path fixtures = "/var/cache/stackpin-fixtures", work = fs::temp_directory_path() / "stackpin-image-bench";
  fs::path stackpin = fs::canonical("/proc/self/exe").parent_path().parent_path() / "src" / "stackpin";
  std::string base = "local/debian:bookworm", docker = "/usr/bin/docker";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--fixtures")
      fixtures = argv[i + 1];
    else if (a == "--stackpin")
      stackpin = argv[i + 1];
    else if (a == "--work")
      work = argv[i + 1];
    else if (a == "--base")
      base = argv[i + 1];
    else if (a == "--docker")
      docker = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: stackpin_image_bench [--fixtures DIR] [--stackpin BIN] [--work DIR] [--base IMAGE] [--docker BIN]\n");
      return 2;
    }
  }
  if (capture(docker + " image inspect --format '{{.Size}}' " + base + " 2>/dev/null").empty()) {
    std::fprintf(
        stderr, "no %s image: start the engine and build it with scripts/container-engine.sh start && scripts/container-engine.sh images\n",
        base.c_str());
    return 2;
  }
  fs::path dir = fixtures / "cuda13";
  std::vector<std::pair<std::string, fs::path>> components;
  std::uint64_t archive_bytes = 0;
  for (const auto& c : k_torch) {
    auto p = bench::find(dir, c + "-linux-x86_64-", "-archive.tar.xz");
    if (!p) {
      std::fprintf(stderr, "no %s archive in %s: build them with scripts/make-cuda-fixtures.sh %s bench\n", c.c_str(), dir.c_str(),
                   dir.c_str());
      return 2;
    }
    components.push_back({c, *p});
    archive_bytes += fs::file_size(*p);
  }
  auto cudnn = bench::find(dir, "cudnn-linux-x86_64-", "_cuda13-archive.tar.xz");
  if (!cudnn) {
    std::fprintf(stderr, "no cuDNN archive in %s: scripts/make-cuda-fixtures.sh %s bench builds it\n", dir.c_str(), dir.c_str());
    return 2;
  }
  archive_bytes += fs::file_size(*cudnn);
  fs::remove_all(work);
  fs::create_directories(work / "naive" / "archives");

  // the manifest: the ten components and cuDNN, pinned as local archives, on the plain base
  std::string name = cudnn->filename().string();
  std::string version = name.substr(19, name.find("_cuda") - 19);
  std::ostringstream m;
  // the torch set's required components by name (its optional libcufile is not in the fixtures)
  m << "schema = 1\nname = \"torch-set-image\"\n\n[cuda]\nversion = \"13.0.2\"\ncomponents = [";
  for (std::size_t i = 0; i < k_torch.size(); ++i) m << (i ? ", " : "") << "\"" << k_torch[i] << "\"";
  m << "]\n";
  for (const auto& [c, p] : components)
    m << "\n[[cuda.archives]]\ncomponent = \"" << c << "\"\nplatform = \"linux-x86_64\"\norigin = \"local\"\nfile = \""
      << p.filename().string() << "\"\nsha256 = \"" << bench::sha256_of(p) << "\"\nsize = " << fs::file_size(p) << "\n";
  m << "\n[cudnn]\nversion = \"" << version
    << "\"\ncuda = 13\n\n[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\nfile = \"" << name << "\"\nsha256 = \""
    << bench::sha256_of(*cudnn) << "\"\nsize = " << fs::file_size(*cudnn) << "\n\n[targets.docker]\ncuda = \"archive\"\nbase_image = \""
    << base << "\"\n";
  std::ofstream(work / "stack.toml") << m.str();
  auto gen = bench::run({stackpin.string(), "generate", "dockerfile", (work / "stack.toml").string(), "--context",
                         (work / "stackpin").string(), "--archives", dir.string()});
  if (gen.status != 0) {
    std::fprintf(stderr, "stackpin generate dockerfile failed (exit %d)\n", gen.status);
    return 1;
  }
  // what a user writes by hand: the same archives, unpacked in place, deleted afterwards
  std::ofstream naive(work / "naive" / "Dockerfile");
  naive << "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY archives/ /tmp/archives/\n"
           "RUN command -v xz >/dev/null || (apt-get update && apt-get install -y --no-install-recommends xz-utils && rm -rf "
           "/var/lib/apt/lists/*)\n"
           "RUN mkdir -p /usr/local/cuda && for a in /tmp/archives/*.tar.xz; do tar -xJf \"$a\" -C /usr/local/cuda --strip-components=1; "
           "done\n"
           "RUN rm -rf /tmp/archives\n";
  naive.close();
  // hard links where the work folder shares the fixtures' file system, copies elsewhere
  auto link = [](const fs::path& from, const fs::path& to) {
    std::error_code ec;
    fs::create_hard_link(from, to, ec);
    if (ec) fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  };
  for (const auto& [c, p] : components) link(p, work / "naive" / "archives" / p.filename());
  link(*cudnn, work / "naive" / "archives" / cudnn->filename());

  const std::string tag = "stackpin-bench/torch-set-runtime:latest", naive_tag = "stackpin-bench/torch-set-naive:latest";
  auto built = [&](const std::string& t, const std::vector<std::string>& extra, const fs::path& ctx) {
    std::vector<std::string> a = {docker, "build", "-q", "--no-cache", "--build-arg", "BASE_IMAGE=" + base, "-t", t};
    a.insert(a.end(), extra.begin(), extra.end());
    a.push_back(ctx.string());
    return bench::run(a);
  };
  auto ours = built(tag, {"--target", "runtime"}, work / "stackpin");
  auto theirs = built(naive_tag, {}, work / "naive");
  if (ours.status != 0 || theirs.status != 0) {
    std::fprintf(stderr, "a build failed (stackpin's: exit %d, by hand: exit %d)\n", ours.status, theirs.status);
    return 1;
  }
  std::uint64_t base_size = to_u64(capture(docker + " image inspect --format '{{.Size}}' " + base));
  std::uint64_t our_total = to_u64(capture(docker + " image inspect --format '{{.Size}}' " + tag));
  std::uint64_t their_total = to_u64(capture(docker + " image inspect --format '{{.Size}}' " + naive_tag));
  if (base_size == 0 || our_total <= base_size || their_total <= base_size) {
    std::fprintf(stderr, "docker image inspect did not give the images' sizes\n");
    return 1;
  }
  std::uint64_t our_size = our_total - base_size, their_size = their_total - base_size;
  std::uint64_t runtime_files =
      to_u64(capture(docker + " run --rm " + tag +
                     " sh -c \"find /usr/local/cuda-13.0 /opt/cudnn-* -type f -printf '%s\\n' | awk '{s+=\\$1} END {print s}'\""));
  if (runtime_files == 0) {
    std::fprintf(stderr, "could not list the run-time files inside %s\n", tag.c_str());
    return 1;
  }
  std::string layers = capture(docker + " history --no-trunc --format '{{.Size}}\t{{.CreatedBy}}' " + tag + " | head -n 12");

  std::printf("image benchmark: CUDA 13 torch set (%zu components) + cuDNN %s, runtime image on %s\n", components.size(), version.c_str(),
              base.c_str());
  std::printf("  archives (compressed)                        %9.1f MiB\n", mib(archive_bytes));
  std::printf("  run-time files in stackpin's image            %9.1f MiB\n", mib(runtime_files));
  std::printf("  stackpin's image, added to the base           %9.1f MiB   (built in %.1f s)\n", mib(our_size), ours.seconds);
  std::printf("  by hand (COPY, unpack, rm), added to the base %9.1f MiB   (built in %.1f s)\n", mib(their_size), theirs.seconds);
  std::printf("  ratio stackpin / by hand                      %9.2fx\n", static_cast<double>(our_size) / static_cast<double>(their_size));
  std::printf("  ratio stackpin / archives                     %9.2fx\n",
              static_cast<double>(our_size) / static_cast<double>(archive_bytes));
  std::printf("  ratio stackpin / its run-time files           %9.2fx   (1.00: no byte in a layer that a later one deletes)\n",
              static_cast<double>(our_size) / static_cast<double>(runtime_files));
  std::printf("  stackpin's layers (newest first):\n");
  std::istringstream in(layers);
  for (std::string line; std::getline(in, line);) std::printf("    %s\n", line.substr(0, 150).c_str());
  bench::run({docker, "rmi", "-f", tag, naive_tag});
  return 0;
}
