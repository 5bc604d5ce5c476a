// stage: locate -> (no-op check) -> extract once into .stackpin/tmp-* while hashing -> compare
// with the pin -> map onto the target's layout -> move into place under the journal -> receipt.
// Nothing in DEST changes before the archive is proven to be the pinned one and fully extracted.
#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include "core/provision/stage.hpp"

#include "core/archives/verify.hpp"
#include "core/inspect/cudnn_whole.hpp"
#include "core/layout/activation.hpp"
#include "core/layout/dest.hpp"
#include "core/layout/layout_plan.hpp"
#include "crypto/sha256.hpp"
#include "format/receipt.hpp"
#include "gen/activate.hpp"
#include "gen/activate_windows.hpp"
#include "gen/build_config.hpp"
#include "gen/quote.hpp"
#include "knowledge/cuda_catalog.hpp"
#include "provision/build_files.hpp"
#include "provision/staging.hpp"
#include "provision/state.hpp"
#include "util/env.hpp"
#include "util/file_io.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;
using detail::Journal;
using detail::State;

namespace {

std::string layout_name(const model::Manifest& m, model::Target t) {
  if (t == model::Target::windows)
    return m.windows ? model::to_string(m.windows->layout.value) : model::to_string(model::WindowsLayout::isolated);
  return m.linux ? model::to_string(m.linux->layout.value) : model::to_string(model::LinuxLayout::lib64);
}

std::string prefix_of(const model::Manifest& m, model::Target t, const fs::path& dest) {
  if (t == model::Target::windows && m.windows) {
    if (m.windows->layout.value == model::WindowsLayout::cuda_merge && m.windows->cuda_path) return m.windows->cuda_path->value;
    if (m.windows->prefix) return m.windows->prefix->value;
  }
  if (t == model::Target::linux && m.linux && m.linux->prefix) return m.linux->prefix->value;
  return dest.string();
}

// The receipt describes this exact staging and every file is still as stage left it.
bool intact(const model::Receipt& r, const fs::path& dest) {
  std::error_code ec;
  for (const auto& f : r.files) {
    fs::path p = dest / f.path;
    auto st = fs::symlink_status(p, ec);
    if (f.type == "removed") continue;
    if (f.type == "symlink") {
      if (!fs::is_symlink(st) || fs::read_symlink(p, ec).string() != f.link) return false;
    } else if (f.type == "file") {
      if (!fs::is_regular_file(st) || fs::file_size(p, ec) != f.size || detail::mtime_ns(p) != f.mtime_ns) return false;
    }
  }
  return true;
}

// cuDNN DLLs of another version in the DLL directories of a Windows tree (the leftover-DLL trap).
std::vector<std::string> find_stale(const fs::path& dest, const std::vector<model::PlannedFile>& plan) {
  std::set<std::string> planned, dll_dirs;
  for (const auto& f : plan) {
    planned.insert(util::to_lower(f.to));
    if (util::to_lower(f.to).size() > 4 && util::to_lower(f.to).substr(f.to.size() - 4) == ".dll")
      dll_dirs.insert(fs::path(f.to).parent_path().generic_string());
  }
  std::vector<std::string> stale;
  std::error_code ec;
  for (const auto& dir : dll_dirs) {
    for (fs::directory_iterator it(dest / dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = util::to_lower(it->path().filename().string());
      bool cudnn_dll = name.rfind("cudnn", 0) == 0 && name.size() > 4 && name.substr(name.size() - 4) == ".dll";
      std::string rel = dir + "/" + it->path().filename().string();
      if (cudnn_dll && !planned.count(util::to_lower(rel))) stale.push_back(rel);
    }
  }
  std::sort(stale.begin(), stale.end());
  return stale;
}

// stackpin's own files next to a staged tree (DEST/.stackpin/): the activation scripts for the
// target, written for where the tree lives on the target machine (the receipt's prefix).
struct Activation {
  std::vector<std::pair<std::string, std::string>> files;  // name in .stackpin -> content
  std::string note;
};

Activation activation_for(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const model::Receipt& r) {
  Activation out;
  if (r.target == "linux") {
    gen::LinuxActivation a{m.name.value, r.cudnn_version, r.prefix};
    a.cuda_version = r.cuda_version;
    a.cuda_bin = std::any_of(r.files.begin(), r.files.end(), [](const model::StagedFile& f) { return f.path.rfind("bin/", 0) == 0; });
    out.files.push_back({"activate.sh", gen::render_activate_sh(a)});
    return out;
  }
  if (!model::is_windows_absolute(r.prefix)) {
    out.note = "no Windows path for the tree in the manifest ([targets.windows] prefix or cuda_path): activation scripts not written";
    return out;
  }
  const auto* contents = m.cudnn ? kb.cudnn_contents(static_cast<int>(m.cudnn->version.value.major())) : nullptr;
  std::string main_dll = util::to_lower(contents ? contents->main_dll : std::string("cudnn64_"));
  std::string dll_dir, implib;
  for (const auto& f : r.files) {
    std::string name = util::to_lower(fs::path(f.path).filename().string());
    if (name == main_dll) dll_dir = fs::path(f.path).parent_path().generic_string();
    if (name == "cudnn.lib") implib = f.path;
  }
  auto w = windows_activation_for_tree(m, kb, r.prefix, dll_dir, implib);
  if (!m.cudnn) {  // a toolkit alone
    w.dll_dir.clear();
    w.import_lib.clear();
  }
  if (!r.cuda_version.empty()) {
    // the toolkit is this tree: CUDA_PATH is its root, and its bin directories (where the staged
    // DLLs and programs are: bin\, CUDA 13's bin\x64\) go on PATH
    w.cuda_path = w.cudnn_root;
    auto v = model::Version::parse(r.cuda_version);
    w.cuda_version = v ? v->prefix(2) : r.cuda_version;
    std::set<std::string> bins;
    for (const auto& f : r.files) {
      std::string lower = util::to_lower(f.path);
      bool program = lower.ends_with(".dll") || lower.ends_with(".exe");
      std::string dir = fs::path(f.path).parent_path().generic_string();
      if (program && (dir == "bin" || dir.rfind("bin/", 0) == 0)) bins.insert(dir);
    }
    for (std::string dir : bins) {
      std::replace(dir.begin(), dir.end(), '/', '\\');
      w.toolkit_bin_dirs.push_back(w.cudnn_root + "\\" + dir);
    }
    w.cuda_bin_dirs = w.toolkit_bin_dirs;
  }
  for (const auto& dir : gen::first_path_dirs(w)) {
    if (auto s = check_path_entry(dir); !s) {
      out.note = "activation scripts not written: " + s.error().message;
      return out;
    }
  }
  // the check script carries every staged file's hash, so that the Windows machine can tell a
  // half-copied or altered tree by itself
  for (const auto& f : r.files) {
    if (f.type != "file") continue;
    std::string path = f.path;
    std::replace(path.begin(), path.end(), '/', '\\');
    w.files.push_back({path, f.sha256});
  }
  out.files.push_back({"activate.ps1", gen::render_activate_ps1(w)});
  out.files.push_back({"check-cudnn.ps1", gen::render_check_ps1(w)});
  if (auto cmd = gen::render_activate_cmd(w))
    out.files.push_back({"activate.cmd", *cmd});
  else
    out.note = cmd.error().message;
  return out;
}

bool activation_current(const model::StateDir& dirs, const Activation& a) {
  for (const auto& [name, content] : a.files) {
    auto text = util::read_file(dirs.root() / name);
    if (!text || *text != content) return false;
  }
  return true;
}

util::Status write_activation(const model::StateDir& dirs, const Activation& a, model::StageReport& report) {
  if (report.target == "windows" && model::is_windows_absolute(report.prefix) && !a.files.empty())
    report.next_steps = windows_next_steps(report.dest, report.prefix);
  for (const auto& [name, content] : a.files) {
    auto text = util::read_file(dirs.root() / name);
    if (!text || *text != content) SP_TRY(util::write_file_atomic(dirs.root() / name, content));
    report.activation.push_back((dirs.root() / name).string());
  }
  report.activation_note = a.note;
  return {};
}

}  // namespace

namespace {

// One archive a stage takes files from: cuDNN's (component "") or a CUDA toolkit component's.
struct Unit {
  std::string component;
  std::string version;  // a component's own version ("12.4.127"; "" when not known)
  PinnedArchive pinned;
  std::optional<fs::path> archive;
  bool cudnn() const { return component.empty(); }
};

// One run of `stage`, as the steps stage() names: what it stages and where (set up by
// resolve()), then each step reading and filling this.
struct StageRun {
  const model::Manifest& m;
  const knowledge::KnowledgeBase& kb;
  const StageOptions& o;
  fs::path dest;
  model::StateDir dirs;
  std::vector<Unit> units;  // cuDNN's first when pinned, then the toolkit components in the pins' order
  model::StageReport report;
  archive_io::ExtractOptions xo;

