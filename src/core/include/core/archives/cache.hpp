#pragma once
// The download cache: archives kept by their SHA-256, so that a file in the cache is the pinned
// one by construction (fetch renames a download into place only after size and hash matched).
//   CACHE/sha256/<64 hex>/<NVIDIA's file name>   complete, verified archives
//   CACHE/partial/<64 hex>.part                  a download in progress (resumable)
//   CACHE/partial/<64 hex>.url                   the URL the .part came from
#include <filesystem>
#include <optional>
#include <string>

#include "core/archives/verify.hpp"
#include "util/env.hpp"
#include "util/result.hpp"

namespace core {

// $STACKPIN_CACHE_DIR, else $XDG_CACHE_HOME/stackpin, else $HOME/.cache/stackpin (Windows:
// %LOCALAPPDATA%\stackpin\cache). Errors: not_found (none of these variables is set), with a hint
// naming --cache-dir.
util::Result<std::filesystem::path> default_cache_dir(const util::Env& env);

// The settings file: $STACKPIN_CONFIG, else $XDG_CONFIG_HOME/stackpin/config.toml, else
// $HOME/.config/stackpin/config.toml (Windows: %APPDATA%\stackpin\config.toml); nullopt when no
// variable tells where it is.
std::optional<std::filesystem::path> user_config_path(const util::Env& env);

std::filesystem::path cache_entry_dir(const std::filesystem::path& cache, const std::string& sha256);
std::filesystem::path cache_entry_path(const std::filesystem::path& cache, const std::string& sha256, const std::string& file);
std::filesystem::path partial_path(const std::filesystem::path& cache, const std::string& sha256);
std::filesystem::path partial_url_path(const std::filesystem::path& cache, const std::string& sha256);

// The cached copy of an archive: CACHE/sha256/<hex>/<file> when it has the pinned size, else
// the one file of the pinned size in that folder (a cache filled under another file name).
// nullopt when there is none; the content is not re-hashed (see fetch's --verify-cached).
std::optional<std::filesystem::path> find_in_cache(const std::filesystem::path& cache, const ArchiveExpectation& e);

}  // namespace core
