// stackpin check MANIFEST... [--lock FILE] [--explain] [--strict] [--json]
#include <ostream>

#include "commands.hpp"
#include "core/archives/lock.hpp"
#include "core/check/check.hpp"
#include "core/check/python_rules.hpp"
#include "core/verdict.hpp"
#include "format/json.hpp"
#include "format/lock_file.hpp"
#include "format/manifest_reader.hpp"
#include "util/strings.hpp"

namespace cli {

namespace {

struct CheckOptions {
  std::vector<std::string> manifests;
  std::string lock;  // --lock FILE (one manifest); else each manifest's own lock, when it has one
  std::string cache_dir;
  bool explain = false;
  bool strict = false;
  bool online = false;
};

void render_explain(std::ostream& os, const model::CheckReport& r, const Style& st) {
  os << st.bold("Resolved facts for " + r.name) << " (" << r.manifest_path << ")\n";
  os << "  CUDA " << r.cuda_version;
  if (!r.cudnn_version.empty()) os << ", cuDNN " << r.cudnn_version;
  if (r.cudnn_cuda_major) os << " built for CUDA " << *r.cudnn_cuda_major;
  std::string platform;
  for (const auto& c : r.cuda_components) {
    if (platform != model::to_string(c.platform)) {
      platform = model::to_string(c.platform);
      os << "\n  CUDA components for " << platform << ":";
    }
    os << "\n    " << c.component << " " << c.version << "  "
       << st.dim(util::basename_of(c.url) + ", " + std::to_string(c.size) + " bytes");
  }
  os << "\n  driver minimum:\n";
  for (const auto& d : r.drivers) {
    os << "    " << model::to_string(d.os) << (d.os == model::Os::linux ? "    " : "  ") << d.effective;
    std::vector<std::string> why;
    if (d.pinned) why.push_back("pinned");
    if (d.release_min)
      why.push_back("NVIDIA's minimum for CUDA " + r.cuda_version + ": " + d.release_min->text());
    else if (d.release_na)
      why.push_back("NVIDIA's table: N/A for this release");
    if (d.family_floor) why.push_back("CUDA " + r.cuda_version.substr(0, r.cuda_version.find('.')) + ".x floor: " + d.family_floor->text());
    if (!why.empty()) {
      os << "  (";
      for (std::size_t i = 0; i < why.size(); ++i) os << (i ? "; " : "") << why[i];
      os << ")";
    }
    os << "\n";
    if (!d.source.empty()) os << "              " << st.dim("source: " + d.source) << "\n";
  }
  if (r.windows) {
    const auto& w = *r.windows;
    os << "  Windows layout (relative to the cuDNN root):\n";
    if (!w.dll_dir.empty()) {
      os << "    DLLs              " << w.dll_dir << "\\" << w.main_dll << " (and the other cudnn*64_N.dll)\n";
      os << "    import libraries  " << w.import_lib_dir << "\\cudnn.lib" << (w.verified ? "" : "  (not verified for this version)")
         << "\n";
      os << "    headers           " << w.include_dir << "\\cudnn.h, cudnn_version.h\n";
    } else {
      os << "    unknown for this version\n";
    }
    os << "    zlibwapi.dll      " << (w.zlibwapi_needed ? "needed (not in the cuDNN zip)" : "not needed") << "\n";
    if (!w.source.empty()) os << "    " << st.dim("source: " + w.source) << "\n";
  }
  if (!r.wheels.empty()) {
    os << "  framework packages:\n";
    for (const auto& w : r.wheels) {
      os << "    pip install " << w.requirement;
      if (!w.index_url.empty()) os << " --index-url " << w.index_url;
      if (!w.bundled_cudnn.empty()) os << "   (brings cuDNN " << w.bundled_cudnn << ")";
      os << "\n";
    }
  }
  if (!r.gpus.empty()) {
    os << "  GPUs:\n";
    for (const auto& g : r.gpus) {
      os << "    " << g.cc << (g.arch.empty() ? "" : " " + g.arch) << (g.names.empty() ? "" : " (" + util::join(g.names, ", ") + ")")
         << ":";
      if (!g.cudnn.empty()) os << " cuDNN " << g.cudnn << ";";
      if (!g.nvcc.empty()) os << " nvcc " << g.nvcc << ";";
      if (!g.torch.empty()) os << " torch kernels " << g.torch << ";";
      if (!g.onnxruntime.empty()) os << " onnxruntime-gpu kernels " << g.onnxruntime << ";";
      if (!g.tensorflow.empty()) os << " tensorflow kernels " << g.tensorflow << ";";
      os << "\n";
    }
  }
  if (!r.archives.empty()) {
    os << "  archives:\n";
    for (const auto& a : r.archives) {
      os << "    " << model::to_string(a.platform) << "  " << a.file << "\n";
      if (a.size) os << "      size    " << *a.size << "\n";
      if (!a.sha256.empty()) os << "      sha256  " << a.sha256 << "\n";
      os << "      "
         << (a.known ? (a.cross_checked ? "NVIDIA's published values (cross-checked)" : "NVIDIA's published values (single source)")
                     : "not cross-checked against NVIDIA")
         << "\n";
    }
  }
}

// The Python lock the manifest's lock records: the wheels' libraries held against the system half
// (core::check_python_lock). One that is missing or not the recorded file is an error finding.
void python_half(const model::Manifest& m, const model::Lock& lock, const std::string& manifest, const CheckOptions& o,
                 const knowledge::KnowledgeBase& kb, const knowledge::CudaCatalog& catalog, model::CheckReport& report) {
  if (lock.python_lock.empty()) return;
  const std::filesystem::path path = o.lock.empty() ? core::default_lock_path(manifest) : std::filesystem::path(o.lock);
  auto py = core::load_python_lock(lock, path);
  report.examined.insert("python.lock");
  if (!py) {
    auto& f = model::add_finding(report.findings, "python.lock", model::Severity::error, lock.python_lock);
    f.seen = py.error().message;
    f.where = py.error().where;
    f.fix = "run `stackpin lock " + manifest + "` to write both locks again, and commit them together";
    return;
  }
  if (*py) core::check_python_lock(m, **py, kb, catalog, report);
}

// The manifest's lock, for the GPU code `stackpin lock` read from its archives: --lock FILE, else
// the lock beside the manifest when there is one. A lock that cannot be read is said as a warning
// and [gpus] is judged by NVIDIA's documents.
std::optional<model::Lock> lock_of(const std::string& manifest, const CheckOptions& o, std::vector<model::Finding>& notes) {
  const std::filesystem::path path = o.lock.empty() ? core::default_lock_path(manifest) : std::filesystem::path(o.lock);
  std::error_code ec;
  if (o.lock.empty() && !std::filesystem::exists(path, ec)) return std::nullopt;
  auto lock = format::load_lock(path);
  if (lock) return std::move(lock).value();
  auto& f = model::add_finding(notes, "lock.unreadable", model::Severity::warning, path.string());
  f.seen = lock.error().message;
  f.where = lock.error().where;
  f.fix = "[gpus] was judged by NVIDIA's documents instead of the archives' GPU code: mend the lock or run `stackpin lock` again";
  return std::nullopt;
}

// The CUDA releases to check against: stackpin's own manifests, and NVIDIA's manifest of a
// release they lack, from the download cache (where `lock` keeps it) or, with --online, from
// NVIDIA (STACKPIN_NVIDIA_BASE or [nvidia] base). A manifest that cannot be had is said as a note.
util::Result<knowledge::CudaCatalog> catalog_for(const model::Manifest& m, const CheckOptions& o, Context& ctx,
                                                 std::vector<model::Finding>& notes) {
  std::vector<std::pair<format::CudaRedistribRelease, std::string>> read;
  if (m.cuda && m.cuda->version.value.size() == 3) {
    const auto& v = m.cuda->version.value;
    auto own = knowledge::CudaCatalog::embedded().release(v);
    if (own && !*own) {
      auto note = [&](const std::string& seen, const std::string& fix) {
        auto& f = model::add_finding(notes, "cuda.release", model::Severity::note, "CUDA " + v.text());
        f.seen = seen;
        f.fix = fix;
        f.where = m.locate(m.cuda->version.pos);
      };
      auto n = nvidia_options(ctx, o.cache_dir, !o.online);
      auto got = n ? core::nvidia_cuda_manifest(v, *n) : util::Result<core::FetchedManifest>(n.error());
      if (got) {
        got->release.path = got->url;  // pool paths resolve against where it was read from, as lock resolves them
        read.emplace_back(std::move(got->release),
                          "NVIDIA redistrib_" + v.text() + ".json, read from " + got->url + " (sha256 " + got->sha256 + ")");
      } else if (!o.online && got.error().code == util::ErrorCode::not_found) {
        note("neither stackpin nor the download cache has NVIDIA's manifest of CUDA " + v.text(),
             "run `stackpin check --online` to read it from NVIDIA, or `stackpin lock`, which keeps it in the cache");
      } else {
        note(got.error().message, got.error().hints.empty() ? std::string() : got.error().hints.front());
      }
    }
  }
  return knowledge::CudaCatalog::embedded_with(std::move(read));
}

// The knowledge to check against: the embedded, and NVIDIA's manifest of a cuDNN release it lacks
// (knowledge_with_nvidia_cudnn: the download cache, or NVIDIA with --online); a manifest that
// cannot be had is said as a note, as for CUDA above.
const knowledge::KnowledgeBase& knowledge_for(const model::Manifest& m, const CheckOptions& o, Context& ctx,
                                              std::vector<model::Finding>& notes, std::optional<knowledge::KnowledgeBase>& own,
                                              const model::Lock* lock) {
  std::optional<util::Error> why;
  const auto& kb = knowledge_with_nvidia_cudnn(m, ctx, o.cache_dir, o.online, own, why, lock);
  if (why) {
    const bool mismatch = why->code == util::ErrorCode::mismatch;
    auto& f = model::add_finding(notes, "cudnn.release", mismatch ? model::Severity::error : model::Severity::note,
                                 "cuDNN " + m.cudnn->version.value.text());
    f.where = m.locate(m.cudnn->version.pos);
    if (!o.online && why->code == util::ErrorCode::not_found) {
      f.seen = "neither stackpin nor the download cache has NVIDIA's manifest of cuDNN " + m.cudnn->version.value.prefix(3);
      f.fix = "run `stackpin check --online` to read it from NVIDIA, or `stackpin lock`, which keeps it in the cache";
    } else {
      f.seen = why->message;
      f.fix = why->hints.empty() ? std::string() : why->hints.front();
    }
  }
  return kb;
}

Outcome run_check(const CheckOptions& o, Context& ctx) {
  const auto& kb = knowledge::KnowledgeBase::embedded();
  std::vector<model::CheckReport> reports;
  std::vector<model::Finding> all_findings;
  std::optional<util::Error> first_error;
  bool failed = false;
  if (!o.lock.empty() && o.manifests.size() > 1)
    return util::Error(util::ErrorCode::usage,
                       "--lock names the lock of one manifest; check several manifests each with the lock beside it");
  for (const auto& path : o.manifests) {
    auto manifest = format::load_manifest(path);
    std::vector<model::Finding> lock_notes;
    auto lock = manifest ? lock_of(path, o, lock_notes) : std::nullopt;
    auto catalog = manifest ? catalog_for(*manifest, o, ctx, lock_notes) : util::Result<knowledge::CudaCatalog>(manifest.error());
    std::optional<knowledge::KnowledgeBase> read_kb;
    const auto& judged_by = manifest ? knowledge_for(*manifest, o, ctx, lock_notes, read_kb, lock ? &*lock : nullptr) : kb;
    util::Result<model::CheckReport> report = manifest && catalog
                                                  ? core::check_manifest(*manifest, judged_by, *catalog, lock ? &*lock : nullptr)
                                              : manifest ? util::Result<model::CheckReport>(catalog.error())
                                                         : util::Result<model::CheckReport>(manifest.error());
    if (report) report->findings.insert(report->findings.begin(), lock_notes.begin(), lock_notes.end());
    if (report && lock) python_half(*manifest, *lock, path, o, judged_by, *catalog, *report);
    if (!report) {
      failed = true;
      if (!first_error) first_error = report.error();
      if (!ctx.json) render_error(ctx.io.err, report.error(), ctx.err_style);
      continue;
    }
    auto v = core::verdict(report->findings, o.strict);
    failed = failed || v.failed;
    if (!ctx.json) {
      auto& os = ctx.io.out;
      const auto& st = ctx.out_style;
      os << st.bold(path) << ": " << report->name << "\n";
      for (const auto& f : report->findings)
        if (f.severity != model::Severity::ok || o.explain) render_finding(os, f, st);
      if (o.explain) render_explain(os, *report, st);
      os << "  " << summary(v.counts) << (v.by_strict ? " (--strict: warnings fail)" : "") << "\n\n";
    }
    all_findings.insert(all_findings.end(), report->findings.begin(), report->findings.end());
    reports.push_back(std::move(report).value());
  }
  if (ctx.json) {
    ctx.io.out << format::envelope("check", !failed, all_findings, format::to_json(reports), first_error ? &*first_error : nullptr);
  } else if (o.manifests.size() > 1) {
    ctx.io.out << (failed ? ctx.out_style.red("check failed") : ctx.out_style.green("check passed")) << ": " << o.manifests.size()
               << " manifests, " << summary(model::count(all_findings)) << "\n";
  }
  return failed ? k_exit_failed : k_exit_ok;
}

}  // namespace

void add_check(Command& app, Context& ctx) {
  auto opts = std::make_shared<CheckOptions>();
  auto* cmd = app.add_subcommand("check", "Judge manifests against stackpin's compatibility knowledge");
  cmd->add_option("MANIFEST", opts->manifests, "Manifest file(s) to check")->required();
  cmd->add_option("--lock", opts->lock,
                  "The manifest's lock, whose archives' GPU code judges [gpus] (default: the lock beside the manifest, when there is one)");
  cmd->add_flag("--explain", opts->explain,
                "Also print the resolved facts: driver minimums, Windows directories, matching wheels, archives");
  cmd->add_flag("--strict", opts->strict, "Treat warnings as failures (exit 1)");
  cmd->add_flag("--online", opts->online,
                "Read NVIDIA's manifest of a CUDA or cuDNN release stackpin and the download cache lack (STACKPIN_NVIDIA_BASE or "
                "[nvidia] base)");
  cmd->add_option("--cache-dir", opts->cache_dir, "The download cache NVIDIA's manifests are kept in (default: stackpin's)");
  add_json_flag(cmd, ctx);
  cmd->callback([opts, &ctx] { ctx.action = [opts, &ctx] { return run_check(*opts, ctx); }; });
}

}  // namespace cli
