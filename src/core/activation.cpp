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
    return a;
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
  return a;
}

}  // namespace core