  const Unit* cudnn() const {
    for (const auto& u : units)
      if (u.cudnn()) return &u;
    return nullptr;
  }
  std::string cuda_version() const { return m.cuda && !m.cuda->components.empty() ? m.cuda->version.value.text() : std::string(); }

  // With --remove-stale a staging is current only when no stale DLL is left: the first run's
  // output tells the user to rerun with --remove-stale, and that rerun must not answer "already
  // staged".
  bool stale_left(const model::Receipt& r) const {
    if (!o.remove_stale || o.target != model::Target::windows) return false;
    std::vector<model::PlannedFile> staged;
    for (const auto& f : r.files) {
      if (f.type == "removed") continue;
      model::PlannedFile p;
      p.to = f.path;
      staged.push_back(std::move(p));
    }
    return !find_stale(dest, staged).empty();
  }
  // The receipt describes this same staging (archives, target, layout, platform, prefix).
  bool same_receipt(const model::Receipt& r) const {
    const Unit* c = cudnn();
    if (r.archive_sha256 != (c ? c->pinned.expect.sha256 : std::string())) return false;
    if (r.cuda_version != cuda_version()) return false;
    std::vector<std::string> want, have;
    for (const auto& u : units)
      if (!u.cudnn()) want.push_back(u.component + "=" + u.pinned.expect.sha256);
    for (const auto& a : r.cuda_archives) have.push_back(a.component + "=" + a.sha256);
    return want == have && r.target == report.target && r.layout == report.layout && r.platform == report.platform &&
           r.prefix == report.prefix && !stale_left(r);
  }
  util::Status find_archive() {
    for (auto& u : units) {
      bool by_content = false;
      SP_TRY_ASSIGN(u.archive, find_pinned_archive(u.pinned, o.archives_dir, by_content, o.cache_dir));
      if (u.cudnn()) report.archive_path = u.archive->string();
    }
    report.cuda_archives.clear();
    for (const auto& u : units)
      if (!u.cudnn())
        report.cuda_archives.push_back({u.component, u.version, u.archive->string(), u.pinned.expect.sha256, *u.pinned.expect.size});
    return {};
  }
  bool have_archives() const {
    return std::all_of(units.begin(), units.end(), [](const Unit& u) { return u.archive.has_value(); });
  }
};

// The target, DEST, platform and pinned archive, checked before anything is looked at.
util::Result<StageRun> resolve(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const StageOptions& o) {
  if (o.target != model::Target::windows && o.target != model::Target::linux)
    return util::Error(util::ErrorCode::usage, "stage takes --target windows or --target linux");
  if (o.target == model::Target::linux && util::host_is_windows())
    return util::Error(util::ErrorCode::usage,
                       "stackpin.exe stages the Windows layout only: the Linux layout's libraries are symlink chains "
                       "(libcudnn.so -> libcudnn.so.9 -> ...), which a Windows folder does not keep for Linux")
        .with_hint(
            "run the Linux stackpin where the tree is used (inside WSL2: wsl stackpin stage MANIFEST --target linux), "
            "or stage --target windows here");
  const bool toolkit = m.cuda && !m.cuda->components.empty();
  if (!m.cudnn && !toolkit)
    return util::Error(util::ErrorCode::invalid, m.path + " pins neither [cudnn] nor [cuda] components")
        .with_hint("add [cudnn] version, or [cuda] components = [\"runtime\"] to stage the toolkit");
  auto dest = default_dest(o.target, o.dest, m);
  if (!dest) {
    if (o.target == model::Target::windows)
      return util::Error(util::ErrorCode::usage, "--dest is required for --target windows")
          .with_hint("the Windows tree is built here and copied to the Windows machine: --dest ./cudnn-windows");
    return util::Error(util::ErrorCode::usage, "no --dest and no [targets.linux] prefix in " + m.path)
        .with_hint("pass --dest DIR or set prefix in [targets.linux]");
  }
  model::Platform platform = o.platform ? *o.platform : model::default_platform(m, o.target, model::host_linux_platform());
  if (o.target == model::Target::windows && !model::is_windows(platform))
    return util::Error(
        util::ErrorCode::usage,
        std::string("--target windows stages a Windows archive (windows-x86_64 or windows-arm64), not ") + model::to_string(platform));
  if (o.target == model::Target::linux && model::is_windows(platform))
    return util::Error(util::ErrorCode::usage, "--target linux needs a Linux archive (--platform linux-x86_64 or linux-sbsa)");
  if (auto why = model::windows_arch_conflict(m, platform); !why.empty())
    return util::Error(util::ErrorCode::usage, why).with_hint("leave --platform out, or change arch in [targets.windows]");
  std::vector<Unit> units;
  if (m.cudnn) {
    SP_TRY_ASSIGN(auto pinned, pinned_archive(m, platform, kb));
    units.push_back(Unit{"", "", std::move(pinned), std::nullopt});
  }
  if (toolkit) {
    SP_TRY_ASSIGN(auto pins, pinned_cuda_archives(m, platform));
    if (pins.empty())
      return util::Error(util::ErrorCode::invalid,
                         std::string("no CUDA component archive is pinned for ") + model::to_string(platform) + " in " + m.path)
          .at(m.locate(m.cuda->components_pos))
          .with_hint("`stackpin check " + gen::sh_quote(m.path) +
                     " --explain` lists the components for each platform NVIDIA builds them for");
    for (auto& p : pins) units.push_back(Unit{p.pin->component->value, p.pin->component_version, std::move(p), std::nullopt});
  }
  fs::path dest_abs = util::io::absolute_path(*dest);
  StageRun run{m, kb, o, dest_abs, model::StateDir{dest_abs}, std::move(units), {}, {}};
  auto& report = run.report;
  report.dest = dest_abs.string();
  report.prefix = prefix_of(m, o.target, dest_abs);
  report.target = model::to_string(o.target);
  report.layout = layout_name(m, o.target);
  report.platform = model::to_string(platform);
  if (const Unit* c = run.cudnn()) {
    report.archive_sha256 = c->pinned.expect.sha256;
    report.archive_size = *c->pinned.expect.size;
  }
  report.cuda_version = run.cuda_version();
  report.dry_run = o.dry_run;
  run.xo.rules = o.target == model::Target::windows ? archive_io::NameRules::windows : archive_io::NameRules::posix;
  run.xo.progress = o.progress;
  if (o.decoder_memory) run.xo.xz_memory = *o.decoder_memory;
  return run;
}

// This exact staging is in place: answered from the receipt's file metadata, without the lock or
// the archive. `own_files_only` is set when the staging is intact but stackpin's own files
// (activation scripts, build files) are missing or stale: they are rewritten under the lock.
std::optional<model::StageReport> already_staged(StageRun& run, bool& own_files_only) {
  std::error_code ec;
  const auto& dirs = run.dirs;
  if (run.o.dry_run || !fs::exists(dirs.receipt(), ec) || fs::exists(dirs.journal(), ec) || detail::has_strays(dirs)) return std::nullopt;
  auto loaded = detail::load_receipt(dirs);
  if (!loaded || !*loaded) return std::nullopt;
  const auto& r = **loaded;
  if (!run.same_receipt(r) || !intact(r, run.dest)) return std::nullopt;
  auto a = activation_for(run.m, run.kb, r);
  if (!activation_current(dirs, a) || !detail::build_files_current(dirs, detail::build_files_for(r), &run.report)) {
    own_files_only = true;
    return std::nullopt;
  }
  auto report = run.report;
  for (const auto& f : a.files) report.activation.push_back((dirs.root() / f.first).string());
  report.activation_note = a.note;
  report.no_op = true;
  report.archive_path = r.archive_file;
  report.cuda_archives = r.cuda_archives;
  report.files = r.files.size();
  return report;
}

std::uint64_t unpack_limit(const StageOptions& o, const Unit& u) {
  return o.max_unpacked ? *o.max_unpacked : std::max<std::uint64_t>(16 * *u.pinned.expect.size, 256ull << 20);
}

// The names NVIDIA's manifest gives the staged components, for version.json (the id where the
// release is not one stackpin has NVIDIA's manifest of).
std::vector<gen::CudaComponentVersion> component_versions(const StageRun& run) {
  std::vector<gen::CudaComponentVersion> out;
  for (const auto& u : run.units)
    if (!u.cudnn())
      out.push_back({u.component, knowledge::CudaCatalog::embedded().component_name(run.m.cuda->version.value, u.component), u.version});
  return out;
}

// One archive's files as they will be laid out, with its entries by path inside the archive.
struct Part {
  fs::path root;     // where its files are now (the extraction's top directory)
  std::string what;  // "cuDNN", "cuda_cudart"
  std::vector<model::PlannedFile> files;
  std::map<std::string, archive_io::Entry> entries;  // by PlannedFile::from
};

// The layout of one unit's entries (`entries` named as in the archive, top directory included).
util::Result<detail::LayoutPlan> plan_unit(const StageRun& run, const Unit& u, const std::vector<archive_io::Entry>& entries) {
  if (u.cudnn()) return detail::plan_layout(entries, run.m, *model::parse_platform(run.report.platform), run.kb);
  return detail::plan_cuda_component(entries, u.component, run.o.target);
}

// Two archives that put a file at the same place must put the same file there (NVIDIA's components
// do not overlap; a repack might): the second copy is dropped, a different one is a conflict.
util::Status merge_parts(std::vector<Part>& parts) {
  std::map<std::string, std::pair<const Part*, const archive_io::Entry*>> at;
  for (auto& part : parts) {
    std::vector<model::PlannedFile> kept;
    for (auto& f : part.files) {
      const archive_io::Entry& e = part.entries.at(f.from);
      auto [it, inserted] = at.emplace(f.to, std::make_pair(&part, &e));
      if (inserted) {
        kept.push_back(std::move(f));
        continue;
      }
      const archive_io::Entry& other = *it->second.second;
      bool same = other.type == e.type && other.link == e.link && (e.type != archive_io::EntryType::file || other.sha256 == e.sha256);
      if (!same)
        return util::Error(util::ErrorCode::conflict,
                           it->second.first->what + " and " + part.what + " both put " + f.to + " into DEST, with different contents")
            .with_hint("stage them into different DESTs, or drop one of them from the manifest; nothing was staged");
    }
    part.files = std::move(kept);
  }
  return {};
}

// version.json, NVIDIA's record of a toolkit tree's components, as one more part of the staging.
util::Result<Part> version_json_part(const StageRun& run, const fs::path& tmp) {
  std::string text = gen::render_cuda_version_json(run.m.cuda->version.value.text(), component_versions(run));
  fs::path dir = tmp / "generated";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return util::Error(util::ErrorCode::io, "cannot create " + dir.string() + ": " + ec.message());
  SP_TRY(util::write_file_atomic(dir / "version.json", text));
  Part p;
  p.root = dir;
  p.what = "version.json";
  archive_io::Entry e;
  e.path = "version.json";
  e.size = text.size();
  e.mode = 0644;
  e.sha256 = crypto::sha256_of(text);
  p.entries.emplace("version.json", e);
  model::PlannedFile f;
  f.from = "version.json";
  f.to = "version.json";
  f.type = "file";
  f.size = text.size();
  p.files.push_back(std::move(f));
  return p;
}

// --dry-run: the plan, from a listing of each verified archive; nothing is written.
util::Result<model::StageReport> dry_run(StageRun& run) {
  std::vector<Part> parts;
  for (const auto& u : run.units) {
    SP_TRY_ASSIGN(auto pinned_file, open_pinned(*u.archive, u.pinned.expect));
    auto xo = run.xo;
    xo.max_total_bytes = unpack_limit(run.o, u);
    SP_TRY_ASSIGN(auto listing, archive_io::list(pinned_file, xo));
    SP_TRY_ASSIGN(auto plan, plan_unit(run, u, listing.entries));
    Part part;
    part.what = u.cudnn() ? "cuDNN" : u.component;
    for (const auto& e : listing.entries)
      if (e.path.size() > plan.top.size()) part.entries.emplace(e.path.substr(plan.top.size() + 1), e);
    part.files = std::move(plan.files);
    parts.push_back(std::move(part));
  }
  // a listing has no content hashes: files at one place are compared by size only here
  std::set<std::string> seen;
  auto& report = run.report;
  std::error_code ec;
  for (auto& part : parts)
    for (auto& f : part.files) {
      if (!seen.insert(f.to).second) continue;
      SP_TRY(detail::check_stage_target(run.dirs, f.to));
      f.replaces = fs::exists(fs::symlink_status(run.dest / f.to, ec));
      report.bytes += f.size;
      report.plan.push_back(f);
    }
  if (!run.cuda_version().empty()) {
    model::PlannedFile v;
    v.to = "version.json";
    v.type = "file";
    v.replaces = fs::exists(fs::symlink_status(run.dest / v.to, ec));
    report.plan.push_back(v);
  }
  report.files = report.plan.size();
  if (run.o.target == model::Target::windows) report.stale = find_stale(run.dest, report.plan);
  return report;
}

// The archives, each unpacked into DEST/.stackpin/tmp-*/<n> once proven to be the pinned bytes,
// and mapped onto the target's layout: everything the commit needs, with nothing in DEST changed yet.
struct Unpacked {
  util::TempDir tmp;
  std::vector<Part> parts;
};

// Proves and extracts every unit's archive into its own directory under `tmp`, several at once:
// a toolkit is many archives, and each is decoded on its own thread(s). Errors: the first unit's (in
// order) that failed.
util::Result<std::vector<archive_io::Extracted>> extract_all(const StageRun& run, const fs::path& tmp) {
  const std::size_t n = run.units.size();
  std::vector<std::optional<util::Result<archive_io::Extracted>>> results(n);
  unsigned hw = std::thread::hardware_concurrency();
  std::size_t workers = std::min<std::size_t>(n, hw == 0 ? 1 : hw);
  // the cores shared out: archives at once times the threads each decodes on stays at the core count
  const unsigned decode_threads = static_cast<unsigned>(std::max<std::size_t>(1, (hw == 0 ? 1 : hw) / std::max<std::size_t>(1, workers)));
  std::mutex progress_mutex;
  auto work = [&](std::size_t i) {
    const Unit& u = run.units[i];
    auto xo = run.xo;
    xo.max_total_bytes = unpack_limit(run.o, u);
    if (n > 1) xo.decode_threads = decode_threads;
    if (xo.progress && n > 1) {
      auto inner = xo.progress;
      xo.progress = [inner, &progress_mutex](const archive_io::Progress& p) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        inner(p);
      };
    }
    fs::path dir = tmp / std::to_string(i);
    std::error_code ec;
    fs::create_directory(dir, ec);
    if (ec) {
      results[i] = util::Error(util::ErrorCode::io, "cannot create " + dir.string() + ": " + ec.message());
      return;
    }
    // proven to be the pinned bytes before anything of it is unpacked
    auto pinned_file = open_pinned(*u.archive, u.pinned.expect);
    if (!pinned_file) {
      results[i] = std::move(pinned_file).error();
      return;
    }
    results[i] = archive_io::extract(*pinned_file, dir, xo);
  };
  if (workers <= 1) {
    for (std::size_t i = 0; i < n; ++i) work(i);
  } else {
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> threads;
    for (std::size_t w = 0; w < workers; ++w)
      threads.emplace_back([&] {
        for (std::size_t i = next++; i < n; i = next++) work(i);
      });
    for (auto& t : threads) t.join();
  }
  std::vector<archive_io::Extracted> out;
  for (std::size_t i = 0; i < n; ++i) {
    if (!*results[i]) {
      auto e = std::move(*results[i]).error();
      if (!run.units[i].cudnn()) e.message = run.units[i].component + ": " + e.message;
      return e;
    }
    out.push_back(std::move(*results[i]).value());
  }
  return out;
}

util::Result<Unpacked> unpack(StageRun& run) {
  const auto& dest = run.dest;
  // the receipt must record every name losslessly (archive entries are checked while extracting)
  std::vector<std::pair<std::string, std::string>> names{{"DEST", dest.string()}, {"the manifest's path", run.m.path}};
  for (const auto& u : run.units) names.push_back({"the archive's file name", u.archive->filename().string()});
  for (const auto& [what, text] : names)
    if (!util::is_valid_utf8(text))
      return util::Error(util::ErrorCode::usage, what + " \"" + util::printable(text) + "\" is not valid UTF-8")
          .with_hint("the receipt records it; rename it, or use a path in UTF-8; nothing was staged");
  SP_TRY_ASSIGN(auto tmp, util::TempDir::create_owned(run.dirs.root(), "tmp-"));
  auto extracted = extract_all(run, tmp.path());
  if (!extracted) {
    auto e = std::move(extracted).error();
    if (e.code == util::ErrorCode::io && e.message.find("No space left") != std::string::npos)
      e.hints.push_back("free space on the file system of " + dest.string() + "; nothing was staged");
    return e;  // tmp goes with it
  }
  std::vector<Part> parts;
  for (std::size_t i = 0; i < run.units.size(); ++i) {
    const Unit& u = run.units[i];
    auto& x = (*extracted)[i];
    SP_TRY_ASSIGN(auto plan, plan_unit(run, u, x.entries));
    fs::path top = tmp.path() / std::to_string(i) / plan.top;
    if (u.cudnn()) {
      SP_TRY(detail::check_header_version(top / "include" / "cudnn_version.h", run.m.cudnn->version.value));
      SP_TRY_ASSIGN(run.report.cudnn_whole, require_cudnn_whole(tmp.path() / std::to_string(i), x.entries, u.archive->filename().string(),
                                                                run.m.cudnn->version.value, run.kb));
    }
    Part part;
    part.root = top;
    part.what = u.cudnn() ? "cuDNN" : u.component;
    for (auto& e : x.entries)
      if (e.path.size() > plan.top.size()) part.entries.emplace(e.path.substr(plan.top.size() + 1), std::move(e));
    part.files = std::move(plan.files);
    parts.push_back(std::move(part));
  }
  if (!run.cuda_version().empty()) {
    SP_TRY_ASSIGN(auto v, version_json_part(run, tmp.path()));
    parts.push_back(std::move(v));
  }
  SP_TRY(merge_parts(parts));
  // a directory where a file must go cannot be replaced, and nothing is written through a link out
  // of DEST: refuse before touching anything
  std::error_code ec;
  for (const auto& part : parts)
    for (const auto& f : part.files) {
      SP_TRY(detail::check_stage_target(run.dirs, f.to));
      if (fs::is_directory(fs::symlink_status(dest / f.to, ec)))
        return util::Error(util::ErrorCode::conflict,
                           (dest / f.to).string() + " is a directory where " + part.what + "'s " + f.to + " goes");
    }
  return Unpacked{std::move(tmp), std::move(parts)};
}

// Another staging in this DEST is taken away first, restoring what it replaced.
util::Status take_away(StageRun& run, const model::Receipt& previous) {
  std::error_code ec;
  std::vector<std::string> modified;
  std::uint64_t removed = 0, restored = 0;
  SP_TRY(Journal::begin(run.dirs, "unstage", {}));
  auto s = detail::remove_staged(run.dirs, previous, run.o.force, modified, removed, restored);
  if (!s) {
    fs::remove(run.dirs.journal(), ec);
    auto e = std::move(s).error();
    e.message = "cannot replace the " + detail::staged_what(previous) + " staged in " + run.dest.string() + ": " + e.message;
    return e;
  }
  fs::remove(run.dirs.receipt(), ec);
  fs::remove(run.dirs.journal(), ec);
  run.report.replaced_previous = true;
  return {};
}

model::Receipt receipt_header(const StageRun& run) {
  const auto& m = run.m;
  const auto& report = run.report;
  model::Receipt receipt;
  receipt.stackpin_version = run.o.stackpin_version;
  receipt.manifest_path = m.path;
  receipt.manifest_name = m.name.value;
  receipt.manifest_sha256 = run.o.manifest_sha256;
  if (const Unit* c = run.cudnn()) {
    receipt.cudnn_version = m.cudnn->version.value.text();
    receipt.cudnn_cuda_major = m.cudnn->cuda ? m.cudnn->cuda->value : 0;
    receipt.archive_file = c->archive->filename().string();
    receipt.archive_sha256 = c->pinned.expect.sha256;
    receipt.archive_size = *c->pinned.expect.size;
  }
  receipt.cuda_version = run.cuda_version();
  for (const auto& u : run.units)
    if (!u.cudnn())
      receipt.cuda_archives.push_back(
          {u.component, u.version, u.archive->filename().string(), u.pinned.expect.sha256, *u.pinned.expect.size});
  receipt.platform = report.platform;
  receipt.target = report.target;
  receipt.layout = report.layout;
  receipt.dest = report.dest;
  receipt.prefix = report.prefix;
  return receipt;
}

// The moves into DEST, each announced in the journal before it happens (state.cpp explains the
// journal): directories created, existing files moved to .stackpin/backup/, the staged files
// renamed into place, stale DLLs moved aside with --remove-stale, then the receipt and "commit".
class Commit {
 public:
  Commit(StageRun& run, Journal& journal, Unpacked& u) : m_run(run), m_journal(journal), m_u(u), m_receipt(receipt_header(run)) {}

