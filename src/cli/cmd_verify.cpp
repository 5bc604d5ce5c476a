// stackpin verify MANIFEST [--archives DIR] [--cache-dir DIR] [--platform P] [--json]
// stackpin verify FILE --sha256 HEX [--size N] [--json]
#include <ostream>

#include "commands.hpp"
#include "core/archives/verify.hpp"
#include "core/verdict.hpp"
#include "format/manifest_reader.hpp"
#include "format/receipt.hpp"

namespace cli {

namespace {

struct VerifyOptions {
  std::string target;  // manifest or file
  std::string archives;
  std::string cache_dir;
  std::string platform;
  std::string sha256;
  std::optional<std::uint64_t> size;
};

Outcome run_verify(const VerifyOptions& o, Context& ctx) {
  util::Result<model::VerifyReport> report = util::Error(util::ErrorCode::internal, "not run");
  if (!o.sha256.empty()) {
    report = core::verify_file(o.target, o.sha256, o.size);
  } else {
    std::string cache = archive_cache_dir(ctx, o.cache_dir);
    if (o.archives.empty() && cache.empty())
      return util::Error(util::ErrorCode::usage,
                         "verify MANIFEST needs --archives DIR or a download cache (--cache-dir), "
                         "or verify FILE --sha256 HEX");
    std::optional<model::Platform> platform;
    if (!o.platform.empty()) {
      auto p = parse_platform_option(o.platform);
      if (!p) return p.error();
      platform = *p;
    }
    auto m = load_manifest_for(ctx, o.target);
    if (!m) return m.error();
    report = core::verify_manifest(*m, o.archives, platform, knowledge::KnowledgeBase::embedded(), cache);
  }
  if (!report) return report.error();
  const auto& findings = report->findings;
  bool ok = !core::verdict(findings, false).failed;
  if (ctx.json) {
    ctx.io.out << format::envelope("verify", ok, findings, format::to_json(*report), nullptr);
  } else {
    for (const auto& f : findings) render_finding(ctx.io.out, f, ctx.out_style);
    ctx.io.out << (ok ? ctx.out_style.green("verified") : ctx.out_style.red("verification failed")) << ": " << report->archives.size()
               << " archive(s)\n";
  }
  return ok ? k_exit_ok : k_exit_failed;
}

}  // namespace

void add_verify(Command& app, Context& ctx) {
  auto o = std::make_shared<VerifyOptions>();
  auto* cmd = app.add_subcommand("verify", "Check archives against their pinned SHA-256 and size (changes nothing)");
  cmd->add_option("MANIFEST_OR_FILE", o->target, "A manifest, or one file with --sha256")->required();
  cmd->add_option("--archives", o->archives,
                  "Folder holding the downloaded archives (found by name, else by size and hash); "
                  "default: only the download cache");
  cmd->add_option("--cache-dir", o->cache_dir, "The download cache `stackpin fetch` fills, searched after --archives");
  cmd->add_option("--platform", o->platform, "Only the archive of this platform");
  cmd->add_option("--sha256", o->sha256, "Verify FILE against this SHA-256 (64 hex digits)");
  cmd->add_option("--size", o->size, "... and this size in bytes");
  add_json_flag(cmd, ctx);
  add_lock_options(cmd, ctx);
  cmd->callback([o, &ctx] { ctx.action = [o, &ctx] { return run_verify(*o, ctx); }; });
}

}  // namespace cli
