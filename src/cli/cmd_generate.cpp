// stackpin generate activate --shell sh MANIFEST [--prefix DIR] [-o FILE]
// stackpin generate ldconfig MANIFEST [--prefix DIR] [-o FILE]
// stackpin generate profile-d MANIFEST [--prefix DIR] [-o FILE]
// stackpin generate conda MANIFEST [-o FILE]
#include <ostream>

#include <algorithm>
#include <map>
#include "commands.hpp"
#include "format/json.hpp"

#include "core/layout/activation.hpp"
#include "core/package/bake.hpp"
#include "core/package/conda.hpp"
#include "core/package/docker.hpp"
#include "core/provision/stage.hpp"
#include "format/manifest_reader.hpp"
#include "gen/activate.hpp"
#include "gen/activate_windows.hpp"
#include "gen/bake.hpp"
#include "gen/ci.hpp"
#include "knowledge/knowledge_base.hpp"
#include "util/env.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace cli {

namespace {

// Where a build context's archives are found, and what its SBOM says of stackpin and of when.
util::Result<core::ContextFiles> context_files_for(Context& ctx, const std::string& archives, const std::string& cache_dir) {
  core::ContextFiles files;
  files.archives_dir = archives;
  files.cache_dir = archive_cache_dir(ctx, cache_dir);
  files.stackpin_version = STACKPIN_VERSION;
  SP_TRY_ASSIGN(files.sbom_created, source_date_epoch(ctx));
  return files;
}

struct GenCli {
  std::string manifest, shell = "sh", prefix, output, dest;
};

util::Result<gen::LinuxActivation> activation_for(const GenCli& c, Context& ctx) {
  SP_TRY_ASSIGN(auto m, load_manifest_for(ctx, c.manifest));
  return core::linux_activation(m, c.prefix);
}

// What one kind produced. finish() writes it and prints it: as text (notes on stderr, the file on
// stdout unless -o) or, with --json, as one document whose findings are the notes.
struct Generated {
  std::string kind;
  std::vector<std::string> notes;
  std::string output;               // -o FILE ("" or "-": stdout)
  std::optional<std::string> text;  // the one file this kind writes
  std::vector<std::string> files;   // or the files it wrote into a folder
  std::string summary;              // text mode: printed on stdout after `files` were written
};
Outcome finish(Context& ctx, Generated g);

// The knowledge an image of `m` for `platform` is planned by: with NVIDIA's manifest of a cuDNN
// release the knowledge base lacks when the manifest (or its lock) pins no archive for the
// platform: from the download cache, or from NVIDIA with --from-url (the image downloads from
// NVIDIA then anyway). Why it could not be had goes to `why`, for the error that follows.
const knowledge::KnowledgeBase& image_knowledge(const model::Manifest& m, model::Platform platform, Context& ctx, const std::string& cache,
                                                bool online, std::optional<knowledge::KnowledgeBase>& own,
                                                std::optional<util::Error>& why) {
  if (m.archive_for(platform)) return knowledge::KnowledgeBase::embedded();
  return knowledge_with_nvidia_cudnn(m, ctx, cache, online, own, why);
}

// A planning error, with why NVIDIA's manifest of the release was not read when that is the cause.
// `online_flag`: the subcommand's flag that reads it from NVIDIA ("" when it has none).
util::Error with_release_hint(util::Error e, const std::optional<util::Error>& why, const model::Manifest& m, bool online,
                              const std::string& online_flag) {
  if (!why || !m.cudnn) return e;
  const std::string release = m.cudnn->version.value.prefix(3);
  if (why->code == util::ErrorCode::not_found && !online)
    e.hints.push_back("cuDNN " + release + " is not in the knowledge base and the download cache has no NVIDIA manifest of it: " +
                      "`stackpin lock` reads it (then generate with --locked)" +
                      (online_flag.empty() ? std::string() : ", or " + online_flag + " reads it from NVIDIA"));
  else
    e.hints.push_back("NVIDIA's manifest of cuDNN " + release + " could not be read: " + why->message);
  return e;
}

// The files under a folder a kind filled (a build context, .devcontainer/), sorted.
std::vector<std::string> context_files(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) out.push_back(it->path().string());
  std::sort(out.begin(), out.end());
  return out;
}
// A kind that writes one file.
Outcome emit(Context& ctx, const std::string& kind, const std::string& output, std::string text, std::vector<std::string> notes = {}) {
  Generated g;
  g.kind = kind;
  g.output = output;
  g.text = std::move(text);
  g.notes = std::move(notes);
  return finish(ctx, std::move(g));
}

