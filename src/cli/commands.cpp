// The helpers every cmd_*.cpp shares: failing with an error, progress printers, the cache directory, fault hooks.
#include <cstdlib>
#include <ostream>

#include "commands.hpp"

#include <cctype>
#include "core/archives/cache.hpp"
#include "core/archives/lock.hpp"
#include "format/config_reader.hpp"
#include "format/json.hpp"
#include "format/lock_file.hpp"
#include "format/manifest_reader.hpp"
#include "util/fs.hpp"
#include "util/persistent_env.hpp"
#include "util/strings.hpp"

namespace cli {

int fail(Context& ctx, const std::string& command, const util::Error& e) {
  if (ctx.json)
    ctx.io.out << format::envelope(command, false, {}, format::empty_object(), &e);
  else
    render_error(ctx.io.err, e, ctx.err_style);
  return exit_code_for(e);
}

std::function<void(std::uint64_t, std::uint64_t, std::uint64_t)> progress_printer(Context& ctx, const std::string& what) {
  if (ctx.json || !ctx.io.err_is_tty) return {};
  return [&ctx, what](std::uint64_t done, std::uint64_t total, std::uint64_t files) {
    char buf[160];
    double mib = 1024.0 * 1024.0;
    if (total) {
      std::snprintf(buf, sizeof buf, "\r%s: %.1f / %.1f MiB (%3.0f%%), %llu files ", what.c_str(), done / mib, total / mib,
                    100.0 * static_cast<double>(done) / static_cast<double>(total), static_cast<unsigned long long>(files));
    } else {
      std::snprintf(buf, sizeof buf, "\r%s: %.1f MiB, %llu files ", what.c_str(), done / mib, static_cast<unsigned long long>(files));
    }
    ctx.io.err << buf << std::flush;
    if (total && done >= total) ctx.io.err << "\n";
  };
}

std::function<void(const std::string&, std::uint64_t, std::uint64_t)> download_progress_printer(Context& ctx) {
  if (ctx.json || !ctx.io.err_is_tty) return {};
  return [&ctx](const std::string& file, std::uint64_t done, std::uint64_t total) {
    char buf[320];
    double mib = 1024.0 * 1024.0;
    std::snprintf(buf, sizeof buf, "\rdownloading %s: %.1f / %.1f MiB (%3.0f%%) ", file.c_str(), done / mib, total / mib,
                  total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 0.0);
    ctx.io.err << buf << std::flush;
    if (done >= total) ctx.io.err << "\n";
  };
}

std::string archive_cache_dir(Context& ctx, const std::string& flag) {
  if (!flag.empty()) return flag;
  auto d = core::default_cache_dir(ctx.io.env);
  return d ? d->string() : std::string();
}

util::Result<std::optional<format::UserConfig>> user_config(Context& ctx) {
  auto path = core::user_config_path(ctx.io.env);
  if (!path) return std::optional<format::UserConfig>();
  return format::load_user_config(*path);
}

util::Result<core::NvidiaManifestOptions> nvidia_options(Context& ctx, const std::string& cache_flag, bool offline) {
  core::NvidiaManifestOptions n;
  n.env = &ctx.io.env;
  SP_TRY_ASSIGN(auto cfg, user_config(ctx));
  if (cfg) n.base = cfg->nvidia_base;  // STACKPIN_NVIDIA_BASE wins (core::nvidia_base)
  n.cache_dir = archive_cache_dir(ctx, cache_flag);
  n.offline = offline;
  return n;
}

const knowledge::KnowledgeBase& knowledge_with_nvidia_cudnn(const model::Manifest& m, Context& ctx, const std::string& cache_flag,
                                                            bool online, std::optional<knowledge::KnowledgeBase>& own,
                                                            std::optional<util::Error>& why, const model::Lock* lock) {
  const auto& kb = knowledge::KnowledgeBase::embedded();
  core::LockOptions pinned;
  pinned.previous = lock;
  auto release = core::cudnn_manifest_needed(m, kb, pinned);
  if (!release) return kb;
  auto n = nvidia_options(ctx, cache_flag, !online);
  auto got = n ? core::nvidia_cudnn_manifest(*release, *n) : util::Result<core::FetchedCudnnManifest>(n.error());
  if (!got) {
    why = std::move(got).error();
    return kb;
  }
  // every build of the release: a manifest pinning one NVIDIA did not publish is then told which did
  auto facts = core::cudnn_facts_of(*got, kb.cudnn_base_url());
  if (!facts) {
    why = std::move(facts).error();
    return kb;
  }
  auto with = kb.with_cudnn_archives(std::move(facts).value());
  if (!with) {
    why = std::move(with).error();
    return kb;
  }
  own = std::move(with).value();
  return *own;
}

std::function<void(int)> fault_hook(Context& ctx) {
  auto at = ctx.io.env.get("STACKPIN_TEST_FAULT_AT");
  if (!at) return {};
  auto n = util::parse_u64(*at);
  if (!n) return {};
  int target = static_cast<int>(*n);
  return [target](int seq) {
    if (seq == target) std::_Exit(86);  // a crash at exactly this journal record
  };
}

util::Result<core::WindowsDoctorOptions> live_windows_options(Context& ctx, const std::string& path, std::optional<std::string> user_path) {
  std::string machine_path = path;
  if (path.empty()) {
    SP_TRY_ASSIGN(auto store, util::system_persistent_env());
    SP_TRY_ASSIGN(auto m, store->get(util::EnvScope::machine, "Path"));
    SP_TRY_ASSIGN(auto u, store->get(util::EnvScope::user, "Path"));
    machine_path = m ? m->value : "";
    if (u && !user_path) user_path = u->value;
  }
  return core::live_windows_doctor_options(ctx.io.env, machine_path, user_path);
}

void add_json_flag(Command* cmd, Context& ctx) {
  cmd->add_flag("--json", ctx.json, "Print one JSON document on stdout and nothing else there");
}

void add_lock_options(Command* cmd, Context& ctx) {
  cmd->add_flag("--locked", ctx.lock.locked,
                "Use the lock file beside the manifest (NAME.lock); refuse when the manifest and the lock disagree");
  cmd->add_option("--lock", ctx.lock.file, "Use this lock file (implies --locked)");
}

util::Result<model::Manifest> load_manifest_for(Context& ctx, const std::string& path, std::optional<model::Lock>* lock_out) {
  SP_TRY_ASSIGN(auto loaded, core::load_manifest(path, ctx.lock, knowledge::KnowledgeBase::embedded()));
  if (lock_out) *lock_out = std::move(loaded.lock);
  return std::move(loaded.manifest);
}

namespace {
constexpr std::uint64_t k_longest_rate_window_s = 86400;
}  // namespace

void add_fetch_options(Command* cmd, FetchFlags& f) {
  cmd->add_option("--cache-dir", f.cache_dir,
                  "The download cache (default: $STACKPIN_CACHE_DIR, else $XDG_CACHE_HOME/stackpin, else ~/.cache/stackpin)");
  cmd->add_option("--mirror", f.mirrors,
                  "A copy of NVIDIA's cuDNN redist tree (http(s):// or file://) used instead of "
                  "https://developer.download.nvidia.com/compute/cudnn/redist/; repeatable, tried in order. With a "
                  "mirror (here or [fetch] mirrors in config.toml) NVIDIA's server is not contacted; without one, "
                  "STACKPIN_NVIDIA_BASE or [nvidia] base in config.toml may name a copy of NVIDIA's whole "
                  "https://developer.download.nvidia.com/compute/ tree")
      ->allow_extra_args(false);
  cmd->add_flag("--offline", f.offline, "Use the cache only; say what is missing and download nothing");
  cmd->add_flag("--verify-cached", f.verify_cached, "Re-hash archives already in the cache (a corrupt one is downloaded again)");
  cmd->add_option("--retries", f.retries, "Attempts after a transient failure (refused/cut connection, stall, HTTP 5xx/429)")
      ->capture_default_str();
  cmd->add_option("--retry-delay-ms", f.retry_delay_ms, "First backoff between attempts, doubled each time")->capture_default_str();
  cmd->add_option("--stall-timeout", f.stall_timeout_s, "Seconds without data (the response head included) before a transfer is retried")
      ->capture_default_str();
  cmd->add_option("--min-rate", f.min_rate,
                  "Bytes per second a transfer must average over each --rate-window from its first byte, else it is retried "
                  "(a server that drips bytes never stalls); 0 turns the check and the derived --deadline off")
      ->capture_default_str();
  cmd->add_option("--rate-window", f.rate_window_s, "Seconds over which --min-rate is measured")->capture_default_str();
  cmd->add_option("--deadline", f.deadline_s,
                  "Seconds one archive may take from one URL, retries and backoff included, before the next URL is tried "
                  "(0: 2 x --rate-window + the bytes still missing at --min-rate)")
      ->capture_default_str();
  cmd->footer(
      "The settings file ($STACKPIN_CONFIG, else $XDG_CONFIG_HOME/stackpin/config.toml, else "
      "~/.config/stackpin/config.toml) may hold [fetch] mirrors = [\"URL\", ...] (--mirror replaces them) and "
      "[nvidia] base = \"URL\". "
      "Proxies: http_proxy, https_proxy, no_proxy and ALL_PROXY are honoured.");
}

util::Result<core::FetchOptions> fetch_options_for(Context& ctx, const FetchFlags& f) {
  core::FetchOptions o;
  if (f.retries < 0) return util::Error(util::ErrorCode::usage, "--retries must be 0 or more");
  if (f.stall_timeout_s == 0) return util::Error(util::ErrorCode::usage, "--stall-timeout must be at least 1 second");
  if (f.rate_window_s == 0)
    return util::Error(util::ErrorCode::usage, "--rate-window must be at least 1 second")
        .with_hint("to turn the rate check off, pass --min-rate 0");
  // longer would not be a check on the rate any more (and overflows the clock in the end)
  if (f.rate_window_s > k_longest_rate_window_s)
    return util::Error(util::ErrorCode::usage, "--rate-window must be at most " + std::to_string(k_longest_rate_window_s) +
                                                   " seconds (a day), not " + std::to_string(f.rate_window_s))
        .with_hint("to turn the rate check off, pass --min-rate 0");
  if (!f.cache_dir.empty()) {
    o.cache_dir = f.cache_dir;
  } else {
    SP_TRY_ASSIGN(auto d, core::default_cache_dir(ctx.io.env));
    o.cache_dir = d;
  }
  SP_TRY_ASSIGN(auto cfg, user_config(ctx));
  o.mirrors = f.mirrors;  // the command line, else the settings file
  if (o.mirrors.empty() && cfg) o.mirrors = cfg->mirrors;
  // without mirrors, NVIDIA's archives come from the copy of its tree [nvidia] base names
  // (STACKPIN_NVIDIA_BASE wins: core::nvidia_base)
  if (cfg) o.nvidia_base = cfg->nvidia_base;
  o.offline = f.offline;
  o.verify_cached = f.verify_cached;
  o.retries = f.retries;
  o.retry_delay = std::chrono::milliseconds(f.retry_delay_ms);
  o.stall_timeout_s = static_cast<long>(f.stall_timeout_s);
  o.min_rate = f.min_rate;
  o.rate_window_s = static_cast<long>(f.rate_window_s);
  o.deadline_s = f.deadline_s;
  o.user_agent = std::string("stackpin/") + STACKPIN_VERSION;
  o.env = &ctx.io.env;
  if (auto p = download_progress_printer(ctx)) o.progress = [p](const core::FetchProgress& pr) { p(pr.file, pr.done, pr.total); };
  return o;
}

util::Result<model::Platform> parse_platform_option(const std::string& text) {
  if (auto p = model::parse_platform(text)) return *p;
  return util::Error(util::ErrorCode::usage,
                     "--platform must be one of " + util::join(model::platform_names(), ", ") + ", not \"" + text + "\"");
}

util::Result<std::vector<std::pair<char, std::filesystem::path>>> parse_drives(const std::vector<std::string>& values) {
  std::vector<std::pair<char, std::filesystem::path>> out;
  for (const auto& d : values) {
    auto eq = d.find('=');
    if (eq != 1 || !std::isalpha(static_cast<unsigned char>(d[0])) || d.size() < 3)
      return util::Error(util::ErrorCode::usage, "--drive " + d + ": expected a drive letter and a directory")
          .with_hint("write it as --drive D=/mnt/d");
    out.emplace_back(d[0], d.substr(2));
  }
  return out;
}

}  // namespace cli

namespace cli {
util::Result<std::optional<std::int64_t>> source_date_epoch(Context& ctx) {
  auto sde = ctx.io.env.get("SOURCE_DATE_EPOCH");
  if (!sde || sde->empty()) return std::optional<std::int64_t>{};
  auto v = util::parse_u64(*sde);
  if (!v || *v > static_cast<std::uint64_t>(INT64_MAX))
    return util::Error(util::ErrorCode::usage, "SOURCE_DATE_EPOCH must be a number of seconds since 1970, got '" + *sde + "'");
  return std::optional<std::int64_t>{static_cast<std::int64_t>(*v)};
}
}  // namespace cli
