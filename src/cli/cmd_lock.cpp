// stackpin lock MANIFEST [-o FILE] [--redistrib FILE.json ...] [--archives DIR] [--cache-dir DIR] [--offline] [--check] [--json]
// stackpin lock MANIFEST --upgrade [--cache-dir DIR] [--offline] [--json]
#include <map>
#include <optional>
#include <ostream>
#include <set>

#include "commands.hpp"
#include "core/archives/lock.hpp"
#include "core/archives/nvidia_manifests.hpp"
#include "core/archives/upgrade.hpp"
#include "core/python/python_env.hpp"
#include "crypto/sha256.hpp"
#include "format/json.hpp"
#include "format/lock_file.hpp"
#include "format/manifest_reader.hpp"
#include "format/pylock.hpp"
#include "gen/quote.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace cli {
namespace {
namespace fs = std::filesystem;

struct LockCli {
  std::string manifest, output;
  std::vector<std::string> redistribs;
  std::string archives, cache_dir;
  bool check = false, offline = false, upgrade = false, no_pylock = false;
};

// How many releases stackpin lacks lock --upgrade reads NVIDIA's manifests of, per product and major.
constexpr std::size_t k_newest_read = 3;

// Of the releases NVIDIA lists (ascending), the newest `k_newest_read` of each major that
// stackpin has no manifest of (`known`), oldest first.
std::vector<model::Version> unknown_releases(const std::vector<model::Version>& listed, const std::set<model::Version>& known) {
  std::map<long, std::vector<model::Version>> by_major;
  for (const auto& v : listed)
    if (!known.count(v)) by_major[static_cast<long>(v.major())].push_back(v);
  std::vector<model::Version> out;
  for (auto& [major, list] : by_major) {
    if (list.size() > k_newest_read) list.erase(list.begin(), list.end() - static_cast<std::ptrdiff_t>(k_newest_read));
    out.insert(out.end(), list.begin(), list.end());
  }
  return out;
}

// lock --upgrade: newer releases and whether they fit, written nowhere. Online, NVIDIA's listings
// name releases newer than stackpin's own, whose manifests (the cache first) are judged too.
Outcome run_upgrade(const LockCli& c, Context& ctx, const model::Manifest& m) {
  const auto& embedded = knowledge::KnowledgeBase::embedded();
  std::vector<std::string> notes;
  std::vector<std::pair<format::CudaRedistribRelease, std::string>> read_cuda;
  std::optional<knowledge::KnowledgeBase> own;
  if (c.offline) {
    notes.push_back("--offline: the releases stackpin knows, without NVIDIA's lists of newer ones");
  } else {
    SP_TRY_ASSIGN(auto n, nvidia_options(ctx, c.cache_dir, false));
    auto not_read = [&](const std::string& what, const util::Error& e) { notes.push_back(what + " was not read: " + e.message); };
    const auto catalog_releases = knowledge::CudaCatalog::embedded().releases();
    const std::set<model::Version> cuda_known(catalog_releases.begin(), catalog_releases.end());
    if (auto listed = core::nvidia_releases("cuda", n); !listed) {
      not_read("NVIDIA's list of CUDA releases", listed.error());
    } else {
      for (const auto& v : unknown_releases(*listed, cuda_known)) {
        auto got = core::nvidia_cuda_manifest(v, n);
        if (!got) {
          not_read("NVIDIA's manifest of CUDA " + v.text(), got.error());
          continue;
        }
        got->release.path = got->url;
        read_cuda.emplace_back(std::move(got->release),
                               "NVIDIA redistrib_" + v.text() + ".json, read from " + got->url + " (sha256 " + got->sha256 + ")");
      }
    }
    // a release the knowledge base has with every size needs no manifest
    std::set<model::Version> cudnn_known, sizeless;
    for (const auto& a : embedded.facts().cudnn_archives)
      if (auto three = model::Version::parse(a.version.prefix(3))) (a.size ? cudnn_known : sizeless).insert(*three);
    for (const auto& v : sizeless) cudnn_known.erase(v);
    if (auto listed = core::nvidia_releases("cudnn", n); !listed) {
      not_read("NVIDIA's list of cuDNN releases", listed.error());
    } else {
      std::vector<model::CudnnArchiveFact> facts;
      for (const auto& v : unknown_releases(*listed, cudnn_known)) {
        auto got = core::nvidia_cudnn_manifest(v, n);
        auto these =
            got ? core::cudnn_facts_of(*got, embedded.cudnn_base_url()) : util::Result<std::vector<model::CudnnArchiveFact>>(got.error());
        if (!these) {
          not_read("NVIDIA's manifest of cuDNN " + v.text(), these.error());
          continue;
        }
        for (auto& f : *these) facts.push_back(std::move(f));
      }
      if (!facts.empty()) {
        auto with = embedded.with_cudnn_archives(std::move(facts));
        if (with)
          own = std::move(with).value();
        else
          not_read("NVIDIA's manifests of newer cuDNN releases", with.error());
      }
    }
  }
  const auto catalog = knowledge::CudaCatalog::embedded_with(std::move(read_cuda));
  SP_TRY_ASSIGN(auto report, core::upgrades(m, own ? *own : embedded, catalog));
  report.notes.insert(report.notes.begin(), notes.begin(), notes.end());
  if (ctx.json) {
    std::vector<model::Finding> findings;
    for (const auto& n : report.notes) {
      auto& f = model::add_finding(findings, "upgrade.note", model::Severity::note, m.path);
      f.seen = n;
    }
    ctx.io.out << format::envelope("lock", true, findings, format::to_json(report), nullptr);
    return k_exit_ok;
  }
  auto& os = ctx.io.out;
  const auto& st = ctx.out_style;
  os << st.bold("newer releases for " + m.path) << " (nothing written)\n";
  if (report.candidates.empty()) os << "  none: the manifest pins the newest releases stackpin knows of\n";
  for (const auto& cand : report.candidates) {
    auto pad = [](std::string text, std::size_t width) {
      if (text.size() < width) text.append(width - text.size(), ' ');
      return text;
    };
    os << "  " << pad(cand.product, 6) << " " << pad(cand.from + " -> " + cand.to, 24) << " "
       << (cand.fits ? st.green("fits") : st.red("does not fit"));
    for (const auto& ch : cand.changes) os << "  (with " << ch << ")";
    os << "\n";
    for (const auto& w : cand.why_not) os << "           " << w << "\n";
    if (!cand.source.empty() && cand.source.rfind("NVIDIA redistrib_", 0) == 0) os << "           " << st.dim(cand.source) << "\n";
  }
  for (const auto& n : report.notes) os << "  note: " << n << "\n";
  return k_exit_ok;
}

// How the lock names NVIDIA's manifest of `release` read from NVIDIA (or the cache): its file, release date, URL and
// SHA-256, under the URL it now carries as its path.
template <typename Release>
void name_read_manifest(core::Fetched<Release>& got, const model::Version& release, core::LockOptions& o) {
  got.release.path = got.url;
  o.redistrib_sources[got.url] = "NVIDIA redistrib_" + release.text() + ".json" +
                                 (got.release.release_date.empty() ? "" : " (released " + got.release.release_date + ")") + ", read from " +
                                 got.url + " (sha256 " + got.sha256 + ")";
}

// The pinned CUDA release when neither stackpin's own manifests nor a --redistrib file of CUDA
// describe it: NVIDIA's manifest of it, from the download cache or the network (nvidia_manifests.hpp), added
// to the lock's inputs with where it was read and its SHA-256. Offline without a cached copy,
// nothing is added and the lock keeps what the previous lock pinned, or says what to do.
util::Status add_nvidia_manifest(const model::Manifest& m, const LockCli& c, Context& ctx, core::LockOptions& o) {
  if (!m.cuda) return {};
  const model::Version& v = m.cuda->version.value;
  if (v.size() != 3) return {};  // check refuses it, with its reason
  auto embedded = o.cuda_catalog->release(v);
  if (!embedded || *embedded) return {};      // stackpin's own (one that does not parse is make_lock's error)
  if (!o.cuda_redistribs.empty()) return {};  // the user's own file; make_lock refuses one of another release
  SP_TRY_ASSIGN(auto n, nvidia_options(ctx, c.cache_dir, c.offline));
  auto got = core::nvidia_cuda_manifest(v, n);
  if (!got) {
    if (c.offline && got.error().code == util::ErrorCode::not_found) return {};
    return std::move(got).error().at(m.locate(m.cuda->version.pos));
  }
  name_read_manifest(*got, v, o);
  o.cuda_redistribs.push_back(std::move(got->release));
  return {};
}

// The pinned cuDNN build when the knowledge base lacks it, or its sizes, for the manifest's CUDA
// major and no --redistrib file of cuDNN was given: NVIDIA's manifest of its release, read the
// same way. Offline without a cached copy, nothing is added (make_lock keeps the previous lock's
// pins, or says what to do).
util::Status add_nvidia_cudnn_manifest(const model::Manifest& m, const LockCli& c, Context& ctx, core::LockOptions& o) {
  auto release = core::cudnn_manifest_needed(m, knowledge::KnowledgeBase::embedded(), o);
  if (!release) return {};
  SP_TRY_ASSIGN(auto n, nvidia_options(ctx, c.cache_dir, c.offline));
  auto got = core::nvidia_cudnn_manifest(*release, n);
  if (!got) {
    if (c.offline && got.error().code == util::ErrorCode::not_found) return {};
    return std::move(got).error().at(m.locate(m.cudnn->version.pos));
  }
  name_read_manifest(*got, *release, o);
  o.redistribs.push_back(std::move(got->release));
  return {};
}

void print_lock(std::ostream& os, const model::Lock& l, const std::string& path, bool changed, bool check, const Style& st) {
  if (check) {
    os << st.green("up to date") << ": " << path << " locks " << l.manifest << " as it is now\n";
    return;
  }
  if (!changed) {
    os << st.green("unchanged") << ": " << path << " already locks " << l.manifest << " exactly\n";
    return;
  }
  os << st.green("locked") << " " << l.manifest << " -> " << path << "\n";
  if (!l.cuda.empty()) os << "  cuda      " << l.cuda << "\n";
  std::map<model::Platform, int> components;
  for (const auto& a : l.cuda_archives) ++components[a.platform];
  for (const auto& [platform, n] : components)
    os << "  toolkit   " << n << " component archive" << (n == 1 ? "" : "s") << " for " << model::to_string(platform) << "\n";
  for (const auto& d : l.drivers) os << "  driver    " << model::to_string(d.os) << " >= " << d.required << "\n";
  if (!l.cudnn.empty()) os << "  cudnn     " << l.cudnn << " (cuda" << l.cudnn_cuda << " build)\n";
  for (const auto& a : l.archives)
    os << "  archive   " << model::to_string(a.platform) << "  " << a.file << "\n            sha256 " << a.sha256 << ", " << a.size
       << " bytes; from " << a.source.substr(0, a.source.find(": ")) << "\n";
  std::size_t read = 0, libraries = 0, all = l.archives.size() + l.cuda_archives.size();
  for (const auto* list : {&l.archives, &l.cuda_archives})
    for (const auto& a : *list)
      if (a.kernels_read) {
        ++read;
        libraries += a.libraries.size();
      }
  if (read)
    os << "  kernels   GPU code of " << read << " of " << all << " archive" << (all == 1 ? "" : "s") << " (" << libraries << " librar"
       << (libraries == 1 ? "y" : "ies") << " with SASS or PTX)\n";
  for (const auto& f : l.frameworks) os << "  framework " << f.requirement << "  (" << f.index_url << ")\n";
  if (!l.python_lock.empty()) os << "  python    " << l.python_lock << " (sha256 " << l.python_lock_sha256 << ")\n";
  if (!l.base_image.empty()) os << "  image     " << l.base_image << (l.base_digest.empty() ? "" : "@" + l.base_digest) << "\n";
}

// Whether two locks were made from the same Python half: the frameworks and every [python] input.
bool same_python_inputs(const model::Lock& a, const model::Lock& b) {
  auto python_half = [](const model::Lock& l) {
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : l.inputs)
      if (k.rfind("frameworks.", 0) == 0 || k == "python" || k.rfind("python.", 0) == 0) out[k] = v.value;
    return out;
  };
  return python_half(a) == python_half(b);
}