  util::Result<model::Receipt> run(const std::vector<std::string>& stale) {
    SP_TRY(m_journal.record("tmp", m_u.tmp.path().filename().string()));
    auto& report = m_run.report;
    report.plan.clear();
    for (auto& part : m_u.parts)
      for (auto& f : part.files) {
        SP_TRY(place(f, part.entries.at(f.from), part.root, part.what == "cuDNN" ? "cudnn" : part.what == "version.json" ? "" : part.what));
        report.plan.push_back(f);
      }
    if (m_run.o.remove_stale) {
      for (const auto& rel : stale) {
        model::StagedFile sf;
        sf.path = rel;
        sf.type = "removed";
        SP_TRY(backup(rel, sf));
        m_receipt.files.push_back(std::move(sf));
        report.removed_stale.push_back(rel);
      }
    }
    report.files = report.plan.size();
    const auto& dirs = m_run.dirs;
    SP_TRY(util::write_file_atomic(dirs.root() / "receipt.json.new", format::write_receipt(m_receipt)));
    SP_TRY(m_journal.record("commit"));
    return m_receipt;
  }

 private:
  util::Status ensure_dirs(const fs::path& rel_dir) {
    std::error_code ec;
    fs::path cur;
    for (const auto& part : rel_dir) {
      cur /= part;
      if (fs::exists(fs::symlink_status(m_run.dest / cur, ec))) continue;  // a folder, or a link check_stage_target let pass
      SP_TRY(m_journal.record("mkdir", cur.generic_string()));
      SP_TRY(util::io::make_directory(m_run.dest / cur));
      m_receipt.created_dirs.push_back(cur.generic_string());
    }
    return {};
  }
  util::Status backup(const std::string& rel, model::StagedFile& sf) {
    std::error_code ec;
    const auto& dirs = m_run.dirs;
    std::string bak = "backup/" + rel;
    SP_TRY(detail::check_state_path(dirs, bak, "backup", "the backup of DEST/" + rel));
    fs::path folder = dirs.root();
    for (const auto& part : fs::path(bak).parent_path()) SP_TRY(util::io::make_directory(folder /= part));  // 0755, no link
    fs::remove(dirs.root() / bak, ec);
    SP_TRY(m_journal.record("backup", rel, bak));
    fs::rename(m_run.dest / rel, dirs.root() / bak, ec);
    if (ec) return util::Error(util::ErrorCode::io, "cannot move " + (m_run.dest / rel).string() + " aside: " + ec.message());
    sf.backup = bak;
    return {};
  }
  util::Status place(model::PlannedFile& f, const archive_io::Entry& e, const fs::path& root, const std::string& archive) {
    std::error_code ec;
    const auto& dest = m_run.dest;
    model::StagedFile sf;
    sf.path = f.to;
    sf.from = f.from;
    sf.archive = archive;
    sf.type = f.type;
    sf.size = e.size;
    sf.mode = e.mode;
    sf.link = e.link;
    if (f.type == "file") sf.sha256 = crypto::to_hex(e.sha256);
    SP_TRY(detail::check_stage_target(m_run.dirs, f.to));  // again, right before DEST changes
    SP_TRY(ensure_dirs(fs::path(f.to).parent_path()));
    if (fs::exists(fs::symlink_status(dest / f.to, ec))) {
      f.replaces = true;
      SP_TRY(backup(f.to, sf));
    }
    // what a rollback may remove: this file and no other (state.cpp)
    SP_TRY(m_journal.record("place", f.to, f.type == "file" ? "sha256:" + sf.sha256 : "link:" + e.link));
    fs::rename(root / f.from, dest / f.to, ec);
    if (ec) return util::Error(util::ErrorCode::io, "cannot move " + f.to + " into " + dest.string() + ": " + ec.message());
    if (f.type == "file") sf.mtime_ns = detail::mtime_ns(dest / f.to);
    m_run.report.bytes += f.size;
    m_receipt.files.push_back(std::move(sf));
    return {};
  }

