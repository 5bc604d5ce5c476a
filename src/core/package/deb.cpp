// deb: verify + extract the archive exactly as stage does, map its files onto Debian's layout,
// derive the packages' relations from the libraries themselves, and write two packages.
//
// Layout. Files go where Debian policy puts a shared library that other packages link against:
// the multiarch directory /usr/lib/<triplet>/ and /usr/include/. That is where the loader looks
// without LD_LIBRARY_PATH or an ld.so.conf.d entry, where `ldconfig -p` lists the libraries, and
// it is also where NVIDIA's own cuDNN packages install theirs: the packages therefore Conflict
// with and Replace NVIDIA's (and Provide their names at the same version, so that packages
// depending on NVIDIA's names are satisfied). A private directory plus an ld.so.conf.d conffile
// would let the files coexist on disk, but not at run time: ld.so would still resolve a single
// libcudnn.so.<major>, chosen by configuration order, which is the confusion stackpin removes.
//
// Split. As Debian does for every library: the runtime package holds the versioned shared
// objects and their SONAME links (what a program needs to run) with shlibs and an ldconfig
// trigger; the -dev package holds the headers, the unversioned .so links used at link time, the
// static libraries and the CMake and pkg-config files, and depends on the runtime at the exact
// version. All runtime packages of one cuDNN major provide and conflict with a virtual package
// (stackpin-libcudnn<major>), so that builds for two CUDA majors can never be installed together.
//
// Relations. Depends come from the ELF dynamic sections (DT_NEEDED and the GLIBC_* version needs),
// mapped onto the packages that Debian and Ubuntu themselves provide: the C library (at the
// newest glibc version any library needs), the C++ runtime, libgcc and zlib (their GLIBCXX_/GCC_
// version needs are not mapped to minimum versions: stackpin has no sourced table for that). The
// CUDA runtime and cuBLAS, which cuDNN needs (cuDNN 9 loads some libraries with dlopen), are not in
// Debian main and come from NVIDIA's repository, a CUDA installer or a framework's wheels, which
// dpkg cannot see: they are a Recommends, named as NVIDIA's repository and Debian name them, so
// that a dpkg -i never fails on them.
//
// Reproducibility: the same archive and manifest give the same bytes: members sorted, owners
// 0/0, one timestamp (SOURCE_DATE_EPOCH, else the newest entry time in NVIDIA's archive).
#include "core/package/deb.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/archives/verify.hpp"
#include "core/inspect/cudnn_whole.hpp"
#include "core/layout/layout_plan.hpp"
#include "crypto/sha256.hpp"
#include "gen/build_config.hpp"
#include "gen/deb_control.hpp"
#include "package/deb_parts.hpp"
#include "probe/elf.hpp"
#include "util/file_lock.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

std::string debian_architecture(model::Platform p) { return p == model::Platform::linux_x86_64 ? "amd64" : "arm64"; }

std::string multiarch_triplet(model::Platform p) { return p == model::Platform::linux_x86_64 ? "x86_64-linux-gnu" : "aarch64-linux-gnu"; }

std::string deb_runtime_name(int cudnn_major, int cuda_major) {
  return "stackpin-libcudnn" + std::to_string(cudnn_major) + "-cuda-" + std::to_string(cuda_major);
}

std::string deb_dev_name(int cudnn_major, int cuda_major) {
  return "stackpin-libcudnn" + std::to_string(cudnn_major) + "-dev-cuda-" + std::to_string(cuda_major);
}

namespace {
std::string dashed(const model::Version& v) {
  std::string xy = v.prefix(2);
  std::replace(xy.begin(), xy.end(), '.', '-');
  return xy;
}
}  // namespace

std::string deb_cuda_runtime_name(const model::Version& cuda) { return "stackpin-cuda-runtime-" + dashed(cuda); }

std::string deb_cuda_dev_name(const model::Version& cuda) { return "stackpin-cuda-dev-" + dashed(cuda); }

