#pragma once
// The command line as data: each cmd_<name>.cpp declares its subcommand, options and flags through
// these two small classes, and only options.cpp (with run.cpp, which parses, and man.cpp, which
// reads the definitions back) includes CLI11. CLI11 is header-only; bound here once instead of in
// every command, the cli layer compiles in a fraction of the time.
//
// Objects are owned by the Registry of the run (Context::registry), so the pointers the methods
// return stay valid until the run ends, like CLI11's own.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace cli {

class Registry;

// One option or flag of a command.
class Option {
 public:
  Option(CLI::Option* option) : option_(option) {}
  Option* required();
  Option* needs(Option* other);
  Option* excludes(Option* other);
  Option* check_range(std::int64_t min, std::int64_t max);        // a number in [min, max]
  Option* check_member(const std::vector<std::string>& allowed);  // one of these words
  Option* capture_default_str();                                  // --help shows the default
  Option* type_name(const std::string& name);                     // "--dest DIR" instead of TEXT
  Option* allow_extra_args(bool allow);                           // several values after one flag
  // How many times it was given on the command line (after parsing).
  std::size_t count() const;

 private:
  CLI::Option* option_;
};

// One command or subcommand.
class Command {
 public:
  Command(CLI::App* app, Registry& registry) : app_(app), registry_(&registry) {}
  Command* add_subcommand(const std::string& name, const std::string& description);
  Option* add_option(const std::string& name, std::string& into, const std::string& help);
  Option* add_option(const std::string& name, std::vector<std::string>& into, const std::string& help);
  Option* add_option(const std::string& name, std::optional<std::string>& into, const std::string& help);
  Option* add_option(const std::string& name, int& into, const std::string& help);
  Option* add_option(const std::string& name, std::uint64_t& into, const std::string& help);
  Option* add_option(const std::string& name, std::optional<std::uint64_t>& into, const std::string& help);
  Option* add_option(const std::string& name, std::optional<int>& into, const std::string& help);
  Option* add_flag(const std::string& name, bool& into, const std::string& help);
  // Runs after this command's options were parsed (the command stores its action there).
  void callback(std::function<void()> f);
  void footer(const std::string& text);
  void require_subcommand(int count);
  void fallthrough();

 private:
  CLI::App* app_;
  Registry* registry_;
};

// Owns the Command and Option objects of one run.
class Registry {
 public:
  Command* command(CLI::App* app) { return &commands_.emplace_back(app, *this); }
  Option* option(CLI::Option* option) { return &options_.emplace_back(option); }

 private:
  std::deque<Command> commands_;
  std::deque<Option> options_;
};

}  // namespace cli
