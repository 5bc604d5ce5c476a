// The POSIX side of the test helpers: processes through posix_spawn, mounts for the tests of full
// and read-only filesystems, SHA-256 through OpenSSL (a hash independent of the one under test).
#include <fcntl.h>
#include <openssl/evp.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "test_support.hpp"
#include "tree.hpp"

extern char** environ;

namespace testing_support {
namespace fs = std::filesystem;

std::string tool_path(const std::string& name) {
  auto r = run_process({"/bin/sh", "-c", "command -v \"$1\"", "sh", name});
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.exit_code == 0 ? r.out : "";
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

bool Process::running() {
  if (m_done || m_pid <= 0) return false;
  siginfo_t info{};
  // WNOWAIT: the exit is seen but not collected, so wait() still reaps it and reads its status
  if (waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return false;
  return info.si_pid == 0;
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

std::string sha256_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  std::array<char, 1 << 16> buf{};
  while (in) {
    in.read(buf.data(), buf.size());
    if (in.gcount() > 0) EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &len);
  std::string s;
  char hex[3];
  for (unsigned i = 0; i < len; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", md[i]);
    s += hex;
  }
  return s;
}

Mount Mount::tmpfs(const fs::path& dir, const std::string& size) {
  Mount m;
  fs::create_directories(dir);
  std::string opts = "size=" + size;
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, opts.c_str()) != 0) {
    m.m_error = "cannot mount a tmpfs on " + dir.string() + ": " + std::strerror(errno) + " (needs root / CAP_SYS_ADMIN)";
    return m;
  }
  m.m_dir = dir;
  return m;
}

Mount Mount::read_only_bind(const fs::path& from, const fs::path& to) {
  Mount m;
  fs::create_directories(to);
  if (::mount(from.c_str(), to.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    m.m_error = "cannot bind-mount " + from.string() + " on " + to.string() + ": " + std::strerror(errno) + " (needs root / CAP_SYS_ADMIN)";
    return m;
  }
  m.m_dir = to;
  if (::mount(nullptr, to.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0)
    m.m_error = "cannot remount " + to.string() + " read-only: " + std::strerror(errno);
  return m;
}

Mount::~Mount() {
  if (!m_dir.empty()) ::umount2(m_dir.c_str(), MNT_DETACH);
}

}  // namespace testing_support
