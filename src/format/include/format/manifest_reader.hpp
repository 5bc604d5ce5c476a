// Reading a stackpin.toml manifest (schema 1) into model::Manifest.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include "model/manifest.hpp"
#include "util/result.hpp"

namespace format {

// Parses a schema-1 manifest. `path` names the file in messages.
// Errors (all with file:line:col and the offending line): parse (TOML syntax), invalid (unknown
// key, wrong type, malformed version/hash/size, duplicate platform, bad enum value). Only the
// syntax of each key is judged here; whether the stack makes sense is `check`'s job.
util::Result<model::Manifest> parse_manifest(std::string_view text, const std::string& path);

// Reads and parses a manifest file; `bytes`, when given, receives what was read (the manifest's
// SHA-256 is taken of exactly those bytes). Errors: those of parse_manifest, not_found, io.
util::Result<model::Manifest> load_manifest(const std::filesystem::path& path, std::string* bytes = nullptr);

}  // namespace format
