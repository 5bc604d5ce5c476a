// `stackpin doctor --windows-root`: builds the search orders for a Windows tree (the desktop one,
// and Python's when --python is given), then runs the judgements over them. Options are
// validated here, since a relative --app-dir or a missing --windows-root would make every later
// answer wrong: those are usage errors, not findings.
#include <algorithm>
#include <cctype>
#include <system_error>

#include "core/doctor/doctor.hpp"
#include "core/windows/windows_search.hpp"
#include "doctor/windows/doctor_windows_rules.hpp"
#include "probe/windows_loader.hpp"
#include "util/strings.hpp"

namespace core {

namespace fs = std::filesystem;
using model::Severity;

namespace winrules {

model::Finding& Ctx::add(std::string rule, Severity severity, std::string subject) {
  return model::add_finding(findings, std::move(rule), severity, std::move(subject));
}

int position(const model::SearchOrder& order, const std::string& windows_dir, bool any) {
  if (windows_dir.empty()) return -1;
  for (std::size_t i = 0; i < order.dirs.size(); ++i)
    if ((any || order.dirs[i].searched) && same_windows_path(order.dirs[i].windows_path, windows_dir)) return static_cast<int>(i);
  return -1;
}

std::string dir_of(const std::string& windows_file) {
  auto pos = windows_file.rfind('\\');
  if (pos == std::string::npos) return "";
  return windows_file.substr(0, pos == 2 ? 3 : pos);
}

std::optional<model::Version> full_version(const model::DllCopy& copy) {
  auto v = model::Version::parse(copy.version);
  if (v && v->size() >= 3) return v;
  return std::nullopt;
}

std::string describe(const model::DllCopy& copy) {
  std::string s = copy.windows_path;
  if (full_version(copy))
    s += " (cuDNN " + copy.version + ", from " + copy.version_from + ")";
  else if (!copy.version.empty())
    s += " (cuDNN " + copy.version + ", exact version unknown: no cudnn_version.h beside it)";
  if (!copy.machine.empty() && copy.machine != "x64") s += " [" + copy.machine + " image]";
  return s;
}

std::vector<std::string> cudnn_files_in(const model::SearchDir& dir) {
  std::vector<std::string> names;
  if (!dir.exists) return names;
  std::error_code ec;
  for (fs::directory_iterator it(dir.local_path, ec), end; !ec && it != end; it.increment(ec)) {
    std::string n = util::to_lower(it->path().filename().string());
    if (n.rfind("cudnn", 0) == 0 && n.size() > 4 && n.compare(n.size() - 4, 4, ".dll") == 0 && it->is_regular_file(ec)) names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {
bool from_path(const model::SearchDir& d) { return d.source == model::SearchSource::path || d.source == model::SearchSource::user_path; }
std::string entry_subject(const model::SearchDir& d) { return d.why + ": " + d.raw; }
}  // namespace

void path_entries(Ctx& c) {
  const auto& dirs = c.view.desktop.dirs;
  for (const auto& d : dirs) {
    if (!from_path(d)) continue;
    if (d.quoted) {
      auto& f = c.add("windows.path-quoted", Severity::warning, entry_subject(d));
      f.seen = "written in double quotes: the DLL loader takes the quotes as part of the name and finds nothing there";
      if (d.exists) f.seen += " (" + d.windows_path + " itself exists)";
      f.expected = "PATH entries without quotes, even with spaces";
      f.fix = "write it as " + d.windows_path;
      f.source = k_src_search_order;
      continue;
    }
    switch (d.mapping) {
      case model::PathMapping::variable: {
        auto& f = c.add("windows.path-variable", Severity::note, entry_subject(d));
        f.seen = "%" + util::join(d.unexpanded, "%, %") + "% cannot be expanded here, so doctor cannot tell what this entry holds";
        f.fix = "pass --env " + (d.unexpanded.empty() ? std::string("NAME") : d.unexpanded.front()) +
                "=VALUE, or give the process PATH (where Windows has expanded it)";
        continue;
      }
      case model::PathMapping::unc: {
        auto& f = c.add("windows.path-unmapped", Severity::note, entry_subject(d));
        f.seen = "a network (UNC) path: doctor does not map shares, so DLLs there are not seen";
        f.fix = "copy the share's DLLs into the tree under a --drive to judge them; an unreachable share also slows every DLL search";
        continue;
      }
      case model::PathMapping::drive_unmapped: {
        auto& f = c.add("windows.path-unmapped", Severity::note, entry_subject(d));
        f.seen = "drive " + d.windows_path.substr(0, 2) + " is not mapped, so DLLs there are not seen";
        f.fix = "map it with --drive " + d.windows_path.substr(0, 1) + "=DIR";
        continue;
      }
      case model::PathMapping::relative: {
        auto& f = c.add("windows.path-relative", Severity::warning, entry_subject(d));
        f.seen = "a relative entry: Windows resolves it against each program's current directory";
        if (!d.local_path.empty()) f.seen += " (with --cwd: " + d.windows_path + ")";
        f.fix = "replace it with an absolute path; a relative entry lets a DLL planted in any working directory load";
        f.source = k_src_search_order;
        continue;
      }
      default: break;
    }
    if (d.mapping == model::PathMapping::mapped && !d.exists && d.searched) {
      auto& f = c.add("windows.path-missing-dir", Severity::warning, entry_subject(d));
      f.seen = "no such directory (looked for " + d.local_path + ")";
      f.fix = "remove it from PATH, or restore what it pointed to";
    }
    if (d.duplicate_of && from_path(dirs[*d.duplicate_of])) {
      auto& f = c.add("windows.path-duplicate", Severity::note, entry_subject(d));
      f.seen = "names the same directory as " + dirs[*d.duplicate_of].why + " (" + dirs[*d.duplicate_of].raw + ")";
      f.fix = "remove the later entry; only the first one counts";
    }
  }
}

void path_length(Ctx& c) {
  std::size_t n = c.view.path_length;
  std::string subject = "PATH (" + std::to_string(n) + " characters)";
  if (n > 32767) {
    auto& f = c.add("windows.path-length", Severity::error, subject);
    f.seen = "longer than 32,767 characters, the most an environment block can hold: Windows cannot pass it on whole";
    f.fix = "shorten PATH: drop missing and duplicate entries (see the findings above)";
    f.source = k_src_env_length;
  } else if (n > 2047) {
    auto& f = c.add("windows.path-length", Severity::warning, subject);
    f.seen =
        "longer than 2,047 characters: older Windows versions and tools that build the environment from the registry cut "
        "it there, silently dropping the last entries";
    f.fix = "shorten PATH: drop missing and duplicate entries; keep the cuDNN and CUDA entries early";
    f.source = k_src_env_length;
  } else if (n > 1024) {
    auto& f = c.add("windows.path-length", Severity::note, subject);
    f.seen = "longer than 1,024 characters: `setx PATH ...` would cut it there";
    f.fix = "never change PATH with setx; edit the registry value (activate.ps1 -Scope Machine does) or use the System dialog";
  }
}

}  // namespace winrules

namespace {

util::Error usage(std::string message, std::string hint) {
  return util::Error(util::ErrorCode::usage, std::move(message)).with_hint(std::move(hint));
}

bool absolute_windows(const std::string& p) {
  std::string n = normalize_windows_path(p);
  return (n.size() >= 3 && n[1] == ':' && n[2] == '\\') || n.rfind("\\\\", 0) == 0;
}

util::Status validate(const WindowsDoctorOptions& o) {
  std::error_code ec;
  if (!fs::is_directory(o.root, ec))
    return usage("--windows-root " + o.root.string() + ": no such directory", "give the directory that holds the tree's Windows\\ folder");
  for (const auto& [letter, dir] : o.drives) {
    if (!std::isalpha(static_cast<unsigned char>(letter)))
      return usage(std::string("--drive ") + letter + "=...: not a drive letter", "write it as --drive D=/path/to/dir");
    if (!fs::is_directory(dir, ec))
      return usage(std::string("--drive ") + letter + "=" + dir.string() + ": no such directory", "map the drive to an existing directory");
  }
  auto check = [](const char* option, const std::string& value) -> util::Status {
    if (!value.empty() && !absolute_windows(value))
      return usage(std::string(option) + " " + value + ": not an absolute Windows path",
                   std::string("write it as ") + option + " \"C:\\...\"");
    return {};
  };
  SP_TRY(check("--app-dir", o.app_dir));
  SP_TRY(check("--cwd", o.cwd));
  SP_TRY(check("--python", o.python));
  for (const auto& d : o.dll_dirs) SP_TRY(check("--dll-dir", d));
  return {};
}

std::size_t characters(const std::string& utf8) {
  return static_cast<std::size_t>(
      std::count_if(utf8.begin(), utf8.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
}

}  // namespace

WindowsDoctorOptions live_windows_doctor_options(const util::Env& env, std::string machine_path, std::optional<std::string> user_path) {
  WindowsDoctorOptions o;
  o.live = true;
  o.root = "C:\\";
  std::error_code ec;
  for (char d = 'D'; d <= 'Z'; ++d)
    if (fs::is_directory(std::string(1, d) + ":\\", ec)) o.drives.emplace_back(d, std::string(1, d) + ":\\");
  o.path = std::move(machine_path);
  o.user_path = std::move(user_path);
  auto cwd = fs::current_path(ec);
  if (!ec) o.cwd = cwd.string();
  for (const auto& name : windows_path_variables(o.path + ";" + o.user_path.value_or("")))
    if (auto v = env.get(name)) o.env[name] = *v;
  for (const char* name : {"SystemRoot", "windir", "SystemDrive", "ProgramFiles", "ProgramFiles(x86)", "ProgramData", "USERPROFILE",
                           "LOCALAPPDATA", "APPDATA"})
    if (auto v = env.get(name)) o.env[name] = *v;
  o.driver_version = probe::windows_driver_version();
  o.gpus = probe::windows_gpus();
  return o;
}

util::Status doctor_windows(const WindowsDoctorOptions& o, const knowledge::KnowledgeBase& kb, model::DoctorReport& report,
                            const model::Manifest* manifest) {
  SP_TRY(validate(o));
  WindowsTree tree;
  tree.drives['C'] = o.root;
  for (const auto& [letter, dir] : o.drives) tree.drives[static_cast<char>(std::toupper(static_cast<unsigned char>(letter)))] = dir;
  tree.vars = windows_default_vars(o.env);

  const auto& exp = report.expected;
  std::string path = util::join(o.path_first, ";");
  if (!o.path.empty()) path += (path.empty() ? "" : ";") + o.path;
  SearchInputs in;
  in.path = path;
  in.user_path = o.user_path;
  in.cwd = o.cwd;
  in.dll_dirs = o.dll_dirs;
  in.app_dir = o.app_dir;
  if (in.app_dir.empty() && !o.python.empty()) {
    std::string py = normalize_windows_path(o.python);
    in.app_dir = winrules::dir_of(py);
    in.app_dir_from_python = true;
  }
  in.cuda_path = exp.windows_cuda_path;
  if (auto v = model::Version::parse(exp.cuda_version)) in.cuda_version = v->prefix(2);

  model::WindowsView view;
  for (const auto& [letter, dir] : tree.drives) view.drives.emplace_back(std::string(1, letter) + ":", dir.string());
  view.path = path;
  view.user_path = o.user_path;
  view.path_length = characters(path) + (o.user_path ? 1 + characters(*o.user_path) : 0);
  view.app_dir = in.app_dir;
  view.cwd = o.cwd;
  view.python = o.python;
  view.dll_dirs = o.dll_dirs;
  // the machine's architecture: what System32's own DLLs were built for
  for (const char* dll : {"ntdll.dll", "kernel32.dll"}) {
    std::string file = tree.system_root() + "\\System32\\" + dll;
    auto mapped = map_windows_path(tree, file);
    std::error_code ec;
    if (!fs::is_regular_file(mapped.local_path, ec)) continue;
    view.machine = pe_machine(mapped.local_path);
    view.machine_from = file;
    break;
  }
  view.desktop = desktop_search_order(tree, in);
  if (!o.python.empty()) view.python_order = python_search_order(tree, in);

  winrules::Ctx c{kb, exp, view, report.findings, {}, {}, {}, {}, {}, {}};
  if (!exp.cudnn_version.empty()) c.pinned = model::Version::parse(exp.cudnn_version);
  if (!exp.cuda_version.empty()) c.cuda = model::Version::parse(exp.cuda_version);
  for (const auto& g : o.gpus)
    if (auto cc = model::Version::parse(g.cc)) c.gpus.emplace_back(*cc, "GPU " + std::to_string(g.index) + " " + g.name);
  if (c.gpus.empty() && manifest)
    for (const auto& [cc, pos] : kb.gpu_archs(*manifest)) c.gpus.emplace_back(cc, "[gpus] " + kb.gpu_label(cc));
  if (o.driver_version) c.driver = model::Version::parse(*o.driver_version);
  winrules::cudnn_dlls(c);
  winrules::zlibwapi(c);
  winrules::vc_runtime(c);
  winrules::architecture(c);
  winrules::cuda_bin_order(c);
  winrules::path_scope(c);
  winrules::python_dirs(c);
  winrules::conda_envs(c, tree, o.python);
  winrules::path_entries(c);
  winrules::path_length(c);
  if (o.live) winrules::real_loader(c, o.path_first);
  if (o.driver_version) winrules::driver(c, *o.driver_version, manifest);
  report.windows = std::move(view);
  return {};
}

}  // namespace core
