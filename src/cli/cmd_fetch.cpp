// stackpin fetch MANIFEST [--platform P] [--cache-dir DIR] [--mirror URL]... [--offline]
//                [--verify-cached] [--retries N] [--retry-delay-ms MS] [--stall-timeout S] [--json]
#include <ostream>

#include "commands.hpp"
#include "core/cache.hpp"
#include "core/fetch.hpp"
#include "format/config_reader.hpp"
#include "format/json.hpp"
#include "format/manifest_reader.hpp"
#include "util/strings.hpp"

#ifndef STACKPIN_VERSION
#define STACKPIN_VERSION "0.0.0"
#endif

namespace cli {

namespace {

struct FetchCli {
  std::string manifest, platform, cache_dir;
  std::vector<std::string> mirrors;
  bool offline = false, verify_cached = false, json = false;
  int retries = 5;
  std::uint64_t retry_delay_ms = 1000;
  std::uint64_t stall_timeout_s = 60;
};

void print_report(std::ostream& os, const model::FetchReport& r, const Style& st) {
  for (const auto& a : r.archives) {
    std::string status = model::to_string(a.status);
    bool good = !a.error;
    os << "  " << model::to_string(a.platform) << "  " << a.file << "  " << (good ? st.green(status) : st.red(status));
    if (a.status == model::FetchStatus::downloaded || a.status == model::FetchStatus::resumed)
      os << " (" << util::format_bytes(a.bytes_downloaded) << " in " << a.attempts << " attempt" << (a.attempts == 1 ? "" : "s")
         << ") from " << a.url;
    os << "\n";
    if (good) os << "      " << a.path << "\n";
  }
}

int run_fetch(const FetchCli& c, Context& ctx) {
  core::FetchOptions o;
  if (!c.platform.empty()) {
    o.platform = model::parse_platform(c.platform);
    if (!o.platform)
      return fail(ctx, "fetch", c.json,
                  util::Error(util::ErrorCode::usage, "--platform must be linux-x86_64, linux-sbsa, linux-aarch64 or windows-x86_64"));
  }
  if (c.retries < 0) return fail(ctx, "fetch", c.json, util::Error(util::ErrorCode::usage, "--retries must be 0 or more"));
  if (c.stall_timeout_s == 0) return fail(ctx, "fetch", c.json, util::Error(util::ErrorCode::usage, "--stall-timeout must be at least 1 second"));
  if (!c.cache_dir.empty()) {
    o.cache_dir = c.cache_dir;
  } else {
    auto d = core::default_cache_dir(ctx.io.env);
    if (!d) return fail(ctx, "fetch", c.json, d.error());
    o.cache_dir = *d;
  }
  // Mirrors: the command line, else the settings file.
  o.mirrors = c.mirrors;
  if (o.mirrors.empty()) {
    if (auto path = core::user_config_path(ctx.io.env)) {
      auto cfg = format::load_user_config(*path);
      if (!cfg) return fail(ctx, "fetch", c.json, cfg.error());
      if (*cfg) o.mirrors = (*cfg)->mirrors;
    }
  }
  auto m = format::load_manifest(c.manifest);
  if (!m) return fail(ctx, "fetch", c.json, m.error());
  o.offline = c.offline;
  o.verify_cached = c.verify_cached;
  o.retries = c.retries;
  o.retry_delay = std::chrono::milliseconds(c.retry_delay_ms);
  o.stall_timeout_s = static_cast<long>(c.stall_timeout_s);
  o.user_agent = std::string("stackpin/") + STACKPIN_VERSION;
  if (auto p = download_progress_printer(ctx, c.json))
    o.progress = [p](const core::FetchProgress& pr) { p(pr.file, pr.done, pr.total); };

  std::vector<model::Finding> findings;
  auto r = core::fetch(*m, knowledge::KnowledgeBase::embedded(), o, findings);
  if (!r) return fail(ctx, "fetch", c.json, r.error());
  const util::Error* first = nullptr;
  std::size_t failed = 0;
  for (const auto& a : r->archives)
    if (a.error) {
      if (!first) first = &*a.error;
      ++failed;
    }
  if (c.json) {
    ctx.io.out << format::envelope("fetch", !first, findings, format::to_json(*r), first);
  } else {
    for (const auto& a : r->archives)
      if (a.error) render_error(ctx.io.err, *a.error, ctx.err_style);
    print_report(ctx.io.out, *r, ctx.out_style);
    if (first)
      ctx.io.out << ctx.out_style.red(r->offline ? "missing from the cache" : "fetch failed") << ": " << failed << " of "
                 << r->archives.size() << " archive(s) (cache " << r->cache_dir << ")\n";
    else
      ctx.io.out << ctx.out_style.green("fetched") << ": " << r->archives.size() << " archive(s) in " << r->cache_dir << "\n";
  }
  return first ? exit_code_for(*first) : k_exit_ok;
}

}  // namespace

void add_fetch(CLI::App& app, Context& ctx) {
  auto c = std::make_shared<FetchCli>();
  auto* cmd = app.add_subcommand("fetch", "Download the pinned archives into the cache, verified by size and SHA-256");
  cmd->add_option("MANIFEST", c->manifest, "The manifest")->required();
  cmd->add_option("--platform", c->platform, "Only the archive of this platform (default: every pinned one)");
  cmd->add_option("--cache-dir", c->cache_dir,
                  "The cache (default: $STACKPIN_CACHE_DIR, else $XDG_CACHE_HOME/stackpin, else ~/.cache/stackpin)");
  cmd->add_option("--mirror", c->mirrors,
                  "A copy of NVIDIA's cuDNN redist tree (http(s):// or file://) used instead of "
                  "https://developer.download.nvidia.com/compute/cudnn/redist/; repeatable, tried in order. With a "
                  "mirror (here or [fetch] mirrors in config.toml) NVIDIA's server is not contacted")
      ->allow_extra_args(false);
  cmd->add_flag("--offline", c->offline, "Use the cache only; list what is missing (exit 1) and download nothing");
  cmd->add_flag("--verify-cached", c->verify_cached, "Re-hash archives already in the cache (a corrupt one is downloaded again)");
  cmd->add_option("--retries", c->retries, "Attempts after a transient failure (refused/cut connection, stall, HTTP 5xx/429)")
      ->capture_default_str();
  cmd->add_option("--retry-delay-ms", c->retry_delay_ms, "First backoff between attempts, doubled each time")->capture_default_str();
  cmd->add_option("--stall-timeout", c->stall_timeout_s, "Seconds without data before a transfer is retried")->capture_default_str();
  cmd->add_flag("--json", c->json, "Print one JSON document on stdout and nothing else there");
  cmd->footer("The settings file ($STACKPIN_CONFIG, else $XDG_CONFIG_HOME/stackpin/config.toml, else "
              "~/.config/stackpin/config.toml) may hold [fetch] mirrors = [\"URL\", ...]; --mirror replaces them. "
              "Proxies: http_proxy, https_proxy, no_proxy and ALL_PROXY are honoured.");
  cmd->callback([c, &ctx] { ctx.action = [c, &ctx] { return run_fetch(*c, ctx); }; });
}

}  // namespace cli