// The Python lock beside the stack's lock: resolved by pip and written (when it changed) before the
// stack's lock that records its SHA-256, so that a failure between the two leaves a pair --locked
// refuses rather than one it accepts. --check instead re-reads each pinned wheel from its index.
// Offline, without a local index, the previous record is kept when its file is intact.
util::Status lock_python(const LockCli& c, Context& ctx, const model::Manifest& m, const fs::path& out, const model::Lock* previous,
                         model::Lock& lock, std::vector<model::Finding>& findings) {
  if ((m.frameworks.empty() && m.python_packages.empty()) || c.no_pylock || c.output == "-") return {};
  if (!m.python) {
    auto& f = model::add_finding(findings, "lock.python", model::Severity::warning, "[frameworks]");
    f.seen = "no [python] version: the frameworks are locked by requirement only, with no Python lock of their wheels";
    f.fix = "add [python] version = \"3.12\" (the wheels depend on it) and lock again";
    f.where = m.locate(m.frameworks_pos);
    return {};
  }
  const std::string name = format::pylock_file_name(m.name.value);
  const fs::path file = out.parent_path() / name;
  core::PythonToolOptions po;
  po.env = &ctx.io.env;
  if (c.check) {
    if (c.offline) {
      auto& f = model::add_finding(findings, "lock.python", model::Severity::note, file.filename().string());
      f.seen = "--offline: the wheels of the Python lock were not looked up on their indexes";
      if (previous) {
        lock.python_lock = previous->python_lock;
        lock.python_lock_sha256 = previous->python_lock_sha256;
      }
      return {};
    }
    if (!previous || previous->python_lock.empty())
      return util::Error(util::ErrorCode::mismatch, out.string() + " records no Python lock, and " + c.manifest + " pins frameworks")
          .with_hint("run `stackpin lock " + gen::sh_quote(c.manifest) + "` and commit both locks");
    SP_TRY_ASSIGN(auto py, core::load_python_lock(*previous, out));
    lock.python_lock = previous->python_lock;
    lock.python_lock_sha256 = previous->python_lock_sha256;
    std::vector<std::string> problems;
    for (const auto& r : core::recheck_pylock(*py, po)) {
      if (r.state == core::WheelRecheck::State::same) continue;
      const char* what = r.state == core::WheelRecheck::State::missing   ? "is gone"
                         : r.state == core::WheelRecheck::State::changed ? "changed"
                                                                         : "could not be checked";
      auto loc = py->locate(r.pos);
      problems.push_back(loc.file + ":" + std::to_string(loc.line) + ": " + r.package + ": " + r.wheel + " " + what + ": " + r.detail);
    }
    if (!problems.empty()) {
      util::Error e(util::ErrorCode::mismatch, file.string() + " pins " + std::to_string(problems.size()) +
                                                   " wheel(s) that their index no longer serves as pinned, or that could not be checked");
      e.hints = problems;
      e.hints.push_back("lock again (`stackpin lock " + gen::sh_quote(c.manifest) +
                        "`) to pin what the index serves now, or restore the wheels on your mirror");
      return e;
    }
    return {};
  }
  const bool local_index = m.python_index && m.python_index->value.find("://") == std::string::npos;
  if (c.offline && !local_index) {
    if (previous && !previous->python_lock.empty() && same_python_inputs(*previous, lock) && core::load_python_lock(*previous, out)) {
      lock.python_lock = previous->python_lock;
      lock.python_lock_sha256 = previous->python_lock_sha256;
      return {};
    }
    auto& f = model::add_finding(findings, "lock.python", model::Severity::warning, "[frameworks]");
    f.seen = "--offline: no Python lock was made (pip needs the index), and the previous one, if any, is not of these frameworks";
    f.fix = "run `stackpin lock` online, or give [python] index a local directory of wheels";
    return {};
  }
  SP_TRY_ASSIGN(auto py, core::resolve_pylock(m, lock, po));
  py.path = file.string();
  const std::string text = format::render_pylock(py);
  // what every later command reads: a lock its own reader refuses is not written
  if (auto back = format::parse_pylock(text, file.string()); !back)
    return util::Error(util::ErrorCode::invalid, "pip's resolution cannot be written as a Python lock: " + back.error().message)
        .with_hint("pip reported a package stackpin cannot pin (its name, version or wheel URL); lock from another index");
  auto old = util::read_file(file);
  if (!old || *old != text)
    if (auto st = util::write_file_atomic(file, text); !st) return st.error();
  lock.python_lock = name;
  lock.python_lock_sha256 = crypto::to_hex(crypto::sha256_of(text));
  return {};
}

