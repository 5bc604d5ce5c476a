// Reads the settings file ([fetch] mirrors, [nvidia] base) with the same strictness as a manifest.
#include "format/config_reader.hpp"

#include <system_error>

#include "toml_schema.hpp"
#include "util/fs.hpp"

namespace format {

using detail::Diagnostics;
using detail::TableReader;

namespace {
bool has_scheme(const std::string& url, bool registry = false) {
  if (registry)
    for (const char* s : {"oci://", "oci+http://"})
      if (url.rfind(s, 0) == 0 && url.size() > std::string(s).size()) return true;
  for (const char* s : {"http://", "https://", "ftp://", "ftps://", "file://"})
    if (url.rfind(s, 0) == 0 && url.size() > std::string(s).size()) return true;
  return false;
}
}  // namespace

util::Result<UserConfig> parse_user_config(std::string_view text, const std::string& path) {
  UserConfig c;
  c.path = path;
  auto lines = detail::split_lines(text);
  Diagnostics diag(path, &lines);
  auto doc = detail::parse_toml(text, path, diag);
  if (!doc) return diag.first();
  TableReader top(*doc, "", diag);
  if (const toml::table* t = top.subtable("fetch")) {
    TableReader f(*t, "fetch", diag);
    if (const toml::array* arr = f.array("mirrors")) {
      for (const auto& el : *arr) {
        if (!el.is_string() || !has_scheme(el.as_string()->get(), true)) {
          diag.error(el.source(),
                     "`fetch.mirrors` must list URLs such as \"https://mirror.example.org/cudnn/redist/\", "
                     "\"file:///srv/mirror/cudnn/redist/\" or \"oci://registry.example/team/cuda-mirror\"",
                     "a mirror is a copy of NVIDIA's https://developer.download.nvidia.com/compute/cudnn/redist/ tree, or a "
                     "registry repository that `stackpin mirror push` filled");
          continue;
        }
        c.mirrors.push_back(el.as_string()->get());
      }
    }
    f.finish();
  }
  if (const toml::table* t = top.subtable("nvidia")) {
    TableReader n(*t, "nvidia", diag);
    if (const toml::node* base = n.get("base")) {
      if (!base->is_string() || !has_scheme(base->as_string()->get()))
        diag.error(base->source(),
                   "`nvidia.base` must be a URL such as \"https://artifactory.example.org/nvidia/compute/\" or "
                   "\"file:///srv/nvidia/compute/\"",
                   "it names a copy of NVIDIA's https://developer.download.nvidia.com/compute/ tree, with cuda/redist/ and "
                   "cudnn/redist/ below it");
      else
        c.nvidia_base = base->as_string()->get();
    }
    n.finish();
  }
  top.finish();
  if (diag.any()) return diag.first();
  return c;
}

util::Result<std::optional<UserConfig>> load_user_config(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<UserConfig>();
  SP_TRY_ASSIGN(auto text, util::read_file(path));
  SP_TRY_ASSIGN(auto c, parse_user_config(text, path.string()));
  return std::optional<UserConfig>(std::move(c));
}

}  // namespace format
