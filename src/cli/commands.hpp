#pragma once
// Registration of the subcommands. Each cmd_<name>.cpp adds its CLI11 subcommand; the parse
// callback stores the action, which run() executes after parsing succeeded.
#include <CLI/CLI.hpp>

#include <functional>

#include "cli/run.hpp"
#include "render.hpp"

namespace cli {

struct Context {
  Io& io;
  Style out_style;
  Style err_style;
  std::function<int()> action;
};

void add_check(CLI::App& app, Context& ctx);

}  // namespace cli
