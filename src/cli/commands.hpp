#pragma once
// Registration of the subcommands. Each cmd_<name>.cpp declares its subcommand through options.hpp;
// the parse callback stores the action, which run() executes after parsing succeeded.
#include <cstdint>
#include <functional>
#include <string>

#include "cli/run.hpp"
#include "core/archives/fetch.hpp"
#include "core/archives/lock.hpp"
#include "core/archives/nvidia_manifests.hpp"
#include "core/doctor/doctor.hpp"
#include "format/config_reader.hpp"
#include "model/lock.hpp"
#include "model/manifest.hpp"
#include "options.hpp"
#include "render.hpp"

// The build defines it (src/CMakeLists.txt, from project(VERSION)); without it there is no version to print.
#ifndef STACKPIN_VERSION
#error "STACKPIN_VERSION is set by src/CMakeLists.txt from project(VERSION); build through CMake"
#endif

namespace cli {

// What a command's run function returns: its exit code, or the error that ends it. run() renders
// such an error (fail) and turns it into the exit code: the one place that does, for every command.
using Outcome = util::Result<int>;

struct Context {
  Context(Io& io_, Style out, Style err) : io(io_), out_style(out), err_style(err) {}
  Io& io;
  Style out_style;
  Style err_style;
  std::function<Outcome()> action;  // the parsed command's run function, bound to its options
  core::LockChoice lock;            // --locked / --lock FILE, for the commands that honour a lock file
  bool json = false;                // --json, for every command (add_json_flag)
  Registry registry;                // the Command and Option objects of this run
};

// What `stackpin --help` opens and closes with (the man page says the same).
inline constexpr const char* k_summary = "stackpin: reproducible CUDA/cuDNN stacks from one manifest";
inline constexpr const char* k_exit_codes_footer =
    "Exit codes: 0 ok, 1 the operation found a problem, 2 usage error, 3 nothing to run on (no GPU/driver), "
    "70 internal error.\nRun `stackpin COMMAND --help` for a command's options.";

// Every command and global option on `app` (run() parses with it; the man page is written from it).
void define_commands(CLI::App& app, Context& ctx);

void add_check(Command& app, Context& ctx);
void add_verify(Command& app, Context& ctx);
void add_stage(Command& app, Context& ctx);
void add_deb(Command& app, Context& ctx);
void add_sbom(Command& app, Context& ctx);
void add_convtest(Command& app, Context& ctx);
void add_generate(Command& app, Context& ctx);
void add_diff(Command& app, Context& ctx);
void add_inspect(Command& app, Context& ctx);
void add_doctor(Command& app, Context& ctx);
void add_capture(Command& app, Context& ctx);
void add_lock(Command& app, Context& ctx);
void add_fetch(Command& app, Context& ctx);
void add_apply(Command& app, Context& ctx);
void add_activate(Command& app, Context& ctx);
void add_mirror(Command& app, Context& ctx);

// Helpers shared by the commands (commands.cpp).
// Renders `e` (text on stderr, or the --json envelope on stdout) and returns its exit code; run()
// calls it for the error a command returns.
int fail(Context& ctx, const std::string& command, const util::Error& e);
// A progress line on stderr when it is a terminal and --json is off; empty function otherwise.
std::function<void(std::uint64_t done, std::uint64_t total, std::uint64_t files)> progress_printer(Context& ctx, const std::string& what);
// A download progress line ("downloading FILE: 12.0 / 80.0 MiB (15%)") on stderr when it is a
// terminal and --json is off; empty function otherwise.
std::function<void(const std::string& file, std::uint64_t done, std::uint64_t total)> download_progress_printer(Context& ctx);
// The download cache the archive-taking commands also search: `flag` (--cache-dir) when given,
// else the default one of the environment (core::default_cache_dir); "" when none can be told.
std::string archive_cache_dir(Context& ctx, const std::string& flag);
// The settings file (core::user_config_path), when there is one. Errors: those of reading it.
util::Result<std::optional<format::UserConfig>> user_config(Context& ctx);
// Where NVIDIA's manifests are read from (STACKPIN_NVIDIA_BASE, else the settings file's [nvidia]
// base) and kept (the download cache, `cache_flag` or the default). Errors: those of reading the
// settings file.
util::Result<core::NvidiaManifestOptions> nvidia_options(Context& ctx, const std::string& cache_flag, bool offline);
// The knowledge to judge or generate `m` by: the embedded, and where it lacks the pinned cuDNN
// build (or its sizes) NVIDIA's manifest of its release, from the download cache or, when
// `online`, from NVIDIA (then kept in the cache); the knowledge with it is kept in `own`. Why the
// manifest could not be had goes to `why` (not_found: offline with nothing cached).
// Nothing is read when `lock` already pins the manifest's build.
const knowledge::KnowledgeBase& knowledge_with_nvidia_cudnn(const model::Manifest& m, Context& ctx, const std::string& cache_flag,
                                                            bool online, std::optional<knowledge::KnowledgeBase>& own,
                                                            std::optional<util::Error>& why, const model::Lock* lock = nullptr);
// Calls the fault hook of STACKPIN_TEST_FAULT_AT (tests kill a run at a chosen journal record).
std::function<void(int)> fault_hook(Context& ctx);
// SOURCE_DATE_EPOCH, when set: the time reproducible outputs carry. Errors: usage (not a number of
// seconds since 1970).
util::Result<std::optional<std::int64_t>> source_date_epoch(Context& ctx);

// This Windows machine for doctor and capture: the Path values `path`/`user_path` when given,
// else the registry's Machine and User values. Errors: those of reading the registry.
util::Result<core::WindowsDoctorOptions> live_windows_options(Context& ctx, const std::string& path, std::optional<std::string> user_path);

// --drive D=DIR values (doctor and capture --windows-root): the drive letter and the directory.
// Errors: usage, naming the bad value.
util::Result<std::vector<std::pair<char, std::filesystem::path>>> parse_drives(const std::vector<std::string>& values);
// The download options of fetch and apply.
struct FetchFlags {
  std::string cache_dir;
  std::vector<std::string> mirrors;
  bool offline = false, verify_cached = false;
  int retries = 5;
  std::uint64_t retry_delay_ms = 1000;
  std::uint64_t stall_timeout_s = 60;
  std::uint64_t min_rate = 10240;  // bytes per second; 0 = no rate check and no derived deadline
  std::uint64_t rate_window_s = 60;
  std::uint64_t deadline_s = 0;  // 0 = derived from the pinned size
};
// Adds --cache-dir, --mirror, --offline, --verify-cached, --retries, --retry-delay-ms, --stall-timeout,
// --min-rate, --rate-window, --deadline.
void add_fetch_options(Command* cmd, FetchFlags& f);
// core::FetchOptions from the flags: the cache from --cache-dir or the environment, the mirrors
// from --mirror or the settings file, download progress on a terminal. Errors: usage (bad
// values), not_found (no cache directory can be told), those of reading the settings file.
util::Result<core::FetchOptions> fetch_options_for(Context& ctx, const FetchFlags& f);
// --platform's value, or a usage error naming the accepted ones.
util::Result<model::Platform> parse_platform_option(const std::string& text);
// Adds --json to a command, bound to ctx.json: fail() and every report follow it.
void add_json_flag(Command* cmd, Context& ctx);
// Adds --locked and --lock FILE to a command (bound to ctx.lock).
void add_lock_options(Command* cmd, Context& ctx);
// The manifest as commands that provision see it: with --locked, its lock applied (drift refused,
// archives, hashes and sizes from the lock); otherwise NVIDIA's archives from the knowledge base
// filled in for a manifest that names only the cuDNN version. `lock`, when given, receives the
// lock that was applied. Errors: those of loading the manifest and the lock, and core::apply_lock's.
util::Result<model::Manifest> load_manifest_for(Context& ctx, const std::string& path, std::optional<model::Lock>* lock = nullptr);

}  // namespace cli
