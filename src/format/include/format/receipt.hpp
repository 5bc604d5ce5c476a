// Reading and writing the receipt that stage leaves in DEST, and the JSON form of a verify report.
#pragma once
#include <string>
#include <string_view>

#include "format/json.hpp"
#include "model/apply.hpp"
#include "model/staging.hpp"
#include "util/result.hpp"

namespace format {

// The receipt as JSON text (stable key order, one file per line-ish via indentation).
std::string write_receipt(const model::Receipt& r);
// Reads a receipt. Errors: parse (not JSON), invalid (missing keys, another schema).
util::Result<model::Receipt> parse_receipt(std::string_view text, const std::string& path);

JsonDoc to_json(const model::VerifyReport& r);
JsonDoc to_json(const model::StageReport& r);
JsonDoc to_json(const model::UnstageReport& r);
JsonDoc to_json(const model::StatusReport& r);
JsonDoc to_json(const model::DebReport& r);
JsonDoc to_json(const model::ApplyReport& r);

}  // namespace format
