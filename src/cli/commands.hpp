#pragma once
// Registration of the subcommands. Each cmd_<name>.cpp adds its CLI11 subcommand; the parse
// callback stores the action, which run() executes after parsing succeeded.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>

#include "cli/run.hpp"
#include "model/manifest.hpp"
#include "render.hpp"

namespace cli {

// --locked / --lock FILE, for the commands that honour a lock file.
struct LockChoice {
  bool locked = false;
  std::string file;  // --lock FILE (implies --locked); "" = beside the manifest
};

struct Context {
  Io& io;
  Style out_style;
  Style err_style;
  std::function<int()> action;
  LockChoice lock;
};

void add_check(CLI::App& app, Context& ctx);
void add_verify(CLI::App& app, Context& ctx);
void add_stage(CLI::App& app, Context& ctx);
void add_deb(CLI::App& app, Context& ctx);
void add_convtest(CLI::App& app, Context& ctx);
void add_generate(CLI::App& app, Context& ctx);
void add_diff(CLI::App& app, Context& ctx);
void add_doctor(CLI::App& app, Context& ctx);
void add_capture(CLI::App& app, Context& ctx);
void add_lock(CLI::App& app, Context& ctx);

// Helpers shared by the commands (commands.cpp).
// Renders `e` (text on stderr, or the --json envelope on stdout) and returns its exit code.
int fail(Context& ctx, const std::string& command, bool json, const util::Error& e);
// A progress line on stderr when it is a terminal and --json is off; empty function otherwise.
std::function<void(std::uint64_t done, std::uint64_t total, std::uint64_t files)> progress_printer(Context& ctx, bool json,
                                                                                                   const std::string& what);
// Calls the fault hook of STACKPIN_TEST_FAULT_AT (tests kill a run at a chosen journal record).
std::function<void(int)> fault_hook(Context& ctx);
std::string sha256_of_file(const std::string& path);
// Adds --locked and --lock FILE to a command (bound to ctx.lock).
void add_lock_options(CLI::App* cmd, Context& ctx);
// The manifest as commands that provision see it: with --locked, its lock applied (drift refused,
// archives, hashes and sizes from the lock); otherwise NVIDIA's archives from the knowledge base
// filled in for a manifest that names only the cuDNN version. Errors: those of loading the
// manifest and the lock, and core::apply_lock's.
util::Result<model::Manifest> load_manifest_for(Context& ctx, const std::string& path);

}  // namespace cli
