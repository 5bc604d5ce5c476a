#pragma once
// Path rules for archive entries (see paths.cpp for why they are what they are).
#include <cstddef>
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

// Bounds on a name, checked before any other work is done on it: a name longer than the longest
// path Linux opens (PATH_MAX), a component longer than any file system holds (NAME_MAX, and NTFS's
// 255 UTF-16 units), or more components deep than any toolkit tree, is refused whole, so that a
// hostile name of 400 KB and 200,000 components costs one comparison, not a walk of its parents.
inline constexpr std::size_t k_max_name_bytes = 4096;
inline constexpr std::size_t k_max_component_bytes = 255;
inline constexpr std::size_t k_max_depth = 128;

// Splits an entry name into components, dropping "." and empty components. Errors (unsafe):
// a name past the bounds above, an absolute path, a drive letter or UNC prefix, a backslash, a
// ".." component, a NUL or other control character, a component in the form of a Windows 8.3 short
// name (CUDNN6~1.DLL: on NTFS another name of an existing file, refused for every target as git's
// core.protectNTFS does, since a Linux tree may live on NTFS under WSL), and with
// NameRules::windows also reserved device names (CON, NUL, COM1, ...), names ending in a dot or
// space, and characters Windows forbids (<>:"|?*).
util::Result<std::vector<std::string>> split_entry_path(std::string_view name, NameRules rules);

// The one error every refusal of a hostile archive entry gives, here and in the layers that place
// an archive's files: unsafe, `unsafe archive entry "NAME": WHY`, with the hint that nothing was
// staged.
util::Error unsafe_entry(std::string_view name, const std::string& why);

// Joins components with '/'.
std::string join_path(const std::vector<std::string>& parts);

// The key under which two names collide on the target's file system (lowercase for Windows).
std::string collision_key(const std::string& path, NameRules rules);

// Resolves a symlink's target lexically from the link's directory: nullopt when it is absolute
// or climbs above the root. `link_dir` is the link's parent, as components.
std::optional<std::vector<std::string>> resolve_link_lexically(const std::vector<std::string>& link_dir, std::string_view target);

}  // namespace archive_io
