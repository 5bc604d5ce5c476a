// The TOML reading helpers every reader shares: positions, unknown-key errors, typed getters with locations.
#include "toml_schema.hpp"

#include <algorithm>

#include "util/strings.hpp"

namespace format::detail {

model::Pos pos_of(const toml::source_region& r) { return {static_cast<int>(r.begin.line), static_cast<int>(r.begin.column)}; }
model::Pos pos_of(const toml::node& n) { return pos_of(n.source()); }

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines = util::split(text, '\n');
  for (auto& l : lines)
    if (!l.empty() && l.back() == '\r') l.pop_back();
  return lines;
}

util::SourceLocation Diagnostics::locate(int line, int column) const {
  const bool has = m_lines && line > 0 && static_cast<std::size_t>(line) <= m_lines->size();
  return util::make_location(m_path, line, column, has ? (*m_lines)[line - 1] : std::string());
}

void Diagnostics::error_at(int line, int column, std::string message, std::string hint) {
  util::Error e(util::ErrorCode::invalid, std::move(message));
  e.where = locate(line, column);
  if (!hint.empty()) e.hints.push_back(std::move(hint));
  m_errors.push_back(std::move(e));
}

void Diagnostics::error(const toml::source_region& at, std::string message, std::string hint) {
  auto p = pos_of(at);
  error_at(p.line, p.column, std::move(message), std::move(hint));
}

util::Error Diagnostics::first() const {
  auto it = std::min_element(m_errors.begin(), m_errors.end(), [](const util::Error& a, const util::Error& b) {
    auto la = a.where ? a.where->line : 0, lb = b.where ? b.where->line : 0;
    auto ca = a.where ? a.where->column : 0, cb = b.where ? b.where->column : 0;
    return la != lb ? la < lb : ca < cb;
  });
  util::Error e = *it;
  if (m_errors.size() > 1)
    e.hints.push_back(std::to_string(m_errors.size() - 1) + " more problem(s) in " + m_path +
                      " after this one; fix this first and run again");
  return e;
}

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "a value";
  }
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<toml::table> parse_toml(std::string_view text, const std::string& path, Diagnostics& diag) {
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    std::string what(e.description());
    diag.error(e.source(), "TOML syntax error: " + what,
               "check quoting: Windows paths are easiest in single quotes ('C:\\tools\\cudnn'); a path with an apostrophe "
               "goes in double quotes with every backslash doubled (\"C:\\\\Users\\\\O'Brien\\\\cudnn\") or in triple single "
               "quotes ('''C:\\Users\\O'Brien\\cudnn''')");
    return std::nullopt;
  }
}

const toml::node* TableReader::get(const std::string& key) {
  m_known.insert(key);
  return m_table.get(key);
}

model::Pos TableReader::key_pos(const std::string& key) const {
  for (auto&& [k, v] : m_table)
    if (k.str() == key) return pos_of(k.source());
  return pos_of(m_table.source());
}

void TableReader::type_error(const std::string& key, const toml::node& n, const char* wanted, const char* example) {
  std::string msg = "`" + qualified(key) + "` must be " + wanted + ", not " + type_name(n);
  std::string hint = example ? std::string("for example: ") + key + " = " + example : std::string();
  m_diag.error(n.source(), msg, hint);
}

std::optional<model::Located<std::string>> TableReader::string(const std::string& key, bool required, const char* example) {
  const toml::node* n = get(key);
  if (!n) {
    if (required) {
      auto p = pos_of(m_table.source());
      m_diag.error_at(p.line, p.column, "missing required key `" + qualified(key) + "`",
                      example ? std::string("add: ") + key + " = " + example : std::string());
    }
    return std::nullopt;
  }
  if (!n->is_string()) {
    type_error(key, *n, "a string", example);
    return std::nullopt;
  }
  return model::Located<std::string>{n->as_string()->get(), pos_of(*n)};
}

std::optional<model::Located<bool>> TableReader::boolean(const std::string& key) {
  const toml::node* n = get(key);
  if (!n) return std::nullopt;
  if (!n->is_boolean()) {
    type_error(key, *n, "true or false (no quotes)", "true");
    return std::nullopt;
  }
  return model::Located<bool>{n->as_boolean()->get(), pos_of(*n)};
}

