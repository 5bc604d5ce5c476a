#pragma once
// Environment access behind an interface, so that nothing below cli reads global state and tests
// can give a command any environment they like.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace util {

class Env {
 public:
  virtual ~Env() = default;
  virtual std::optional<std::string> get(const std::string& name) const = 0;
};

// The process environment.
class SystemEnv final : public Env {
 public:
  std::optional<std::string> get(const std::string& name) const override;
};

// A fixed map, for tests and for commands that compute an environment.
class MapEnv final : public Env {
 public:
  MapEnv() = default;
  explicit MapEnv(std::map<std::string, std::string> vars) : m_vars(std::move(vars)) {}
  std::optional<std::string> get(const std::string& name) const override;
  void set(std::string name, std::string value) { m_vars[std::move(name)] = std::move(value); }

 private:
  std::map<std::string, std::string> m_vars;
};

// Whether this build runs on Windows (per-user folders live under %LOCALAPPDATA%, not $HOME).
bool host_is_windows();

// The machine's architecture as `uname -m` names it ("x86_64", "aarch64"); "" when unknown.
std::string host_arch();

// The program's arguments after its name, as UTF-8. Windows: from the wide command line, so
// that names outside the ANSI code page (a user folder in Chinese) reach stackpin intact.
std::vector<std::string> program_arguments(int argc, char** argv);

// Whether standard output (1) or standard error (2) is a terminal (a console on Windows).
bool is_terminal(int stream);

// Makes the console show the UTF-8 that stackpin writes (Windows); nothing elsewhere.
void prepare_console();

// The running program's own file (Linux: /proc/self/exe); nullopt where it cannot be told.
std::optional<std::filesystem::path> executable_path();

}  // namespace util
