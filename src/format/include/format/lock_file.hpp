// Reading and writing stackpin.lock (schema 1).
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include "format/json.hpp"
#include "model/lock.hpp"
#include "util/result.hpp"

namespace format {

// Parses a schema-1 lock file. `path` names the file in messages. Errors (with file:line:col):
// parse (TOML syntax), invalid (unknown key, wrong type, malformed hash or size, another schema,
// two archives for one platform).
util::Result<model::Lock> parse_lock(std::string_view text, const std::string& path);

// Reads and parses a lock file. Errors: those of parse_lock, not_found (the hint says how to
// create it), io.
util::Result<model::Lock> load_lock(const std::filesystem::path& path);

// The lock as TOML text, keys in a fixed order; parse_lock(render_lock(l)) gives `l` back.
std::string render_lock(const model::Lock& lock);

// The lock as the report of `stackpin lock --json`, plus where it was written and whether it changed.
JsonDoc to_json(const model::Lock& lock, const std::string& written_to, bool changed);

}  // namespace format
