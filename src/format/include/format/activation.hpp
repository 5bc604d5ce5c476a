#pragma once
// The activation record (DEST/.stackpin/activation-<scope>.json) and the JSON form of an
// activation report (activation.cpp).
#include <string>
#include <string_view>

#include "format/json.hpp"
#include "model/activation.hpp"
#include "util/result.hpp"

namespace format {

std::string write_activation_record(const model::ActivationRecord& r);
// Reads a record as untrusted input: schema 1, the expected scope, at most 256 entries of each
// kind, every PATH entry and value a single line without '"', ';' (PATH entries) or control
// characters, at most 32767 characters, and only the variables stackpin sets (CUDNN_PATH,
// CUDA_PATH, CUDA_PATH_V<major>_<minor>). Errors: parse (not JSON), invalid (anything else), each
// naming `path` and the entry.
util::Result<model::ActivationRecord> parse_activation_record(std::string_view text, const std::string& path, const std::string& scope);

// {"scope", "where", "undo", "dry_run", "changed", "changes": [{name, before, after}], "path_first",
// "path_removed", "stale", "left_alone", "record"}
JsonDoc to_json(const model::ActivationReport& r);

}  // namespace format
