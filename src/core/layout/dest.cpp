// Where a manifest's tree lives, and the default DEST (dest.hpp).
#include "core/layout/dest.hpp"

namespace core {

std::string manifest_tree(model::Target target, const model::Manifest& m) {
  if (target == model::Target::linux) return m.linux && m.linux->prefix ? m.linux->prefix->value : "";
  if (target != model::Target::windows || !m.windows) return "";
  if (m.windows->layout.value == model::WindowsLayout::cuda_merge) return m.windows->cuda_path ? m.windows->cuda_path->value : "";
  return m.windows->prefix ? m.windows->prefix->value : "";
}

std::optional<std::filesystem::path> default_dest(model::Target target, const std::optional<std::filesystem::path>& dest_option,
                                                  const model::Manifest& m) {
  if (dest_option) return dest_option;
  if (target == model::Target::linux && m.linux && m.linux->prefix) return std::filesystem::path(m.linux->prefix->value);
  return std::nullopt;
}

}  // namespace core
