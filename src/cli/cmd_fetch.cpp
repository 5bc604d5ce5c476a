// stackpin fetch MANIFEST [--platform P] [--cache-dir DIR] [--mirror URL]... [--offline]
//                [--verify-cached] [--retries N] [--retry-delay-ms MS] [--stall-timeout S]
//                [--min-rate BYTES] [--rate-window S] [--deadline S] [--json]
#include <ostream>

#include "commands.hpp"
#include "core/archives/cache.hpp"
#include "core/archives/fetch.hpp"
#include "format/config_reader.hpp"
#include "format/json.hpp"
#include "format/manifest_reader.hpp"
#include "util/strings.hpp"

namespace cli {

namespace {

struct FetchCli {
  std::string manifest, platform;
  FetchFlags fetch;
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

Outcome run_fetch(const FetchCli& c, Context& ctx) {
  auto o = fetch_options_for(ctx, c.fetch);
  if (!o) return o.error();
  if (!c.platform.empty()) {
    auto p = parse_platform_option(c.platform);
    if (!p) return p.error();
    o->platform = *p;
  }
  auto m = load_manifest_for(ctx, c.manifest);
  if (!m) return m.error();

  auto r = core::fetch(*m, knowledge::KnowledgeBase::embedded(), *o);
  if (!r) return r.error();
  const auto& findings = r->findings;
  const util::Error* first = nullptr;
  std::size_t failed = 0;
  for (const auto& a : r->archives)
    if (a.error) {
      if (!first) first = &*a.error;
      ++failed;
    }
  if (ctx.json) {
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

void add_fetch(Command& app, Context& ctx) {
  auto c = std::make_shared<FetchCli>();
  auto* cmd = app.add_subcommand("fetch", "Download the pinned archives into the cache, verified by size and SHA-256");
  cmd->add_option("MANIFEST", c->manifest, "The manifest")->required();
  cmd->add_option("--platform", c->platform,
                  "Only the archive of this platform (default: the ones the manifest writes, and its targets' platforms)");
  add_fetch_options(cmd, c->fetch);
  add_json_flag(cmd, ctx);
  add_lock_options(cmd, ctx);
  cmd->callback([c, &ctx] { ctx.action = [c, &ctx] { return run_fetch(*c, ctx); }; });
}

}  // namespace cli
