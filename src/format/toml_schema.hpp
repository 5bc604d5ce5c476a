#pragma once
// Strict reading of TOML tables: every key a reader asks for is marked known, and finish()
// reports the keys nobody asked for, with the closest valid name. Type and value errors carry the
// exact file:line:col. Errors are collected; the earliest one in the file is returned, so users
// fix problems top to bottom.
#include <toml++/toml.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/manifest.hpp"
#include "util/result.hpp"
#include "util/strings.hpp"

namespace format::detail {

class Diagnostics {
 public:
  Diagnostics(std::string path, const std::vector<std::string>* lines) : m_path(std::move(path)), m_lines(lines) {}
  void error(const toml::source_region& at, std::string message, std::string hint = {});
  void error_at(int line, int column, std::string message, std::string hint = {});
  bool any() const { return !m_errors.empty(); }
  // The earliest error, with a hint counting the others.
  util::Error first() const;
  util::SourceLocation locate(int line, int column) const;

 private:
  std::string m_path;
  const std::vector<std::string>* m_lines;
  std::vector<util::Error> m_errors;
};

model::Pos pos_of(const toml::source_region& r);
model::Pos pos_of(const toml::node& n);

class TableReader {
 public:
  TableReader(const toml::table& table, std::string name, Diagnostics& diag) : m_table(table), m_name(std::move(name)), m_diag(diag) {}

  const std::string& name() const { return m_name; }
  const toml::table& table() const { return m_table; }
  Diagnostics& diag() { return m_diag; }
  // The dotted name of a key in this table ("cudnn.archives[2].sha256").
  // The key's dotted name as messages show it (control characters escaped, a long name cut).
  std::string qualified(const std::string& key) const { return util::printable(m_name.empty() ? key : m_name + "." + key, 120); }

  // Marks `key` known and returns its node, or nullptr when absent.
  const toml::node* get(const std::string& key);
  // Position of a key (its name) when present, else of the table.
  model::Pos key_pos(const std::string& key) const;

  std::optional<model::Located<std::string>> string(const std::string& key, bool required = false, const char* example = nullptr);
  std::optional<model::Located<std::int64_t>> integer(const std::string& key, bool required = false, const char* example = nullptr);
  std::optional<model::Located<bool>> boolean(const std::string& key);
  // A string that must parse as a version with between min_parts and max_parts parts.
  std::optional<model::Located<model::Version>> version(const std::string& key, std::size_t min_parts, std::size_t max_parts,
                                                        const char* example, bool required = false);
  // A string that must be one of `allowed`; returns its index.
  std::optional<model::Located<int>> choice(const std::string& key, const std::vector<std::string>& allowed, bool required = false);
  const toml::table* subtable(const std::string& key);
  const toml::array* array(const std::string& key);

  // Reports every key of the table that was not asked for.
  void finish();

 private:
  void type_error(const std::string& key, const toml::node& n, const char* wanted, const char* example);

  const toml::table& m_table;
  std::string m_name;
  Diagnostics& m_diag;
  std::set<std::string> m_known;
};

const char* type_name(const toml::node& n);
std::size_t edit_distance(const std::string& a, const std::string& b);
std::vector<std::string> split_lines(std::string_view text);

// Parses a TOML document; syntax errors go to `diag`. Returns nullopt on a syntax error.
std::optional<toml::table> parse_toml(std::string_view text, const std::string& path, Diagnostics& diag);

}  // namespace format::detail
