// cuDNN copies: every directory that can hold libcudnn (LD_LIBRARY_PATH, CUDNN_PATH, conda, the
// Python environment's nvidia-cudnn wheel and torch/lib, each toolkit, the ld.so cache, the
// default and usual system directories) is looked at once (by its resolved path), and each cuDNN
// major found there becomes one copy.
//
// A copy's versions come from three independent places that a broken install makes disagree:
//   - the library: the fully versioned file name (libcudnn.so.9.1.0) or, for trees that ship only
//     libcudnn*.so.9 (NVIDIA's pip wheels and toolkits assembled from them), the wheel's
//     dist-info METADATA, trusted only when its RECORD lists libcudnn.so.9 with the size found;
//   - the header: cudnn_version.h next to it (../include, or the system's include directories);
//   - the package: a wheel, stackpin's receipt, dpkg or conda, which also know the build number.
// Completeness is judged against the knowledge base's file list for the major: a copy missing a
// required library (or, where headers belong, a header) is half-copied; files of two versions
// side by side are mixed.
#include <algorithm>
#include <regex>
#include <set>

#include "format/receipt.hpp"
#include "machine_cudnn_records.hpp"
#include "machine_internal.hpp"
#include "model/contracts.hpp"
#include "model/version.hpp"
#include "probe/cudnn_whole.hpp"
#include "probe/fatbin.hpp"
#include "util/strings.hpp"

namespace probe::detail {

namespace {

// A library name of one cuDNN major: "libcudnn_ops.so.9.19.0" (stem libcudnn_ops, major 9,
// version "9.19.0"); "libcudnn_ops.so.9" has an empty version. Development links and DLLs are
// not: they name no major this probe reads.
struct LibName {
  std::string stem;
  int major = 0;
  std::string version;  // "9.19.0" when the name has more than the major
};

std::optional<LibName> parse_lib_name(const std::string& name) {
  auto n = parse_cudnn_library_name(name);
  if (!n || n->windows || n->major < 0) return std::nullopt;
  return LibName{n->stem, n->major, n->numbers.find('.') == std::string::npos ? std::string() : n->numbers};
}

std::string header_version(const std::string& text) {
  static const std::regex k_major(R"(#define\s+CUDNN_MAJOR\s+([0-9]+))"), k_minor(R"(#define\s+CUDNN_MINOR\s+([0-9]+))"),
      k_patch(R"(#define\s+CUDNN_PATCHLEVEL\s+([0-9]+))");
  std::smatch a, b, p;
  if (!std::regex_search(text, a, k_major) || !std::regex_search(text, b, k_minor) || !std::regex_search(text, p, k_patch)) return {};
  return a[1].str() + "." + b[1].str() + "." + p[1].str();
}

struct Collector {
  MachineCtx& c;
  std::vector<std::pair<std::string, std::string>> dirs;  // real dir, first alias

