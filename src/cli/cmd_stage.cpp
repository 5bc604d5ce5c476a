// stackpin stage MANIFEST [--archives DIR] [--cache-dir DIR] --target windows|linux [--dest DIR] ...
// stackpin unstage --dest DIR [--force]
// stackpin status --dest DIR
#include <ostream>

#include "commands.hpp"
#include "core/provision/stage.hpp"
#include "core/verdict.hpp"
#include "format/manifest_reader.hpp"
#include "format/receipt.hpp"
#include "util/strings.hpp"

namespace cli {

namespace {

struct StageCli {
  std::string manifest, archives, cache_dir, target, dest, platform;
  bool dry_run = false, remove_stale = false, force = false;
  std::optional<std::uint64_t> max_unpacked;
  std::optional<std::uint64_t> decoder_memory;  // MiB
};

void print_stage(std::ostream& os, const model::StageReport& r, const Style& st) {
  if (r.no_op) {
    os << st.green("already staged") << ": " << r.dest << " holds this exact staging (" << r.files
       << " files intact per .stackpin/receipt.json); nothing to do\n";
    for (const auto& a : r.activation) os << "  script   " << a << "\n";
    for (const auto& b : r.build_files) os << "  build    " << b << "\n";
    return;
  }
  if (!r.recovered.empty()) os << st.yellow("recovered") << ": " << r.recovered << "\n";
  if (r.dry_run) {
    os << st.bold("plan") << " (--dry-run, nothing changed): " << r.files << " files, " << util::format_bytes(r.bytes) << " into " << r.dest
       << "\n";
    for (const auto& f : r.plan)
      os << "  " << f.from << " -> " << f.to << (f.type == "symlink" ? "  (symlink)" : "")
         << (f.replaces ? "  replaces an existing file" : "") << "\n";
  } else {
    os << st.green("staged") << " " << r.files << " files (" << util::format_bytes(r.bytes) << ") into " << r.dest << "\n";
  }
  if (!r.archive_path.empty())
    os << "  archive  " << r.archive_path << "\n           sha256 " << r.archive_sha256 << " (verified), " << r.archive_size << " bytes\n";
  if (!r.cudnn_whole.empty()) os << "           " << r.cudnn_whole << " (read from the files)\n";
  if (!r.cuda_version.empty())
    os << "  toolkit  CUDA " << r.cuda_version << ", " << r.cuda_archives.size() << " component archive(s), each verified:\n";
  for (const auto& a : r.cuda_archives) os << "    " << a.component << " " << a.version << "  " << a.file << "\n";
  os << "  target   " << r.target << ", layout " << r.layout << ", prefix on the target machine: " << r.prefix << "\n";
  if (r.replaced_previous) os << "  replaced the staging previously there (its files were removed and what it replaced restored)\n";
  std::size_t replaced = 0;
  for (const auto& f : r.plan) replaced += f.replaces;
  if (replaced && !r.dry_run) os << "  " << replaced << " existing file(s) replaced; kept in .stackpin/backup/ for `stackpin unstage`\n";
  for (const auto& a : r.activation) os << "  script   " << a << "\n";
  if (!r.activation_note.empty()) os << "  note: " << r.activation_note << "\n";
  for (const auto& b : r.build_files) os << "  build    " << b << "\n";
  if (!r.build_files_note.empty()) os << "  note: " << r.build_files_note << "\n";
  if (!r.next_steps.empty()) os << st.bold("next") << ":\n";
  for (const auto& n : r.next_steps) os << "  " << n << "\n";
  if (!r.stale.empty()) {
    os << st.yellow("warning") << ": other cuDNN DLLs in the tree (found before the pinned ones on PATH, they shadow it):\n";
    for (const auto& s : r.stale) os << "    " << s << "\n";
    if (r.removed_stale.empty())
      os << "  rerun with --remove-stale to move them to .stackpin/backup/ (unstage puts them back)\n";
    else
      os << "  moved " << r.removed_stale.size() << " of them to .stackpin/backup/\n";
  }
}

Outcome run_stage(const StageCli& c, Context& ctx) {
  auto m = load_manifest_for(ctx, c.manifest);
  if (!m) return m.error();
  core::StageOptions o;
  o.archives_dir = c.archives;
  o.cache_dir = archive_cache_dir(ctx, c.cache_dir);
  auto target = model::parse_target(c.target);
  if (!target || (*target != model::Target::windows && *target != model::Target::linux))
    return util::Error(util::ErrorCode::usage, "--target must be windows or linux");
  o.target = *target;
  if (!c.dest.empty()) o.dest = c.dest;
  if (!c.platform.empty()) {
    auto p = parse_platform_option(c.platform);
    if (!p) return p.error();
    o.platform = *p;
  }
  o.dry_run = c.dry_run;
  o.remove_stale = c.remove_stale;
  o.force = c.force;
  o.max_unpacked = c.max_unpacked;
  if (c.decoder_memory) o.decoder_memory = *c.decoder_memory << 20;
  o.manifest_sha256 = m->sha256;
  o.stackpin_version = STACKPIN_VERSION;
  if (auto p = progress_printer(ctx, "staging"))
    o.progress = [p](const archive_io::Progress& pr) { p(pr.archive_bytes, pr.archive_total, pr.files); };
  if (!ctx.json && ctx.io.err_is_tty)
    o.on_lock_wait = [&ctx] { ctx.io.err << "waiting for another stackpin run on this destination...\n"; };
  o.fault = fault_hook(ctx);
  auto r = core::stage(*m, knowledge::KnowledgeBase::embedded(), o);
  if (!r) return r.error();
  if (ctx.json)
    ctx.io.out << format::envelope("stage", true, {}, format::to_json(*r), nullptr);
  else
    print_stage(ctx.io.out, *r, ctx.out_style);
  return k_exit_ok;
}

Outcome run_unstage(const std::string& dest, bool force, Context& ctx) {
  const bool json = ctx.json;
  core::UnstageOptions o;
  o.dest = dest;
  o.force = force;
  o.fault = fault_hook(ctx);
  model::UnstageReport report;
  auto r = core::unstage(o, report);
  if (!r) {
    if (json) {
      ctx.io.out << format::envelope("unstage", false, {}, format::to_json(report), &r.error());
      return exit_code_for(r.error());
    }
    return r.error();
  }
  if (json) {
    ctx.io.out << format::envelope("unstage", true, {}, format::to_json(*r), nullptr);
  } else {
    if (!r->recovered.empty()) ctx.io.out << ctx.out_style.yellow("recovered") << ": " << r->recovered << "\n";
    ctx.io.out << ctx.out_style.green("unstaged") << ": removed " << r->removed << " file(s), restored " << r->restored
               << " replaced file(s) in " << r->dest << "\n";
  }
  return k_exit_ok;
}

Outcome run_status(const std::string& dest, Context& ctx) {
  const bool json = ctx.json;
  auto r = core::status(dest, knowledge::KnowledgeBase::embedded());
  if (!r) return r.error();
  const auto& findings = r->findings;
  bool ok = !core::verdict(findings, false).failed;
  if (json) {
    ctx.io.out << format::envelope("status", ok, findings, format::to_json(*r), nullptr);
  } else {
    for (const auto& f : findings) render_finding(ctx.io.out, f, ctx.out_style);
    ctx.io.out << (ok ? ctx.out_style.green("intact") : ctx.out_style.red("drift")) << ": " << r->dest << "\n";
  }
  return ok ? k_exit_ok : k_exit_failed;
}

}  // namespace

void add_stage(Command& app, Context& ctx) {
  auto c = std::make_shared<StageCli>();
  auto* cmd =
      app.add_subcommand("stage", "Verify the pinned archives (cuDNN, [cuda] components) and stage them into a Windows or Linux layout");
  cmd->add_option("MANIFEST", c->manifest, "The manifest")->required();
  cmd->add_option("--archives", c->archives, "Folder holding the downloaded archives (default: only the download cache)");
  cmd->add_option("--cache-dir", c->cache_dir, "The download cache `stackpin fetch` fills, searched after --archives");
  cmd->add_option("--target", c->target, "windows or linux")->required();
  cmd->add_option("--dest", c->dest, "The directory that becomes the prefix (or the CUDA root for cuda-merge)");
  cmd->add_option("--platform", c->platform,
                  "Archive platform (default: for windows the manifest's, windows-x86_64 or with arch = \"arm64\" windows-arm64; the "
                  "host's for linux)");
  cmd->add_flag("--dry-run", c->dry_run, "Print the plan (every file, where it goes, what it replaces); change nothing");
  cmd->add_flag("--remove-stale", c->remove_stale, "Move other-version cuDNN DLLs found in the tree to .stackpin/backup/");
  cmd->add_flag("--force", c->force, "Replace a previous staging even where its files were modified");
  cmd->add_option("--max-unpacked", c->max_unpacked, "Refuse archives that expand past BYTES (default 16x the archive)");
  cmd->add_option("--decoder-memory", c->decoder_memory,
                  "MiB the xz decoder may use to decode on several threads (default 128; 24 or less: one thread, about 10 MiB)")
      ->check_range(1, 1 << 20);
  add_json_flag(cmd, ctx);
  add_lock_options(cmd, ctx);
  cmd->callback([c, &ctx] { ctx.action = [c, &ctx] { return run_stage(*c, ctx); }; });

  auto u = std::make_shared<std::pair<std::string, bool>>();
  auto* un = app.add_subcommand("unstage", "Remove exactly what stage put into DEST, restoring what it replaced");
  un->add_option("--dest", u->first, "The staged directory")->required();
  un->add_flag("--force", u->second, "Remove staged files even where they were modified since");
  add_json_flag(un, ctx);
  un->callback([u, &ctx] { ctx.action = [u, &ctx] { return run_unstage(u->first, u->second, ctx); }; });

  auto s = std::make_shared<std::string>();
  auto* st = app.add_subcommand("status", "Re-hash every staged file against DEST's receipt and report drift");
  st->add_option("--dest", *s, "The staged directory")->required();
  add_json_flag(st, ctx);
  st->callback([s, &ctx] { ctx.action = [s, &ctx] { return run_status(*s, ctx); }; });
}

}  // namespace cli
