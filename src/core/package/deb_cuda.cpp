// deb (CUDA toolkit): the manifest's [cuda] components as two Debian packages, built from the tree
// `stackpin stage` lays out from their verified archives (so the archives are checked, and the
// files laid out, exactly as stage does it).
//
// Layout. The runtime package puts the shared libraries into the multiarch directory
// /usr/lib/<triplet>/, as the cuDNN package does and for the same reason: the loader finds them
// there without LD_LIBRARY_PATH or an ld.so.conf.d entry, and the loader's default path holds one
// libcudart.so.<major>, not two chosen by configuration order. The -dev package is a complete CUDA_HOME at
// /usr/lib/cuda-X.Y (bin/nvcc, include/, nvvm/, lib64/ with the static and stub libraries and
// the link-time .so names), because nvcc, CMake's FindCUDAToolkit and PyTorch's extension builder
// find the toolkit from one root; its lib64/ links each runtime file to where the runtime
// package installs it. Toolkits of different CUDA majors can be installed side by side; two of
// one major cannot: their runtime packages conflict (a virtual package,
// stackpin-cuda-runtime-<major>), as both ship the same SONAMEs, and each -dev package needs its
// own runtime. NVIDIA's repository packages install under /usr/local/cuda-X.Y and share no file
// with these, so dpkg lets both be installed; the loader then takes whichever copy its
// configuration lists first.
//
// Relations. The runtime package Conflicts with, Replaces and Provides (at the component's version)
// the library packages Debian names after the same SONAMEs (policy 8.1: libcublasLt.so.12 is
// libcublaslt12), which install the same files. Depends come from the ELF dynamic sections, as for cuDNN, of the libraries (runtime)
// and of the tools (-dev, which also depends on the runtime at the exact version).
//
// Timestamps: SOURCE_DATE_EPOCH, else the release date in NVIDIA's redistrib manifest of the
// release, so that the same archives give the same bytes.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include "core/layout/layout_plan.hpp"
#include "core/provision/stage.hpp"
#include "knowledge/cuda_catalog.hpp"
#include "package/deb_parts.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core::deb_parts {
namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

