#include "core/activation.hpp"

#include <algorithm>

namespace core {

util::Result<gen::WindowsActivation> windows_activation(const model::Manifest& m, const knowledge::KnowledgeBase& kb) {
  if (!m.windows)
    return util::Error(util::ErrorCode::invalid, m.path + " has no [targets.windows]")
        .with_hint("add [targets.windows] with layout and prefix (or cuda_path for cuda-merge)");
  if (!m.cudnn) return util::Error(util::ErrorCode::invalid, m.path + " pins no [cudnn]");
  gen::WindowsActivation a;
  a.name = m.name.value;
  a.cudnn_version = m.cudnn->version.value.text();
  if (m.windows->cuda_path) a.cuda_path = m.windows->cuda_path->value;
  if (m.cuda) a.cuda_version = m.cuda->version.value.prefix(2);
  // what every layout shares: headers, the main DLL's name, zlibwapi, the driver minimum
  auto complete = [&](gen::WindowsActivation& w) -> gen::WindowsActivation {
    w.include_dir = w.cudnn_root + "\\include";
    const auto* contents = kb.cudnn_contents(static_cast<int>(m.cudnn->version.value.major()));
    w.main_dll = contents ? contents->main_dll : "cudnn64_" + std::to_string(m.cudnn->version.value.major()) + ".dll";
    w.zlibwapi_needed = kb.zlibwapi_needed(m.cudnn->version.value);
    if (m.driver && m.driver->windows) w.min_driver = m.driver->windows->value.text();
    else if (m.cuda) {
      auto dm = kb.driver_minimum(m.cuda->version.value, model::Os::windows);
      if (dm.effective != "unknown") w.min_driver = dm.effective;
    }
    return w;
  };
  auto strip = [](std::string s) {
    while (s.size() > 3 && (s.back() == '\\' || s.back() == '/')) s.pop_back();
    return s;
  };
  if (m.windows->layout.value == model::WindowsLayout::cuda_merge) {
    if (!m.windows->cuda_path)
      return util::Error(util::ErrorCode::invalid, "[targets.windows] layout = \"cuda-merge\" needs cuda_path")
          .at(m.locate(m.windows->pos));
    a.cudnn_root = strip(m.windows->cuda_path->value);
    bool cuda13 = m.cuda && m.cuda->version.value.major() >= 13;
    a.dll_dir = a.cudnn_root + (cuda13 ? "\\bin\\x64" : "\\bin");
    a.import_lib = a.cudnn_root + "\\lib\\x64\\cudnn.lib";
    return complete(a);
  }
  if (!m.windows->prefix)
    return util::Error(util::ErrorCode::invalid, "[targets.windows] layout = \"isolated\" needs prefix").at(m.locate(m.windows->pos));
  a.cudnn_root = strip(m.windows->prefix->value);
  const auto* rule = kb.windows_dll_dir(m.cudnn->version.value);
  if (!rule)
    return util::Error(util::ErrorCode::unsupported, "stackpin does not know where cuDNN " + m.cudnn->version.value.prefix(3) +
                                                         " keeps its Windows DLLs")
        .with_hint("add the layout to data/knowledge/cudnn-layouts.toml");
  std::string dir = rule->dirs.front();
  std::replace(dir.begin(), dir.end(), '/', '\\');
  a.dll_dir = a.cudnn_root + "\\" + dir;
  const auto* lib = kb.windows_import_lib_dir(m.cudnn->version.value);
  std::string libdir = lib ? lib->dirs.front() : "lib/x64";
  std::replace(libdir.begin(), libdir.end(), '/', '\\');
  a.import_lib = a.cudnn_root + "\\" + libdir + "\\cudnn.lib";
  return complete(a);
}

}  // namespace core
