// Where the archive cache lives (--cache-dir, STACKPIN_CACHE_DIR, XDG_CACHE_HOME, ~/.cache) and its content-addressed paths.
#include "core/archives/cache.hpp"

#include <system_error>

namespace core {
namespace fs = std::filesystem;

namespace {
// A variable's value when it is set and not empty.
std::optional<std::string> non_empty(const util::Env& env, const char* name) {
  auto v = env.get(name);
  if (v && !v->empty()) return v;
  return std::nullopt;
}
}  // namespace

util::Result<fs::path> default_cache_dir(const util::Env& env) {
  auto set = [&](const char* name) { return non_empty(env, name); };
  if (auto v = set("STACKPIN_CACHE_DIR")) return fs::path(*v);
  if (util::host_is_windows()) {
    if (auto v = set("LOCALAPPDATA")) return fs::path(*v) / "stackpin" / "cache";
  } else {
    if (auto v = set("XDG_CACHE_HOME")) return fs::path(*v) / "stackpin";
    if (auto v = set("HOME")) return fs::path(*v) / ".cache" / "stackpin";
  }
  return util::Error(util::ErrorCode::not_found, "no cache directory: STACKPIN_CACHE_DIR, XDG_CACHE_HOME and HOME are all unset")
      .with_hint("give one with --cache-dir DIR or STACKPIN_CACHE_DIR=DIR");
}

std::optional<fs::path> user_config_path(const util::Env& env) {
  auto set = [&](const char* name) { return non_empty(env, name); };
  if (auto v = set("STACKPIN_CONFIG")) return fs::path(*v);
  if (util::host_is_windows()) {
    if (auto v = set("APPDATA")) return fs::path(*v) / "stackpin" / "config.toml";
    return std::nullopt;
  }
  if (auto v = set("XDG_CONFIG_HOME")) return fs::path(*v) / "stackpin" / "config.toml";
  if (auto v = set("HOME")) return fs::path(*v) / ".config" / "stackpin" / "config.toml";
  return std::nullopt;
}

fs::path cache_entry_dir(const fs::path& cache, const std::string& sha256) { return cache / "sha256" / sha256; }

fs::path cache_entry_path(const fs::path& cache, const std::string& sha256, const std::string& file) {
  return cache_entry_dir(cache, sha256) / file;
}

fs::path partial_path(const fs::path& cache, const std::string& sha256) { return cache / "partial" / (sha256 + ".part"); }

fs::path partial_url_path(const fs::path& cache, const std::string& sha256) { return cache / "partial" / (sha256 + ".url"); }

std::optional<fs::path> find_in_cache(const fs::path& cache, const ArchiveExpectation& e) {
  if (cache.empty() || e.sha256.empty() || !e.size) return std::nullopt;
  std::error_code ec;
  fs::path dir = cache_entry_dir(cache, e.sha256);
  if (!e.file.empty()) {
    fs::path p = dir / e.file;
    if (fs::is_regular_file(p, ec) && fs::file_size(p, ec) == *e.size && !ec) return p;
  }
  std::optional<fs::path> found;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (!it->is_regular_file(ec2) || it->file_size(ec2) != *e.size || ec2) continue;
    if (found) return std::nullopt;  // ambiguous: not something fetch leaves behind
    found = it->path();
  }
  return found;
}

}  // namespace core
