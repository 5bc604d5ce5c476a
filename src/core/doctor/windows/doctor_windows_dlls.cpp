// Which DLLs a Windows application really gets. For cuDNN the first cudnn64_N.dll in the search
// order is the one that runs, whatever else is installed; a copy is judged by its version (the
// cudnn_version.h beside it, else only the major its name carries) and by its directory (the
// manifest's tree). Copies that win when they should not are errors, copies that sit later are
// warnings (they win as soon as their directory moves up, or an application directory holds
// one), and any cuDNN DLL in System32 or the Windows directory is an error: those come before
// every PATH entry for every program. zlibwapi.dll is judged by the knowledge base's version
// range, the VC++ runtime by presence: NVIDIA states no requirement, but cuDNN's DLLs are MSVC
// builds (cuDNN's conda packages depend on the VC++ 14 runtime).
#include <algorithm>
#include <set>

#include <filesystem>

#include "core/gpu_code.hpp"
#include "core/inspect/cudnn_whole.hpp"
#include "core/windows/windows_path_rule.hpp"
#include "core/windows/windows_search.hpp"
#include "doctor/windows/doctor_windows_rules.hpp"
#include "model/contracts.hpp"
#include "probe/cudnn_whole.hpp"
#include "util/strings.hpp"

namespace core::winrules {

using model::Severity;

namespace {

// The runtime DLLs of Visual C++ 2015-2022 (the VC++ 14 runtime) that MSVC-built 64-bit DLLs import.
const char* const k_vc_runtime_dlls[] = {"msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"};

// N of "cudnn64_N.dll"; nullopt for another name.
std::optional<int> main_dll_major(const std::string& name) {
  if (name.size() <= 12 || name.rfind("cudnn64_", 0) != 0) return std::nullopt;
  auto n = util::parse_u64(std::string_view(name).substr(8, name.size() - 12));
  if (!n || *n > 1000) return std::nullopt;
  return static_cast<int>(*n);
}

bool in_system_dirs(const model::SearchDir& d) {
  return d.source == model::SearchSource::system32 || d.source == model::SearchSource::system16 ||
         d.source == model::SearchSource::windows_dir;
}

std::string activate_fix(const std::string& dir) {
  return "put " + dir +
         " first on PATH, ahead of every CUDA directory: activate.ps1 -Scope Machine "
         "(`stackpin generate activate --shell powershell`) does, and takes out the entries that are other cuDNN trees";
}

// What the PATH rule (core/windows_path_rule.hpp, the one activate.ps1 mirrors) makes of a directory.
PathEntryKind kind_of(const model::SearchDir& d) {
  std::vector<std::string> names;
  std::error_code ec;
  if (d.exists)
    for (std::filesystem::directory_iterator it(d.local_path, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code ec2;
      if (it->is_regular_file(ec2)) names.push_back(util::to_lower(it->path().filename().string()));
    }
  return classify_dir(names);
}

struct Judge {
  Ctx& c;
  const model::SearchOrder& order;
  bool expected_dir(const model::DllCopy& x) const {
    return !c.exp.windows_cudnn_dir.empty() && same_windows_path(dir_of(x.windows_path), c.exp.windows_cudnn_dir);
  }
  bool matches_pin(const model::DllCopy& x) const {
    auto v = full_version(x);
    return c.pinned && v && model::compare_prefix(*v, *c.pinned, 3) == 0;
  }
  bool wrong(const model::DllCopy& x) const { return c.pinned && full_version(x) && !matches_pin(x); }
  bool good(const model::DllCopy& x) const { return (expected_dir(x) && !wrong(x)) || matches_pin(x); }
  const model::SearchDir& dir(const model::DllCopy& x) const { return order.dirs[static_cast<std::size_t>(x.dir)]; }
};

// The fix for a stale copy, by where it sits.
std::string stale_fix(const Judge& j, const model::DllCopy& x) {
  const auto& d = j.dir(x);
  std::string ours = j.c.exp.windows_cudnn_dir.empty() ? std::string("the cuDNN directory you want") : j.c.exp.windows_cudnn_dir;
  if (d.source == model::SearchSource::app_dir)
    return "delete " + x.windows_path + " (or replace it with the cuDNN you pinned): the application's directory comes first";
  if (d.source == model::SearchSource::cwd) return "delete " + x.windows_path + ", or run the program from another directory";
  if (d.source == model::SearchSource::path || d.source == model::SearchSource::user_path) {
    if (kind_of(d) == PathEntryKind::toolkit_with_cudnn)
      return "delete " + x.windows_path + " if nothing needs it: " + d.windows_path +
             " also holds the CUDA toolkit, so activate.ps1 "
             "keeps it on PATH and puts " +
             ours +
             " before it (for a cuda-merge tree, `stackpin stage --remove-stale` moves the DLL "
             "to .stackpin\\backup)";
    return "take " + d.windows_path + " out of PATH (activate.ps1 -Scope Machine does: it is another cuDNN tree) and put " + ours +
           " first, or delete " + x.windows_path;
  }
  return "delete " + x.windows_path + " if nothing needs it";
}

void judge_major(Ctx& c, int major) {
  auto& order = c.view.desktop;
  std::string name = model::cudnn_library_name(major, true);
  bool pinned_major = c.pinned && static_cast<int>(c.pinned->major()) == major;
  std::string why =
      pinned_major ? "cuDNN " + c.pinned->text() + " (manifest)" : "cuDNN " + std::to_string(major) + " found in the search order";
  auto lookup = find_dll(order, name, why);
  Judge j{c, order};
  const std::string& want_dir = c.exp.windows_cudnn_dir;
  if (pinned_major && !want_dir.empty() && c.cudnn_dir.empty()) c.cudnn_dir = want_dir;

  if (lookup.copies.empty()) {
    auto& f = c.add("windows.cudnn-dll", Severity::error, name);
    f.seen = "no " + name + " in any directory of the search order";
    if (!want_dir.empty()) {
      int any = position(order, want_dir, true);
      if (any < 0)
        f.seen += "; the manifest's DLL directory " + want_dir + " is not on PATH";
      else if (order.dirs[any].quoted)
        f.seen += "; " + want_dir + " is on PATH in quotes, which the loader does not strip";
      else if (!order.dirs[any].exists)
        f.seen += "; " + want_dir + " is on PATH but does not exist (" + order.dirs[any].local_path + ")";
      else
        f.seen += "; " + want_dir + " holds no " + name;
    }
    f.expected = name + (want_dir.empty() ? " in the cuDNN DLL directory, on PATH" : " from " + want_dir);
    f.fix = want_dir.empty() ? "put the cuDNN DLL directory (<cuDNN>\\bin, bin\\x64 from 9.18, bin\\arm64 on Windows on Arm) on PATH"
                             : "copy the staged tree there (`stackpin stage --target windows`), then " + activate_fix(want_dir);
    f.source = k_src_search_order;
    c.view.desktop.dlls.push_back(std::move(lookup));
    return;
  }

  const auto& w = lookup.copies.front();
  if (c.cudnn_dir.empty()) c.cudnn_dir = dir_of(w.windows_path);
  if (c.cudnn_machine.first.empty()) c.cudnn_machine = {w.windows_path, w.machine};
  if (!c.cudnn_seen && !c.cudnn_seen_major && (pinned_major || !c.pinned)) {
    if (auto v = full_version(w))
      c.cudnn_seen = v;
    else
      c.cudnn_seen_major = major;
  }
  bool expected_later = std::any_of(lookup.copies.begin() + 1, lookup.copies.end(), [&](const auto& x) { return j.expected_dir(x); });
  bool winner_stale = false;
  std::string loads = "loads " + describe(w) + " (" + j.dir(w).why + ")";
  if (!pinned_major) {
    auto& f = c.add("windows.cudnn-dll", Severity::ok, name);
    f.seen = loads;
  } else if (j.wrong(w)) {
    auto& f = c.add("windows.cudnn-dll", Severity::error, name);
    f.seen = loads;
    f.expected = "cuDNN " + c.pinned->prefix(3) + (want_dir.empty() ? "" : " from " + want_dir);
    f.fix = want_dir.empty() ? "see windows.stale-dll below" : activate_fix(want_dir) + "; see windows.stale-dll below";
    f.source = k_src_search_order;
    winner_stale = true;
  } else if (j.good(w)) {
    auto& f = c.add("windows.cudnn-dll", Severity::ok, name);
    f.seen = loads;
  } else if (expected_later) {
    auto& f = c.add("windows.cudnn-dll", Severity::error, name);
    f.seen = loads + ", ahead of the manifest's tree in " + want_dir;
    f.expected = "cuDNN " + c.pinned->prefix(3) + " from " + want_dir;
    f.fix = stale_fix(j, w);
    f.source = k_src_search_order;
    winner_stale = true;
  } else {
    auto& f = c.add("windows.cudnn-dll", Severity::warning, name);
    f.seen = loads + ": its version cannot be told";
    f.expected = "cuDNN " + c.pinned->prefix(3) + (want_dir.empty() ? "" : " from " + want_dir);
    f.fix = "check that it is cuDNN " + c.pinned->prefix(3) + " (keep cuDNN's include\\cudnn_version.h beside its bin\\), or " +
            (want_dir.empty() ? std::string("stage the pinned archive") : activate_fix(want_dir));
  }

  for (std::size_t i = 0; i < lookup.copies.size(); ++i) {
    const auto& x = lookup.copies[i];
    if (in_system_dirs(j.dir(x))) continue;  // reported by system_dirs
    if (i == 0) {
      if (!winner_stale) continue;
      auto& f = c.add("windows.stale-dll", Severity::error, x.windows_path);
      f.seen = describe(x) + " wins: " + j.dir(x).why + " comes before " + (want_dir.empty() ? "the pinned cuDNN" : want_dir);
      f.fix = stale_fix(j, x);
      f.source = k_src_search_order;
      continue;
    }
    if (pinned_major && j.expected_dir(x)) continue;  // the pinned tree itself, judged above
    bool duplicate = pinned_major ? j.good(x) : (full_version(x) && full_version(w) && *full_version(x) == *full_version(w));
    auto& f = c.add("windows.stale-dll", duplicate ? Severity::note : Severity::warning, x.windows_path);
    if (duplicate) {
      f.seen = "another copy of the same cuDNN, " + describe(x) + ", sits later (" + j.dir(x).why + ")";
      f.fix = "nothing loads it now; delete it to keep one copy to upgrade";
    } else {
      f.seen = describe(x) + " sits later (" + j.dir(x).why +
               "): shadowed now, it wins as soon as its directory comes first "
               "or an application carries it";
      f.fix = stale_fix(j, x);
    }
    f.source = k_src_search_order;
  }
  c.view.desktop.dlls.push_back(std::move(lookup));
}

// Every cuDNN sub-library of the winning copy's major must load from the same directory.
void sub_libraries(Ctx& c, int major) {
  const auto* contents = c.kb.cudnn_contents(major);
  if (!contents) return;
  auto& order = c.view.desktop;
  auto main = find_dll(order, contents->main_dll, "");
  if (main.copies.empty()) return;
  std::string main_dir = dir_of(main.copies.front().windows_path);
  // the winner's directory read for what its DLLs are (export names, imports, the release they name)
  if (!main.copies.front().local_path.empty()) {
    auto wholes =
        probe::read_cudnn_whole(std::filesystem::path(main.copies.front().local_path).parent_path(), main_dir, c.kb.facts().cudnn_majors);
    std::erase_if(wholes, [&](const model::CudnnWhole& w) { return w.major != major; });
    add_cudnn_whole_findings(wholes, c.findings);
  }
  std::vector<std::string> missing, mixed;
  for (const auto& dll : contents->windows_dlls) {
    if (util::to_lower(dll) == util::to_lower(contents->main_dll)) continue;
    auto l = find_dll(order, dll, "");
    if (l.copies.empty())
      missing.push_back(dll);
    else if (!same_windows_path(dir_of(l.copies.front().windows_path), main_dir))
      mixed.push_back(describe(l.copies.front()));
  }
  std::string subject = "cuDNN " + std::to_string(major) + " sub-libraries";
  if (missing.empty() && mixed.empty()) {
    auto& f = c.add("windows.cudnn-sublibs", Severity::ok, subject);
    f.seen = "all " + std::to_string(contents->windows_dlls.size()) + " DLLs load from " + main_dir;
    f.source = knowledge::first_source(contents->source);
    return;
  }
  auto& f = c.add("windows.cudnn-sublibs", Severity::error, subject);
  std::vector<std::string> seen;
  if (!missing.empty()) seen.push_back("missing from the search order: " + util::join(missing, ", "));
  if (!mixed.empty()) seen.push_back("loaded from elsewhere than " + main_dir + ": " + util::join(mixed, "; "));
  f.seen = util::join(seen, "; ");
  f.expected = "every cudnn*64_" + std::to_string(major) + ".dll of one release, beside " + contents->main_dll;
  f.fix = "copy the whole bin\\ directory of one cuDNN release into " + main_dir +
          " (a half-copied tree or mixed releases fail with CUDNN_STATUS_NOT_INITIALIZED or a missing entry point)";
  f.source = knowledge::first_source(contents->source);
}

// The winning cuDNN judged by the GPU code its DLLs carry (their fatbin containers, read here) for
// each GPU doctor knows of: the live machine's (nvml.dll), else the manifest's [gpus].
void gpu_kernels(Ctx& c, int major) {
  if (c.gpus.empty()) return;
  const auto* contents = c.kb.cudnn_contents(major);
  if (!contents) return;
  auto main = find_dll(c.view.desktop, contents->main_dll, "");
  if (main.copies.empty() || main.copies.front().local_path.empty()) return;
  const auto& winner = main.copies.front();
  const std::string main_dir = dir_of(winner.windows_path);
  auto read = probe::read_cudnn_kernels(std::filesystem::path(winner.local_path).parent_path(), major);
  if (!read) {
    auto& f = c.add("windows.gpu-kernels", Severity::warning, main_dir);
    f.seen = "its DLLs' GPU code cannot be read: " + read.error().message;
    return;
  }
  // named as Windows names them
  std::vector<model::LibraryKernels>& libraries = read->libraries;
  for (auto& k : libraries) k.path = main_dir + "\\" + std::filesystem::path(k.path).filename().string();
  for (const auto& [file, why] : read->unreadable) {
    auto& f = c.add("windows.gpu-kernels", Severity::warning, main_dir + "\\" + file.filename().string());
    f.seen = "its GPU code cannot be read: " + why;
    f.fix = "a DLL whose fatbin containers do not frame is damaged or not NVIDIA's: copy the cuDNN release again";
  }
  const char* k_source = "the DLLs' fatbin containers (.nv_fatb), read here; PTX ISA release history (NVIDIA)";
  for (const auto& [cc, subject] : c.gpus) {
    const auto j = judge_library_set(libraries, cc, c.driver, model::Os::windows, c.kb);
    if (j.with_code == 0) {
      auto& f = c.add("windows.gpu-kernels", Severity::note, subject);
      f.seen = "cuDNN in " + main_dir + ": " +
               (libraries.empty() ? std::string("no DLL of it could be read for its GPU code")
                                  : "none of its " + std::to_string(libraries.size()) + " DLLs carries GPU code to judge");
      f.source = k_source;
      continue;
    }
    auto& f = c.add("windows.gpu-kernels", j.severity, subject);
    f.seen = "cuDNN in " + main_dir + " (" + contents->main_dll + " wins): " + j.seen;
    f.expected = j.expected;
    f.fix = j.fix;
    f.source = k_source;
  }
}

// cudnn64_M.dll of another major than the pinned one: not loaded for this cuDNN, but a leftover.
void other_majors(Ctx& c) {
  if (!c.pinned) return;
  auto& order = c.view.desktop;
  for (const auto& name : dll_names_in_order(order, "cudnn64_", ".dll")) {
    auto m = main_dll_major(name);
    if (!m || *m == static_cast<int>(c.pinned->major())) continue;
    std::string num = std::to_string(*m);
    auto l = find_dll(order, name, "another cuDNN major (stale)");
    Judge j{c, order};
    for (const auto& x : l.copies) {
      if (in_system_dirs(j.dir(x))) continue;
      auto& f = c.add("windows.stale-dll", Severity::warning, x.windows_path);
      f.seen = describe(x) + " sits in " + j.dir(x).why + ": cuDNN " + std::to_string(c.pinned->major()) +
               " does not load it, but programs built for cuDNN " + num + " do; it is left from an older install";
      f.fix = "delete it if nothing needs cuDNN " + num + "; " + stale_fix(j, x);
      f.source = k_src_search_order;
    }
    c.view.desktop.dlls.push_back(std::move(l));
  }
}

// Any cuDNN DLL in System32, the 16-bit System directory or the Windows directory.
void system_dirs(Ctx& c) {
  auto& order = c.view.desktop;
  for (const auto& d : order.dirs) {
    if (!in_system_dirs(d) || !d.searched) continue;
    for (const auto& name : cudnn_files_in(d)) {
      auto l = find_dll(order, name, "");
      for (const auto& x : l.copies) {
        if (!same_windows_path(dir_of(x.windows_path), d.windows_path)) continue;
        auto& f = c.add("windows.stale-dll", Severity::error, x.windows_path);
        f.seen = describe(x) + " is in " + d.windows_path + ", which every program searches before any PATH entry";
        f.fix = "delete it (or move it into a cuDNN tree): keep cuDNN out of System32 and the Windows directory";
        f.source = k_src_search_order;
      }
    }
  }
}

}  // namespace

void cudnn_dlls(Ctx& c) {
  auto& order = c.view.desktop;
  if (c.pinned) {
    c.majors.push_back(static_cast<int>(c.pinned->major()));
  } else {
    for (const auto& name : dll_names_in_order(order, "cudnn64_", ".dll")) {
      if (auto m = main_dll_major(name)) c.majors.push_back(*m);
    }
    std::sort(c.majors.begin(), c.majors.end(), std::greater<>());  // the newest decides cudnn_dir
  }
  if (c.majors.empty()) {
    auto& f = c.add("windows.cudnn-dll", Severity::note, "cudnn64_*.dll");
    f.seen = "no cuDNN DLL in any directory of the search order";
    f.fix =
        "stage cuDNN (`stackpin stage --target windows`) and put its DLL directory on PATH; pass --manifest to have doctor "
        "judge against a pinned stack";
  }
  for (int major : c.majors) {
    judge_major(c, major);
    sub_libraries(c, major);
    gpu_kernels(c, major);
  }
  other_majors(c);
  system_dirs(c);
}

void zlibwapi(Ctx& c) {
  const auto& z = c.kb.facts().zlibwapi;
  if (!z) return;
  auto& order = c.view.desktop;
  std::string range = "cuDNN " + z->from.prefix(2) + " up to " + z->until.prefix(2) + " (exclusive)";
  auto l = find_dll(order, z->dll, range + " load it");
  std::optional<model::Version> v = c.pinned ? c.pinned : c.cudnn_seen;
  std::string subject = z->dll;
  auto where_to_put = c.cudnn_dir.empty() ? std::string("the cuDNN DLL directory") : c.cudnn_dir;
  if (!v) {
    if (!c.cudnn_seen_major || !l.copies.empty()) {
      c.view.desktop.dlls.push_back(std::move(l));
      return;
    }
    int m = *c.cudnn_seen_major;
    if (m >= static_cast<int>(z->from.major()) && m <= static_cast<int>(z->until.major())) {
      auto& f = c.add("windows.zlibwapi", Severity::warning, subject);
      f.seen = "not in the search order, and the exact version of the cuDNN " + std::to_string(m) + " that loads cannot be told; " + range +
               " need it";
      f.fix = "put the x64 zlibwapi.dll into " + where_to_put + " if that cuDNN is in the range";
      f.source = knowledge::first_source(z->source);
    }
    c.view.desktop.dlls.push_back(std::move(l));
    return;
  }
  std::string cudnn = "cuDNN " + v->prefix(3);
  if (!c.kb.zlibwapi_needed(*v)) {
    auto& f = c.add("windows.zlibwapi", Severity::ok, subject);
    f.seen = cudnn + " does not load it (" + range + " do)";
    f.source = knowledge::first_source(z->source);
  } else if (l.copies.empty()) {
    auto& f = c.add("windows.zlibwapi", Severity::error, subject);
    f.seen = cudnn + " loads " + z->dll + ", which no directory of the search order holds (the cuDNN zip does not ship it)";
    f.expected = z->dll + " (x64) next to cudnn64_" + std::to_string(v->major()) + ".dll or on PATH";
    f.fix = "put the x64 zlibwapi.dll into " + where_to_put + "; without it cuDNN fails with \"Could not locate zlibwapi.dll\"";
    f.source = knowledge::first_source(z->source);
  } else if (l.copies.front().machine == "x86") {
    auto& f = c.add("windows.zlibwapi", Severity::error, subject);
    f.seen = l.copies.front().windows_path + " is a 32-bit (x86) DLL: a 64-bit process cannot load it";
    f.fix = "replace it with the x64 build (dll_x64\\zlibwapi.dll of the zlib package)";
    f.source = knowledge::first_source(z->source);
  } else {
    auto& f = c.add("windows.zlibwapi", Severity::ok, subject);
    f.seen = cudnn + " needs it; loads " + l.copies.front().windows_path + " (" + order.dirs[l.copies.front().dir].why + ")";
    f.source = knowledge::first_source(z->source);
  }
  c.view.desktop.dlls.push_back(std::move(l));
}

void vc_runtime(Ctx& c) {
  auto& order = c.view.desktop;
  std::vector<std::string> found;
  bool any_problem = false;
  std::string source = knowledge::first_source(c.kb.facts().vc_runtime_source);
  for (const char* dll : k_vc_runtime_dlls) {
    auto l = find_dll(order, dll, "VC++ 2015-2022 runtime");
    if (l.copies.empty()) {
      any_problem = true;
      auto& f = c.add("windows.vc-runtime", Severity::error, dll);
      f.seen = std::string(dll) + " is in no directory of the search order (the Visual C++ Redistributable installs it into System32)";
      f.expected =
          "the VC++ 2015-2022 runtime (x64): cuDNN's DLLs are MSVC builds; NVIDIA states no requirement, cuDNN's conda "
          "packages depend on vc14_runtime";
      f.fix =
          "install the Microsoft Visual C++ 2015-2022 Redistributable (" + std::string(c.view.machine == "arm64" ? "arm64" : "x64") + ")";
      f.source = source;
    } else if (l.copies.front().machine == "x86") {
      any_problem = true;
      auto& f = c.add("windows.vc-runtime", Severity::error, dll);
      f.seen = l.copies.front().windows_path + " is a 32-bit (x86) DLL and comes first: a 64-bit process cannot load it";
      f.fix = "remove it from " + order.dirs[l.copies.front().dir].windows_path +
              " (32-bit runtimes belong in SysWOW64), or "
              "reinstall the x64 Visual C++ Redistributable";
      f.source = source;
    } else {
      found.push_back(l.copies.front().windows_path);
    }
    order.dlls.push_back(std::move(l));
  }
  if (!any_problem) {
    auto& f = c.add("windows.vc-runtime", Severity::ok, "VC++ 2015-2022 runtime");
    f.seen = "loads " + util::join(found, ", ");
    f.source = source;
  }
}

// The machine's architecture (System32's own DLLs) against the manifest's [targets.windows] arch
// and the winning cudnn64_N.dll: Arm64 DLLs do not load on an x64 machine, and x64 ones load on
// Windows on Arm only into emulated x64 processes.
void architecture(Ctx& c) {
  const std::string& machine = c.view.machine;
  if (machine != "x64" && machine != "arm64") return;  // not told (no System32 in the tree)
  const std::string subject = "the machine (" + machine + ")";
  const std::string arm_fix =
      "NVIDIA builds CUDA 13.4 and cuDNN 9.27 for Windows on Arm: set arch = \"arm64\" in [targets.windows] and "
      "stage again (`stackpin stage --target windows`)";
  bool problem = false;
  if (!c.exp.windows_arch.empty() && c.exp.windows_arch != machine) {
    problem = true;
    const bool arm_tree = c.exp.windows_arch == "arm64";
    auto& f = c.add("windows.architecture", arm_tree ? Severity::error : Severity::warning, subject);
    f.seen = "the manifest's [targets.windows] arch = \"" + c.exp.windows_arch + "\", but " + c.view.machine_from + " is " + machine;
    f.expected = "a tree built for " + machine;
    f.fix = arm_tree ? "stage the x64 tree for this machine (arch = \"x64\", the default)"
                     : "x64 DLLs load here only into emulated x64 programs; " + arm_fix;
  }
  const auto& [dll, dll_machine] = c.cudnn_machine;
  if (!dll_machine.empty() && dll_machine != machine) {
    problem = true;
    const bool loads_emulated = machine == "arm64" && dll_machine == "x64";
    auto& f = c.add("windows.architecture", loads_emulated ? Severity::warning : Severity::error, dll);
    f.seen = dll + " is an " + dll_machine + " DLL on an " + machine + " machine" +
             (loads_emulated ? ": only emulated x64 programs can load it" : ": no program here can load it");
    f.expected = "cuDNN built for " + machine;
    f.fix = loads_emulated ? arm_fix : "stage the " + machine + " archive of cuDNN and put it first on PATH";
  }
  if (!problem) {
    auto& f = c.add("windows.architecture", Severity::ok, subject);
    f.seen = c.view.machine_from + " is " + machine + (dll_machine.empty() ? "" : ", and so is " + dll);
  }
}

}  // namespace core::winrules