std::optional<model::Located<std::int64_t>> TableReader::integer(const std::string& key, bool required, const char* example) {
  const toml::node* n = get(key);
  if (!n) {
    if (required) {
      auto p = pos_of(m_table.source());
      m_diag.error_at(p.line, p.column, "missing required key `" + qualified(key) + "`",
                      example ? std::string("add: ") + key + " = " + example : std::string());
    }
    return std::nullopt;
  }
  if (!n->is_integer()) {
    type_error(key, *n, "an integer (no quotes)", example);
    return std::nullopt;
  }
  return model::Located<std::int64_t>{n->as_integer()->get(), pos_of(*n)};
}

std::optional<model::Located<model::Version>> TableReader::version(const std::string& key, std::size_t min_parts, std::size_t max_parts,
                                                                   const char* example, bool required) {
  auto s = string(key, required, example);
  if (!s) return std::nullopt;
  auto v = model::Version::parse(s->value);
  std::string parts = min_parts == max_parts ? std::to_string(min_parts) : std::to_string(min_parts) + " to " + std::to_string(max_parts);
  if (!v || v->size() < min_parts || v->size() > max_parts) {
    std::string why = !v ? "is not a version" : "has " + std::to_string(v->size()) + " part(s)";
    m_diag.error_at(
        s->pos.line, s->pos.column,
        "`" + qualified(key) + "` = \"" + util::printable(s->value, 80) + "\" " + why + ": expected " + parts + " dot-separated numbers",
        std::string("for example: ") + key + " = " + example);
    return std::nullopt;
  }
  return model::Located<model::Version>{*v, s->pos};
}

std::optional<model::Located<int>> TableReader::choice(const std::string& key, const std::vector<std::string>& allowed, bool required) {
  std::string example = "\"" + allowed.front() + "\"";
  auto s = string(key, required, example.c_str());
  if (!s) return std::nullopt;
  auto it = std::find(allowed.begin(), allowed.end(), s->value);
  if (it == allowed.end()) {
    std::vector<std::string> quoted;
    for (const auto& a : allowed) quoted.push_back("\"" + a + "\"");
    m_diag.error_at(s->pos.line, s->pos.column,
                    "`" + qualified(key) + "` = \"" + util::printable(s->value, 80) + "\" is not valid: use " + util::one_of(quoted));
    return std::nullopt;
  }
  return model::Located<int>{static_cast<int>(it - allowed.begin()), s->pos};
}

const toml::table* TableReader::subtable(const std::string& key) {
  const toml::node* n = get(key);
  if (!n) return nullptr;
  if (!n->is_table()) {
    m_diag.error(n->source(), "`" + qualified(key) + "` must be a table ([" + qualified(key) + "]), not " + type_name(*n));
    return nullptr;
  }
  return n->as_table();
}

const toml::array* TableReader::array(const std::string& key) {
  const toml::node* n = get(key);
  if (!n) return nullptr;
  if (!n->is_array()) {
    m_diag.error(n->source(), "`" + qualified(key) + "` must be an array, not " + type_name(*n));
    return nullptr;
  }
  return n->as_array();
}

void TableReader::finish() {
  for (auto&& [k, v] : m_table) {
    std::string key(k.str());
    if (m_known.count(key)) continue;
    std::string best;
    std::size_t best_d = 3;
    for (const auto& known : m_known) {
      // the distance is at least the difference in length: a long unknown key (a 5 MB one from a
      // hostile file) costs nothing instead of its length times every known key's
      const std::size_t gap = key.size() > known.size() ? key.size() - known.size() : known.size() - key.size();
      if (gap >= best_d) continue;
      auto d = edit_distance(key, known);
      if (d < best_d) {
        best_d = d;
        best = known;
      }
    }
    std::vector<std::string> valid(m_known.begin(), m_known.end());
    std::string hint = best.empty() ? "valid keys here: " + util::join(valid, ", ")
                                    : "did you mean `" + best + "`? valid keys here: " + util::join(valid, ", ");
    m_diag.error(k.source(), "unknown key `" + qualified(key) + "`", hint);
  }
}

}  // namespace format::detail