// With --locked, the Python lock the lock records (read and verified against it); nullopt without
// --locked or when the lock records none.
util::Result<std::optional<model::PyLock>> locked_python(Context& ctx, const std::string& manifest,
                                                         const std::optional<model::Lock>& lock) {
  if (!lock) return std::optional<model::PyLock>();
  const std::filesystem::path path = ctx.lock.file.empty() ? core::default_lock_path(manifest) : std::filesystem::path(ctx.lock.file);
  return core::load_python_lock(*lock, path);
}

struct DockerCli {
  std::string manifest, output, context, archives, cache_dir, platform = "linux-x86_64", convtest, from_registry;
  bool from_url = false, dev = false;
};

Outcome run_dockerfile(const DockerCli& c, Context& ctx) {
  std::optional<model::Lock> lock;
  auto m = load_manifest_for(ctx, c.manifest, &lock);
  if (!m) return m.error();
  core::DockerOptions o;
  if (lock) o.lock = &*lock;
  auto pylock = locked_python(ctx, c.manifest, lock);
  if (!pylock) return pylock.error();
  if (*pylock) o.pylock = &**pylock;
  auto platform = model::parse_platform(c.platform);
  if (!platform) return util::Error(util::ErrorCode::usage, "--platform must be linux-x86_64 or linux-sbsa");
  o.platform = *platform;
  o.from_url = c.from_url || !c.from_registry.empty();
  o.archive_registry = c.from_registry;
  o.include_dev = c.dev;
  o.manifest_file = std::filesystem::path(c.manifest).filename().string();
  o.manifest_sha256 = m->sha256;
  std::optional<knowledge::KnowledgeBase> own;
  std::optional<util::Error> why;
  const auto& kb = image_knowledge(*m, o.platform, ctx, c.cache_dir, o.from_url, own, why);
  if (own) *m = core::resolve_archives(*m, kb);  // the archives of NVIDIA's manifest, as the knowledge base's are
  auto plan = core::plan_dockerfile(*m, kb, o);
  if (!plan) return with_release_hint(std::move(plan).error(), why, *m, o.from_url, "--from-url");
  bool needs_archive = gen::copies_archives(plan->spec);
  auto made = context_files_for(ctx, c.archives, c.cache_dir);
  if (!made) return made.error();
  core::ContextFiles& files = *made;
  // a context gets the image's SBOM, made from the archives: those it holds, or with --from-url
  // copies of them in --archives or the cache (`stackpin fetch`), else by the build itself
  plan->spec.sbom = !c.context.empty() && needs_archive;
  if (!c.context.empty() && plan->spec.from_url)
    if (auto note = core::url_image_sbom(*plan, *m, kb, files); !note.empty()) plan->notes.push_back(note);
  auto text = gen::render_dockerfile(plan->spec);
  if (!text) return text.error();
  if (c.context.empty()) return emit(ctx, "dockerfile", c.output, *text, plan->notes);
  if (needs_archive && c.archives.empty() && files.cache_dir.empty())
    return util::Error(util::ErrorCode::usage,
                       "--context needs --archives DIR (where the pinned archive is), a download cache "
                       "(--cache-dir, filled by `stackpin fetch`), or --from-url");
  if (!c.convtest.empty()) {
    files.convtest_binary = c.convtest;
  } else if (auto self = util::executable_path()) {
    files.convtest_binary = self->parent_path() / "stackpin-convtest";
  }
  if (auto st = core::write_context(*plan, *text, *m, kb, files, c.context); !st) return st.error();
  Generated g;
  g.kind = "dockerfile";
  g.notes = plan->notes;
  g.files = context_files(c.context);
  g.summary = "build context ready in " + c.context + "\n  docker build --target runtime -t " + m->name.value + " " + c.context +
              "\n  docker build --target test -t " + m->name.value + "-test " + c.context + "\n";
  if (plan->spec.hermetic) g.summary += "  docker build --target devel -t " + m->name.value + "-devel " + c.context + "\n";
  return finish(ctx, std::move(g));
}

