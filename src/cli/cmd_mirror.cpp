// stackpin mirror push MANIFEST oci://HOST/REPOSITORY[:TAG] [--archives DIR] [--tag TAG]
//                     [--chunk-size BYTES] [fetch options] [--locked | --lock FILE] [--json]
// stackpin mirror pull oci://HOST/REPOSITORY:TAG DIR [fetch options] [--json]
#include <ostream>

#include "commands.hpp"
#include "core/archives/mirror.hpp"
#include "core/archives/registry.hpp"
#include "format/json.hpp"
#include "format/oci.hpp"
#include "util/strings.hpp"

namespace cli {

namespace {

struct PushCli {
  std::string manifest, reference, archives, tag;
  std::vector<std::string> platforms;
  std::uint64_t chunk_size = 512u << 20;
  FetchFlags fetch;
};

struct PullCli {
  std::string reference, dir;
  FetchFlags fetch;
};

void print_items(std::ostream& os, const std::vector<model::MirrorItem>& items, const Style& st) {
  for (const auto& it : items) {
    os << "  " << (it.platform.empty() ? it.product : it.platform) << "  " << it.file << "  "
       << (it.status == "present" ? it.status : st.green(it.status)) << " (" << util::format_bytes(it.size) << ")\n";
    os << "      sha256:" << it.sha256 << "\n";
  }
}

Outcome run_push(const PushCli& c, Context& ctx) {
  auto o = fetch_options_for(ctx, c.fetch);
  if (!o) return o.error();
  auto ref = core::parse_oci_reference(c.reference);
  if (!ref) return ref.error();
  if (c.chunk_size < 1024)
    return util::Error(util::ErrorCode::usage, "--chunk-size must be at least 1024 bytes, not " + std::to_string(c.chunk_size));
  SP_TRY_ASSIGN(auto loaded, core::load_manifest(c.manifest, ctx.lock, knowledge::KnowledgeBase::embedded()));
  core::MirrorPushOptions po;
  po.fetch = *o;
  po.archives_dir = c.archives;
  po.chunk_size = c.chunk_size;
  po.tag = c.tag;
  for (const auto& p : c.platforms) {
    auto platform = parse_platform_option(p);
    if (!platform) return platform.error();
    po.platforms.push_back(*platform);
  }
  po.progress = download_progress_printer(ctx);
  auto r = core::mirror_push(loaded.manifest, loaded.lock ? &*loaded.lock : nullptr, loaded.pylock ? &*loaded.pylock : nullptr,
                             knowledge::KnowledgeBase::embedded(), *ref, po);
  if (!r) return r.error();
  const std::string tagged = r->repository + ":" + r->tag;
  if (ctx.json) {
    ctx.io.out << format::envelope("mirror push", true, {}, format::to_json(*r), nullptr);
    return k_exit_ok;
  }
  print_items(ctx.io.out, r->items, ctx.out_style);
  std::size_t sent = 0;
  for (const auto& it : r->items) sent += it.status == "sent" ? 1 : 0;
  ctx.io.out << ctx.out_style.green("pushed") << ": " << r->items.size() << " archive(s) to " << tagged << " (" << sent << " sent, "
             << util::format_bytes(r->bytes_sent) << "; " << r->items.size() - sent << " already there)\n"
             << "  index " << r->index_digest << "\n"
             << "  fetch from it with: stackpin fetch " << c.manifest << " --mirror " << r->repository << "\n";
  return k_exit_ok;
}

Outcome run_pull(const PullCli& c, Context& ctx) {
  auto o = fetch_options_for(ctx, c.fetch);
  if (!o) return o.error();
  auto ref = core::parse_oci_reference(c.reference);
  if (!ref) return ref.error();
  auto r = core::mirror_pull(*ref, c.dir, *o);
  if (!r) return r.error();
  if (ctx.json) {
    ctx.io.out << format::envelope("mirror pull", true, {}, format::to_json(*r), nullptr);
    return k_exit_ok;
  }
  print_items(ctx.io.out, r->items, ctx.out_style);
  ctx.io.out << ctx.out_style.green("pulled") << ": " << r->items.size() << " archive(s) of " << r->reference << " into " << r->dir
             << "\n  use it as NVIDIA's tree: STACKPIN_NVIDIA_BASE=file://" << r->dir << " (wheels: [python] index = \"" << r->dir
             << "/python\")\n";
  return k_exit_ok;
}

}  // namespace

void add_mirror(Command& app, Context& ctx) {
  auto* mirror = app.add_subcommand("mirror", "Keep a stack's archives in an OCI registry, the mirror a fleet already runs");
  mirror->require_subcommand(1);

  auto push = std::make_shared<PushCli>();
  auto* p = mirror->add_subcommand(
      "push",
      "Push every archive the stack pins (cuDNN, CUDA components, the Python lock's wheels) to a registry, verified, as OCI artifacts");
  p->add_option("MANIFEST", push->manifest, "The manifest")->required();
  p->add_option("REFERENCE", push->reference,
                "oci://HOST[:PORT]/REPOSITORY[:TAG] (oci+http:// for a registry that speaks plain HTTP; the tag defaults to the "
                "stack's name and its lock's SHA-256)")
      ->required();
  p->add_option("--archives", push->archives, "A folder searched for the archives before the cache");
  p->add_option("--platform", push->platforms,
                "Only this platform's archives (repeatable; default: those the manifest writes, and its targets' platforms)");
  p->add_option("--tag", push->tag, "The index's tag (default: NAME-<16 hex of the lock's SHA-256>)");
  p->add_option("--chunk-size", push->chunk_size, "Bytes per upload request; a cut connection resumes from what the registry holds")
      ->capture_default_str();
  add_fetch_options(p, push->fetch);
  add_json_flag(p, ctx);
  add_lock_options(p, ctx);
  p->footer(
      "Registries: credentials from STACKPIN_REGISTRY_USERNAME/STACKPIN_REGISTRY_PASSWORD (only for STACKPIN_REGISTRY_HOST when set), "
      "REGISTRY_AUTH_FILE, or "
      "$DOCKER_CONFIG/config.json (~/.docker/config.json: auths, credHelpers, credsStore); CA certificates from the system or "
      "SSL_CERT_FILE.");
  p->callback([push, &ctx] { ctx.action = [push, &ctx] { return run_push(*push, ctx); }; });

  auto pull = std::make_shared<PullCli>();
  auto* q = mirror->add_subcommand("pull", "Pull a stack's archives from a registry into a plain copy of NVIDIA's tree (for an air gap)");
  q->add_option("REFERENCE", pull->reference, "oci://HOST[:PORT]/REPOSITORY:TAG (or @sha256:...), as `mirror push` printed it")->required();
  q->add_option("DIR", pull->dir, "The folder to write NVIDIA's tree into (DIR/cudnn/redist/..., DIR/cuda/redist/..., DIR/python/)")
      ->required();
  add_fetch_options(q, pull->fetch);
  add_json_flag(q, ctx);
  q->callback([pull, &ctx] { ctx.action = [pull, &ctx] { return run_pull(*pull, ctx); }; });
}

}  // namespace cli