  StageRun& m_run;
  Journal& m_journal;
  Unpacked& m_u;
  model::Receipt m_receipt;
};

// stackpin's own files beside a staging: the activation scripts and the CMake / pkg-config files.
// A failure to write them leaves the staging in place and is reported.
util::Status write_own_files(StageRun& run, const model::Receipt& receipt, bool after_staging) {
  std::string what = after_staging ? "staged, but " : "";
  if (auto s = write_activation(run.dirs, activation_for(run.m, run.kb, receipt), run.report); !s) {
    auto e = std::move(s).error();
    e.message = what + "the activation scripts could not be written: " + e.message;
    return e;
  }
  if (auto s = detail::write_build_files(run.dirs, detail::build_files_for(receipt), run.report); !s) {
    auto e = std::move(s).error();
    e.message = what + "the CMake and pkg-config files could not be written: " + e.message;
    return e;
  }
  return {};
}

}  // namespace

std::string write_access_hint(const fs::path& dest, bool windows) {
  if (!windows) return "run stackpin as root (sudo) to write " + dest.string() + ", or choose a DEST you own with --dest";
  bool program_files = util::to_lower(dest.string()).find("\\program files") != std::string::npos;
  return std::string(program_files ? "folders under Program Files are writable by administrators only: " : "") +
         "open PowerShell or cmd with \"Run as administrator\" and run stackpin again to write " + dest.string() +
         ", or stage the isolated layout into a folder you own (--dest)";
}

