// pip's installation report is JSON (https://pip.pypa.io/en/stable/reference/installation-report/):
// version "1", an `install` list whose entries carry `download_info` (the URL and, for an archive,
// `archive_info.hashes`) and `metadata` (the distribution's core metadata as JSON). It is read as
// untrusted input: pip runs whatever interpreter the user pointed stackpin at.
#include "format/pip_report.hpp"

#include <nlohmann/json.hpp>

#include "model/pylock.hpp"
#include "util/strings.hpp"

namespace format {

using util::Error;
using util::ErrorCode;

util::Result<std::vector<PipChoice>> parse_pip_report(std::string_view text, const std::string& what) {
  auto bad = [&](const std::string& why) {
    return Error(ErrorCode::invalid, "pip's installation report " + what + " " + why)
        .with_hint("stackpin reads pip's report version 1 (pip 22.2 and later)");
  };
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return bad("is not JSON");
  if (!doc.contains("version") || !doc["version"].is_string() || doc["version"].get<std::string>() != "1") return bad("is not version 1");
  if (!doc.contains("install") || !doc["install"].is_array()) return bad("has no `install` list");
  std::vector<PipChoice> out;
  for (const auto& item : doc["install"]) {
    if (!item.is_object() || !item.contains("download_info") || !item.contains("metadata"))
      return bad("has an entry without download_info");
    const auto& di = item["download_info"];
    const auto& md = item["metadata"];
    if (!di.is_object() || !md.is_object() || !di.contains("url") || !di["url"].is_string() || !md.contains("name") ||
        !md["name"].is_string() || !md.contains("version") || !md["version"].is_string())
      return bad("has an entry without a URL, name or version");
    PipChoice c;
    c.name = model::normalize_python_name(md["name"].get<std::string>());
    c.version = md["version"].get<std::string>();
    c.url = di["url"].get<std::string>();
    if (!di.contains("archive_info") || !di["archive_info"].is_object())
      return Error(ErrorCode::invalid, util::printable(c.name, 80) + " " + util::printable(c.version, 40) + " would be installed from " +
                                           util::printable(c.url, 120) +
                                           ", which is not a wheel or archive (a VCS checkout or a local directory)")
          .with_hint("stackpin pins wheels only: lock from an index that serves a wheel of it");
    const auto& ai = di["archive_info"];
    if (ai.contains("hashes") && ai["hashes"].is_object() && ai["hashes"].contains("sha256") && ai["hashes"]["sha256"].is_string())
      c.sha256 = util::to_lower(ai["hashes"]["sha256"].get<std::string>());
    else if (ai.contains("hash") && ai["hash"].is_string() && ai["hash"].get<std::string>().rfind("sha256=", 0) == 0)
      c.sha256 = util::to_lower(ai["hash"].get<std::string>().substr(7));
    if (!c.sha256.empty() && (c.sha256.size() != 64 || !util::is_hex(c.sha256)))
      return bad("gives " + util::printable(c.name, 80) + " a malformed sha256");
    out.push_back(std::move(c));
  }
  return out;
}

std::optional<std::map<std::string, std::string>> parse_pip_list(std::string_view output) {
  auto start = output.find("[{");
  if (start == std::string_view::npos) start = output.find("[]");
  auto end = output.rfind(']');
  if (start == std::string_view::npos || end == std::string_view::npos || end < start) return std::nullopt;
  auto doc = nlohmann::json::parse(output.substr(start, end + 1 - start), nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) return std::nullopt;
  std::map<std::string, std::string> out;
  for (const auto& e : doc)
    if (e.is_object() && e.contains("name") && e["name"].is_string() && e.contains("version") && e["version"].is_string())
      out[model::normalize_python_name(e["name"].get<std::string>())] = e["version"].get<std::string>();
  return out;
}

}  // namespace format
