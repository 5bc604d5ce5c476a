#pragma once
// Path rules for archive entries (see paths.cpp for why they are what they are).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace archive_io {

enum class NameRules {
  posix,    // the tree is used on Linux
  windows,  // the tree will be copied to Windows: reserved names, trailing dots/spaces, case collisions
};

// Splits an entry name into components, dropping "." and empty components. Errors (unsafe):
// an absolute path, a drive letter or UNC prefix, a backslash, a ".." component, a NUL or other
// control character, and with NameRules::windows also reserved device names (CON, NUL, COM1,
// ...), names ending in a dot or space, and characters Windows forbids (<>:"|?*).
util::Result<std::vector<std::string>> split_entry_path(std::string_view name, NameRules rules);

// Joins components with '/'.
std::string join_path(const std::vector<std::string>& parts);

// The key under which two names collide on the target's file system (lowercase for Windows).
std::string collision_key(const std::string& path, NameRules rules);

// Resolves a symlink's target lexically from the link's directory: nullopt when it is absolute
// or climbs above the root. `link_dir` is the link's parent, as components.
std::optional<std::vector<std::string>> resolve_link_lexically(const std::vector<std::string>& link_dir, std::string_view target);

}  // namespace archive_io
