// doctor on Linux/WSL2: each cuDNN copy (complete? one version? header and library agree?), what
// the loader really picks for each soname and what that hides, and LD_LIBRARY_PATH entries that
// lead nowhere. Versions compare at three parts (ARCHITECTURE: libraries reveal three).
#include <algorithm>

#include "core/doctor/doctor_linux.hpp"
#include "core/inspect/cudnn_whole.hpp"
#include "doctor/linux/doctor_linux_rules.hpp"

namespace core::doctor_rules {

using model::Severity;
using model::Version;

namespace {

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

int soname_major(const std::string& soname) {
  auto dot = soname.rfind('.');
  if (dot == std::string::npos) return 0;
  try {
    return std::stoi(soname.substr(dot + 1));
  } catch (...) {
    return 0;
  }
}

std::string describe(const model::CudnnCopy& cp) {
  std::string v = copy_version(cp);
  std::string s = "cuDNN " + (v.empty() ? std::to_string(cp.major) + ".x (version unknown)" : v);
  if (!cp.package_version.empty() && cp.package_version != v) s += " (package " + cp.package_version + ")";
  s += ", " + std::string(model::to_string(cp.kind));
  if (!cp.kind_detail.empty()) s += ": " + cp.kind_detail;
  return s;
}

std::string candidate_text(const model::MachineReport& r, const model::LoaderCandidate& cand, int major, bool cudnn) {
  std::string s = cand.path + (cand.real_path != cand.path ? " -> " + cand.real_path : "") + " (" + cand.via + ")";
  if (cudnn)
    if (const auto* cp = copy_of(r, cand.real_path)) {
      std::string v = copy_version(*cp);
      s += v.empty() ? ", version unknown" : ", cuDNN " + v;
    }
  (void)major;
  return s;
}

}  // namespace

const model::CudnnCopy* copy_of(const model::MachineReport& r, const std::string& real_path) {
  std::string dir = dir_of(real_path);
  std::string name = real_path.substr(dir.size() == 1 ? 1 : dir.size() + 1);
  // libcudnn.so.9.1.0 / libcudnn.so.9 -> major 9
  int major = 0;
  auto so = name.find(".so.");
  if (so != std::string::npos) {
    try {
      major = std::stoi(name.substr(so + 4));
    } catch (...) {
      major = 0;
    }
  }
  for (const auto& cp : r.cudnn)
    if (cp.dir == dir && (major == 0 || cp.major == major)) return &cp;
  return nullptr;
}

std::string copy_version(const model::CudnnCopy& c) {
  if (!c.library_version.empty()) return c.library_version;
  return c.header_version;
}

void cudnn_copies(Ctx& c) {
  auto pin = c.cudnn();
  if (c.r.cudnn.empty()) {
    auto& f = c.add("linux.cudnn-copy", Severity::note, "cuDNN");
    f.seen = "no cuDNN found (LD_LIBRARY_PATH, CUDNN_PATH, conda, Python wheels, toolkits, the ld.so cache, system directories)";
    if (pin) {
      f.expected = "cuDNN " + pin->text();
      f.fix = "stage it: stackpin stage MANIFEST --archives DIR --target linux";
    }
  }
  for (const auto& cp : c.r.cudnn) {
    std::string subject = "cuDNN " + std::to_string(cp.major) + " in " + cp.dir;
    std::string seen = describe(cp);
    if (!cp.problems.empty()) seen += "; " + join_lines(cp.problems);
    if (cp.half_copied || cp.mixed) {
      auto& f = c.add("linux.cudnn-copy", Severity::error, subject);
      std::vector<std::string> what;
      if (cp.half_copied) what.push_back("half-copied: missing " + join_lines(cp.missing, ", "));
      if (cp.mixed) what.push_back("mixed: files of " + join_lines(cp.versions_seen, " and ") + " side by side");
      f.seen = join_lines(what) + " (" + seen + ")";
      f.expected = "one complete cuDNN " + std::to_string(cp.major) + " (the knowledge base's file list for this major)";
      f.fix = cp.kind == model::CudnnKind::system || cp.kind == model::CudnnKind::conda || cp.kind == model::CudnnKind::pip_wheel
                  ? "reinstall the package that owns " + cp.dir + " (apt, conda or pip); copying files by hand loses some"
                  : "remove this copy and stage one archive whole (stackpin stage keeps the so-name chain and every sub-library)";
      continue;
    }
    auto v = Version::parse(copy_version(cp));
    auto& f = c.add("linux.cudnn-copy", Severity::ok, subject);
    f.seen = seen;
    if (!cp.contents_known) {
      f.severity = Severity::note;
      f.expected = "the knowledge base has no file list for cuDNN " + std::to_string(cp.major) + ": completeness not judged";
    } else if (!v) {
      f.severity = Severity::warning;
      f.fix = "no versioned file name, header or package record tells this copy's version: replace it with a staged archive";
    }
    if (pin && v && f.severity == Severity::ok) {
      f.expected = "cuDNN " + pin->text() + " (the manifest's pin)";
      if (compare_prefix(*v, *pin, 3) != 0) {
        f.severity = Severity::note;
        f.fix = "not the pinned cuDNN: harmless while the loader does not pick it (see linux.loader)";
      }
    }
  }

  // each copy read for what its files are (their sonames, needs and the release their bytes name)
  for (const auto& cp : c.r.cudnn) add_cudnn_whole_findings(cp.whole, c.out);

  for (const auto& cp : c.r.cudnn) {
    auto h = Version::parse(cp.header_version), l = Version::parse(cp.library_version);
    if (!h || !l) continue;
    std::string subject = "cuDNN " + std::to_string(cp.major) + " in " + cp.dir;
    bool same = compare_prefix(*h, *l, 3) == 0;
    auto& f = c.add("linux.cudnn-header-library-mismatch", same ? Severity::ok : Severity::error, subject);
    f.seen =
        "header " + cp.header_version + " (" + cp.header_path + "), library " + cp.library_version + " (" + cp.library_version_source + ")";
    f.expected = "the header and the library of one release";
    if (!same)
      f.fix = "code compiled against the " + cp.header_version + " header runs against the " + cp.library_version +
              " library (cudnnGetVersion() != CUDNN_VERSION): restage the whole archive so include/ and lib/ come from one release";
  }
}

void loader(Ctx& c) {
  auto pin = c.cudnn();
  auto cuda = c.cuda();
  for (const auto& l : c.r.loader) {
    bool cudnn = l.soname.rfind("libcudnn.so.", 0) == 0;
    bool cudart = l.soname.rfind("libcudart.so.", 0) == 0;
    int major = soname_major(l.soname);
    bool pinned = (cudnn && pin && static_cast<int>(pin->major()) == major) || (cudart && cuda && static_cast<int>(cuda->major()) == major);
    if (!l.winner) {
      if (!pinned && l.shadowed.empty() && l.notes.empty()) continue;  // nothing of this soname here, nor needed
      auto& f = c.add("linux.loader", pinned && cudnn ? Severity::error : Severity::note, l.soname);
      f.seen = "the loader finds no " + l.soname + (l.notes.empty() ? "" : " (" + join_lines(l.notes) + ")");
      if (pinned && cudnn) {
        f.expected = l.soname + " of cuDNN " + pin->text();
        f.fix =
            "stage the pinned cuDNN (stackpin stage) and put its lib64 on LD_LIBRARY_PATH or in an ld.so.conf.d file + ldconfig "
            "(stackpin generate ldconfig)";
        c.point_at(f, c.m->cudnn->version.pos);
      } else if (pinned) {
        f.expected = l.soname + " of CUDA " + cuda->text();
        f.fix = "programs linked against the shared CUDA runtime need the toolkit's lib64 on the loader path (frameworks bring their own)";
      }
      continue;
    }
    std::vector<std::string> shadowed;
    for (const auto& s : l.shadowed) shadowed.push_back(candidate_text(c.r, s, major, cudnn));
    auto& f = c.add("linux.loader", Severity::ok, l.soname);
    f.seen = candidate_text(c.r, *l.winner, major, cudnn) + (shadowed.empty() ? "" : "; shadows " + join_lines(shadowed));
    if (!l.notes.empty()) f.seen += "; " + join_lines(l.notes);
    bool stale = std::any_of(l.notes.begin(), l.notes.end(), [](const std::string& n) { return n.find("stale") != std::string::npos; });

    if (cudnn) {
      const auto* win = copy_of(c.r, l.winner->real_path);
      auto wv = win ? Version::parse(copy_version(*win)) : std::nullopt;
      bool other_version_hidden = false;
      for (const auto& s : l.shadowed)
        if (const auto* cp = copy_of(c.r, s.real_path)) {
          auto sv = Version::parse(copy_version(*cp));
          if (sv && wv && compare_prefix(*sv, *wv, 3) != 0) other_version_hidden = true;
        }
      if (pinned) {
        f.expected = "cuDNN " + pin->text() + " (the manifest's pin)";
        c.point_at(f, c.m->cudnn->version.pos);
        if (!wv) {
          f.severity = Severity::warning;
          f.fix = "the version of the copy the loader picks is unknown: it cannot be held against the pin";
        } else if (compare_prefix(*wv, *pin, 3) != 0) {
          f.severity = Severity::error;
          f.fix = "the loader picks cuDNN " + wv->text() + " from " + dir_of(l.winner->real_path) + " (" + l.winner->via +
                  "): put the pinned cuDNN's directory first on LD_LIBRARY_PATH, or remove that copy from the search path";
        }
      } else if (other_version_hidden) {
        f.severity = Severity::warning;
        f.fix = "several cuDNN " + std::to_string(major) +
                " versions are on the search path: a program with its own RPATH or "
                "another LD_LIBRARY_PATH gets another one; keep one";
      }
    } else if (cudart && pinned) {
      f.expected = l.soname + " of CUDA " + cuda->text();
      for (const auto& t : c.r.toolkits) {
        auto tv = Version::parse(t.version);
        if (tv && l.winner->real_path.rfind(t.root + "/", 0) == 0 && compare_prefix(*tv, *cuda, 2) != 0) {
          f.severity = Severity::warning;
          f.fix = "the loader picks the runtime of CUDA " + t.version + " (" + t.root + "), the manifest pins " + cuda->text();
        }
      }
    }
    if (stale && f.severity == Severity::ok) {
      f.severity = Severity::warning;
      f.fix = "the ld.so cache names a file that is gone: run ldconfig";
    }
  }
}

void ld_library_path(Ctx& c) {
  if (c.r.ld_library_path.empty()) return;
  bool any = false;
  for (std::size_t i = 0; i < c.r.ld_library_path.size(); ++i) {
    const auto& e = c.r.ld_library_path[i];
    if (e.relative) {
      any = true;
      auto& f = c.add("linux.ld-library-path-missing", Severity::warning, "LD_LIBRARY_PATH entry " + std::to_string(i + 1));
      f.seen = e.text.empty() ? "an empty entry (a leading, trailing or doubled ':'), which the loader reads as the current directory"
                              : "\"" + e.text + "\" is relative: it is searched from each program's current directory";
      f.expected = "absolute directories only";
      f.fix = "remove it: libraries of whatever directory a program is started in would be loaded first";
    } else if (!e.exists) {
      any = true;
      auto& f = c.add("linux.ld-library-path-missing", Severity::warning, "LD_LIBRARY_PATH entry " + std::to_string(i + 1));
      f.seen = e.text + " does not exist";
      f.expected = "an existing directory";
      f.fix = "remove it from LD_LIBRARY_PATH (a removed or never-staged tree: stage it, or fix the activation script that adds it)";
    }
  }
  if (!any) {
    auto& f = c.add("linux.ld-library-path-missing", Severity::ok, "LD_LIBRARY_PATH");
    f.seen = std::to_string(c.r.ld_library_path.size()) + " entries, all existing directories";
  }
}

}  // namespace core::doctor_rules
