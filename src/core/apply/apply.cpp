// `apply` is a sequence of use cases that are each idempotent already: the cache holds only
// verified archives, stage recognises a DEST that holds this exact staging from its receipt, deb
// rebuilds byte-identical packages and dpkg-query tells what is installed. A second run therefore
// reports every step unchanged and writes nothing. Doctor looks at the machine as a shell that ran
// the activation script would (the staged lib64 first on LD_LIBRARY_PATH) and only what apply put
// in place can fail the run: apply does not install toolkits or drivers, so findings about those
// become the "remaining" list rather than a failure of a provisioning that did its part.
#include "core/apply/apply.hpp"

#include "core/layout/activation.hpp"
#include "core/layout/dest.hpp"
#include "gen/quote.hpp"

#include <map>

#include "core/archives/cache.hpp"
#include "core/archives/verify.hpp"
#include "core/check/python_rules.hpp"
#include "core/convtest/convtest.hpp"
#include "core/doctor/doctor.hpp"
#include "core/package/deb.hpp"
#include "core/provision/stage.hpp"
#include "core/python/python_env.hpp"
#include "knowledge/cuda_catalog.hpp"
#include "model/contracts.hpp"
#include "probe/program.hpp"
#include "util/file_io.hpp"
#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;
using model::StepStatus;
using util::Error;
using util::ErrorCode;

namespace {

class OverlayEnv final : public util::Env {
 public:
  explicit OverlayEnv(const util::Env* base) : m_base(base) {}
  std::optional<std::string> get(const std::string& name) const override {
    auto it = m_over.find(name);
    if (it != m_over.end()) return it->second;
    return m_base ? m_base->get(name) : std::nullopt;
  }
  void set(const std::string& name, std::string value) { m_over[name] = std::move(value); }

 private:
  const util::Env* m_base;
  std::map<std::string, std::string> m_over;
};

struct Run {
  const model::Manifest& m;
  const knowledge::KnowledgeBase& kb;
  const ApplyOptions& o;
  model::ApplyReport report;
  std::vector<model::Finding>& findings = report.findings;
  model::Platform platform = model::Platform::linux_x86_64;
  bool deb = false;
  fs::path archive;      // cuDNN's, found or fetched (empty: no cuDNN, or a dry run that would download it)
  bool pending = false;  // a dry run that would download an archive first
  std::optional<model::DoctorReport> doctor;
  fs::path owned;  // the directory apply installed cuDNN into (the prefix, or the packages' libdir)

