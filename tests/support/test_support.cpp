// Test helpers: source and binary paths, scratch directories, running stackpin and capturing its output.
#include "test_support.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace testing_support {
namespace fs = std::filesystem;

fs::path source_dir() { return STACKPIN_SOURCE_DIR; }
fs::path shared_dir() { return STACKPIN_SHARED_DIR; }
fs::path binary() { return STACKPIN_BINARY; }

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string tool_path(const std::string& name) {
  auto r = run_process({"/bin/sh", "-c", "command -v \"$1\"", "sh", name});
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.exit_code == 0 ? r.out : "";
}

bool have_tool(const std::string& name) { return !tool_path(name).empty(); }

RunResult run_process(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& cwd) {
  return Process(argv, env, cwd).wait();
}

Process::Process(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& cwd) {
  char out_tmpl[] = "/tmp/sp-test-outXXXXXX";
  char err_tmpl[] = "/tmp/sp-test-errXXXXXX";
  int out_fd = mkstemp(out_tmpl), err_fd = mkstemp(err_tmpl);
  if (out_fd < 0 || err_fd < 0) throw std::runtime_error("mkstemp failed");
  m_out = out_tmpl;
  m_err = err_tmpl;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  std::vector<std::string> envs;
  // `env` overrides the inherited environment (getenv() would find an inherited entry first).
  auto name_of = [](const std::string& e) { return e.substr(0, e.find('=')); };
  for (char** e = environ; *e; ++e) {
    std::string entry = *e, name = name_of(entry);
    bool overridden = false;
    for (const auto& x : env) overridden = overridden || name_of(x) == name;
    if (!overridden) envs.push_back(entry);
  }
  for (const auto& e : env) envs.push_back(e);
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : envs) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  close(out_fd);
  close(err_fd);
  if (rc != 0) throw std::runtime_error(std::string("posix_spawn failed: ") + std::strerror(rc));
  m_pid = pid;
}

Process::~Process() {
  if (!m_done && m_pid > 0) {
    ::kill(m_pid, SIGKILL);
    int status = 0;
    waitpid(m_pid, &status, 0);
  }
  unlink(m_out.c_str());
  unlink(m_err.c_str());
}

void Process::kill(int signal) {
  if (!m_done && m_pid > 0) ::kill(m_pid, signal);
}

RunResult Process::wait() {
  RunResult r;
  if (m_done) throw std::runtime_error("Process::wait called twice");
  int status = 0;
  while (waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
  }
  m_done = true;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_text(m_out);
  r.err = read_text(m_err);
  return r;
}

std::string show(const RunResult& r) { return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "--- stderr\n" + r.err; }

RunResult stackpin(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<std::string> argv{binary().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, env);
}

ScratchDir::ScratchDir() {
  static std::mt19937_64 rng{std::random_device{}()};
  m_path = fs::temp_directory_path() / ("stackpin-test-" + std::to_string(rng()));
  fs::create_directories(m_path);
}
ScratchDir::~ScratchDir() {
  if (::testing::Test::HasFailure()) {
    // Kept for the post-mortem: what the failing test left is exactly what it saw.
    std::cerr << "[   kept   ] " << m_path.string() << " (the test failed; remove it when done)\n";
    return;
  }
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

unsigned test_seed() {
  unsigned seed = 0;
  const char* v = std::getenv("STACKPIN_TEST_SEED");
  if (v && *v)
    seed = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
  else
    seed = std::random_device{}();
  std::cerr << "[   seed   ] " << seed << " (STACKPIN_TEST_SEED=" << seed << " repeats this run)\n";
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  return seed;
}
fs::path ScratchDir::write(const std::string& name, const std::string& content) const {
  fs::path p = m_path / name;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

std::string schema_errors(const std::string& schema, const fs::path& file, std::string& skip) {
  std::string node = tool_path("node");
  if (node.empty()) {
    skip = "no node on PATH to run the JSON schema validator (scripts/install-deps.sh --tools installs nodejs, node-ajv, node-js-yaml)";
    return {};
  }
  auto r = run_process({node, (source_dir() / "tests/support/schema_check.js").string(),
                        (source_dir() / "tests/data/schemas" / schema).string(), file.string()},
                       {"NODE_PATH=/usr/share/nodejs"});
  if (r.exit_code == 2) {
    skip = "the JSON schema validator cannot run: " + r.err;
    return {};
  }
  return r.exit_code == 0 ? std::string() : r.err + r.out;
}

}  // namespace testing_support
