#pragma once
// The user's settings file (config.toml): settings that belong to a machine or a site rather
// than to a manifest: [fetch] mirrors, and [nvidia] base.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace format {

struct UserConfig {
  std::string path;                  // the file it was read from
  std::vector<std::string> mirrors;  // [fetch] mirrors, in order
  // [nvidia] base: a copy of NVIDIA's https://developer.download.nvidia.com/compute/ tree (its
  // cuda/redist/ and cudnn/redist/ below it); "" = NVIDIA's own
  std::string nvidia_base;
};

// Parses config.toml text; `path` names the file in messages.
// Errors (with file:line:col and the offending line): invalid (TOML syntax, an unknown table or
// key, a mirror or base that is not a string with a scheme: http(s)://, ftp(s)://, file://).
util::Result<UserConfig> parse_user_config(std::string_view text, const std::string& path);

// Reads `path`; nullopt when the file does not exist. Errors: those of parse_user_config, io.
util::Result<std::optional<UserConfig>> load_user_config(const std::filesystem::path& path);

}  // namespace format