Outcome run_lock(const LockCli& c, Context& ctx) {
  if (c.output == "-" && (c.check || ctx.json))
    return util::Error(util::ErrorCode::usage, "-o - prints the lock itself: it cannot be combined with --check or --json");
  if (c.upgrade && (c.check || !c.output.empty() || !c.redistribs.empty() || !c.archives.empty()))
    return util::Error(util::ErrorCode::usage,
                       "--upgrade writes nothing and reads no archive: it takes neither -o, --check, --redistrib nor --archives");
  auto m = format::load_manifest(c.manifest);
  if (!m) return m.error();
  if (c.upgrade) return run_upgrade(c, ctx, *m);
  fs::path out = c.output.empty() || c.output == "-" ? core::default_lock_path(c.manifest) : fs::path(c.output);
  core::LockOptions o;
  o.generated_by = std::string("stackpin ") + STACKPIN_VERSION;
  std::error_code ec;
  fs::path rel = fs::absolute(c.manifest, ec).lexically_relative(fs::absolute(out, ec).parent_path());
  o.manifest_file = rel.empty() ? fs::path(c.manifest).filename().generic_string() : rel.generic_string();
  for (const auto& r : c.redistribs) {
    auto text = util::read_file(r);
    if (!text) return std::move(text).error().with_context("reading redistrib file " + r);
    if (format::redistrib_product(*text) == format::RedistribProduct::cuda) {
      auto parsed = format::parse_cuda_redistrib(*text, r);
      if (!parsed) return parsed.error();
      o.cuda_redistribs.push_back(std::move(*parsed));
      continue;
    }
    auto parsed = format::parse_redistrib(*text, r);
    if (!parsed) return parsed.error();
    o.redistribs.push_back(std::move(*parsed));
  }
  // The lock being replaced, when there is a readable one: its pins of releases the knowledge base
  // lacks are kept, and --check compares with it.
  auto old_text = util::read_file(out);
  std::optional<model::Lock> previous;
  if (old_text) {
    auto parsed = format::parse_lock(*old_text, out.string());
    if (parsed)
      previous = std::move(*parsed);
    else if (c.check)
      return parsed.error();
  } else if (c.check) {
    return std::move(old_text).error().with_context("checking the lock of " + c.manifest);
  }
  if (previous) o.previous = &*previous;
  if (auto st = add_nvidia_manifest(*m, c, ctx, o); !st) return st.error();
  if (auto st = add_nvidia_cudnn_manifest(*m, c, ctx, o); !st) return st.error();
  // the GPU code of the archives at hand (--check reads none: it keeps what the lock recorded)
  core::KernelReadOptions k;
  k.archives_dir = c.archives;
  k.cache_dir = archive_cache_dir(ctx, c.cache_dir);
  k.previous = o.previous;
  k.read = !c.check;
  o.kernels = &k;
  auto outcome = core::make_lock(*m, knowledge::KnowledgeBase::embedded(), o);
  if (!outcome) return outcome.error();
  if (auto st = lock_python(c, ctx, *m, out, o.previous, outcome->lock, outcome->findings); !st) return st.error();
  std::string text = format::render_lock(outcome->lock);
  if (c.output == "-") {
    ctx.io.out << text;
    return k_exit_ok;
  }
  bool changed = !old_text || *old_text != text;
  if (c.check) {
    auto differences = core::lock_differences(*previous, outcome->lock);
    if (!differences.empty()) {
      util::Error e(util::ErrorCode::mismatch, out.string() + " is out of date: locking " + c.manifest + " now pins " +
                                                   std::to_string(differences.size()) + " value(s) differently");
      e.hints = differences;
      e.hints.push_back("run `stackpin lock " + gen::sh_quote(c.manifest) + "` and commit the result");
      return e;
    }
    changed = false;
  } else if (changed) {
    if (auto st = util::write_file_atomic(out, text); !st) return st.error();
  }
  if (ctx.json) {
    ctx.io.out << format::envelope("lock", true, outcome->findings, format::to_json(outcome->lock, out.string(), changed), nullptr);
  } else {
    for (const auto& f : outcome->findings) render_finding(ctx.io.out, f, ctx.out_style);
    print_lock(ctx.io.out, outcome->lock, out.string(), changed, c.check, ctx.out_style);
  }
  return k_exit_ok;
}

}  // namespace