namespace {

constexpr const char* k_cuda_homepage = "https://developer.nvidia.com/cuda-toolkit";

// Debian policy 8.1: the package of a shared library is named after its SONAME, lowercased:
// libfoo.so.3 -> libfoo3, and a name ending in a digit takes a hyphen (libfoo2.so.1 -> libfoo2-1).
// "" for a SONAME without a version or with characters a package name cannot hold.
std::string policy_name(const std::string& soname) {
  auto at = soname.find(".so.");
  if (at == std::string::npos || at + 4 >= soname.size()) return "";
  std::string name = util::to_lower(soname.substr(0, at)), version = soname.substr(at + 4);
  if (std::isdigit(static_cast<unsigned char>(name.back()))) name += "-";
  std::string out = name + version;
  bool ok = std::all_of(out.begin(), out.end(), [](char ch) {
    auto c = static_cast<unsigned char>(ch);
    return std::islower(c) || std::isdigit(c) || ch == '+' || ch == '-' || ch == '.';
  });
  return ok && out.size() >= 2 ? out : "";
}

// "2024-04-12" -> its midnight, UTC, in seconds since the epoch; nullopt for another form.
std::optional<std::int64_t> date_epoch(const std::string& date) {
  int y = 0, mo = 0, d = 0;
  if (date.size() != 10 || std::sscanf(date.c_str(), "%4d-%2d-%2d", &y, &mo, &d) != 3 || mo < 1 || mo > 12 || d < 1 || d > 31)
    return std::nullopt;
  // days from civil (proleptic Gregorian), without the C library's time zone
  y -= mo <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<std::int64_t>(era * 146097 + doe - 719468) * 86400;
}

// A run-time file: a shared object directly in lib64/ (not a stub), versioned or an unversioned
// file (CUPTI's libnvperf_host.so has no versioned name); the unversioned links are link-time names.
bool runtime_file(const model::StagedFile& f) {
  if (f.path.rfind("lib64/", 0) != 0 || f.path.find('/', 6) != std::string::npos) return false;
  const std::string base = f.path.substr(6);
  if (base.rfind("lib", 0) != 0) return false;
  if (versioned_so(base)) return true;
  return ends_with(base, ".so") && f.type == "file";
}

struct Toolkit {
  std::string version, xy, major;  // "12.4.1", "12.4", "12"
  std::string triplet, home;       // "x86_64-linux-gnu", "usr/lib/cuda-12.4"
  Pkg rt, dev;
  std::map<std::string, std::vector<std::string>> licenses;       // LICENSE text -> the components carrying it
  std::vector<std::pair<fs::path, std::string>> runtime_objects;  // (file, its component)
  std::vector<fs::path> tools;
  std::map<std::string, std::string> soname_component, component_version;
};

// The staged tree's files onto the two packages.
util::Status split(Toolkit& t, const model::Receipt& r, const fs::path& dest) {
  std::vector<detail::TreeNode> nodes;
  for (const auto& f : r.files) {
    if (f.type == "dir") continue;
    const fs::path src = dest / fs::path(f.path);
    if (f.path.rfind("share/doc/", 0) == 0 && ends_with(f.path, "/LICENSE") && f.type == "file") {
      SP_TRY_ASSIGN(auto text, util::read_file(src));
      t.licenses[text].push_back(f.archive.empty() ? f.path : f.archive);
      continue;
    }
    // tools keep their execute bit; libraries and everything else are 0644, as Debian policy wants
    const bool tool = (f.mode & 0111) != 0 && ("/" + f.path).find("/bin/") != std::string::npos;
    archive_io::TarMember mem = staged_member(f.type, f.link, src, tool);
    mem.shown = "\"" + util::printable(f.from.empty() ? f.path : f.from) + "\" of " + (f.archive.empty() ? "stackpin" : f.archive);
    if (runtime_file(f)) {
      const std::string base = f.path.substr(6);
      mem.path = "usr/lib/" + t.triplet + "/" + base;
      if (mem.type == archive_io::EntryType::file) t.runtime_objects.emplace_back(src, f.archive);
      // the CUDA_HOME's lib64/ holds it too, as a link to where the runtime package puts it
      archive_io::TarMember link;
      link.type = archive_io::EntryType::symlink;
      link.path = t.home + "/lib64/" + base;
      link.link = "../../" + t.triplet + "/" + base;
      link.shown = mem.shown;
      nodes.push_back({link.path, true, link.link, link.shown});
      t.dev.members.push_back(std::move(link));
      nodes.push_back({mem.path, mem.type == archive_io::EntryType::symlink, mem.link, mem.shown});
      t.rt.members.push_back(std::move(mem));
      continue;
    }
    mem.path = t.home + "/" + f.path;
    if (mem.type == archive_io::EntryType::file && (mem.mode & 0111)) t.tools.push_back(src);
    nodes.push_back({mem.path, mem.type == archive_io::EntryType::symlink, mem.link, mem.shown});
    t.dev.members.push_back(std::move(mem));
  }
  if (auto s = detail::check_links_in_tree(nodes, "the package"); !s) {
    auto e = std::move(s).error();
    e.hints = {"NVIDIA's archives link files inside their own tree only; an archive is not NVIDIA's original; no package was written"};
    return e;
  }
  if (t.runtime_objects.empty())
    return Error(ErrorCode::invalid, "the [cuda] components of CUDA " + t.version + " hold no shared library to package")
        .with_hint("list components with libraries (components = [\"runtime\"]), or package them with stackpin stage instead");
  return {};
}

// What the libraries (runtime) and the tools (-dev) need, from their dynamic sections; the
// runtime's SONAMEs.
util::Status relations(Toolkit& t, model::Platform platform, Needs& rt_needs, Needs& dev_needs, model::DebReport& report) {
  std::set<std::string> own;
  std::vector<probe::ElfInfo> libs, tools;
  for (const auto& [src, component] : t.runtime_objects) {
    SP_TRY_ASSIGN(auto elf, read_packaged_elf(src, platform));
    if (!elf) continue;
    if (!elf->soname.empty()) {
      own.insert(elf->soname);
      t.soname_component[elf->soname] = component;
    }
    libs.push_back(std::move(*elf));
  }
  for (const auto& src : t.tools) {
    SP_TRY_ASSIGN(auto elf, read_packaged_elf(src, platform));
    if (elf) tools.push_back(std::move(*elf));
  }
  for (const auto& elf : libs) add_needs(elf, own, rt_needs);
  for (const auto& elf : tools) add_needs(elf, own, dev_needs);
  t.rt.sonames.assign(own.begin(), own.end());
  std::set<std::string> unknown(rt_needs.unknown.begin(), rt_needs.unknown.end());
  unknown.insert(dev_needs.unknown.begin(), dev_needs.unknown.end());
  for (const auto& u : unknown)
    report.notes.push_back("the CUDA components need " + u + ", which no Debian package is known to provide: not declared in Depends");
  std::set<std::string> cuda(rt_needs.cuda.begin(), rt_needs.cuda.end());
  cuda.insert(dev_needs.cuda.begin(), dev_needs.cuda.end());
  for (const auto& c : cuda) {
    if (c == "libcuda.so.1" || c.rfind("libnvidia-", 0) == 0)
      report.notes.push_back("the CUDA components load " + c + " from the NVIDIA driver, which is not packaged here");
    else
      report.notes.push_back("the CUDA components need " + c + ", which none of them provides: add its component to [cuda] components");
  }
  return {};
}

void controls(Toolkit& t, const model::Manifest& m, const std::string& maintainer, const std::string& arch, const Needs& rt_needs,
              const Needs& dev_needs, const std::vector<std::string>& components) {
  const std::string virt = "stackpin-cuda-runtime-" + t.major;
  auto& rc = t.rt.control;
  rc.package = t.rt.name;
  rc.version = t.rt.version;
  rc.architecture = arch;
  rc.maintainer = maintainer;
  rc.section = "non-free/libs";
  rc.homepage = k_cuda_homepage;
  rc.depends = depends_of(rt_needs);
  std::map<std::string, std::string> debian;  // Debian's package name -> the version of the component that ships it
  for (const auto& so : t.rt.sonames)
    if (auto name = policy_name(so); !name.empty()) {
      auto c = t.soname_component.find(so);
      auto v = c == t.soname_component.end() ? t.component_version.end() : t.component_version.find(c->second);
      debian[name] = v == t.component_version.end() ? "" : v->second;
    }
  for (const auto& [name, version] : debian) {
    rc.conflicts.push_back(name);
    // versioned, so that a Depends on Debian's package with a minimum version can be satisfied
    rc.provides.push_back(version.empty() ? name : name + " (= " + version + ")");
  }
  rc.conflicts.push_back(virt);
  rc.replaces = rc.conflicts;
  rc.provides.push_back(virt);
  rc.synopsis = "NVIDIA CUDA " + t.version + " runtime libraries";
  rc.description = {
      "The shared libraries of NVIDIA's CUDA " + t.version + " components " + util::join(components, ", ") + ", installed into /usr/lib/" +
          t.triplet + ", where the dynamic loader finds them without LD_LIBRARY_PATH.",
      "",
      "Packaged by stackpin from NVIDIA's redistributable archives, each verified by SHA-256 and size, pinned by the manifest \"" +
          m.name.value + "\"."};
  if (m.description) {
    rc.description.push_back("");
    for (const auto& line : util::split(m.description->value, '\n')) rc.description.push_back("Stack: " + line);
  }
  auto& dc = t.dev.control;
  dc.package = t.dev.name;
  dc.version = t.dev.version;
  dc.architecture = arch;
  dc.maintainer = maintainer;
  dc.section = "non-free/devel";
  dc.homepage = k_cuda_homepage;
  dc.depends = {t.rt.name + " (= " + t.rt.version + ")"};
  for (const auto& d : depends_of(dev_needs))
    if (std::find(dc.depends.begin(), dc.depends.end(), d) == dc.depends.end()) dc.depends.push_back(d);
  dc.synopsis = "NVIDIA CUDA " + t.version + " toolkit (CUDA_HOME=/" + t.home + ")";
  dc.description = {"A complete CUDA_HOME at /" + t.home + " for building CUDA code and extensions: the tools, headers, static and stub " +
                        "libraries of the components " + util::join(components, ", ") + ", and the link-time names of " + t.rt.name + ".",
                    "", "Packaged by stackpin from NVIDIA's redistributable archives, pinned by the manifest \"" + m.name.value + "\"."};
}

util::Status documents(Toolkit& t, const std::string& maintainer) {
  std::string text;
  for (const auto& [license, comps] : t.licenses) {
    if (!text.empty()) text += "\n";
    if (t.licenses.size() > 1) text += "The licence of " + util::join(comps, ", ") + ":\n\n";
    text += license;
  }
  if (text.empty()) text = "NVIDIA's CUDA license; the archives this package was built from carried no LICENSE file.";
  const std::string copyright = gen::render_copyright("CUDA Toolkit", k_cuda_homepage,
                                                      copyright_line(t.licenses.empty() ? "" : t.licenses.begin()->first, t.rt.mtime),
                                                      "LicenseRef-NVIDIA-CUDA", text);
  // a -1 revision is an initial upload to lintian, which expects it to close an ITP bug
  const std::pair<std::string, std::string> local{"initial-upload-closes-no-bugs",
                                                  "built locally from NVIDIA's archives, never uploaded to Debian: there is no ITP bug"};
  auto rt_overrides = binary_overrides(), dev_overrides = binary_overrides();
  rt_overrides.push_back(local);
  const auto& statics = static_library_overrides();
  dev_overrides.insert(dev_overrides.end(), statics.begin(), statics.end());
  dev_overrides.push_back(local);
  dev_overrides.emplace_back("hardening-no-pie", "NVIDIA's tools (nvcc, ptxas, cicc, ...) are packaged byte for byte as published");
  for (Pkg* p : {&t.rt, &t.dev}) {
    const std::string doc = "usr/share/doc/" + p->name + "/";
    SP_TRY_ASSIGN(auto changelog,
                  archive_io::gzip_bytes(gen::render_changelog(
                      p->name, p->version, "CUDA " + t.version + ", packaged by stackpin from NVIDIA's archives.", maintainer, p->mtime)));
    p->members.push_back(text_member(doc + "copyright", copyright));
    p->members.push_back(text_member(doc + "changelog.Debian.gz", changelog));
    p->members.push_back(text_member("usr/share/lintian/overrides/" + p->name,
                                     gen::render_lintian_overrides(p->name, p == &t.rt ? rt_overrides : dev_overrides)));
  }
  return {};
}

}  // namespace