  void add(const std::string& path, const std::string& alias) {
    if (path.empty() || path[0] != '/') return;
    auto real = c.fs.resolve(normal(path));
    if (!real || !c.fs.is_dir(*real)) return;
    auto it = std::find_if(dirs.begin(), dirs.end(), [&](const auto& d) { return d.first == *real; });
    if (it == dirs.end()) dirs.emplace_back(*real, alias);
  }
};

// The copy's library files: each one of this major, the dangling links, the missing sonames, and
// every version the files name. Returns the library stems present.
std::set<std::string> read_libraries(MachineCtx& c, const std::string& dir, int major, const std::vector<std::string>& names,
                                     model::CudnnCopy& cp) {
  std::string m = std::to_string(major);
  std::set<std::string> versions;
  std::set<std::string> stems_present;
  std::map<std::string, bool> has_soname;
  for (const auto& name : names) {
    auto l = parse_lib_name(name);
    if (!l || l->major != major) continue;
    std::string path = join(dir, name);
    cp.files.push_back(name);
    if (!c.fs.exists(path)) {
      cp.problems.push_back(name + " -> " + c.fs.link_target(path) + " dangles");
      continue;
    }
    stems_present.insert(l->stem);
    if (l->version.empty()) {
      has_soname[l->stem] = true;
      std::string target = c.fs.resolve(path).value_or("");
      auto tl = parse_lib_name(base_name(target));
      if (tl && !tl->version.empty()) versions.insert(tl->version);
    } else {
      versions.insert(l->version);
    }
  }
  for (const auto& stem : stems_present)
    if (!has_soname[stem])
      cp.problems.push_back(stem + ".so." + m + " is missing (only the fully versioned file): run ldconfig or copy with cp -P");
  cp.versions_seen.assign(versions.begin(), versions.end());
  std::sort(cp.versions_seen.begin(), cp.versions_seen.end(), [](const std::string& a, const std::string& b) {
    auto va = model::Version::parse(a), vb = model::Version::parse(b);
    return va && vb ? *va < *vb : a < b;
  });
  cp.mixed = cp.versions_seen.size() > 1;

  return stems_present;
}

// The library's own version: the file libcudnn.so.MAJOR resolves to, else a fully versioned
// libcudnn file beside it.
void read_library_version(MachineCtx& c, const std::string& dir, int major, const std::vector<std::string>& names, model::CudnnCopy& cp) {
  std::string m = std::to_string(major);
  std::string main_soname = model::cudnn_library_name(major, false);
  if (auto target = c.fs.resolve(join(dir, main_soname))) {
    auto tl = parse_lib_name(base_name(*target));
    if (tl && !tl->version.empty()) {
      cp.library_version = tl->version;
      cp.library_version_source = "file name " + base_name(*target);
    }
  }
  if (cp.library_version.empty()) {
    for (const auto& name : names) {
      auto l = parse_lib_name(name);
      if (l && l->stem == "libcudnn" && l->major == major && !l->version.empty() && c.fs.exists(join(dir, name))) {
        cp.library_version = l->version;
        cp.library_version_source = "file name " + name;
        break;
      }
    }
  }
}

// The package record that installed the copy: stackpin's receipt, a wheel's dist-info, conda's
// metadata or dpkg; a verified wheel also gives the library version the file names do not.
void read_package_record(MachineCtx& c, const std::string& dir, int major, const std::vector<std::pair<std::string, std::string>>& dpkg,
                         model::CudnnCopy& cp) {
  std::string main_soname = model::cudnn_library_name(major, false);
  std::vector<std::string> wheel_places = {join(parent(dir), "dist-info"), parent(dir)};
  if (cp.kind == model::CudnnKind::pip_wheel) wheel_places.insert(wheel_places.begin(), parent(parent(parent(dir))));
  for (const auto& t : c.r.toolkits)
    if (under(dir, t.root)) wheel_places.push_back(join(t.root, "dist-info"));
  if (cp.kind == model::CudnnKind::staged) {
    std::string receipt = join(parent(dir), ".stackpin/receipt.json");
    if (auto text = c.fs.read(receipt, 64u << 20)) {
      auto r = format::parse_receipt(*text, receipt);
      if (r) {
        cp.package_version = r->cudnn_version;
        cp.package_source = receipt;
      } else {
        cp.problems.push_back(r.error().message);
      }
    }
  } else if (auto w = find_wheel(c, dir, major, wheel_places)) {
    cp.package_version = w->version;
    cp.package_source = w->where;
    if (!w->problem.empty()) cp.problems.push_back(w->problem);
    if (cp.kind == model::CudnnKind::other || cp.kind == model::CudnnKind::toolkit)
      cp.kind_detail += std::string(cp.kind_detail.empty() ? "" : "; ") + "files of the " + base_name(parent(w->where)) + " wheel";
    if (cp.library_version.empty() && w->verified) {
      auto v = model::Version::parse(w->version);
      cp.library_version = v ? v->prefix(3) : w->version;
      cp.library_version_source = w->where + " (RECORD matches " + main_soname + ")";
    }
  } else if (cp.kind == model::CudnnKind::conda && c.r.conda && !c.r.conda->cudnn.empty()) {
    cp.package_version = c.r.conda->cudnn;
    cp.package_source = c.r.conda->prefix + "/conda-meta";
  } else if (cp.kind == model::CudnnKind::system) {
    for (const auto& [pkg, version] : dpkg) {
      auto v = model::Version::parse(version);
      if (!v || static_cast<int>(v->major()) != major) continue;
      cp.package_version = version;
      cp.package_source = "dpkg " + pkg;
      break;
    }
  }
}

// A package record that disagrees with the library makes the copy mixed.
void compare_package_and_library(model::CudnnCopy& cp) {
  if (!cp.package_version.empty() && cp.library_version.empty())
    cp.problems.push_back("the library's own version is not visible (no versioned file name); the package says " + cp.package_version);
  if (auto pv = model::Version::parse(cp.package_version); pv && !cp.library_version.empty()) {
    auto lv = model::Version::parse(cp.library_version);
    if (lv && model::compare_prefix(*pv, *lv, 3) != 0) {
      cp.mixed = true;
      cp.problems.push_back("the package record (" + cp.package_source + ") says " + cp.package_version + ", the library is " +
                            cp.library_version);
      if (std::find(cp.versions_seen.begin(), cp.versions_seen.end(), pv->prefix(3)) == cp.versions_seen.end())
        cp.versions_seen.push_back(pv->prefix(3));
    }
  }
}

// cudnn_version.h for the copy and whether headers belong with it. Returns the include directory
// judged for completeness.
std::string read_header(MachineCtx& c, const std::string& dir, int major, model::CudnnCopy& cp) {
  std::string m = std::to_string(major);
  std::vector<std::string> include_dirs;
  if (cp.kind == model::CudnnKind::system) {
    std::string t = multiarch_triplet(c.r.arch);
    if (!t.empty()) include_dirs.push_back("/usr/include/" + t);
    include_dirs.push_back("/usr/include");
  } else {
    include_dirs.push_back(join(parent(dir), "include"));
  }
  std::string header_dir;
  for (const auto& inc : include_dirs) {
    // the system's include directories name each major's header apart (Debian's alternatives); elsewhere the
    // archive's own name comes first
    std::vector<std::string> names = {"cudnn_version.h", "cudnn_version_v" + m + ".h"};
    if (cp.kind == model::CudnnKind::system) std::swap(names[0], names[1]);
    for (const auto& h : names) {
      auto text = c.fs.read(join(inc, h), 1 << 20);
      if (!text) continue;
      std::string v = header_version(*text);
      if (v.empty()) continue;
      // the system's include directory may hold the other major's headers: those are not this copy's
      if (cp.kind == model::CudnnKind::system && model::Version::parse(v)->major() != static_cast<unsigned>(major)) continue;
      cp.header_version = v;
      cp.header_path = join(inc, h);
      header_dir = inc;
      break;
    }
    if (!header_dir.empty()) break;
  }
  bool any_header = false;
  std::string inc = header_dir.empty() ? include_dirs.front() : header_dir;
  for (const auto& name : c.fs.list(inc))
    if (name.rfind("cudnn", 0) == 0 && ends_with(name, ".h")) any_header = true;
  if (cp.kind == model::CudnnKind::system && header_dir.empty()) any_header = false;  // another major's headers
  cp.headers_expected =
      any_header || cp.kind == model::CudnnKind::toolkit || cp.kind == model::CudnnKind::cudnn_path || cp.kind == model::CudnnKind::staged;

  return inc;
}

// Completeness against the knowledge base's file list for the major.
void judge_completeness(MachineCtx& c, int major, const std::string& inc, const std::set<std::string>& stems_present,
                        model::CudnnCopy& cp) {
  std::string m = std::to_string(major);
  const model::CudnnMajorContents* contents = nullptr;
  for (const auto& k : c.o.cudnn_contents)
    if (k.major == major) contents = &k;
  cp.contents_known = contents != nullptr;
  if (contents) {
    for (const auto& lib : contents->linux_libraries)
      if (!stems_present.count(lib)) cp.missing.push_back(lib + ".so." + m);
    if (cp.headers_expected) {
      for (const auto& h : contents->headers) {
        std::string stem = h.substr(0, h.size() - 2);
        bool present = c.fs.exists(join(inc, h)) || c.fs.exists(join(inc, stem + "_v" + m + ".h"));
        if (present)
          cp.files.push_back("include/" + h);
        else
          cp.missing.push_back(join(inc, h));
      }
    }
  }
}

// The same files read for what they are: their sonames, needs and the release their bytes name.
void read_whole(MachineCtx& c, const std::string& dir, int major, const std::vector<std::string>& names, model::CudnnCopy& cp) {
  std::vector<CudnnFile> files;
  for (const auto& name : names) {
    CudnnFile f{name, {}, {}};
    const std::string path = join(dir, name);
    if (auto real = c.fs.resolve(path); real && c.fs.is_file(*real))
      f.file = c.fs.host(*real);
    else
      f.dangles_to = c.fs.link_target(path);
    files.push_back(std::move(f));
  }
  for (auto& w : judge_cudnn_files(std::move(files), dir, c.o.cudnn_contents)) {
    if (w.major != major) continue;
    // the release the bytes name against the package that claims the files (a wheel's METADATA,
    // dpkg, conda, a receipt): names of a wheel's files carry no release, their bytes do
    auto pv = model::Version::parse(cp.package_version);
    if (w.release && pv && w.release_source.find("(file name)") == std::string::npos && model::compare_prefix(*w.release, *pv, 3) != 0)
      w.problems.push_back("the bytes are of " + w.release->text() + " (" + w.release_source + "), the package record (" +
                           cp.package_source + ") says " + cp.package_version);
    cp.whole.push_back(std::move(w));
  }
}

// The GPU code of the copy's libraries: each libcudnn*.so.MAJOR name read once (its fatbin
// containers' headers only).
void read_kernels(MachineCtx& c, const std::string& dir, int major, const std::vector<std::string>& names, model::CudnnCopy& cp) {
  for (const auto& name : names) {
    auto l = parse_lib_name(name);
    if (!l || l->major != major || !l->version.empty()) continue;  // the soname itself: one name a library
    auto real = c.fs.resolve(join(dir, name));
    if (!real || !c.fs.is_file(*real)) continue;
    auto k = read_gpu_code(c.fs.host(*real));
    if (!k) {
      cp.problems.push_back(name + ": its GPU code cannot be read (" + k.error().message + ")");
      continue;
    }
    k->path = join(dir, name);
    cp.kernels.push_back(std::move(*k));
  }
}

void examine(MachineCtx& c, const std::string& dir, const std::string& alias, int major, const std::vector<std::string>& names,
             const std::vector<std::pair<std::string, std::string>>& dpkg) {
  model::CudnnCopy cp;
  cp.dir = dir;
  if (alias != dir) cp.aliases.push_back(alias);
  cp.major = major;
  cp.kind = classify(c, dir, cp.kind_detail);
  auto stems_present = read_libraries(c, dir, major, names, cp);
  read_library_version(c, dir, major, names, cp);
  read_package_record(c, dir, major, dpkg, cp);
  compare_package_and_library(cp);
  std::string inc = read_header(c, dir, major, cp);
  judge_completeness(c, major, inc, stems_present, cp);
  read_whole(c, dir, major, names, cp);
  read_kernels(c, dir, major, names, cp);
  std::sort(cp.files.begin(), cp.files.end());
  cp.half_copied = !cp.missing.empty();
  c.r.cudnn.push_back(std::move(cp));
}

}  // namespace

void inspect_cudnn(MachineCtx& c) {
  Collector col{c, {}};
  for (std::size_t i = 0; i < c.r.ld_library_path.size(); ++i) {
    const auto& e = c.r.ld_library_path[i];
    if (!e.relative && e.exists) col.add(e.text, "LD_LIBRARY_PATH entry " + std::to_string(i + 1) + " (" + e.text + ")");
  }
  std::string cudnn_path = c.env("CUDNN_PATH");
  if (!cudnn_path.empty())
    for (const char* sub : {"lib64", "lib", ""}) col.add(join(cudnn_path, sub), "CUDNN_PATH=" + cudnn_path);
  for (const auto& d : c.o.extra_cudnn_dirs) col.add(d, d);
  if (c.r.conda) col.add(join(c.r.conda->prefix, "lib"), "CONDA_PREFIX/lib");
  for (const auto& site : c.site_dirs) {
    col.add(join(site, "nvidia/cudnn/lib"), join(site, "nvidia/cudnn/lib"));
    col.add(join(site, "torch/lib"), join(site, "torch/lib"));
  }
  for (const auto& t : c.r.toolkits) {
    col.add(join(t.root, "lib64"), join(t.root, "lib64"));
    col.add(join(t.root, "lib"), join(t.root, "lib"));
    for (const auto& tgt : c.fs.list(join(t.root, "targets")))
      col.add(join(t.root, "targets/" + tgt + "/lib"), join(t.root, "targets/" + tgt + "/lib"));
  }
  if (c.cache)
    for (const auto& e : c.cache->entries)
      if (e.key.rfind("libcudnn", 0) == 0) col.add(parent(e.value), "ld.so cache");
  for (const auto& d : c.r.default_dirs) col.add(d, d);
  for (const char* d : {"/usr/local/lib", "/usr/lib64", "/usr/local/lib64"}) col.add(d, d);

  auto dpkg = dpkg_cudnn(c);
  for (const auto& [dir, alias] : col.dirs) {
    std::vector<std::string> names;
    std::set<int> majors;
    for (const auto& name : c.fs.list(dir)) {
      auto l = parse_lib_name(name);
      if (!l) continue;
      names.push_back(name);
      majors.insert(l->major);
    }
    for (int major : majors) examine(c, dir, alias, major, names, dpkg);
  }
  // the other names each directory was met under (an LD_LIBRARY_PATH entry through /usr/local/cuda)
  for (auto& cp : c.r.cudnn) {
    auto add_alias = [&](const std::string& a) {
      if (a != cp.dir && std::find(cp.aliases.begin(), cp.aliases.end(), a) == cp.aliases.end()) cp.aliases.push_back(a);
    };
    for (const auto& e : c.r.ld_library_path)
      if (!e.relative && c.fs.resolve(normal(e.text)) == cp.dir) add_alias(normal(e.text));
    for (const auto& t : c.r.toolkits)
      for (const char* sub : {"lib64", "lib"})
        if (c.fs.resolve(join(t.root, sub)) == cp.dir && t.is_default) add_alias(std::string("/usr/local/cuda/") + sub);
  }
}

}  // namespace probe::detail