struct DevcontainerCli {
  std::string manifest, out_dir = ".", archives, cache_dir, platform = "linux-x86_64";
};

// .devcontainer/{devcontainer.json, Dockerfile}: the archive is downloaded from its URL during the
// build when the manifest has one (a repository should not carry an 800 MB archive), else copied
// from .devcontainer/archives/, verified, like a --context build.
Outcome run_devcontainer(const DevcontainerCli& c, Context& ctx) {
  std::optional<model::Lock> lock;
  auto m = load_manifest_for(ctx, c.manifest, &lock);
  if (!m) return m.error();
  core::DockerOptions o;
  if (lock) o.lock = &*lock;
  auto pylock = locked_python(ctx, c.manifest, lock);
  if (!pylock) return pylock.error();
  if (*pylock) o.pylock = &**pylock;
  auto platform = model::parse_platform(c.platform);
  if (!platform) return util::Error(util::ErrorCode::usage, "--platform must be linux-x86_64 or linux-sbsa");
  o.platform = *platform;
  o.manifest_file = std::filesystem::path(c.manifest).filename().string();
  o.manifest_sha256 = m->sha256;
  std::optional<knowledge::KnowledgeBase> own;
  std::optional<util::Error> why;
  const auto& kb = image_knowledge(*m, o.platform, ctx, c.cache_dir, false, own, why);
  if (own) *m = core::resolve_archives(*m, kb);
  const auto* pin = m->archive_for(o.platform);
  o.from_url = pin && pin->url && (pin->url->value.rfind("https://", 0) == 0 || pin->url->value.rfind("http://", 0) == 0);
  auto plan = core::plan_dockerfile(*m, kb, o);
  if (!plan) return with_release_hint(std::move(plan).error(), why, *m, false, "");
  plan->spec.test_stage = false;  // the dev container builds `runtime`
  bool needs_archive = gen::copies_archives(plan->spec);
  plan->spec.sbom = needs_archive;
  auto made = context_files_for(ctx, c.archives, c.cache_dir);
  if (!made) return made.error();
  core::ContextFiles& files = *made;
  // the archive downloaded by the build: the SBOM from a local copy, else written by the build
  if (plan->spec.from_url)
    if (auto note = core::url_image_sbom(*plan, *m, kb, files); !note.empty()) plan->notes.push_back(note);
  auto text = gen::render_dockerfile(plan->spec);
  if (!text) return text.error();
  auto dir = std::filesystem::path(c.out_dir) / ".devcontainer";
  if (needs_archive || plan->spec.sbom || plan->spec.sbom_in_build) {
    if (needs_archive && c.archives.empty() && files.cache_dir.empty())
      return util::Error(util::ErrorCode::usage,
                         "the manifest's archive has no url: pass --archives DIR (or --cache-dir) so it can be put into " + dir.string());
    files.convtest_optional = true;  // the devcontainer builds the runtime target only: no conv test in its context
    if (auto st = core::write_context(*plan, *text, *m, kb, files, dir); !st) return st.error();
  } else {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return util::Error(util::ErrorCode::io, "cannot create " + dir.string() + ": " + ec.message());
    if (auto st = util::write_file_atomic(dir / "Dockerfile", *text); !st) return st.error();
  }
  if (auto st = util::write_file_atomic(dir / "devcontainer.json", gen::render_devcontainer(plan->spec)); !st) return st.error();
  Generated g;
  g.kind = "devcontainer";
  g.notes = plan->notes;
  g.files = context_files(dir);
  g.summary =
      "wrote " + (dir / "devcontainer.json").string() + " and " + (dir / "Dockerfile").string() + " (target runtime, GPU requested)\n";
  return finish(ctx, std::move(g));
}

