// What pip writes that stackpin reads: its installation report (`pip install --report`, version 1)
// and `pip list --format=json`.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace format {

// One distribution pip would install: normalized name, version, the URL it would download and the
// index's SHA-256 of it ("" when the index gave none).
struct PipChoice {
  std::string name, version, url, sha256;
};

// Parses pip's installation report. `what` says which run it is, for messages. Errors: invalid (not
// JSON, not version 1, an entry without a URL, name or version, a malformed hash, a distribution
// that is not an archive: a VCS checkout or a local directory).
util::Result<std::vector<PipChoice>> parse_pip_report(std::string_view text, const std::string& what);

// `pip list --format=json` (warnings pip prints before it are skipped): normalized name -> version;
// nullopt when the output holds no such list.
std::optional<std::map<std::string, std::string>> parse_pip_list(std::string_view output);

}  // namespace format
