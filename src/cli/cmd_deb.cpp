// stackpin deb MANIFEST [--archives DIR] [--cache-dir DIR] --out-dir DIR [--platform P] [--maintainer M] [--compression C] [--dry-run]
// [--json]
#include <cstdint>
#include <ostream>

#include "commands.hpp"
#include "core/package/deb.hpp"
#include "format/manifest_reader.hpp"
#include "format/receipt.hpp"
#include "util/strings.hpp"

namespace cli {

namespace {

struct DebCli {
  std::string manifest, archives, cache_dir, out_dir, platform, maintainer, compression = "xz";
  std::optional<std::uint64_t> max_unpacked;
  bool dry_run = false;
};

// The CUDA toolkit's archives, when the manifest's [cuda] components are packaged too.
void print_toolkit(std::ostream& os, const model::DebReport& r, const std::string& verb) {
  if (r.cuda_archives.empty()) return;
  os << verb << " the CUDA " << r.cuda_version << " toolkit from " << r.cuda_archives.size() << " archives (each verified)"
     << (r.dry_run && r.archive_path.empty() ? " (--dry-run: nothing is written)" : "") << ":\n";
  for (const auto& a : r.cuda_archives) os << "           " << a << "\n";
}

// --dry-run: the packages as they would be written, with every file they would install.
void print_deb_plan(std::ostream& os, const model::DebReport& r, const Style& st) {
  if (!r.archive_path.empty())
    os << st.bold("plan") << " packages of cuDNN from " << r.archive_path << " (--dry-run: nothing is written)\n           sha256 "
       << r.archive_sha256 << " (verified)\n";
  print_toolkit(os, r, st.bold("plan"));
  for (const auto& p : r.packages) {
    os << "  " << st.bold(p.name) << " " << p.version << " " << p.architecture << " (" << p.role << ", " << p.files << " files, "
       << p.installed_size_kib << " KiB installed)\n    would write " << p.path << "\n";
    if (!p.depends.empty()) os << "    Depends: " << util::join(p.depends, ", ") << "\n";
    if (!p.recommends.empty()) os << "    Recommends: " << util::join(p.recommends, ", ") << "\n";
    for (const auto& f : p.contents) os << "    " << f << "\n";
  }
  for (const auto& n : r.notes) os << "  " << st.yellow("note") << ": " << n << "\n";
}

void print_deb(std::ostream& os, const model::DebReport& r, const Style& st) {
  if (!r.archive_path.empty())
    os << st.green("packaged") << " cuDNN from " << r.archive_path << "\n           sha256 " << r.archive_sha256 << " (verified)\n";
  if (!r.cudnn_whole.empty()) os << "           " << r.cudnn_whole << " (read from the files)\n";
  print_toolkit(os, r, st.green("packaged"));
  for (const auto& p : r.packages) {
    os << "  " << st.bold(p.name) << " " << p.version << " " << p.architecture << " (" << p.role << ", " << p.files << " files, "
       << p.installed_size_kib << " KiB installed)" << (p.unchanged ? "  unchanged: the same bytes were already there" : "") << "\n";
    os << "    " << p.path << "\n    sha256 " << p.sha256 << "\n";
    if (!p.depends.empty()) os << "    Depends: " << util::join(p.depends, ", ") << "\n";
    if (!p.recommends.empty()) os << "    Recommends: " << util::join(p.recommends, ", ") << "\n";
  }
  os << "  files install into " << r.libdir << (r.includedir.empty() ? "" : " and " + r.includedir);
  if (!r.mtime_source.empty()) os << "; cuDNN's timestamps from " << r.mtime_source << " (" << r.mtime << ")";
  if (!r.cuda_home.empty())
    os << "\n  the toolkit's CUDA_HOME is " << r.cuda_home << "; its timestamps from " << r.cuda_mtime_source << " (" << r.cuda_mtime
       << ")";
  os << "\n";
  for (const auto& n : r.notes) os << "  " << st.yellow("note") << ": " << n << "\n";
  if (!r.packages.empty()) {
    os << "install with: sudo dpkg -i";
    for (const auto& p : r.packages) os << " " << p.path;
    os << "   (remove with: sudo dpkg -r";
    for (auto it = r.packages.rbegin(); it != r.packages.rend(); ++it) os << " " << it->name;
    os << ")\n";
  }
}

Outcome run_deb(const DebCli& c, Context& ctx) {
  auto m = load_manifest_for(ctx, c.manifest);
  if (!m) return m.error();
  core::DebOptions o;
  o.archives_dir = c.archives;
  o.cache_dir = archive_cache_dir(ctx, c.cache_dir);
  o.out_dir = c.out_dir;
  o.maintainer = c.maintainer;
  if (o.maintainer.empty()) {
    auto name = ctx.io.env.get("DEBFULLNAME"), mail = ctx.io.env.get("DEBEMAIL");
    if (name && mail && !name->empty() && !mail->empty()) o.maintainer = *name + " <" + *mail + ">";
  }
  if (c.compression == "xz")
    o.compression = archive_io::Compression::xz;
  else if (c.compression == "gzip")
    o.compression = archive_io::Compression::gzip;
  else if (c.compression == "none")
    o.compression = archive_io::Compression::none;
  else
    return util::Error(util::ErrorCode::usage, "--compression must be xz, gzip or none");
  if (!c.platform.empty()) {
    o.platform = model::parse_platform(c.platform);
    if (!o.platform) return util::Error(util::ErrorCode::usage, "--platform must be linux-x86_64 or linux-sbsa");
  }
  auto sde = source_date_epoch(ctx);
  if (!sde) return sde.error();
  if (*sde) o.source_date_epoch = **sde;
  o.max_unpacked = c.max_unpacked;
  o.dry_run = c.dry_run;
  o.manifest_sha256 = m->sha256;
  o.stackpin_version = STACKPIN_VERSION;
  if (auto p = progress_printer(ctx, "packaging"))
    o.progress = [p](const archive_io::Progress& pr) { p(pr.archive_bytes, pr.archive_total, pr.files); };
  auto r = core::build_debs(*m, knowledge::KnowledgeBase::embedded(), o);
  if (!r) return r.error();
  if (ctx.json)
    ctx.io.out << format::envelope("deb", true, {}, format::to_json(*r), nullptr);
  else if (r->dry_run)
    print_deb_plan(ctx.io.out, *r, ctx.out_style);
  else
    print_deb(ctx.io.out, *r, ctx.out_style);
  return k_exit_ok;
}

}  // namespace

void add_deb(Command& app, Context& ctx) {
  auto c = std::make_shared<DebCli>();
  auto* cmd = app.add_subcommand(
      "deb", "Build Debian packages (runtime and -dev) from the verified cuDNN archive and the [cuda] components' archives");
  cmd->add_option("MANIFEST", c->manifest, "The stack manifest (TOML)")->required();
  cmd->add_option("--archives", c->archives, "Folder holding the downloaded archives (default: only the download cache)");
  cmd->add_option("--cache-dir", c->cache_dir, "The download cache `stackpin fetch` fills, searched after --archives");
  cmd->add_option("--out-dir,--out", c->out_dir, "Folder the .deb files are written to")->required();
  cmd->add_option("--platform", c->platform, "linux-x86_64 (amd64) or linux-sbsa (arm64); default: this machine's");
  cmd->add_option("--maintainer", c->maintainer,
                  "Maintainer field, 'Full Name <email>' (default: $DEBFULLNAME <$DEBEMAIL>, else stackpin's)");
  cmd->add_option("--compression", c->compression, "Member compression: xz (default), gzip or none");
  cmd->add_option("--max-unpacked", c->max_unpacked, "Refuse archives that unpack to more bytes than this");
  cmd->add_flag("--dry-run", c->dry_run, "Print the plan (both packages, their fields and every file they install); write nothing");
  add_json_flag(cmd, ctx);
  add_lock_options(cmd, ctx);
  cmd->callback([c, &ctx] { ctx.action = [c, &ctx] { return run_deb(*c, ctx); }; });
}

}  // namespace cli