struct BakeCli {
  std::vector<std::string> manifests, platforms;
  std::string output = "docker-bake.json", context_dir, registry, archives, cache_dir, convtest, from_registry;
  bool from_url = false;
};

// The bake matrix of the command's manifests (core::plan_bake_matrix), each loaded as every
// command loads a manifest. Errors: usage (--lock with several manifests), those of
// context_files_for and core::plan_bake_matrix.
util::Result<core::BakeMatrix> plan_matrix(const BakeCli& c, Context& ctx) {
  if (c.manifests.size() > 1 && !ctx.lock.file.empty())
    return util::Error(util::ErrorCode::usage,
                       "--lock FILE names one lock, and " + std::to_string(c.manifests.size()) + " manifests were given")
        .with_hint("use --locked: each manifest is taken as the lock beside it pins it");
  core::BakeMatrixOptions o;
  o.manifests = c.manifests;
  o.platforms = c.platforms;
  o.output = c.output;
  o.context_dir = c.context_dir;
  o.registry = c.registry;
  o.from_url = c.from_url || !c.from_registry.empty();
  o.archive_registry = c.from_registry;
  o.convtest = c.convtest;
  if (o.convtest.empty())
    if (auto self = util::executable_path()) o.convtest = self->parent_path() / "stackpin-convtest";
  SP_TRY_ASSIGN(o.files, context_files_for(ctx, c.archives, c.cache_dir));
  o.load = [&ctx](const std::string& path) -> util::Result<core::BakeManifest> {
    core::BakeManifest b;
    SP_TRY_ASSIGN(b.manifest, load_manifest_for(ctx, path, &b.lock));
    SP_TRY_ASSIGN(b.pylock, locked_python(ctx, path, b.lock));
    return b;
  };
  return core::plan_bake_matrix(o, knowledge::KnowledgeBase::embedded());
}

Outcome run_bake(const BakeCli& c, Context& ctx) {
  const auto& kb = knowledge::KnowledgeBase::embedded();
  auto matrix = plan_matrix(c, ctx);
  if (!matrix) return matrix.error();
  auto& [planned, images, notes, convtest] = *matrix;
  auto bake = gen::render_bake(images);
  if (!bake) return bake.error();

  // every context's archives found and verified first, so that a missing or wrong one writes nothing
  std::vector<std::pair<core::ContextFiles, core::ContextInputs>> inputs;
  for (const auto& p : planned) {
    core::ContextFiles files = p.files;
    bool needs_archive = gen::copies_archives(p.plan.spec);
    if (needs_archive && c.archives.empty() && files.cache_dir.empty())
      return util::Error(util::ErrorCode::usage,
                         "the contexts need the pinned archives: --archives DIR, a download cache (--cache-dir, filled by "
                         "`stackpin fetch`), or --from-url");
    files.convtest_optional = true;
    if (!convtest.empty() && p.plan.platform == model::host_linux_platform()) files.convtest_binary = convtest;
    auto in = core::prepare_context(p.plan, p.m, kb, files);
    if (!in) {
      auto e = in.error();
      e.message = p.m.path + " (" + model::to_string(p.plan.platform) + "): " + e.message;
      return e;
    }
    inputs.emplace_back(std::move(files), std::move(*in));
  }
  for (std::size_t i = 0; i < planned.size(); ++i)
    if (auto st = core::write_prepared_context(planned[i].plan, planned[i].text, inputs[i].second, inputs[i].first, planned[i].dir); !st)
      return st.error();
  Generated g;
  g.kind = "bake";
  g.output = c.output;
  g.text = *bake;
  g.notes = std::move(notes);
  return finish(ctx, std::move(g));
}

