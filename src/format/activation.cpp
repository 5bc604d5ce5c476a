// The activation record and report as JSON.
#include "format/activation.hpp"

#include <regex>

#include "json_impl.hpp"

using nlohmann::json;

namespace format {

namespace {

constexpr std::size_t k_max_value = 32767;  // the longest environment value Windows keeps
constexpr std::size_t k_max_entries = 256;

// A value read back from the record: one line, no quote (PATH entries: no ';' either).
std::optional<std::string> bad_text(const std::string& v, bool path_entry) {
  if (v.size() > k_max_value) return "is longer than " + std::to_string(k_max_value) + " characters";
  for (unsigned char c : v)
    if (c < 0x20 || c == 0x7f) return "holds a control character";
  if (v.find('"') != std::string::npos) return "holds a '\"'";
  if (path_entry && v.find(';') != std::string::npos) return "holds a ';'";
  if (path_entry && v.empty()) return "is empty";
  return std::nullopt;
}

bool known_var(const std::string& name) {
  static const std::regex k_versioned("CUDA_PATH_V[0-9]{1,2}_[0-9]{1,2}");
  return name == "CUDNN_PATH" || name == "CUDA_PATH" || std::regex_match(name, k_versioned);
}

}  // namespace

std::string write_activation_record(const model::ActivationRecord& r) {
  json j;
  j["schema"] = r.schema;
  j["scope"] = r.scope;
  j["path_added"] = r.path_added;
  json removed = json::array();
  for (const auto& e : r.path_removed) removed.push_back({{"entry", e.entry}, {"index", e.index}});
  j["path_removed"] = removed;
  json vars = json::array();
  for (const auto& v : r.vars)
    vars.push_back({{"name", v.name}, {"before", v.before ? json(*v.before) : json(nullptr)}, {"after", v.after}});
  j["vars"] = vars;
  return j.dump(2) + "\n";
}

util::Result<model::ActivationRecord> parse_activation_record(std::string_view text, const std::string& path, const std::string& scope) {
  using util::Error;
  using util::ErrorCode;
  auto invalid = [&](const std::string& what) {
    return Error(ErrorCode::invalid, path + ": " + what)
        .with_hint("this file records what `stackpin activate` changed; it was edited or damaged: check the " + scope +
                   " PATH by hand, then delete the file");
  };
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded())
    return Error(ErrorCode::parse, path + ": not a JSON document").with_hint("delete it after checking the PATH by hand");
  if (!j.is_object()) return invalid("not a JSON object");
  model::ActivationRecord r;
  auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_number_integer() || schema->get<int>() != 1) return invalid("schema is not 1");
  auto sc = j.find("scope");
  if (sc == j.end() || !sc->is_string() || sc->get<std::string>() != scope)
    return invalid("it is not the record of the " + scope + " scope");
  r.scope = scope;
  auto added = j.find("path_added");
  auto removed = j.find("path_removed");
  auto vars = j.find("vars");
  if (added == j.end() || !added->is_array() || removed == j.end() || !removed->is_array() || vars == j.end() || !vars->is_array())
    return invalid("path_added, path_removed and vars must be arrays");
  if (added->size() > k_max_entries || removed->size() > k_max_entries || vars->size() > k_max_entries)
    return invalid("more than " + std::to_string(k_max_entries) + " entries");
  for (std::size_t i = 0; i < added->size(); ++i) {
    const auto& e = (*added)[i];
    if (!e.is_string()) return invalid("path_added[" + std::to_string(i) + "] is not a string");
    auto s = e.get<std::string>();
    if (auto why = bad_text(s, true)) return invalid("path_added[" + std::to_string(i) + "] " + *why);
    r.path_added.push_back(std::move(s));
  }
  for (std::size_t i = 0; i < removed->size(); ++i) {
    const auto& e = (*removed)[i];
    std::string at = "path_removed[" + std::to_string(i) + "]";
    if (!e.is_object() || !e.contains("entry") || !e["entry"].is_string() || !e.contains("index") || !e["index"].is_number_integer())
      return invalid(at + " needs a string entry and an integer index");
    model::RemovedPathEntry x{e["entry"].get<std::string>(), 0};
    auto index = e["index"].get<long long>();
    if (index < 0 || index > 4096) return invalid(at + ".index " + std::to_string(index) + " is out of range");
    x.index = static_cast<int>(index);
    if (auto why = bad_text(x.entry, true)) return invalid(at + ".entry " + *why);
    r.path_removed.push_back(std::move(x));
  }
  for (std::size_t i = 0; i < vars->size(); ++i) {
    const auto& e = (*vars)[i];
    std::string at = "vars[" + std::to_string(i) + "]";
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !e.contains("after") || !e["after"].is_string() ||
        !e.contains("before") || !(e["before"].is_string() || e["before"].is_null()))
      return invalid(at + " needs a string name and after, and a string or null before");
    model::ActivationVar v;
    v.name = e["name"].get<std::string>();
    if (!known_var(v.name)) return invalid(at + ".name \"" + v.name + "\" is not a variable stackpin sets");
    v.after = e["after"].get<std::string>();
    if (auto why = bad_text(v.after, false)) return invalid(at + ".after " + *why);
    if (e["before"].is_string()) {
      v.before = e["before"].get<std::string>();
      if (auto why = bad_text(*v.before, false)) return invalid(at + ".before " + *why);
    }
    r.vars.push_back(std::move(v));
  }
  return r;
}

JsonDoc to_json(const model::ActivationReport& r) {
  JsonDoc d;
  json& j = d.impl().value;
  j["scope"] = r.scope;
  j["where"] = r.where;
  j["undo"] = r.undo;
  j["dry_run"] = r.dry_run;
  j["files"] = r.files;
  j["changed"] = r.changed();
  json changes = json::array();
  for (const auto& c : r.changes)
    changes.push_back(
        {{"name", c.name}, {"before", c.before ? json(*c.before) : json(nullptr)}, {"after", c.after ? json(*c.after) : json(nullptr)}});
  j["changes"] = changes;
  j["path_first"] = r.path_first;
  j["path_removed"] = r.path_removed;
  j["stale"] = r.stale;
  j["left_alone"] = r.left_alone;
  j["notes"] = r.notes;
  j["record"] = r.record;
  return d;
}

}  // namespace format
