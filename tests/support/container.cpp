// Container tests' helpers: finding the engine, running a container, skipping with a reason when there is none.
#include "container.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <sstream>

namespace testing_support::container {
namespace fs = std::filesystem;

namespace {
constexpr const char* k_start_hint = "start one with scripts/container-engine.sh start && scripts/container-engine.sh images";

std::string unique_name() {
  static std::atomic<int> counter{0};
  return "stackpin-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

std::string first_line(const std::string& s) {
  auto end = s.find('\n');
  return s.substr(0, end == std::string::npos ? s.size() : end);
}

void add_container_options(std::vector<std::string>& argv, const Options& o) {
  argv.insert(argv.end(), {"--network", o.network.empty() ? "none" : o.network, "--label", "stackpin-test=1"});
  for (const auto& m : o.mounts) {
    argv.push_back("--mount");
    argv.push_back("type=bind,source=" + m.host.string() + ",target=" + m.target + (m.read_only ? ",readonly" : ""));
  }
  for (const auto& e : o.env) argv.insert(argv.end(), {"--env", e});
  if (!o.workdir.empty()) argv.insert(argv.end(), {"--workdir", o.workdir});
}
}  // namespace

std::string docker_binary() {
  if (const char* env = std::getenv("STACKPIN_DOCKER"); env && *env) return env;
  if (::access("/usr/bin/docker", X_OK) == 0) return "/usr/bin/docker";
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      if (!dir.empty() && ::access((fs::path(dir) / "docker").c_str(), X_OK) == 0) return (fs::path(dir) / "docker").string();
    }
  }
  return {};
}

RunResult docker(const std::vector<std::string>& args, int timeout_s) {
  std::string client = docker_binary();
  if (client.empty()) return RunResult{127, "", "no docker client"};
  std::vector<std::string> argv{"/usr/bin/timeout", "--kill-after=10", std::to_string(timeout_s), client};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_process(argv);
  if (r.exit_code == 124)
    r.err += "\n[test harness] docker " + (args.empty() ? std::string() : args[0]) + " timed out after " + std::to_string(timeout_s) + " s";
  return r;
}

bool engine_available(std::string& why) {
  static const std::string reason = [] {
    std::string client = docker_binary();
    if (client.empty()) return std::string("no docker client (scripts/install-deps.sh --tools installs docker.io; or set STACKPIN_DOCKER)");
    auto r = docker({"version", "--format", "{{.Server.Version}}"}, 30);
    if (r.exit_code != 0) {
      std::string said = first_line(r.err.empty() ? r.out : r.err);
      if (said.empty()) said = "exit " + std::to_string(r.exit_code);
      return "no container engine answers " + client + " (" + said + "): " + k_start_hint;
    }
    return std::string();
  }();
  why = reason;
  return reason.empty();
}

bool image_exists(const std::string& image) { return docker({"image", "inspect", "--format", "{{.Id}}", image}, 30).exit_code == 0; }

std::string unavailable(const std::vector<std::string>& images) {
  std::string why;
  if (!engine_available(why)) return why;
  for (const auto& image : images) {
    if (!image_exists(image)) return "image " + image + " is missing: build it with scripts/container-engine.sh images";
  }
  return {};
}

RunResult run(const Options& o, const std::vector<std::string>& command, int timeout_s) {
  std::string name = unique_name();
  std::vector<std::string> argv{"run", "--rm", "--name", name};
  add_container_options(argv, o);
  argv.push_back(o.image);
  argv.insert(argv.end(), command.begin(), command.end());
  auto r = docker(argv, timeout_s);
  if (r.exit_code == 124) docker({"rm", "--force", name}, 30);
  return r;
}

Container::Container(const Options& o, int timeout_s) : m_name(unique_name()) {
  std::vector<std::string> argv{"run", "--detach", "--rm", "--name", m_name, "--init"};
  add_container_options(argv, o);
  argv.insert(argv.end(), {o.image, "sleep", "infinity"});
  auto r = docker(argv, timeout_s);
  if (r.exit_code != 0) m_error = "docker run " + o.image + " failed: " + describe(r);
}

Container::~Container() { docker({"rm", "--force", m_name}, 60); }

RunResult Container::exec(const std::vector<std::string>& command, int timeout_s, const std::vector<std::string>& env) {
  std::vector<std::string> argv{"exec"};
  for (const auto& e : env) argv.insert(argv.end(), {"--env", e});
  argv.push_back(m_name);
  argv.insert(argv.end(), command.begin(), command.end());
  return docker(argv, timeout_s);
}

RunResult Container::bash(const std::string& script, int timeout_s, const std::vector<std::string>& env) {
  return exec({"bash", "-c", script}, timeout_s, env);
}

std::string describe(const RunResult& r) { return show(r); }

}  // namespace testing_support::container
