// What the activation scripts need from a manifest and a staged DEST: the Windows DLL list, prefixes, the PATH rule.
#include "core/layout/activation.hpp"

#include <algorithm>

#include "core/windows/windows_path_rule.hpp"
#include "model/contracts.hpp"
#include "util/strings.hpp"

namespace core {

util::Result<gen::LinuxActivation> linux_activation(const model::Manifest& m, const std::string& prefix) {
  gen::LinuxActivation a;
  a.name = m.name.value;
  if (m.cudnn) a.cudnn_version = m.cudnn->version.value.text();
  if (!prefix.empty())
    a.prefix = prefix;
  else if (m.linux && m.linux->prefix)
    a.prefix = m.linux->prefix->value;
  else
    return util::Error(util::ErrorCode::invalid, m.path + " has no [targets.linux] prefix")
        .with_hint("set prefix in [targets.linux], or pass --prefix DIR (where the staged tree lives)");
  if (a.prefix.front() != '/') return util::Error(util::ErrorCode::usage, "--prefix must be an absolute path, got \"" + a.prefix + "\"");
  return a;
}

util::Result<gen::WindowsActivation> windows_activation(const model::Manifest& m, const knowledge::KnowledgeBase& kb) {
  if (!m.windows)
    return util::Error(util::ErrorCode::invalid, m.path + " has no [targets.windows]")
        .with_hint("add [targets.windows] with layout and prefix (or cuda_path for cuda-merge)");
  if (!m.cudnn) return util::Error(util::ErrorCode::invalid, m.path + " pins no [cudnn]");
  if (m.windows->layout.value == model::WindowsLayout::cuda_merge) {
    if (!m.windows->cuda_path)
      return util::Error(util::ErrorCode::invalid, "[targets.windows] layout = \"cuda-merge\" needs cuda_path")
          .at(m.locate(m.windows->pos));
    const model::Platform p = m.windows_platform();
    const std::string arch = model::windows_arch_dir(p);
    const bool arch_bin = p == model::Platform::windows_arm64 || (m.cuda && m.cuda->version.value.major() >= 13);
    auto w =
        windows_activation_for_tree(m, kb, m.windows->cuda_path->value, arch_bin ? "bin/" + arch : "bin", "lib/" + arch + "/cudnn.lib");
    if (auto s = check_path_entry(w.dll_dir); !s) return std::move(s).error().at(m.locate(m.windows->cuda_path->pos));
    return w;
  }
  if (!m.windows->prefix)
    return util::Error(util::ErrorCode::invalid, "[targets.windows] layout = \"isolated\" needs prefix").at(m.locate(m.windows->pos));
  const model::Platform p = m.windows_platform();
  const auto* rule = kb.windows_dll_dir(m.cudnn->version.value, p);
  if (!rule)
    return util::Error(util::ErrorCode::unsupported, "stackpin does not know where cuDNN " + m.cudnn->version.value.prefix(3) +
                                                         " keeps its " + model::to_string(p) + " DLLs")
        .with_hint("add the layout to data/knowledge/cudnn-layouts.toml");
  const auto* lib = kb.windows_import_lib_dir(m.cudnn->version.value, p);
  auto w = windows_activation_for_tree(m, kb, m.windows->prefix->value, rule->dirs.front(),
                                       (lib ? lib->dirs.front() : "lib/" + std::string(model::windows_arch_dir(p))) + "/cudnn.lib");
  if (auto s = check_path_entry(w.dll_dir); !s) return std::move(s).error().at(m.locate(m.windows->prefix->pos));
  return w;
}

model::Manifest windows_tree_placed_at(const model::Manifest& m, const std::string& root) {
  model::Manifest placed = m;
  if (!placed.windows) return placed;
  auto& w = *placed.windows;
  if (w.layout.value == model::WindowsLayout::cuda_merge)
    w.cuda_path = model::Located<std::string>{root, w.pos};
  else
    w.prefix = model::Located<std::string>{root, w.pos};
  return placed;
}

util::Result<gen::WindowsActivation> windows_activation_at(const model::Manifest& m, const knowledge::KnowledgeBase& kb,
                                                           const std::string& root) {
  if (!model::is_windows_absolute(root))
    return util::Error(util::ErrorCode::usage,
                       "--prefix must be an absolute Windows path (C:\\... or \\\\server\\share\\...), got \"" + root + "\"");
  // the manifest's tree (for its layout), whose prefix or cuda_path may even be missing
  if (!m.windows) return windows_activation(m, kb);
  auto w = windows_activation(windows_tree_placed_at(m, root), kb);
  if (!w) {
    auto e = std::move(w).error();
    if (e.code == util::ErrorCode::unsupported) e.where.reset();  // about --prefix, not the manifest's line
    return e;
  }
  return w;
}

std::vector<std::string> windows_next_steps(const std::string& dest, const std::string& prefix) {
  std::string root = prefix;
  while (root.size() > 3 && (root.back() == '\\' || root.back() == '/')) root.pop_back();
  auto act = gen::run_hints(root + "\\.stackpin\\activate.ps1", true);
  auto chk = gen::run_hints(root + "\\.stackpin\\check-cudnn.ps1", false);
  std::string cmd_script = root + "\\.stackpin\\activate.cmd";
  // staged where it will be used (stackpin.exe with DEST at the prefix): nothing to copy
  std::string d = dest;
  while (d.size() > 3 && (d.back() == '\\' || d.back() == '/')) d.pop_back();
  const bool in_place = util::to_lower(d) == util::to_lower(root);
  std::vector<std::string> out;
  if (!in_place)
    out.push_back("copy " + dest + " to " + root + " on the Windows machine (all of it: check-cudnn.ps1 finds a partial copy)");
  out.push_back(std::string(in_place ? "activate it" : "activate it there") + ", in PowerShell: " + act.powershell +
                " (add -Scope Machine, as administrator, to make it permanent)");
  if (cmd_script.find_first_of("\"%") == std::string::npos) out.push_back("or in cmd.exe (this window only): call \"" + cmd_script + "\"");
  out.push_back("check the machine, in PowerShell: " + chk.powershell);
  if (chk.cmd.rfind("(", 0) != 0) out.push_back("  in cmd.exe: " + chk.cmd);
  out.push_back("  from WSL: " + chk.wsl);
  return out;
}

util::Status check_path_entry(const std::string& dir) {
  if (dir.find(';') != std::string::npos)
    return util::Error(util::ErrorCode::unsupported,
                       "\"" + dir + "\" holds ';', which separates PATH entries: Windows cannot put it on PATH")
        .with_hint("choose a prefix without ';' (a quoted PATH entry is not searched by the DLL loader)");
  if (dir.find('"') != std::string::npos)
    return util::Error(util::ErrorCode::unsupported, "\"" + dir + "\" holds a double quote, which a Windows path cannot")
        .with_hint("choose another prefix");
  return {};
}

gen::WindowsActivation windows_activation_for_tree(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const std::string& root_in,
                                                   const std::string& dll_dir, const std::string& import_lib) {
  auto backslashes = [](std::string s) {
    std::replace(s.begin(), s.end(), '/', '\\');
    return s;
  };
  std::string root = root_in;
  while (root.size() > 3 && (root.back() == '\\' || root.back() == '/')) root.pop_back();
  gen::WindowsActivation w;
  w.name = m.name.value;
  if (m.cudnn) w.cudnn_version = m.cudnn->version.value.text();
  w.cudnn_root = root;
  w.arch = model::windows_arch_dir(m.windows_platform());
  w.dll_dir = dll_dir.empty() ? root : root + "\\" + backslashes(dll_dir);
  w.import_lib = root + "\\" + backslashes(import_lib);
  w.include_dir = root + "\\include";
  if (m.windows && m.windows->cuda_path) w.cuda_path = m.windows->cuda_path->value;
  if (m.cuda) w.cuda_version = m.cuda->version.value.prefix(2);
  if (m.cudnn) {
    const auto* contents = kb.cudnn_contents(static_cast<int>(m.cudnn->version.value.major()));
    w.main_dll = contents ? contents->main_dll : model::cudnn_library_name(m.cudnn->version.value.major(), true);
    w.zlibwapi_needed = kb.zlibwapi_needed(m.cudnn->version.value);
    w.header_version = m.cudnn->version.value.prefix(3);
    if (contents) w.dlls = contents->windows_dlls;
    if (w.dlls.empty()) w.dlls = {w.main_dll};
  }
  if (!w.cuda_path.empty() && m.cuda) {
    std::string root = w.cuda_path;
    while (root.size() > 3 && (root.back() == '\\' || root.back() == '/')) root.pop_back();
    w.cuda_bin_dirs.push_back(root + "\\bin");
    // CUDA 13 moved its DLLs to bin\x64; Windows on Arm's toolkit keeps them in bin\arm64
    const model::Platform p = m.windows_platform();
    if (p == model::Platform::windows_arm64 || m.cuda->version.value.major() >= 13)
      w.cuda_bin_dirs.push_back(root + "\\bin\\" + model::windows_arch_dir(p));
  }
  w.cudnn_patterns = cudnn_dll_patterns();
  w.toolkit_patterns = toolkit_dll_patterns();
  if (auto need = kb.required_driver(m, model::Os::windows); need.required) w.min_driver = need.required->text();
  return w;
}

}  // namespace core
