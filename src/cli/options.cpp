// The one place that binds stackpin's option declarations (options.hpp) to CLI11.
#include "options.hpp"

#include <CLI/CLI.hpp>

namespace cli {

Option* Option::required() {
  option_->required();
  return this;
}
Option* Option::needs(Option* other) {
  option_->needs(other->option_);
  return this;
}
Option* Option::excludes(Option* other) {
  option_->excludes(other->option_);
  return this;
}
Option* Option::check_range(std::int64_t min, std::int64_t max) {
  option_->check(CLI::Range(min, max));
  return this;
}
Option* Option::check_member(const std::vector<std::string>& allowed) {
  option_->check(CLI::IsMember(allowed));
  return this;
}
Option* Option::capture_default_str() {
  option_->capture_default_str();
  return this;
}
Option* Option::type_name(const std::string& name) {
  option_->type_name(name);
  return this;
}
Option* Option::allow_extra_args(bool allow) {
  option_->allow_extra_args(allow);
  return this;
}
std::size_t Option::count() const { return option_->count(); }

Command* Command::add_subcommand(const std::string& name, const std::string& description) {
  return registry_->command(app_->add_subcommand(name, description));
}
Option* Command::add_option(const std::string& name, std::string& into, const std::string& help) {
  return registry_->option(app_->add_option(name, into, help));
}
Option* Command::add_option(const std::string& name, std::vector<std::string>& into, const std::string& help) {
  return registry_->option(app_->add_option(name, into, help));
}
Option* Command::add_option(const std::string& name, std::optional<std::string>& into, const std::string& help) {
  return registry_->option(app_->add_option(name, into, help));
}
Option* Command::add_option(const std::string& name, int& into, const std::string& help) {
  return registry_->option(app_->add_option(name, into, help));
}
Option* Command::add_option(const std::string& name, std::uint64_t& into, const std::string& help) {
  return registry_->option(app_->add_option(name, into, help));
}
Option* Command::add_option(const std::string& name, std::optional<std::uint64_t>& into, const std::string& help) {
  return registry_->option(app_->add_option(name, into, help));
}
Option* Command::add_option(const std::string& name, std::optional<int>& into, const std::string& help) {
  return registry_->option(app_->add_option(name, into, help));
}
Option* Command::add_flag(const std::string& name, bool& into, const std::string& help) {
  return registry_->option(app_->add_flag(name, into, help));
}
void Command::callback(std::function<void()> f) { app_->callback(std::move(f)); }
void Command::footer(const std::string& text) { app_->footer(text); }
void Command::require_subcommand(int count) { app_->require_subcommand(count); }
void Command::fallthrough() { app_->fallthrough(); }

}  // namespace cli