void add_lock(Command& app, Context& ctx) {
  auto c = std::make_shared<LockCli>();
  auto* cmd =
      app.add_subcommand("lock", "Pin everything the manifest leaves open into a lock file beside it (archives, drivers, exact builds)");
  cmd->add_option("MANIFEST", c->manifest, "The manifest to lock")->required();
  cmd->add_option("-o,--output", c->output, "Where to write the lock (default: beside the manifest, NAME.lock; - = stdout)");
  cmd->add_option("--redistrib", c->redistribs,
                  "NVIDIA's redistrib_<version>.json of cuDNN or of CUDA: pin archives newer than the knowledge base with NVIDIA's hashes");
  cmd->add_option("--archives", c->archives,
                  "Folder holding the pinned archives: their libraries' GPU code is recorded for check (the download cache is read too)");
  cmd->add_option("--cache-dir", c->cache_dir,
                  "The download cache: NVIDIA's manifests for releases newer than stackpin's, and archives `stackpin fetch` put there");
  cmd->add_flag("--offline", c->offline, "Read no NVIDIA manifest from the network: stackpin's own, --redistrib files and the cache only");
  cmd->add_flag("--no-pylock", c->no_pylock,
                "Lock the system half only: write no Python lock (pylock.NAME.toml) for the manifest's [frameworks]");
  cmd->add_flag("--check", c->check, "Write nothing; fail (exit 1) when the lock is missing or would pin anything differently");
  cmd->add_flag("--upgrade", c->upgrade,
                "Write nothing; list the newer CUDA, cuDNN and torch releases and which still fit the manifest (its GPUs, its driver "
                "floor); online, NVIDIA's lists name releases newer than stackpin's own");
  add_json_flag(cmd, ctx);
  cmd->callback([c, &ctx] { ctx.action = [c, &ctx] { return run_lock(*c, ctx); }; });
}

}  // namespace cli
