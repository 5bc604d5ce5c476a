// The JSON form of a fetch report.
#include <nlohmann/json.hpp>

#include "format/json.hpp"
#include "json_impl.hpp"

namespace format {

using nlohmann::json;

JsonDoc to_json(const model::FetchReport& r) {
  json arr = json::array();
  for (const auto& a : r.archives) {
    json j{{"platform", model::to_string(a.platform)},
           {"file", a.file},
           {"url", a.url},
           {"tried", a.tried},
           {"path", a.path},
           {"sha256", a.sha256},
           {"size", a.size},
           {"status", model::to_string(a.status)},
           {"attempts", a.attempts},
           {"bytes_downloaded", a.bytes_downloaded}};
    j["error"] = a.error ? to_json(*a.error).impl().value : json(nullptr);
    arr.push_back(std::move(j));
  }
  JsonDoc d;
  d.impl().value = json{{"cache_dir", r.cache_dir}, {"offline", r.offline}, {"mirrors", r.mirrors}, {"archives", std::move(arr)}};
  return d;
}

}  // namespace format