struct CiCli {
  BakeCli matrix;
  bool github = false, gitlab = false;
  std::string output;
  std::vector<std::string> runner_labels;
};

// The CI definition for the matrix a `generate bake` with the same manifests, platforms and
// registry writes (--bake names that bake file); nothing but the definition is written.
Outcome run_ci(CiCli c, Context& ctx) {
  namespace fs = std::filesystem;
  if (c.github == c.gitlab) return util::Error(util::ErrorCode::usage, "give one of --github and --gitlab");
  // planning looks for no archive (only writing a context does), so the images are those of the bake
  // file with or without --from-url
  auto matrix = plan_matrix(c.matrix, ctx);
  if (!matrix) return matrix.error();
  gen::CiSpec spec;
  for (const auto& m : c.matrix.manifests) spec.manifests.push_back(fs::path(m).filename().string());
  fs::path bake(c.matrix.output);
  spec.bake_dir = bake.parent_path().empty() ? "." : bake.parent_path().generic_string();
  spec.bake_file = bake.filename().string();
  spec.registry = c.matrix.registry;
  spec.runner_labels = c.runner_labels;
  if (spec.runner_labels.empty())
    spec.runner_labels = c.github ? std::vector<std::string>{"self-hosted", "linux", "x64", "gpu"} : std::vector<std::string>{"gpu"};
  for (std::size_t n = 0; n < matrix->images.size(); ++n) {
    const auto& i = matrix->images[n];
    spec.arm64 |= i.platform == "linux/arm64";
    if (i.test) spec.tests.push_back({i.name + "-test", i.image + ":" + i.tag + "-test", matrix->planned[n].plan.spec.gpu_archs});
  }
  auto text = c.github ? gen::render_github_workflow(spec) : gen::render_gitlab_pipeline(spec);
  if (!text) return text.error();
  std::vector<std::string> notes;
  for (const auto& n : matrix->notes)
    if (n.find("no --registry") != std::string::npos)
      notes.push_back("no --registry: nothing is pushed, and each conv-test job builds its image without a shared cache");
  return emit(ctx, "ci", c.output, *text, notes);
}

Outcome finish(Context& ctx, Generated g) {
  bool to_stdout = g.output.empty() || g.output == "-";
  std::vector<format::GeneratedFile> written;
  if (g.text) {
    if (!to_stdout) {
      if (auto s = util::write_file_atomic(g.output, *g.text); !s) return s.error();
    }
    written.push_back({to_stdout ? "-" : g.output, g.text->size(), to_stdout ? g.text : std::nullopt});
  }
  for (const auto& f : g.files) {
    std::error_code ec;
    auto size = std::filesystem::file_size(f, ec);
    written.push_back({f, ec ? 0 : static_cast<std::uint64_t>(size), std::nullopt});
  }
  if (ctx.json) {
    std::vector<model::Finding> findings;
    for (const auto& n : g.notes) {
      auto& f = model::add_finding(findings, "generate." + g.kind, model::Severity::note, g.kind);
      f.seen = n;
    }
    ctx.io.out << format::envelope("generate", true, findings, format::generated_json(g.kind, written), nullptr);
    return k_exit_ok;
  }
  for (const auto& n : g.notes) ctx.io.err << "note: " << n << "\n";
  if (g.text && to_stdout) ctx.io.out << *g.text;
  ctx.io.out << g.summary;
  return k_exit_ok;
}

Outcome run_conda(const GenCli& c, Context& ctx) {
  std::optional<model::Lock> lock;
  auto m = load_manifest_for(ctx, c.manifest, &lock);
  if (!m) return m.error();
  core::CondaOptions o;
  if (lock) o.lock = &*lock;
  auto pylock = locked_python(ctx, c.manifest, lock);
  if (!pylock) return pylock.error();
  if (*pylock) o.pylock = &**pylock;
  o.manifest_file = std::filesystem::path(c.manifest).filename().string();
  o.manifest_sha256 = m->sha256;
  auto plan = core::plan_conda(*m, knowledge::KnowledgeBase::embedded(), o);
  if (!plan) return plan.error();
  return emit(ctx, "conda", c.output, gen::render_environment_yml(plan->spec), plan->notes);
}

