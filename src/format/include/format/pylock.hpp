// Reading and writing the Python lock, PEP 751's pylock.<name>.toml.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include "model/pylock.hpp"
#include "util/result.hpp"

namespace format {

// Parses a PEP 751 lock that stackpin can install: lock-version 1.x, every package a set of wheels
// (an sdist, a VCS checkout, a directory or an archive is refused: stackpin installs nothing it
// cannot pin by hash), each wheel with an http(s):// or file:// URL whose last component is its
// name, a size and a SHA-256; a wheel's name must be the package's name and version. Tables under
// `tool` and the keys PEP 751 defines that stackpin does not use are accepted and ignored.
// Errors (with file:line:col): parse, invalid.
util::Result<model::PyLock> parse_pylock(std::string_view text, const std::string& path);

// Reads and parses a pylock. Errors: those of parse_pylock, not_found, io.
util::Result<model::PyLock> load_pylock(const std::filesystem::path& path);

// The lock as TOML, packages in the order given; parse_pylock(render_pylock(l)) gives `l` back.
std::string render_pylock(const model::PyLock& lock);

// The Python lock's file name for a manifest name: "pylock.<name>.toml".
std::string pylock_file_name(const std::string& manifest_name);

}  // namespace format
