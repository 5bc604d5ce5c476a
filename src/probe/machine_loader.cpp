// Which file the dynamic loader would load for each CUDA/cuDNN soname, following ld.so's own
// order for a program without DT_RPATH/DT_RUNPATH:
//   1. LD_LIBRARY_PATH, entry by entry (':' or ';' separated; missing directories are skipped;
//      a file of another ELF class or machine is skipped and the search goes on);
//   2. the ld.so cache: the first entry for the soname whose flags are this machine's ABI (other
//      entries for the same soname are never consulted); when that file cannot be opened (a
//      stale cache) the loader goes on with
//   3. the default directories (Debian: the multiarch directories, then /lib and /usr/lib).
// Every other copy met on the way is reported as shadowed. A copy reached twice (/lib is a link
// to /usr/lib on merged-/usr systems) counts once. glibc-hwcaps subdirectories of LD_LIBRARY_PATH
// entries are not searched here (CUDA and cuDNN do not ship any).
#include <algorithm>

#include "machine_internal.hpp"
#include "util/strings.hpp"

namespace probe::detail {

std::string multiarch_triplet(const std::string& arch) {
  if (arch == "x86_64") return "x86_64-linux-gnu";
  if (arch == "aarch64" || arch == "arm64") return "aarch64-linux-gnu";
  if (arch == "ppc64le") return "powerpc64le-linux-gnu";
  if (arch == "s390x") return "s390x-linux-gnu";
  return {};
}

namespace {

std::vector<std::string> default_dirs(const MachineCtx& c) {
  if (!c.o.default_dirs.empty()) return c.o.default_dirs;
  std::string t = multiarch_triplet(c.r.arch);
  bool multiarch = !t.empty() && c.fs.is_dir("/usr/lib/" + t);
  bool lib64 = c.fs.is_dir("/usr/lib64") && !c.fs.is_symlink("/usr/lib64") && !multiarch;
  if (lib64) return {"/lib64", "/usr/lib64"};
  std::vector<std::string> out;
  if (!t.empty()) {
    out.push_back("/lib/" + t);
    out.push_back("/usr/lib/" + t);
  }
  out.push_back("/lib");
  out.push_back("/usr/lib");
  return out;
}

// "" when the loader would accept the file, else why it skips it.
std::string elf_mismatch(const MachineCtx& c, const std::string& path) {
  auto head = c.fs.read(path, 20);
  if (!head || head->size() < 20 ||
      head->compare(0, 4,
                    "\x7f"
                    "ELF") != 0)
    return {};  // not ELF: not judged
  int want_class = 0, want_machine = 0;
  if (c.r.arch == "x86_64")
    want_class = 2, want_machine = 62;
  else if (c.r.arch == "aarch64" || c.r.arch == "arm64")
    want_class = 2, want_machine = 183;
  else
    return {};
  int cls = static_cast<unsigned char>((*head)[4]);
  int machine = static_cast<unsigned char>((*head)[18]) | (static_cast<unsigned char>((*head)[19]) << 8);
  if (cls != want_class) return cls == 1 ? "32-bit ELF" : "ELF class " + std::to_string(cls);
  if (machine != want_machine) return "ELF machine " + std::to_string(machine) + " (not " + c.r.arch + ")";
  return {};
}

struct Search {
  const MachineCtx& c;
  model::LoaderResolution res;
  std::vector<std::string> seen_real;

  // Adds a candidate; returns true when it is usable (exists, right ELF class).
  bool offer(const std::string& path, const std::string& via, bool may_win) {
    auto real = c.fs.resolve(path);
    if (!real) {
      if (c.fs.is_symlink(path)) res.notes.push_back(path + " (" + via + ") is a dangling link: skipped");
      return false;
    }
    if (!c.fs.is_file(*real)) return false;
    std::string why = elf_mismatch(c, *real);
    if (!why.empty()) {
      res.notes.push_back(path + " (" + via + "): " + why + ", the loader skips it");
      return false;
    }
    if (std::find(seen_real.begin(), seen_real.end(), *real) != seen_real.end()) return true;
    seen_real.push_back(*real);
    model::LoaderCandidate cand{path, *real, via};
    if (may_win && !res.winner)
      res.winner = std::move(cand);
    else
      res.shadowed.push_back(std::move(cand));
    return true;
  }
};

}  // namespace

void inspect_loader(MachineCtx& c) {
  c.r.default_dirs = default_dirs(c);

  // the ld.so cache
  const std::string cache_path = "/etc/ld.so.cache";
  if (auto bytes = c.fs.read(cache_path, 64u << 20)) {
    auto parsed = parse_ld_cache(*bytes);
    if (parsed) {
      c.r.ld_cache = cache_path + " (" + std::to_string(parsed->entries.size()) + " entries)";
      c.cache = std::move(parsed).value();
    } else {
      c.r.ld_cache_error = cache_path + ": " + parsed.error().message;
    }
  }

  // LD_LIBRARY_PATH: glibc splits on ':' and ';'
  std::vector<std::string> llp;
  if (c.o.env)
    if (auto v = c.o.env->get("LD_LIBRARY_PATH"))
      for (const auto& part : util::split(*v, ':'))
        for (const auto& p : util::split(part, ';')) llp.push_back(p);
  if (llp.size() == 1 && llp[0].empty()) llp.clear();  // LD_LIBRARY_PATH set but empty: no entries
  for (const auto& e : llp) {
    model::LdLibraryPathEntry entry;
    entry.text = e;
    entry.relative = e.empty() || e[0] != '/';
    entry.exists = !entry.relative && c.fs.is_dir(e);
    c.r.ld_library_path.push_back(entry);
  }

  std::vector<std::int32_t> flags = native_ld_cache_flags(c.r.arch);
  for (const auto& soname : model::loader_sonames()) {
    Search s{c, {}, {}};
    s.res.soname = soname;
    for (std::size_t i = 0; i < c.r.ld_library_path.size(); ++i) {
      const auto& e = c.r.ld_library_path[i];
      if (e.relative || !e.exists) continue;
      s.offer(join(normal(e.text), soname), "LD_LIBRARY_PATH entry " + std::to_string(i + 1) + " (" + e.text + ")", true);
    }
    bool cache_answered = false;
    if (c.cache) {
      bool first = true;
      for (const auto& entry : c.cache->entries) {
        if (entry.key != soname || std::find(flags.begin(), flags.end(), entry.flags) == flags.end()) continue;
        std::string via = "ld.so cache";
        if (!entry.hwcaps_subdir.empty())
          via += " (glibc-hwcaps/" + entry.hwcaps_subdir + ", used only on CPUs that support it)";
        else if (entry.hwcap)
          via += " (legacy hwcap subdirectory)";
        if (!first) via += ", an entry the loader never reaches (the first entry for a soname wins)";
        bool usable = s.offer(entry.value, via, first);
        if (first && !usable)
          s.res.notes.push_back("the ld.so cache names " + entry.value +
                                ", which is missing: a stale cache (run ldconfig); the loader "
                                "goes on with the default directories");
        if (first && usable) cache_answered = true;
        first = false;
      }
    }
    for (const auto& d : c.r.default_dirs) s.offer(join(d, soname), "default directory " + d, !cache_answered);
    c.r.loader.push_back(std::move(s.res));
  }
}

}  // namespace probe::detail