  model::ApplyStep& step(const std::string& name) {
    if (o.on_step) o.on_step(name);
    report.steps.push_back({name, StepStatus::skipped, {}, {}});
    return report.steps.back();
  }
  bool fail(model::ApplyStep& s, const Error& e) {
    s.status = StepStatus::failed;
    s.detail = e.message;
    s.error = e;
    if (e.where) s.lines.push_back("at " + e.where->file + ":" + std::to_string(e.where->line));
    for (const auto& h : e.hints) s.lines.push_back("hint: " + h);
    return false;
  }
  // "cuDNN 9.1.0.70", "CUDA 12.4.1 (4 components) and cuDNN 9.1.0.70"
  std::string what() const {
    std::vector<std::string> parts;
    if (m.cuda && !m.cuda->components.empty()) parts.push_back("CUDA " + m.cuda->version.value.text() + " components");
    if (m.cudnn) parts.push_back("cuDNN " + m.cudnn->version.value.text());
    return util::join(parts, " and ");
  }
  std::string manifest_arg() const { return o.manifest_path.empty() ? m.path : o.manifest_path; }
  // The staged tree is for another place than this machine's prefix (DEST is not the prefix).
  bool tree_elsewhere() const { return !deb && fs::path(report.dest).lexically_normal() != fs::path(report.prefix).lexically_normal(); }
};

// What one archive's line in the step says: where it is, or what a run would do to get it.
std::string archive_name(const PinnedArchive& p) { return p.pin && p.pin->component ? p.pin->component->value : std::string("cuDNN"); }

// Every archive this platform's staging needs (cuDNN's, then each toolkit component's): in
// --archives DIR, else in the download cache, else fetched into it (only those, verified).
bool archive_step(Run& r, const std::vector<PinnedArchive>& pins) {
  auto& s = r.step("archive");
  const std::string cudnn_sha = r.m.cudnn && !pins.empty() && !pins.front().pin->component ? pins.front().expect.sha256 : "";
  std::vector<const PinnedArchive*> missing;
  for (const auto& p : pins) {
    if (!r.o.archives_dir.empty()) {
      bool by_content = false;
      auto found = find_pinned_archive(p, r.o.archives_dir, by_content);
      if (found) {
        if (p.expect.sha256 == cudnn_sha) r.archive = *found;
        s.lines.push_back(archive_name(p) + ": " + found->string() + (by_content ? " (found by size and SHA-256)" : ""));
        continue;
      }
      if (found.error().code != ErrorCode::not_found) return r.fail(s, found.error());
    }
    missing.push_back(&p);
  }
  auto summary = [&](const std::string& what) { return pins.size() == 1 ? what : std::to_string(pins.size()) + " archives: " + what; };
  if (missing.empty()) {
    s.status = StepStatus::unchanged;
    s.detail = summary(
        "using " + (pins.size() == 1 ? s.lines.front().substr(s.lines.front().find(": ") + 2) : "those in " + r.o.archives_dir.string()));
    return true;
  }
  std::string fetch_hint = "give the folder that holds it with --archives DIR, or fill the cache with `stackpin fetch " +
                           gen::sh_quote(r.manifest_arg()) + " --platform " + model::to_string(r.platform) + " --cache-dir DIR`";
  if (r.o.dry_run) {
    std::vector<std::string> downloads;
    for (const auto* p : missing) {
      if (auto cached = find_in_cache(r.o.fetch.cache_dir, p->expect, CacheLookup::read_only)) {  // a dry run writes nothing
        if (p->expect.sha256 == cudnn_sha) r.archive = *cached;
        s.lines.push_back(archive_name(*p) + ": in the cache: " + cached->string());
        continue;
      }
      if (r.o.fetch.offline)
        return r.fail(s, Error(ErrorCode::not_found, p->expect.file + " is not in the cache " + r.o.fetch.cache_dir.string() +
                                                         " and --offline forbids downloading it")
                             .with_hint(fetch_hint));
      std::string url = p->pin->url ? p->pin->url->value : "";
      const std::string& base = p->pin->component ? knowledge::CudaCatalog::k_base_url : r.kb.cudnn_base_url();
      auto urls = candidate_urls(url, p->expect.sha256, r.o.fetch.mirrors, base);
      downloads.push_back("download " + (urls.empty() ? p->expect.file : urls.front()) + " (" + util::format_bytes(*p->expect.size) +
                          ") into the cache " + r.o.fetch.cache_dir.string() + ", verifying SHA-256 " + p->expect.sha256);
      s.lines.push_back(archive_name(*p) + ": " + downloads.back());
      r.pending = true;
    }
    s.status = downloads.empty() ? StepStatus::unchanged : StepStatus::planned;
    s.detail = downloads.size() == 1 && pins.size() == 1 ? downloads.front()
               : downloads.empty()                       ? summary("all found")
                                                         : summary(std::to_string(downloads.size()) + " to download");
    return true;
  }
  // fetch looks in the cache first (re-hashing with --verify-cached) and honours --offline
  FetchOptions f = r.o.fetch;
  f.platform = r.platform;
  for (const auto* p : missing) f.only_sha256.push_back(p->expect.sha256);
  auto rep = fetch(r.m, r.kb, f);
  if (!rep) return r.fail(s, rep.error());
  std::size_t downloaded = 0, seen = 0;
  std::string last;
  for (const auto& a : rep->archives) {
    if (a.platform != r.platform) continue;
    ++seen;
    switch (a.status) {
      case model::FetchStatus::downloaded:
      case model::FetchStatus::resumed:
        ++downloaded;
        last = std::string(a.status == model::FetchStatus::resumed ? "resumed" : "downloaded") + " " + a.file + " from " + a.url + " (" +
               util::format_bytes(a.bytes_downloaded) + " over the network), SHA-256 and size verified";
        s.lines.push_back(last);
        s.lines.push_back(a.path);
        break;
      case model::FetchStatus::cached:
        last = "in the cache: " + a.path;
        s.lines.push_back(last);
        break;
      default: {
        r.findings.insert(r.findings.end(), rep->findings.begin(), rep->findings.end());
        Error e = a.error ? *a.error : Error(ErrorCode::not_found, "could not fetch " + a.file);
        if (a.status == model::FetchStatus::missing) e.hints.push_back(fetch_hint);
        return r.fail(s, e);
      }
    }
    if (a.sha256 == cudnn_sha) r.archive = a.path;
  }
  if (seen != missing.size())
    return r.fail(s, Error(ErrorCode::internal, "fetch did not report every " + std::string(model::to_string(r.platform)) + " archive"));
  s.status = downloaded ? StepStatus::done : StepStatus::unchanged;
  s.detail = pins.size() == 1 ? last : summary(std::to_string(downloaded) + " downloaded, the others found");
  return true;
}

bool stage_steps(Run& r) {
  auto& s = r.step("stage");
  StageOptions so;
  so.archives_dir = r.o.archives_dir;  // stage looks there, then in the cache, where fetch put the others
  so.cache_dir = r.o.fetch.cache_dir;
  so.target = r.o.target;
  so.dest = r.o.dest;
  so.platform = r.platform;
  so.dry_run = r.o.dry_run;
  so.force = r.o.force;
  so.remove_stale = r.o.remove_stale;
  so.max_unpacked = r.o.max_unpacked;
  so.decoder_memory = r.o.decoder_memory;
  so.manifest_sha256 = r.o.manifest_sha256;
  so.stackpin_version = r.o.stackpin_version;
  so.progress = r.o.progress;
  if (r.o.dry_run && r.pending) {
    auto dest = default_dest(r.o.target, r.o.dest, r.m);
    s.status = StepStatus::planned;
    s.detail = "stage " + r.what() + " into " + (dest ? dest->string() : "DEST") + " once the archives are downloaded";
    auto& a = r.step("activation");
    a.status = StepStatus::planned;
    a.detail = "activation scripts into .stackpin/ of the staged tree";
    return true;
  }
  auto rep = stage(r.m, r.kb, so);
  if (!rep) return r.fail(s, rep.error());
  r.report.dest = rep->dest;
  r.report.prefix = rep->prefix;
  r.owned = rep->prefix;
  s.status = rep->no_op ? StepStatus::unchanged : rep->dry_run ? StepStatus::planned : StepStatus::done;
  if (rep->no_op)
    s.detail = rep->dest + " already holds this exact staging (" + std::to_string(rep->files) + " files intact)";
  else
    s.detail = std::to_string(rep->files) + " files (" + util::format_bytes(rep->bytes) + ") into " + rep->dest +
               (rep->replaced_previous ? ", replacing the staging there before" : "") + (rep->dry_run ? "" : "; archive verified");
  if (!rep->recovered.empty()) s.lines.push_back("recovered: " + rep->recovered);
  auto& a = r.step("activation");
  a.status = s.status;
  a.lines = rep->activation;
  a.lines.insert(a.lines.end(), rep->build_files.begin(), rep->build_files.end());
  a.detail = rep->dry_run ? "activation scripts and build-system files into " + rep->dest
                          : std::to_string(rep->activation.size()) + " activation script(s), " + std::to_string(rep->build_files.size()) +
                                " build-system file(s)";
  if (!rep->activation_note.empty()) a.lines.push_back("note: " + rep->activation_note);
  return true;
}

bool deb_steps(Run& r) {
  auto& s = r.step("packages");
  int cudnn_major = static_cast<int>(r.m.cudnn->version.value.major());
  int cuda_major = r.m.cudnn->cuda ? r.m.cudnn->cuda->value : 0;
  std::vector<std::string> names{deb_runtime_name(cudnn_major, cuda_major), deb_dev_name(cudnn_major, cuda_major)};
  fs::path out = r.o.deb_dir.empty() ? r.o.fetch.cache_dir / "debs" : r.o.deb_dir;
  r.report.prefix = "/usr";
  if (r.o.dry_run) {
    s.status = StepStatus::planned;
    s.detail = "build " + names[0] + " and " + names[1] + " into " + out.string();
    auto& i = r.step("install");
    i.status = StepStatus::planned;
    i.detail = "dpkg -i both packages (needs root)";
    return true;
  }
  DebOptions d;
  d.archives_dir = r.archive.parent_path();
  d.out_dir = out;
  d.platform = r.platform;
  d.max_unpacked = r.o.max_unpacked;
  d.manifest_sha256 = r.o.manifest_sha256;
  d.stackpin_version = r.o.stackpin_version;
  d.progress = r.o.progress;
  auto rep = build_debs(r.m, r.kb, d);
  if (!rep) return r.fail(s, rep.error());
  r.owned = rep->libdir;
  bool all_same = true;
  std::vector<std::string> paths;
  for (const auto& p : rep->packages) {
    all_same = all_same && p.unchanged;
    paths.push_back(p.path);
    s.lines.push_back(p.path);
  }
  s.status = all_same ? StepStatus::unchanged : StepStatus::done;
  s.detail = all_same ? "the packages in " + out.string() + " are already these exact bytes"
                      : "built " + std::to_string(paths.size()) + " packages into " + out.string();

  auto& i = r.step("install");
  const util::Env& env = *r.o.env;
  bool installed = true;
  for (const auto& p : rep->packages) {
    auto q = probe::run_program({"dpkg-query", "-W", "-f=${Status} ${Version}", p.name}, env, 30000);
    installed = installed && q.exit_code == 0 && q.output == "install ok installed " + p.version;
  }
  if (installed) {
    i.status = StepStatus::unchanged;
    i.detail = names[0] + " and " + names[1] + " " + rep->packages.front().version + " are installed";
    return true;
  }
  std::vector<std::string> argv{"dpkg", "-i"};
  argv.insert(argv.end(), paths.begin(), paths.end());
  if (!probe::running_as_root())
    return r.fail(i, Error(ErrorCode::io, "installing packages needs root")
                         .with_hint("run: sudo " + util::join(argv, " ") + ", or apply again as root"));
  auto run = probe::run_program(argv, env, 600000);
  i.lines.push_back(util::join(argv, " "));
  if (!run.started || run.exit_code != 0) {
    Error e(ErrorCode::io, "dpkg -i failed" + (run.error.empty() ? " (exit " + std::to_string(run.exit_code) + ")" : ": " + run.error));
    for (const auto& line : util::split(std::string(util::trim(run.output)), '\n')) e.hints.push_back("dpkg: " + line);
    return r.fail(i, e);
  }
  i.status = StepStatus::done;
  i.detail = "installed " + names[0] + " and " + names[1] + " " + rep->packages.front().version + " (dpkg ran ldconfig)";
  return true;
}

// `path` is `root` or inside it, compared by components (/opt/cudnn does not hold /opt/cudnn-old).
bool within(const std::string& path, const fs::path& root) {
  if (path.empty() || root.empty()) return false;
  fs::path rel = fs::path(path).lexically_normal().lexically_relative(root.lexically_normal());
  return !rel.empty() && *rel.begin() != "..";
}

// Doctor findings that judge what apply put in place: the loader's choice of libcudnn (on Windows
// of cudnn64_N.dll, and a stale copy it would load instead), and the copy apply installed
// (subjects read "cuDNN 9 in DIR").
bool apply_owns(const model::Finding& f, const fs::path& owned) {
  if (f.rule == "linux.loader") return f.subject.rfind("libcudnn", 0) == 0;
  if (f.rule == "windows.loader" || f.rule == "windows.cudnn-dll") return util::to_lower(f.subject).rfind("cudnn", 0) == 0;
  if (f.rule.rfind("linux.cudnn", 0) == 0) {
    auto at = f.subject.rfind(" in ");
    return at != std::string::npos && within(f.subject.substr(at + 4), owned);
  }
  return false;
}

// The manifest with its Windows tree where this run put it (DEST, when the manifest names no
// prefix or another one).
model::Manifest placed_at_prefix(const Run& r) { return windows_tree_placed_at(r.m, r.report.prefix); }

// The doctor of this Windows machine as a program started after `stackpin activate` would see it:
// the tree's DLL folders first on PATH.
util::Result<model::DoctorReport> windows_doctor(Run& r) {
  model::Manifest placed = placed_at_prefix(r);
  SP_TRY_ASSIGN(auto w, windows_activation(placed, r.kb));
  WindowsDoctorOptions live = *r.o.windows_machine;
  std::vector<std::string> first{w.dll_dir};
  first.insert(first.end(), w.cuda_bin_dirs.begin(), w.cuda_bin_dirs.end());
  live.path_first = std::move(first);
  DoctorOptions d;
  d.manifest = &placed;
  d.windows = std::move(live);
  d.env = r.o.env;
  return core::doctor(d, r.kb);
}

// The Python environment from the Python lock, then the agreement of its wheels with the manifest's
// system half (the check rules of the Python lock): an error there fails the step.
bool python_step(Run& r) {
  if (!r.o.venv) return true;
  auto& s = r.step("python");
  if (!r.o.pylock)
    return r.fail(s, Error(ErrorCode::not_found, "no Python lock for " + r.manifest_arg() + ": the environment is installed from pylock." +
                                                     r.m.name.value + ".toml, which the stack's lock records")
                         .with_hint("run `stackpin lock " + gen::sh_quote(r.manifest_arg()) + "` and commit both locks"));
  const fs::path venv = util::io::absolute_path(*r.o.venv);
  // the agreement of the two halves first: an environment that disagrees with the manifest is not installed
  model::CheckReport agreement;
  check_python_lock(r.m, *r.o.pylock, r.kb, knowledge::CudaCatalog::embedded(), agreement);
  bool disagrees = false;
  for (auto& f : agreement.findings) {
    disagrees = disagrees || f.severity == model::Severity::error;
    r.findings.push_back(std::move(f));
  }
  if (disagrees)
    return r.fail(s,
                  Error(ErrorCode::invalid,
                        "the Python lock's libraries disagree with the manifest's system half (python.* findings): nothing was installed")
                      .with_hint("fix the manifest or the frameworks it pins, lock again, and apply"));
  if (r.o.dry_run) {
    s.status = StepStatus::planned;
    s.detail = "make " + venv.string() + " hold exactly the packages of " + r.o.pylock->path + " (pip install --require-hashes --no-deps)";
    return true;
  }
  PythonToolOptions po;
  po.env = r.o.env;
  auto res = provision_venv(*r.o.pylock, r.o.pylock_sha256, venv, po);
  if (!res) return r.fail(s, res.error());
  s.status = res->unchanged ? StepStatus::unchanged : StepStatus::done;
  s.detail = res->unchanged ? venv.string() + " already holds exactly " + r.o.pylock->path
                            : std::string(res->created ? "created " : "rebuilt ") + venv.string() + " (Python " + res->python_version +
                                  ") with " + std::to_string(res->installed.size()) + " pinned wheel(s)";
  for (const auto& i : res->installed) s.lines.push_back(i);
  return true;
}

bool doctor_step(Run& r) {
  auto& s = r.step("doctor");
  const bool windows = r.o.target == model::Target::windows;
  if (windows && !r.o.windows_machine) {
    s.detail = "doctor judges the machine it runs on: run .stackpin\\check-cudnn.ps1 on the Windows machine";
    return true;
  }
  if (!r.o.doctor) {
    s.detail = "--no-doctor";
    return true;
  }
  if (r.o.dry_run) {
    s.status = StepStatus::planned;
    s.detail = windows ? "doctor of this Windows machine with the tree's DLL folders first on PATH"
               : r.deb ? "doctor of this machine"
                       : "doctor of this machine with the staged lib64 first on LD_LIBRARY_PATH";
    return true;
  }
  if (r.tree_elsewhere()) {
    s.detail = "DEST " + r.report.dest + " is not where the tree lives (" + r.report.prefix + "): run `stackpin doctor --manifest " +
               r.manifest_arg() + "` where it is installed";
    return true;
  }
  util::Result<model::DoctorReport> rep = util::Error(ErrorCode::internal, "no doctor report");
  if (windows) {
    rep = windows_doctor(r);
  } else {
    OverlayEnv env(r.o.env);
    if (!r.deb) {
      std::string lib = (fs::path(r.report.prefix) / "lib64").string();
      auto old = env.get("LD_LIBRARY_PATH");
      env.set("LD_LIBRARY_PATH", old && !old->empty() ? lib + ":" + *old : lib);
    }
    DoctorOptions d;
    d.manifest = &r.m;
    d.env = &env;
    rep = core::doctor(d, r.kb);
  }
  if (!rep) return r.fail(s, rep.error());
  r.doctor = *rep;
  int own_errors = 0, others = 0;
  const model::Finding* first = nullptr;
  for (const auto& f : rep->findings) {
    r.findings.push_back(f);
    if (f.severity != model::Severity::error && f.severity != model::Severity::warning) continue;
    if (apply_owns(f, r.owned) && f.severity == model::Severity::error) {
      ++own_errors;
      if (!first) first = &f;
    } else {
      ++others;
      r.report.remaining.push_back(f.subject + ": " + (f.fix.empty() ? f.seen : f.fix) + " (doctor " + f.rule + ")");
    }
  }
  if (own_errors) {
    Error e(ErrorCode::mismatch,
            first->subject + ": " + first->seen + (first->expected.empty() ? "" : " (expected " + first->expected + ")"));
    if (!first->fix.empty()) e.hints.push_back(first->fix);
    return r.fail(s, e);
  }
  s.status = StepStatus::passed;
  s.detail = r.m.cudnn ? "the loader picks the pinned cuDNN" : "no error about what apply put in place";
  if (windows) {
    for (const auto& f : rep->findings)
      if (f.rule == "windows.loader" && f.severity == model::Severity::ok && util::to_lower(f.subject).rfind("cudnn", 0) == 0)
        s.detail = f.subject + ": " + f.seen;  // "...: the Windows loader loads DIR\cudnn64_9.dll, ..."
  } else if (rep->machine) {
    std::string lib = r.m.cudnn ? model::cudnn_library_name(r.m.cudnn->version.value.major(), false)
                                : "libcudart.so." + std::to_string(r.m.cuda->version.value.major());
    for (const auto& l : rep->machine->loader)
      if (l.soname == lib && l.winner) s.detail = "the loader resolves " + lib + " to " + l.winner->path + " (" + l.winner->via + ")";
  }
  if (others) s.detail += "; " + std::to_string(others) + " finding(s) about the rest of the machine, listed below";
  return true;
}

bool convtest_step(Run& r) {
  auto& s = r.step("convtest");
  const bool windows = r.o.target == model::Target::windows;
  if (windows && !r.o.windows_machine) {
    s.detail = "the conv test runs on the Windows machine (stackpin convtest there)";
    return true;
  }
  if (!r.o.convtest) {
    s.detail = "--no-convtest";
    return true;
  }
  if (!r.m.cudnn) {
    s.detail = "the conv test proves cuDNN, and " + r.m.path + " pins none";
    return true;
  }
  if (r.o.dry_run) {
    s.status = StepStatus::planned;
    s.detail = "a cuDNN convolution test on the GPU, where there is one";
    return true;
  }
  if (r.tree_elsewhere()) {
    s.detail = "the tree is for " + r.report.prefix + ", not here: run `stackpin convtest --manifest " + r.manifest_arg() +
               "` where it is installed";
    return true;
  }
  const bool no_driver = windows ? r.o.windows_machine->driver_version && r.o.windows_machine->driver_version->empty()
                                 : r.doctor && r.doctor->machine && r.doctor->machine->driver.version.empty();
  if (no_driver) {
    s.detail = "no NVIDIA driver on this machine, so no GPU to run a convolution on";
    r.report.remaining.push_back("prove the stack on a machine with a GPU: stackpin convtest --manifest " + r.manifest_arg());
    return true;
  }
  ConvtestOptions c;
  c.manifest = &r.m;
  c.run.quick = true;
  if (windows) {
    auto w = windows_activation(placed_at_prefix(r), r.kb);
    if (!w) return r.fail(s, w.error());
    c.run.cudnn_path = w->dll_dir + "\\" + w->main_dll;
    c.driver_os = model::Os::windows;
  } else if (!r.deb) {
    c.run.cudnn_path = (fs::path(r.report.prefix) / "lib64" / model::cudnn_library_name(r.m.cudnn->version.value.major(), false)).string();
  }
  if (r.doctor && r.doctor->machine && r.doctor->machine->wsl.wsl) c.driver_os = model::Os::windows;
  auto result = convtest(c, r.kb);
  const auto& rep = result.report;
  const model::Finding* first = nullptr;
  for (const auto& f : result.findings) {
    r.findings.push_back(f);
    if (f.severity == model::Severity::error && !first) first = &f;
  }
  if (first) {
    Error e(ErrorCode::mismatch, "conv test: " + first->subject + ": " + first->seen);
    if (!first->fix.empty()) e.hints.push_back(first->fix);
    return r.fail(s, e);
  }
  if (!rep.nothing_to_run.empty()) {
    s.detail = "nothing to run on: " + rep.nothing_to_run;
    return true;
  }
  s.status = StepStatus::passed;
  s.detail = std::to_string(rep.cases.size()) + " convolutions matched the CPU reference with cuDNN " + rep.cudnn_version +
             (rep.gpus.empty() ? "" : " on " + rep.gpus.front().name);
  return true;
}

void remaining_for_target(Run& r) {
  std::vector<std::string> first;
  if (r.o.target == model::Target::windows) {
    first = windows_next_steps(r.report.dest, r.report.prefix);
  } else if (!r.deb && !r.report.prefix.empty()) {
    if (r.tree_elsewhere())
      first.push_back("copy " + r.report.dest + " to " + r.report.prefix +
                      " where it is used (its scripts and build files refer to that path)");
    first.push_back("in each shell that uses it: . " + gen::sh_quote((fs::path(r.report.prefix) / ".stackpin" / "activate.sh").string()) +
                    " (system-wide: stackpin generate profile-d " + r.manifest_arg() + ")");
  }
  r.report.remaining.insert(r.report.remaining.begin(), first.begin(), first.end());
}

}  // namespace