// A kind rendered from the Linux activation (the manifest and --prefix, see activation_for()):
// profile-d and ldconfig.
void add_linux_kind(Command* gen_cmd, Context& ctx, const std::string& name, const std::string& help,
                    std::function<util::Result<std::string>(const gen::LinuxActivation&)> render) {
  auto c = std::make_shared<GenCli>();
  auto* cmd = gen_cmd->add_subcommand(name, help);
  cmd->add_option("MANIFEST", c->manifest, "The manifest")->required();
  cmd->add_option("--prefix", c->prefix, "Where the staged tree lives (default: [targets.linux] prefix)");
  cmd->add_option("-o", c->output, "Write to FILE instead of stdout");
  cmd->callback([c, &ctx, render, name] {
    ctx.action = [c, &ctx, render, name]() -> Outcome {
      auto act_for = activation_for(*c, ctx);
      if (!act_for) return act_for.error();
      auto text = render(*act_for);
      if (!text) return text.error();
      return emit(ctx, name, c->output, *text);
    };
  });
}

}  // namespace

void add_generate(Command& app, Context& ctx) {
  auto* gen_cmd = app.add_subcommand("generate", "Generate files from a manifest");
  gen_cmd->require_subcommand(1);
  // --locked may also follow the kind and its manifest: `generate dockerfile M --locked`.
  gen_cmd->fallthrough();
  add_lock_options(gen_cmd, ctx);
  add_json_flag(gen_cmd, ctx);

  auto a = std::make_shared<GenCli>();
  auto* act = gen_cmd->add_subcommand("activate", "An activation script that puts the staged cuDNN first on the loader path");
  act->add_option("MANIFEST", a->manifest, "The manifest")->required();
  act->add_option("--shell", a->shell, "sh (Linux/WSL2), powershell or cmd (Windows)")->check_member({"sh", "powershell", "cmd"});
  act->add_option("--prefix", a->prefix,
                  "Where the staged tree lives (default: the manifest's [targets.linux] prefix; for powershell and cmd, [targets.windows] "
                  "prefix or, for cuda-merge, cuda_path)");
  act->add_option("-o", a->output, "Write to FILE instead of stdout");
  act->callback([a, &ctx] {
    ctx.action = [a, &ctx]() -> Outcome {
      if (a->shell != "sh") {
        auto m = load_manifest_for(ctx, a->manifest);
        if (!m) return m.error();
        const auto& kb = knowledge::KnowledgeBase::embedded();
        auto w = a->prefix.empty() ? core::windows_activation(*m, kb) : core::windows_activation_at(*m, kb, a->prefix);
        if (!w) return w.error();
        if (a->shell == "powershell") return emit(ctx, "activate", a->output, gen::render_activate_ps1(*w));
        auto text = gen::render_activate_cmd(*w);
        if (!text) return text.error();
        return emit(ctx, "activate", a->output, *text);
      }
      auto act_for = activation_for(*a, ctx);
      if (!act_for) return act_for.error();
      return emit(ctx, "activate", a->output, gen::render_activate_sh(*act_for));
    };
  });

  auto w = std::make_shared<GenCli>();
  auto* chk = gen_cmd->add_subcommand("windows-check",
                                      "check-cudnn.ps1: verifies a Windows machine against the manifest (files and their hashes, version, "
                                      "PATH order, DLL search order, CUDA bin, zlibwapi, VC++ runtime, driver, a running process's DLLs)");
  chk->add_option("MANIFEST", w->manifest, "The manifest")->required();
  chk->add_option("--prefix", w->prefix, "Where the tree lives on the Windows machine (default: [targets.windows] prefix or cuda_path)");
  chk->add_option("--dest", w->dest,
                  "A tree staged with `stackpin stage`: its receipt gives the SHA-256 of every file, which the script checks");
  chk->add_option("-o", w->output, "Write to FILE instead of stdout");
  chk->callback([w, &ctx] {
    ctx.action = [w, &ctx]() -> Outcome {
      auto m = load_manifest_for(ctx, w->manifest);
      if (!m) return m.error();
      const auto& kb = knowledge::KnowledgeBase::embedded();
      auto a = w->prefix.empty() ? core::windows_activation(*m, kb) : core::windows_activation_at(*m, kb, w->prefix);
      if (!a) return a.error();
      if (!w->dest.empty()) {
        auto r = core::staged_receipt(w->dest);
        if (!r) return r.error();
        for (const auto& f : r->files) {
          if (f.type != "file") continue;
          std::string path = f.path;
          std::replace(path.begin(), path.end(), '/', '\\');
          a->files.push_back({path, f.sha256});
        }
      }
      std::vector<std::string> notes;
      if (w->dest.empty()) notes.push_back("without --dest (a staged tree) the script checks that the files exist, not their SHA-256");
      return emit(ctx, "windows-check", w->output, gen::render_check_ps1(*a), notes);
    };
  });

  add_linux_kind(gen_cmd, ctx, "profile-d", "An /etc/profile.d/ snippet: every login shell puts the staged cuDNN first on the loader path",
                 [](const gen::LinuxActivation& a) -> util::Result<std::string> { return gen::render_profile_d(a); });

  auto d = std::make_shared<DockerCli>();
  auto* df = gen_cmd->add_subcommand(
      "dockerfile", "A multi-stage Dockerfile for a GPU image (SHA-256 checked archive, runtime files only, conv test target)");
  df->add_option("MANIFEST", d->manifest, "The manifest")->required();
  df->add_option("-o", d->output, "Write to FILE instead of stdout");
  df->add_option("--context", d->context,
                 "Lay out a ready build context in DIR (Dockerfile, .dockerignore, the verified archive, stackpin-convtest)");
  df->add_option("--archives", d->archives, "With --context: the folder holding the pinned archive (searched before the cache)");
  df->add_option("--cache-dir", d->cache_dir, "With --context: the download cache `stackpin fetch` fills (default: the usual one)");
  df->add_option("--platform", d->platform, "The image's architecture: linux-x86_64 (default) or linux-sbsa");
  df->add_flag("--from-url", d->from_url, "Download the archive from its URL during the build instead of the build context");
  df->add_option("--from-registry", d->from_registry,
                 "Download the archives during the build from this registry repository (oci://HOST/REPO, filled by `stackpin mirror "
                 "push`; oci+http:// for plain HTTP), by digest, instead of their URLs; Docker's ADD sends neither credentials nor a "
                 "token, so the repository must serve its blobs to anyone");
  df->add_flag("--dev", d->dev, "Also put cuDNN's headers and static libraries into the image");
  df->add_option("--convtest", d->convtest, "With --context: the stackpin-convtest to copy (default: the one next to stackpin)");
  df->callback([d, &ctx] { ctx.action = [d, &ctx] { return run_dockerfile(*d, ctx); }; });

  auto bk = std::make_shared<BakeCli>();
  auto* bake = gen_cmd->add_subcommand(
      "bake", "A BuildKit bake file (docker-bake.json) for a matrix of images: one target per manifest and platform, with contexts");
  bake->add_option("MANIFEST", bk->manifests, "The manifests, one image each")->required();
  bake->add_option("-o", bk->output, "The bake file (default: docker-bake.json); the contexts go beside it");
  bake->add_option("--context-dir", bk->context_dir, "Where the build contexts go, inside the bake file's folder (default: contexts/)");
  bake->add_option("--platform", bk->platforms,
                   "linux-x86_64 and/or linux-sbsa (repeatable; default: both where the manifest's archives exist)");
  bake->add_option("--registry", bk->registry,
                   "Where the images and the shared build cache live (ghcr.io/org); without it, local names and no cache");
  bake->add_option("--archives", bk->archives, "The folder holding the pinned archives (searched before the cache)");
  bake->add_option("--cache-dir", bk->cache_dir, "The download cache `stackpin fetch` fills (default: the usual one)");
  bake->add_flag("--from-url", bk->from_url, "Download the archives from their URLs during the builds instead of the contexts");
  bake->add_option("--from-registry", bk->from_registry,
                   "Download the archives during the builds from this registry repository (oci://HOST/REPO, filled by `stackpin "
                   "mirror push`), by digest; Docker's ADD sends neither credentials nor a token, so the repository must serve "
                   "its blobs to anyone");
  bake->add_option("--convtest", bk->convtest, "The stackpin-convtest for the -test targets (default: the one next to stackpin)");
  bake->callback([bk, &ctx] { ctx.action = [bk, &ctx] { return run_bake(*bk, ctx); }; });

  auto ci = std::make_shared<CiCli>();
  auto* ci_cmd = gen_cmd->add_subcommand(
      "ci", "A GitHub Actions workflow or GitLab CI pipeline that builds a bake matrix and runs each image's conv test on GPU runners");
  ci_cmd->add_option("MANIFEST", ci->matrix.manifests, "The manifests of the matrix (as given to `generate bake`)")->required();
  ci_cmd->add_flag("--github", ci->github, "A GitHub Actions workflow (.github/workflows/*.yml)");
  ci_cmd->add_flag("--gitlab", ci->gitlab, "A GitLab CI pipeline (.gitlab-ci.yml)");
  ci_cmd->add_option("-o", ci->output, "Write to FILE instead of stdout");
  ci_cmd->add_option("--bake", ci->matrix.output, "The bake file, relative to the repository root (default: docker-bake.json)");
  ci_cmd->add_option("--registry", ci->matrix.registry, "Where the images and the build cache are pushed, as for `generate bake`");
  ci_cmd->add_option("--platform", ci->matrix.platforms, "As for `generate bake` (repeatable)");
  ci_cmd->add_option("--runner-label", ci->runner_labels,
                     "A label of the GPU runners (repeatable; default: self-hosted, linux, x64, gpu on GitHub, gpu on GitLab)");
  ci_cmd->add_option("--convtest", ci->matrix.convtest, "As for `generate bake`: with it, linux-x86_64 images get a conv-test job");
  ci_cmd->callback([ci, &ctx] { ctx.action = [ci, &ctx] { return run_ci(*ci, ctx); }; });

  auto dc = std::make_shared<DevcontainerCli>();
  auto* dev = gen_cmd->add_subcommand("devcontainer", "A .devcontainer/ (devcontainer.json + Dockerfile) that asks for the GPU");
  dev->add_option("MANIFEST", dc->manifest, "The manifest")->required();
  dev->add_option("--out-dir", dc->out_dir, "The repository root the .devcontainer/ folder goes into (default: .)");
  dev->add_option("--archives", dc->archives, "Where the pinned archive is, when the manifest has no url for it");
  dev->add_option("--cache-dir", dc->cache_dir, "The download cache searched after --archives (default: the usual one)");
  dev->add_option("--platform", dc->platform, "linux-x86_64 (default) or linux-sbsa");
  dev->callback([dc, &ctx] { ctx.action = [dc, &ctx] { return run_devcontainer(*dc, ctx); }; });

  auto cd = std::make_shared<GenCli>();
  auto* conda = gen_cmd->add_subcommand(
      "conda", "A conda environment.yml: python, cuda-version, conda-forge's cudnn, frameworks from pip with the right index");
  conda->add_option("MANIFEST", cd->manifest, "The manifest")->required();
  conda->add_option("-o", cd->output, "Write to FILE instead of stdout");
  conda->callback([cd, &ctx] { ctx.action = [cd, &ctx] { return run_conda(*cd, ctx); }; });

  add_linux_kind(gen_cmd, ctx, "ldconfig", "An /etc/ld.so.conf.d/ entry for the staged tree (system-wide, instead of LD_LIBRARY_PATH)",
                 [](const gen::LinuxActivation& a) { return gen::render_ld_so_conf(a); });
}

}  // namespace cli