util::Result<std::vector<Pkg>> cuda_packages(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const DebOptions& o,
                                             model::Platform platform, const std::string& maintainer, const fs::path& work,
                                             model::DebReport& report) {
  const model::Version& release = m.cuda->version.value;
  Toolkit t;
  t.version = release.text();
  t.xy = release.prefix(2);
  t.major = std::to_string(release.major());
  t.triplet = multiarch_triplet(platform);
  t.home = "usr/lib/cuda-" + t.xy;
  t.rt.name = deb_cuda_runtime_name(release);
  t.dev.name = deb_cuda_dev_name(release);
  t.rt.role = "runtime";
  t.dev.role = "dev";
  t.rt.version = t.dev.version = t.version + "-1";
  if (o.source_date_epoch) {
    t.rt.mtime = *o.source_date_epoch;
  } else {
    auto manifest = knowledge::CudaCatalog::embedded().release(release);
    std::optional<std::int64_t> at;
    if (manifest && *manifest) at = date_epoch((*manifest)->release_date);
    if (!at)
      return Error(ErrorCode::invalid, "the packages' timestamp is NVIDIA's release date of CUDA " + t.version +
                                           ", and the knowledge base has no redistrib manifest that gives it")
          .with_hint("set SOURCE_DATE_EPOCH (seconds since 1970) for reproducible packages");
    t.rt.mtime = *at;
  }
  t.dev.mtime = t.rt.mtime;

  // the components' archives verified and laid out as stage does, into the run's own folder
  model::Manifest toolkit = m;
  toolkit.cudnn.reset();
  StageOptions so;
  so.archives_dir = o.archives_dir;
  so.cache_dir = o.cache_dir;
  so.target = model::Target::linux;
  so.platform = platform;
  so.dest = work;
  so.max_unpacked = o.max_unpacked;
  so.manifest_sha256 = o.manifest_sha256;
  so.stackpin_version = o.stackpin_version;
  so.progress = o.progress;
  SP_TRY(stage(toolkit, kb, so));
  SP_TRY_ASSIGN(auto receipt, staged_receipt(work));
  std::vector<std::string> components;
  for (const auto& a : receipt.cuda_archives) {
    components.push_back(a.component);
    t.component_version[a.component] = a.version;
    report.cuda_archives.push_back(a.file + " " + a.sha256);
  }
  report.cuda_version = t.version;
  report.cuda_home = "/" + t.home;
  if (report.libdir.empty()) report.libdir = "/usr/lib/" + t.triplet;
  report.cuda_mtime = t.rt.mtime;
  report.cuda_mtime_source = o.source_date_epoch ? "SOURCE_DATE_EPOCH" : "release date";

  SP_TRY(split(t, receipt, work));
  Needs rt_needs, dev_needs;
  SP_TRY(relations(t, platform, rt_needs, dev_needs, report));
  controls(t, m, maintainer, debian_architecture(platform), rt_needs, dev_needs, components);
  SP_TRY(documents(t, maintainer));
  std::vector<Pkg> out;
  out.push_back(std::move(t.rt));
  out.push_back(std::move(t.dev));
  return out;
}

}  // namespace core::deb_parts