util::Result<model::ApplyReport> apply(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const ApplyOptions& o) {
  if (o.target != model::Target::windows && o.target != model::Target::linux)
    return Error(ErrorCode::usage, "--target must be windows or linux (images and conda environments are generated: stackpin generate)");
  const bool toolkit = m.cuda && !m.cuda->components.empty();
  if (!m.cudnn && !toolkit && !o.venv)
    return Error(ErrorCode::invalid, m.path + " pins neither [cudnn] nor [cuda] components: there is nothing to provision")
        .with_hint(
            "add [cudnn] version = \"...\", or [cuda] components = [\"runtime\"] to provision the toolkit, or [python] venv for the "
            "Python environment alone");
  if (!o.env) return Error(ErrorCode::internal, "apply needs the machine's environment (ApplyOptions::env)");
  if (!m.cudnn && !toolkit) {
    // the Python half alone: the system's CUDA and cuDNN are the machine's own
    Run r{m, kb, o};
    r.report.manifest = m.path;
    r.report.target = "python";
    r.report.layout = "venv";
    r.report.platform = model::to_string(model::host_linux_platform());
    r.report.dry_run = o.dry_run;
    r.report.dest = util::io::absolute_path(*o.venv).string();
    python_step(r);
    return std::move(r.report);
  }
  Run r{m, kb, o};
  r.platform = o.platform ? *o.platform : model::default_platform(m, o.target, model::host_linux_platform());
  if (model::is_windows(r.platform) != (o.target == model::Target::windows))
    return Error(ErrorCode::usage,
                 std::string("--platform ") + model::to_string(r.platform) + " does not fit --target " + model::to_string(o.target));
  if (auto why = model::windows_arch_conflict(m, r.platform); !why.empty())
    return Error(ErrorCode::usage, why).with_hint("leave --platform out, or change arch in [targets.windows]");
  r.deb = o.target == model::Target::linux && m.linux && m.linux->layout.value == model::LinuxLayout::deb;
  if (o.target == model::Target::windows && !o.dest)
    return Error(ErrorCode::usage, "--dest is required for --target windows")
        .with_hint("the Windows tree is built here and copied to the Windows machine: --dest ./cudnn-windows");
  if (!r.deb && !default_dest(o.target, o.dest, m))
    return Error(ErrorCode::usage, "no --dest and no [targets.linux] prefix in " + m.path)
        .with_hint("pass --dest DIR or set prefix in [targets.linux]");
  if (r.deb && toolkit)
    return Error(ErrorCode::unsupported, "layout = \"deb\" packages cuDNN only, and " + m.path + " lists [cuda] components")
        .at(m.locate(m.cuda->components_pos))
        .with_hint(
            "stage the toolkit with cuDNN into a prefix (layout = \"lib64\" with prefix), or drop [cuda] components for the packages");
  std::vector<PinnedArchive> pins;
  if (m.cudnn) {
    SP_TRY_ASSIGN(auto pinned, pinned_archive(m, r.platform, kb));
    pins.push_back(std::move(pinned));
  }
  if (toolkit) {
    SP_TRY_ASSIGN(auto cuda_pins, pinned_cuda_archives(m, r.platform));
    if (cuda_pins.empty())
      return Error(ErrorCode::invalid,
                   std::string("no CUDA component archive is pinned for ") + model::to_string(r.platform) + " in " + m.path)
          .at(m.locate(m.cuda->components_pos))
          .with_hint("`stackpin check " + gen::sh_quote(m.path) +
                     " --explain` lists the components for each platform NVIDIA builds them for");
    for (auto& p : cuda_pins) pins.push_back(std::move(p));
  }

  r.report.manifest = m.path;
  r.report.target = model::to_string(o.target);
  r.report.platform = model::to_string(r.platform);
  r.report.layout = r.deb                                ? "deb"
                    : o.target == model::Target::windows ? (m.windows ? model::to_string(m.windows->layout.value) : "isolated")
                                                         : "lib64";
  r.report.dry_run = o.dry_run;
  if (!r.deb) {
    if (auto dest = default_dest(o.target, o.dest, m)) r.report.dest = util::io::absolute_path(*dest).string();
  }

  bool ok = archive_step(r, pins) && (r.deb ? deb_steps(r) : stage_steps(r)) && python_step(r) && doctor_step(r) && convtest_step(r);
  if (ok) remaining_for_target(r);
  return std::move(r.report);
}

}  // namespace core
