// Reading the knowledge data files into model::Facts.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/facts.hpp"
#include "util/result.hpp"

namespace format {

// Reads the knowledge data files (data/knowledge/*.toml, see data/README.md) into Facts. `files`
// maps a file name (drivers.toml, cudnn-archives.toml, ...) to its text; every known file must be
// present. Errors: parse / invalid with file:line:col (the data is held to the same strictness as
// a user's manifest: unknown keys and malformed versions are errors), not_found for a missing file.
util::Result<model::Facts> parse_facts(const std::vector<std::pair<std::string, std::string_view>>& files);

// Reads one of those files into `facts`: the fields that file fills (a file reads no other's
// fields, except torch-wheels.toml, which adds to frameworks.toml's torch releases and so is read
// after it). Errors: those of parse_facts, for that file.
util::Status read_facts_file(const std::string& name, std::string_view text, model::Facts& facts);

// The file names parse_facts() expects, in the order it reads them.
const std::vector<std::string>& facts_file_names();

}  // namespace format