namespace deb_parts {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "libcudnn_ops.so.9.1.0" -> true for any versioned shared object name.
bool versioned_so(const std::string& name) { return name.find(".so.") != std::string::npos; }

namespace {
bool newer_glibc(const std::string& a, const std::string& b) {  // a > b
  auto va = model::Version::parse(a), vb = model::Version::parse(b);
  if (!va) return false;
  if (!vb) return true;
  return model::compare_prefix(*va, *vb, 6) > 0;
}
}  // namespace

void add_needs(const probe::ElfInfo& elf, const std::set<std::string>& own_sonames, Needs& n) {
  static const std::set<std::string> k_libc = {
      "libc.so.6",     "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
      "libresolv.so.2"};
  static const std::map<std::string, std::string> k_debian = {
      {"libstdc++.so.6", "libstdc++6"}, {"libgcc_s.so.1", "libgcc-s1"}, {"libz.so.1", "zlib1g"}};
  for (const auto& lib : elf.needed) {
    if (own_sonames.count(lib)) continue;
    if (k_libc.count(lib)) {
      n.libc = true;
    } else if (auto it = k_debian.find(lib); it != k_debian.end()) {
      n.packages.insert(it->second);
    } else if (lib.rfind("libcu", 0) == 0 || lib.rfind("libnv", 0) == 0) {
      n.cuda.insert(lib);
    } else {
      n.unknown.insert(lib);
    }
  }
  for (const auto& [file, versions] : elf.version_needs) {
    if (!k_libc.count(file)) continue;
    for (const auto& v : versions) {
      if (v.rfind("GLIBC_2.", 0) != 0) continue;
      std::string num = v.substr(6);
      if (n.glibc.empty() || newer_glibc(num, n.glibc)) n.glibc = num;
    }
  }
}

namespace {
void add_dirs(std::set<std::string>& dirs, const std::string& path) {
  for (fs::path p = fs::path(path).parent_path(); !p.empty() && p != "."; p = p.parent_path()) dirs.insert(p.generic_string());
}
}  // namespace

std::vector<archive_io::TarMember> with_dirs(std::vector<archive_io::TarMember> files) {
  std::set<std::string> dirs;
  for (const auto& f : files) add_dirs(dirs, f.path);
  std::vector<archive_io::TarMember> out;
  archive_io::TarMember root;
  root.path = "./";
  root.type = archive_io::EntryType::dir;
  root.mode = 0755;
  out.push_back(root);
  for (const auto& d : dirs) {
    archive_io::TarMember m;
    m.path = d;
    m.type = archive_io::EntryType::dir;
    m.mode = 0755;
    out.push_back(m);
  }
  for (auto& f : files) out.push_back(std::move(f));
  std::sort(out.begin() + 1, out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  for (auto& m : out)
    if (m.path != "./") m.path = "./" + m.path;
  return out;
}

namespace {
std::uint64_t installed_kib(const std::vector<archive_io::TarMember>& members) {
  std::uint64_t kib = 0;
  std::error_code ec;
  for (const auto& m : members) {
    if (m.type != archive_io::EntryType::file) {
      kib += 1;
      continue;
    }
    std::uint64_t size = m.source.empty() ? m.data.size() : fs::file_size(m.source, ec);
    kib += std::max<std::uint64_t>(1, (size + 1023) / 1024);  // every file counts, as dpkg-gencontrol counts it
  }
  return kib;
}

bool same_file(const fs::path& a, const fs::path& b) {
  auto ha = crypto::hash_file(a), hb = crypto::hash_file(b);
  return ha && hb && ha->digest == hb->digest;
}
}  // namespace

// The copyright holder line: the first "Copyright ..." line of NVIDIA's LICENSE when it has one
// with a year, else NVIDIA with the year the archive was built.
std::string copyright_line(const std::string& license, std::int64_t mtime) {
  for (const auto& raw : util::split(license, '\n')) {
    std::string line(util::trim(raw));
    std::string lower = util::to_lower(line);
    auto at = lower.find("copyright");
    if (at == std::string::npos) continue;
    bool has_year = false;
    for (std::size_t i = at; i + 4 <= line.size() && !has_year; ++i)
      has_year = std::isdigit(static_cast<unsigned char>(line[i])) && std::isdigit(static_cast<unsigned char>(line[i + 1])) &&
                 std::isdigit(static_cast<unsigned char>(line[i + 2])) && std::isdigit(static_cast<unsigned char>(line[i + 3]));
    if (!has_year) continue;
    std::string rest(util::trim(line.substr(at + 9)));
    if (!rest.empty() && rest[0] == ':') rest = std::string(util::trim(rest.substr(1)));
    if (util::to_lower(rest).rfind("(c)", 0) == 0) rest = std::string(util::trim(rest.substr(3)));
    return rest;
  }
  std::int64_t days = mtime / 86400, year = 1970;
  auto leap = [](std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; };
  while (days >= (leap(year) ? 366 : 365)) days -= leap(year++) ? 366 : 365;
  return std::to_string(year) + " NVIDIA Corporation";
}

archive_io::TarMember text_member(std::string path, std::string data) {
  archive_io::TarMember t;
  t.path = std::move(path);
  t.data = std::move(data);
  return t;
}

std::vector<std::string> depends_of(const Needs& n, bool force_libc) {
  std::vector<std::string> out;
  if (n.libc || force_libc) out.push_back(n.glibc.empty() ? "libc6" : "libc6 (>= " + n.glibc + ")");
  out.insert(out.end(), n.packages.begin(), n.packages.end());
  return out;
}

util::Result<std::optional<probe::ElfInfo>> read_packaged_elf(const fs::path& file, model::Platform platform) {
  if (!probe::is_elf(file)) return std::optional<probe::ElfInfo>{};
  SP_TRY_ASSIGN(auto elf, probe::read_elf(file));
  const std::uint16_t want_machine = platform == model::Platform::linux_x86_64 ? 62 : 183;
  if (elf.machine != want_machine)
    return Error(ErrorCode::mismatch,
                 file.filename().string() + " is built for " + probe::machine_name(elf.machine) + ", not for " + model::to_string(platform))
        .with_hint("the archive does not match its platform pin; use the archive NVIDIA publishes for " +
                   std::string(model::to_string(platform)));
  return std::optional<probe::ElfInfo>{std::move(elf)};
}

archive_io::TarMember staged_member(const std::string& type, const std::string& link, const fs::path& source, bool executable) {
  archive_io::TarMember mem;
  mem.type = type == "symlink" ? archive_io::EntryType::symlink : archive_io::EntryType::file;
  if (mem.type == archive_io::EntryType::symlink)
    mem.link = link;
  else
    mem.source = source;
  mem.mode = executable && mem.type == archive_io::EntryType::file ? 0755 : 0644;
  return mem;
}

const std::vector<std::pair<std::string, std::string>>& binary_overrides() {
  static const std::vector<std::pair<std::string, std::string>> k = {
      {"package-name-doesnt-match-sonames",
       "one package carries all of the archive's libraries, as NVIDIA's own packages do; the name says what and for which CUDA"},
      {"unstripped-binary-or-object", "NVIDIA's binaries are packaged byte for byte as published (their SHA-256 is verified)"},
      {"custom-library-search-path", "the RUNPATH is NVIDIA's ($ORIGIN-relative, for pip wheel layouts); the binaries are not modified"},
      {"hardening-no-fortify-functions", "NVIDIA's binaries are packaged byte for byte as published"},
      {"shared-library-lacks-prerequisites", "NVIDIA's binaries are packaged byte for byte as published"},
      {"no-symbols-control-file", "the ABI is versioned by the SONAMEs; shlibs covers it"},
      {"spelling-error-in-binary", "strings inside NVIDIA's binaries"},
      {"embedded-library", "NVIDIA links its dependencies into its libraries; the binaries are not modified"},
      {"binary-has-unneeded-section", "NVIDIA's binaries are packaged byte for byte as published"}};
  return k;
}

const std::vector<std::pair<std::string, std::string>>& static_library_overrides() {
  static const std::vector<std::pair<std::string, std::string>> k = {
      {"static-library-has-unneeded-sections", "NVIDIA's static libraries are packaged byte for byte as published"},
      {"unstripped-static-library", "NVIDIA's static libraries are packaged byte for byte as published"}};
  return k;
}

model::DebPackage describe_package(const Writing& w, Pkg& p) {
  p.files = 0;
  for (const auto& mem : p.members)
    if (mem.type == archive_io::EntryType::file) ++p.files;
  p.control.installed_size_kib = installed_kib(with_dirs(p.members));
  model::DebPackage dp;
  dp.name = p.name;
  dp.version = p.version;
  dp.architecture = w.arch;
  dp.role = p.role;
  dp.path = (w.o.out_dir / (p.name + "_" + p.version + "_" + w.arch + ".deb")).string();
  dp.files = p.files;
  dp.installed_size_kib = p.control.installed_size_kib;
  dp.depends = p.control.depends;
  dp.recommends = p.control.recommends;
  dp.conflicts = p.control.conflicts;
  dp.provides = p.control.provides;
  dp.sonames = p.sonames;
  if (w.o.dry_run) {
    for (const auto& mem : p.members) dp.contents.push_back("/" + mem.path);
    std::sort(dp.contents.begin(), dp.contents.end());
  }
  return dp;
}

util::Result<model::DebPackage> write_package(const Writing& w, Pkg& p, fs::path& part) {
  const auto& o = w.o;
  std::error_code ec;
  model::DebPackage dp = describe_package(w, p);
  auto members = with_dirs(std::move(p.members));
  std::string sfx = std::string(".tar") + archive_io::suffix(o.compression);
  fs::path data_tar = w.tmp / (p.name + "-data" + sfx), control_tar = w.tmp / (p.name + "-control" + sfx);
  const std::string final_name = fs::path(dp.path).filename().string();
  archive_io::TarOptions to;
  to.compression = o.compression;
  to.mtime = p.mtime;
  to.label = final_name + " (its data.tar)";
  SP_TRY_ASSIGN(auto data, archive_io::write_tar(data_tar, members, to));
  SP_TRY_ASSIGN(auto control, gen::render_control(p.control));
  std::vector<archive_io::TarMember> ctl = {text_member("control", control), text_member("md5sums", gen::render_md5sums(data.md5))};
  // shlibs and the ldconfig trigger only for a package that holds shared libraries: an empty shlibs
  // file is an error to lintian (empty-shlibs), a trigger without libraries a warning
  if (!p.sonames.empty()) {
    ctl.push_back(text_member("shlibs", gen::render_shlibs(p.sonames, p.name + " (>= " + p.version + ")")));
    ctl.push_back(text_member("triggers", gen::render_ldconfig_trigger()));
  }
  auto control_members = with_dirs(std::move(ctl));
  to.label = final_name + " (its control.tar)";
  SP_TRY(archive_io::write_tar(control_tar, control_members, to));
  part = w.tmp / final_name;
  SP_TRY(archive_io::write_deb(part, control_tar, data_tar, o.compression, p.mtime));
  SP_TRY(util::sync_file(part));
  SP_TRY_ASSIGN(auto h, crypto::hash_file(part));
  dp.sha256 = crypto::to_hex(h.digest);
  dp.size = h.size;
  fs::remove(data_tar, ec);
  fs::remove(control_tar, ec);
  return dp;
}

util::Status replace_together(const Writing& w, std::vector<model::DebPackage>& written, const std::vector<fs::path>& parts) {
  std::error_code ec;
  std::vector<std::pair<fs::path, fs::path>> moved_aside;  // (final, backup)
  std::vector<fs::path> placed;
  auto roll_back = [&] {
    std::error_code rb;
    for (const auto& f : placed) fs::remove(f, rb);
    for (const auto& [final_path, backup] : moved_aside) fs::rename(backup, final_path, rb);
  };
  for (std::size_t i = 0; i < written.size(); ++i) {
    fs::path final_path = written[i].path;
    written[i].unchanged = fs::exists(final_path, ec) && same_file(parts[i], final_path);
    if (written[i].unchanged) continue;
    if (fs::exists(final_path, ec)) {
      fs::path backup = w.tmp / ("old-" + final_path.filename().string());
      fs::rename(final_path, backup, ec);
      if (ec) {
        roll_back();
        return Error(ErrorCode::io, "cannot replace " + final_path.string() + ": " + ec.message());
      }
      moved_aside.emplace_back(final_path, backup);
    }
    fs::rename(parts[i], final_path, ec);
    if (ec) {
      roll_back();
      return Error(ErrorCode::io, "cannot write " + final_path.string() + ": " + ec.message()).with_hint("the older packages were kept");
    }
    placed.push_back(final_path);
  }
  util::sync_directory(w.o.out_dir);
  return {};
}

// the run's steps, private to this file
namespace {

constexpr const char* k_homepage = "https://developer.nvidia.com/cudnn";

// One run of `stackpin deb`, as the steps build_debs() names: the inputs (resolve), the verified
// and unpacked archive (unpack), the two packages as values (split, relations, controls, build
// files, documents), then the files (write_package, replace_together).
struct DebRun {
  const model::Manifest& m;
  const knowledge::KnowledgeBase& kb;
  const DebOptions& o;
  model::Platform platform;
  std::string maintainer;
  PinnedArchive pinned;
  fs::path located;
  bool by_content = false;
  model::DebReport report;
  // the packages and their version
  int major = 0, cuda_major = 0;
  std::string cudnn, version, triplet, arch;
  Pkg rt, dev;
  // the unpacked archive, in the run's temporary folder
  fs::path tmp;
  detail::LayoutPlan plan;
  fs::path top;
  std::vector<archive_io::Entry> entries;
  std::string license_text;
  std::vector<fs::path> runtime_objects;
  std::size_t elf_count = 0;
  Needs needs;
};

Error no_package(Error e, const std::string& first_words) {
  if (e.message.rfind(first_words, 0) == 0 && !e.hints.empty())
    e.hints.back() = "the file is not the pinned archive (corrupt, tampered with, or another build); no package was written";
  return e;
}

bool has_toolkit(const model::Manifest& m) { return m.cuda && !m.cuda->components.empty(); }

// What every package of a run shares: the manifest pins something to package, the platform and
// the maintainer.
util::Status check_inputs(const model::Manifest& m, const DebOptions& o, model::Platform& platform, std::string& maintainer) {
  if (!m.cudnn && !has_toolkit(m))
    return Error(ErrorCode::invalid, m.path + " pins neither [cudnn] nor [cuda] components: nothing to package")
        .with_hint("add [cudnn] version and cuda, or [cuda] components = [\"runtime\"]");
  if (m.cudnn && !m.cudnn->cuda)
    return Error(ErrorCode::invalid, "the package names need the CUDA major cuDNN was built for, and " + m.path + " does not pin it")
        .at(m.locate(m.cudnn->pos))
        .with_hint("add cuda = <major> to [cudnn] (the archive's _cudaNN suffix)");
  platform = o.platform ? *o.platform : model::host_linux_platform();
  if (model::is_windows(platform))
    return Error(ErrorCode::usage, "a .deb packages a Linux archive (--platform linux-x86_64 or linux-sbsa), not windows-x86_64");
  if (platform == model::Platform::linux_aarch64)
    return Error(ErrorCode::unsupported,
                 "linux-aarch64 archives are for Jetson (L4T), whose cuDNN comes with JetPack: build packages from linux-sbsa archives for "
                 "arm64 servers");
  maintainer = o.maintainer.empty() ? k_default_maintainer : o.maintainer;
  if (maintainer.find('<') == std::string::npos || maintainer.back() != '>' || maintainer.find_first_of("\n\r") != std::string::npos)
    return Error(ErrorCode::usage, "--maintainer must look like 'Full Name <email@example.org>', got '" + maintainer + "'");
  return {};
}

// cuDNN's pinned archive found.
util::Result<DebRun> resolve(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const DebOptions& o, model::Platform platform,
                             const std::string& maintainer) {
  SP_TRY_ASSIGN(auto pinned, pinned_archive(m, platform, kb));
  DebRun run{m, kb, o, platform, maintainer, std::move(pinned), {}, false, {}};
  SP_TRY_ASSIGN(run.located, find_pinned_archive(run.pinned, o.archives_dir, run.by_content, o.cache_dir));
  run.major = static_cast<int>(m.cudnn->version.value.major());
  run.cuda_major = m.cudnn->cuda->value;
  run.cudnn = m.cudnn->version.value.text();
  run.version = run.cudnn + "-1+cuda" + std::to_string(run.cuda_major);
  run.triplet = multiarch_triplet(platform);
  run.arch = debian_architecture(platform);
  run.rt.name = deb_runtime_name(run.major, run.cuda_major);
  run.rt.role = "runtime";
  run.dev.name = deb_dev_name(run.major, run.cuda_major);
  run.dev.role = "dev";
  run.rt.version = run.dev.version = run.version;
  auto& report = run.report;
  report.archive_path = run.located.string();
  report.platform = model::to_string(platform);
  report.libdir = "/usr/lib/" + run.triplet;
  report.includedir = "/usr/include";
  return run;
}

// The archive proven to be the pinned one, unpacked into OUT/.stackpin-deb-*/tree and mapped onto
// the Linux layout, as stage does.
util::Status unpack(DebRun& run) {
  auto pinned_file = open_pinned(run.located, run.pinned.expect);
  if (!pinned_file) return no_package(std::move(pinned_file).error(), "SHA-256");
  const auto& o = run.o;
  std::error_code ec;
  archive_io::ExtractOptions xo;
  xo.max_total_bytes = o.max_unpacked ? *o.max_unpacked : std::max<std::uint64_t>(16 * *run.pinned.expect.size, 256ull << 20);
  xo.progress = o.progress;
  fs::path tree = run.tmp / "tree";
  fs::create_directories(tree, ec);
  SP_TRY_ASSIGN(auto x, archive_io::extract(*pinned_file, tree, xo));
  run.report.archive_sha256 = crypto::to_hex(x.archive_sha256);
  auto plan = detail::plan_layout(x.entries, run.m, model::Platform::linux_x86_64, run.kb);
  if (!plan) {
    auto e = std::move(plan).error();
    if (e.code == ErrorCode::unsafe) e.hints = {"the archive is not NVIDIA's original or was tampered with; no package was written"};
    return e;
  }
  run.plan = std::move(plan).value();
  run.top = tree / run.plan.top;
  run.entries = std::move(x.entries);
  SP_TRY(detail::check_header_version(run.top / "include" / "cudnn_version.h", run.m.cudnn->version.value));
  SP_TRY_ASSIGN(run.report.cudnn_whole,
                require_cudnn_whole(tree, run.entries, run.located.filename().string(), run.m.cudnn->version.value, run.kb));
  auto& report = run.report;
  if (o.source_date_epoch) {
    report.mtime = *o.source_date_epoch;
    report.mtime_source = "SOURCE_DATE_EPOCH";
  } else {
    for (const auto& e : run.entries) report.mtime = std::max(report.mtime, e.mtime);
    report.mtime_source = "archive";
  }
  run.rt.mtime = run.dev.mtime = report.mtime;
  return {};
}

// The planned files (include/..., lib64/...) onto Debian's directories: versioned shared objects
// and their SONAME links into the runtime package, the rest into -dev; links judged where they
// will live, in both packages' file tree (the -dev package's libcudnn.so points into the runtime).
util::Status split(DebRun& run) {
  const auto& plan = run.plan;
  for (const auto& f : plan.files) {
    fs::path src = run.top / f.from;
    if (f.to == "LICENSE") {
      SP_TRY_ASSIGN(run.license_text, util::read_file(src));
      continue;
    }
    std::string name = fs::path(f.to).filename().string();
    archive_io::TarMember mem = staged_member(f.type, f.link, src);
    mem.shown = "\"" + util::printable(plan.top + "/" + f.from) + "\" of " + run.located.filename().string();
    if (f.to.rfind("include/", 0) == 0) {
      mem.path = "usr/include/" + f.to.substr(8);
      run.dev.members.push_back(std::move(mem));
    } else if (f.to.rfind("lib64/", 0) == 0) {
      mem.path = "usr/lib/" + run.triplet + "/" + f.to.substr(6);
      bool runtime = versioned_so(name) && !ends_with(name, ".a");
      if (runtime && mem.type == archive_io::EntryType::file) run.runtime_objects.push_back(src);
      (runtime ? run.rt : run.dev).members.push_back(std::move(mem));
    } else {
      run.report.notes.push_back("not packaged: " + f.to + " (outside include/ and the library directory)");
    }
  }
  std::vector<detail::TreeNode> nodes;
  std::map<std::string, std::string> origin;
  for (const auto& f : plan.files) {
    if (f.to.rfind("include/", 0) == 0) origin["usr/include/" + f.to.substr(8)] = plan.top + "/" + f.from;
    if (f.to.rfind("lib64/", 0) == 0) origin["usr/lib/" + run.triplet + "/" + f.to.substr(6)] = plan.top + "/" + f.from;
  }
  for (const auto* pkg : {&run.rt, &run.dev})
    for (const auto& mem : pkg->members)
      nodes.push_back(detail::TreeNode{mem.path, mem.type == archive_io::EntryType::symlink, mem.link, origin[mem.path]});
  if (auto s = detail::check_links_in_tree(nodes, "the package"); !s) {
    auto e = std::move(s).error();
    e.hints = {
        "NVIDIA's archives link libraries to their versioned files only; the archive is not NVIDIA's original; no package was written"};
    return e;
  }
  if (run.runtime_objects.empty())
    return Error(ErrorCode::invalid, "the archive " + run.report.archive_path + " holds no versioned shared library to package");
  return {};
}

// What the libraries need, from their own dynamic sections.
util::Status relations(DebRun& run) {
  std::set<std::string> own;
  std::vector<probe::ElfInfo> elves;
  for (const auto& src : run.runtime_objects) {
    SP_TRY_ASSIGN(auto elf, read_packaged_elf(src, run.platform));
    if (!elf) {
      run.report.notes.push_back(src.filename().string() + " is not an ELF shared object: packaged as is, without shlibs or dependencies");
      continue;
    }
    if (!elf->soname.empty()) own.insert(elf->soname);
    elves.push_back(std::move(*elf));
  }
  for (const auto& elf : elves) add_needs(elf, own, run.needs);
  run.elf_count = elves.size();
  run.rt.sonames.assign(own.begin(), own.end());
  for (const auto& u : run.needs.unknown)
    run.report.notes.push_back("the libraries need " + u + ", which no Debian package is known to provide: not declared in Depends");
  return {};
}

// NVIDIA's package names of this cuDNN major (every CUDA build), which these conflict with.
std::vector<std::string> nvidia_names(const DebRun& run, bool dev_pkg) {
  std::vector<std::string> names;
  if (run.major == 8)
    names.push_back(dev_pkg ? "libcudnn8-dev" : "libcudnn8");
  else
    for (int c : {11, 12, 13})
      names.push_back("libcudnn" + std::to_string(run.major) + (dev_pkg ? "-dev" : "") + "-cuda-" + std::to_string(c));
  return names;
}

// NVIDIA's name for this very build, and its version, which these provide.
std::string nvidia_own(const DebRun& run, bool dev_pkg) {
  if (run.major == 8) {
    std::string nv = dev_pkg ? "libcudnn8-dev" : "libcudnn8";
    if (run.m.cuda) return nv + " (= " + run.cudnn + "-1+cuda" + run.m.cuda->version.value.prefix(2) + ")";
    return nv;
  }
  return "libcudnn" + std::to_string(run.major) + (dev_pkg ? "-dev" : "") + "-cuda-" + std::to_string(run.cuda_major) + " (= " + run.cudnn +
         "-1)";
}

// Both packages' control fields.
void controls(DebRun& run) {
  const auto& m = run.m;
  const std::string m_str = std::to_string(run.major), c_str = std::to_string(run.cuda_major);
  const std::string archive_name = fs::path(run.report.archive_path).filename().string();
  std::string cuda_xy = m.cuda ? m.cuda->version.value.prefix(2) : "";
  std::string rec_cudart = "libcudart" + c_str, rec_cublas = "libcublaslt" + c_str;
  if (!cuda_xy.empty()) {
    std::string dash = cuda_xy;
    std::replace(dash.begin(), dash.end(), '.', '-');
    rec_cudart = "cuda-cudart-" + dash + " | " + rec_cudart;
    // the toolkit's own runtime package, when this run builds it too
    if (has_toolkit(m)) rec_cudart = deb_cuda_runtime_name(m.cuda->version.value) + " | " + rec_cudart;
    rec_cublas = "libcublas-" + dash + " | " + rec_cublas;
  }
  std::string virt = "stackpin-libcudnn" + m_str;

  auto& rc = run.rt.control;
  rc.package = run.rt.name;
  rc.version = run.version;
  rc.architecture = run.arch;
  rc.maintainer = run.maintainer;
  rc.section = "non-free/libs";
  // Not Multi-Arch: same: the changelog date and copyright year come from each architecture's
  // archive, so the amd64 and arm64 packages would carry different files at the same paths.
  rc.homepage = k_homepage;
  rc.depends = depends_of(run.needs, run.elf_count > 0);
  rc.recommends = {rec_cudart, rec_cublas};
  rc.conflicts = nvidia_names(run, false);
  rc.conflicts.push_back(virt);
  rc.replaces = rc.conflicts;
  rc.provides = {nvidia_own(run, false), virt};
  rc.synopsis = "NVIDIA cuDNN " + run.cudnn + " runtime libraries for CUDA " + c_str;
  rc.description = {"The shared libraries of NVIDIA's cuDNN " + run.cudnn + " (built for CUDA " + c_str + "), installed into " +
                        run.report.libdir + ", where the dynamic loader finds them without LD_LIBRARY_PATH.",
                    "",
                    "Packaged by stackpin from " + archive_name + " (SHA-256 " + run.report.archive_sha256 +
                        "), pinned by the manifest \"" + m.name.value + "\".",
                    "",
                    "The CUDA runtime and cuBLAS that cuDNN loads come from NVIDIA's repository, a CUDA installer or a framework's "
                    "wheels, so they are recommended, not required."};
  if (m.description) {
    rc.description.push_back("");
    for (const auto& line : util::split(m.description->value, '\n')) rc.description.push_back("Stack: " + line);
  }

  auto& dc = run.dev.control;
  dc.package = run.dev.name;
  dc.version = run.version;
  dc.architecture = run.arch;
  dc.maintainer = run.maintainer;
  dc.section = "non-free/libdevel";
  dc.homepage = k_homepage;
  dc.depends = {run.rt.name + " (= " + run.version + ")"};
  dc.conflicts = nvidia_names(run, true);
  dc.conflicts.push_back(virt + "-dev");
  dc.replaces = dc.conflicts;
  dc.provides = {nvidia_own(run, true), virt + "-dev"};
  dc.synopsis = "NVIDIA cuDNN " + run.cudnn + " development files for CUDA " + c_str;
  dc.description = {"Headers, the link-time .so names and the static libraries of NVIDIA's cuDNN " + run.cudnn +
                        ", for building programs against " + run.rt.name + ".",
                    "", "Packaged by stackpin from " + archive_name + ", pinned by the manifest \"" + m.name.value + "\"."};
}

// The build-system files of the -dev package: find_package(CUDNN CONFIG) and pkg-config find them
// under /usr without any hint (CMake searches /usr/lib/<triplet>/cmake/<Name>/).
util::Status build_files(DebRun& run) {
  gen::BuildConfig bc;
  bc.name = run.m.name.value;
  bc.version = run.cudnn;
  bc.cudnn_major = run.major;
  bc.cuda_major = run.cuda_major;
  bc.platform = run.platform;
  bc.prefix = "/usr";
  bc.lib_dir = "lib/" + run.triplet;
  bc.include_dir = "include";
  bc.cmake_dir = bc.lib_dir + "/cmake/CUDNN";
  bc.pkgconfig_dir = bc.lib_dir + "/pkgconfig";
  const std::string soname_suffix = ".so." + std::to_string(run.major);
  for (const auto& mem : run.rt.members) {
    std::string file = fs::path(mem.path).filename().string();
    if (file.rfind("lib", 0) == 0 && ends_with(file, soname_suffix))
      bc.libraries.push_back(file.substr(3, file.size() - 3 - soname_suffix.size()));
  }
  for (const auto& mem : run.dev.members) {
    std::string file = fs::path(mem.path).filename().string();
    if (file.rfind("lib", 0) == 0 && ends_with(file, "_static.a")) bc.static_libraries.push_back(file.substr(3, file.size() - 3 - 9));
  }
  std::sort(bc.libraries.begin(), bc.libraries.end(), [](const std::string& a, const std::string& b) {
    return (a != "cudnn") < (b != "cudnn") || ((a != "cudnn") == (b != "cudnn") && a < b);  // "cudnn" first
  });
  std::sort(bc.static_libraries.begin(), bc.static_libraries.end());
  SP_TRY_ASSIGN(auto pc, gen::render_pkg_config(bc));
  run.dev.members.push_back(text_member("usr/" + bc.cmake_dir + "/CUDNNConfig.cmake", gen::render_cmake_config(bc)));
  run.dev.members.push_back(text_member("usr/" + bc.cmake_dir + "/CUDNNConfigVersion.cmake", gen::render_cmake_config_version(bc)));
  run.dev.members.push_back(text_member("usr/" + bc.pkgconfig_dir + "/cudnn.pc", pc));
  return {};
}

// The documents every package carries (copyright, changelog) and the lintian overrides, each with
// its reason.
util::Status documents(DebRun& run) {
  std::string copyright = gen::render_copyright(
      "cuDNN", k_homepage, copyright_line(run.license_text, run.report.mtime), "LicenseRef-NVIDIA-cuDNN",
      run.license_text.empty() ? "NVIDIA's cuDNN license; the archive this package was built from carried no LICENSE file."
                               : run.license_text);
  for (Pkg* p : {&run.rt, &run.dev}) {
    std::string doc = "usr/share/doc/" + p->name + "/";
    SP_TRY_ASSIGN(auto changelog,
                  archive_io::gzip_bytes(gen::render_changelog(p->name, run.version,
                                                               "cuDNN " + run.cudnn + " for CUDA " + std::to_string(run.cuda_major) +
                                                                   ", packaged by stackpin from NVIDIA's archive.",
                                                               run.maintainer, run.report.mtime)));
    p->members.push_back(text_member(doc + "copyright", copyright));
    p->members.push_back(text_member(doc + "changelog.Debian.gz", changelog));
    p->members.push_back(
        text_member("usr/share/lintian/overrides/" + p->name,
                    gen::render_lintian_overrides(p->name, p == &run.rt ? binary_overrides() : static_library_overrides())));
  }
  return {};
}

}  // namespace
}  // namespace deb_parts

util::Result<model::DebReport> build_debs(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const DebOptions& o) {
  using namespace deb_parts;
  model::Platform platform{};
  std::string maintainer;
  SP_TRY(check_inputs(m, o, platform, maintainer));
  std::optional<DebRun> cudnn;
  if (m.cudnn) {
    SP_TRY_ASSIGN(auto run, resolve(m, kb, o, platform, maintainer));
    cudnn.emplace(std::move(run));
  }
  // the run's own folder: in out_dir, where the packages are renamed into place; a dry run leaves
  // out_dir as it is and works in the system's temporary folder
  std::error_code ec;
  fs::path work = o.dry_run ? fs::temp_directory_path(ec) : o.out_dir;
  if (!o.dry_run) fs::create_directories(o.out_dir, ec);
  if (ec) return Error(ErrorCode::io, "cannot create " + work.string() + ": " + ec.message());
  // what a killed run left (its owner gone), then ours, owned while this run lives
  util::TempDir::remove_abandoned(work, ".stackpin-deb-");
  SP_TRY_ASSIGN(auto tmp, util::TempDir::create_owned(work, ".stackpin-deb-"));
  model::DebReport report;
  std::vector<Pkg> pkgs;
  if (cudnn) {
    auto& run = *cudnn;
    run.tmp = tmp.path();
    SP_TRY(unpack(run));
    SP_TRY(split(run));
    SP_TRY(relations(run));
    controls(run);
    SP_TRY(build_files(run));
    SP_TRY(documents(run));
    report = std::move(run.report);
    if (run.by_content) report.notes.push_back("the archive was found by its content under another name: " + report.archive_path);
  } else {
    report.platform = model::to_string(platform);
  }
  // the toolkit's packages first: cuDNN's recommend its runtime
  if (has_toolkit(m)) {
    SP_TRY_ASSIGN(auto toolkit, cuda_packages(m, kb, o, platform, maintainer, tmp.path() / "toolkit", report));
    for (auto& p : toolkit) pkgs.push_back(std::move(p));
  }
  if (cudnn) {
    pkgs.push_back(std::move(cudnn->rt));
    pkgs.push_back(std::move(cudnn->dev));
  }
  const Writing w{o, tmp.path(), debian_architecture(platform)};
  if (o.dry_run) {
    report.dry_run = true;
    for (auto& p : pkgs) report.packages.push_back(describe_package(w, p));
    return report;
  }
  // every package is complete before any replaces an older one
  std::vector<model::DebPackage> written;
  std::vector<fs::path> parts;
  for (auto& p : pkgs) {
    fs::path part;
    SP_TRY_ASSIGN(auto dp, write_package(w, p, part));
    written.push_back(std::move(dp));
    parts.push_back(part);
  }
  SP_TRY(replace_together(w, written, parts));
  report.packages = std::move(written);
  return report;
}

}  // namespace core