util::Result<model::StageReport> stage(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const StageOptions& o) {
  SP_TRY_ASSIGN(auto run, resolve(m, kb, o));
  bool own_files_only = false;
  if (auto done = already_staged(run, own_files_only)) return *done;
  if (!own_files_only) SP_TRY(run.find_archive());
  if (o.dry_run) return dry_run(run);

  // under DEST's lock, after finishing or rolling back what an interrupted run left
  SP_TRY_ASSIGN(auto state, State::open(run.dest, o.on_lock_wait));
  SP_TRY_ASSIGN(run.report.recovered, state.recover(o.force));
  SP_TRY_ASSIGN(auto previous, state.read_receipt());
  if (previous && run.same_receipt(*previous) && intact(*previous, run.dest)) {
    run.report.no_op = true;
    run.report.files = previous->files.size();
    if (!run.have_archives()) {
      run.report.archive_path = previous->archive_file;
      run.report.cuda_archives = previous->cuda_archives;
    }
    SP_TRY(write_own_files(run, *previous, false));
    return run.report;
  }
  // a refusal from here on leaves DEST as it was, and removes what this run created
  auto refused = [&](util::Error e) {
    state.discard_created();
    return e;
  };
  if (!run.have_archives())  // another run changed DEST since the check above: the archives are needed after all
    if (auto s = run.find_archive(); !s) return refused(std::move(s).error());
  auto unpacked = unpack(run);
  if (!unpacked) return refused(std::move(unpacked).error());
  std::vector<model::PlannedFile> planned;
  for (const auto& part : unpacked->parts) planned.insert(planned.end(), part.files.begin(), part.files.end());
  {
    std::vector<std::string> moved;  // what the commit moves aside or removes
    if (previous)
      for (const auto& f : previous->files)
        if (f.type != "removed") moved.push_back(f.path);
    for (const auto& f : planned) moved.push_back(f.to);
    if (o.remove_stale && o.target == model::Target::windows)
      for (auto& rel : find_stale(run.dest, planned)) moved.push_back(std::move(rel));
    if (auto s = detail::refuse_files_in_use(run.dest, moved, "stage into"); !s) return refused(std::move(s).error());
  }
  if (previous) SP_TRY(take_away(run, *previous));
  std::vector<std::string> stale = o.target == model::Target::windows ? find_stale(run.dest, planned) : std::vector<std::string>{};
  run.report.stale = stale;

  // the commit, under the journal; a failure rolls back now rather than leaving it to the next
  // command, so DEST is as before and what this run created (DEST/.stackpin, DEST) goes too
  auto rolled_back = [&](util::Error e) {
    { util::TempDir gone = std::move(unpacked->tmp); }  // its .owner lock is open: Windows keeps the folder while it is
    if (state.recover()) state.discard_created();
    return e;
  };
  auto journal = Journal::begin(run.dirs, "stage", o.fault);
  if (!journal) return rolled_back(std::move(journal).error());
  auto receipt = Commit(run, *journal, *unpacked).run(stale);
  journal->close();
  if (!receipt) return rolled_back(std::move(receipt).error());
  std::error_code ec;
  fs::rename(run.dirs.root() / "receipt.json.new", run.dirs.receipt(), ec);
  if (ec) return util::Error(util::ErrorCode::io, "cannot write " + run.dirs.receipt().string() + ": " + ec.message());
  util::sync_directory(run.dirs.root());
  fs::remove(run.dirs.journal(), ec);
  SP_TRY(write_own_files(run, *receipt, true));
  return run.report;
}

}  // namespace core
