// PEP 751 is the standard lock format of Python packaging; stackpin writes it so that the Python
// half of a stack can be read by any tool that reads pylock files, and reads it back strictly: it
// is an input another machine or a person may have edited. Only what stackpin can install with
// `pip install --require-hashes --no-deps` is accepted: wheels, each pinned by size and SHA-256.
// The file is written by hand like the stack's lock, so that its keys come out in a fixed order.
#include "format/pylock.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>

#include "toml_schema.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace format {
namespace {

using detail::Diagnostics;
using detail::TableReader;

const char* const k_fix = "regenerate it with `stackpin lock MANIFEST`";

std::string q(const std::string& s) { return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// The targets a marker names, when it is one stackpin writes: one target's marker, or several
// parenthesized and joined by " or ". nullopt for any other marker, which stackpin cannot evaluate
// exactly and does not guess at.
std::optional<std::set<std::string>> marker_targets(const std::string& marker) {
  static const std::vector<model::Platform> k_all = {model::Platform::linux_x86_64, model::Platform::linux_sbsa,
                                                     model::Platform::windows_x86_64, model::Platform::windows_arm64};
  std::set<std::string> known;
  for (auto p : k_all) known.insert(model::python_marker(p));
  if (known.count(marker)) return std::set<std::string>{marker};
  std::set<std::string> out;
  std::size_t start = 0;
  for (;;) {
    auto end = marker.find(") or (", start);
    std::string term = marker.substr(start, end == std::string::npos ? std::string::npos : end + 1 - start);
    if (term.size() < 2 || term.front() != '(' || term.back() != ')') return std::nullopt;
    term = term.substr(1, term.size() - 2);
    if (!known.count(term) || !out.insert(term).second) return std::nullopt;
    if (end == std::string::npos) break;
    start = end + 5;
  }
  return out;
}

bool printable_text(const std::string& s) {
  return std::none_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

void read_wheel(const toml::table& t, const std::string& name, Diagnostics& diag, model::PyPackage& pkg) {
  TableReader r(t, name, diag);
  model::PyWheel w;
  w.pos = detail::pos_of(t);
  auto wname = r.string("name");
  auto url = r.string("url");
  auto path = r.string("path");
  auto size = r.integer("size", true);
  r.get("upload-time");
  const toml::table* hashes = r.subtable("hashes");
  r.finish();
  if (path)
    diag.error_at(path->pos.line, path->pos.column,
                  "`" + r.qualified("path") + "` pins a wheel by a local path: stackpin pins wheels by URL",
                  "write the wheel's URL (file:///... for a local file)");
  if (!url) {
    if (!path) diag.error_at(w.pos.line, w.pos.column, "`" + name + "` has no `url`", k_fix);
    return;
  }
  w.url = url->value;
  const bool scheme_ok = w.url.starts_with("https://") || w.url.starts_with("http://") || w.url.starts_with("file:///");
  if (!scheme_ok || !printable_text(w.url) || w.url.find(' ') != std::string::npos) {
    diag.error_at(url->pos.line, url->pos.column,
                  "`" + r.qualified("url") + "` = \"" + util::printable(w.url, 80) + "\" is not an http(s):// or file:/// URL", k_fix);
    return;
  }
  const std::string file = model::url_file_name(w.url);
  if (!printable_text(file) || !printable_text(model::file_url_path(w.url))) {
    diag.error_at(url->pos.line, url->pos.column, "`" + r.qualified("url") + "` hides control characters in its %-escapes", k_fix);
    return;
  }
  w.name = wname ? wname->value : file;
  if (wname && wname->value != file)
    diag.error_at(wname->pos.line, wname->pos.column,
                  "`" + r.qualified("name") + "` = \"" + util::printable(w.name, 80) + "\" is not the file its URL names (\"" +
                      util::printable(file, 80) + "\")",
                  k_fix);
  auto parsed = model::parse_wheel_name(w.name);
  const model::Pos at = wname ? wname->pos : url->pos;
  if (!parsed) {
    diag.error_at(at.line, at.column,
                  "`" + r.qualified(wname ? "name" : "url") + "` does not name a wheel (NAME-VERSION-PY-ABI-PLATFORM.whl)",
                  "stackpin installs wheels only: " + std::string(k_fix));
  } else if (!pkg.name.empty() && (model::normalize_python_name(parsed->name) != pkg.name || parsed->version != pkg.version)) {
    diag.error_at(at.line, at.column,
                  "the wheel " + util::printable(w.name, 80) + " is not " + pkg.name + " " + util::printable(pkg.version, 40) +
                      ", the package it is listed under",
                  k_fix);
  }
  if (size) {
    if (size->value <= 0)
      diag.error_at(size->pos.line, size->pos.column, "`" + r.qualified("size") + "` must be a positive number of bytes", k_fix);
    else
      w.size = static_cast<std::uint64_t>(size->value);
  }
  if (!hashes) {
    diag.error_at(w.pos.line, w.pos.column, "`" + name + "` has no `hashes`: every wheel is pinned by its SHA-256", k_fix);
  } else {
    TableReader h(*hashes, name + ".hashes", diag);
    auto sha = h.string("sha256", true);
    for (const auto& [k, v] : *hashes) h.get(std::string(k.str()));  // other algorithms are allowed; sha256 is required
    h.finish();
    if (sha) {
      w.sha256 = sha->value;
      if (w.sha256.size() != 64 || !util::is_hex(w.sha256) || util::to_lower(w.sha256) != w.sha256)
        diag.error_at(sha->pos.line, sha->pos.column, "`" + name + ".hashes.sha256` is not 64 lower-case hex digits", k_fix);
    }
  }
  for (const auto& other : pkg.wheels)
    if (other.name == w.name)
      diag.error_at(at.line, at.column, "the wheel " + util::printable(w.name, 80) + " is listed twice for " + pkg.name, k_fix);
  pkg.wheels.push_back(std::move(w));
}

void read_package(const toml::table& t, int index, Diagnostics& diag, model::PyLock& lock) {
  const std::string name = "packages[" + std::to_string(index) + "]";
  TableReader r(t, name, diag);
  model::PyPackage p;
  p.pos = detail::pos_of(t);
  auto pname = r.string("name", true);
  auto version = r.string("version", true);
  auto index_url = r.string("index");
  auto marker = r.string("marker");
  for (const char* ignored : {"requires-python", "dependencies", "attestation-identities", "tool"}) r.get(ignored);
  for (const char* source : {"vcs", "directory", "archive", "sdist"})
    if (const toml::node* n = r.get(source))
      diag.error(n->source(),
                 "`" + r.qualified(source) + "`: stackpin installs wheels only, each pinned by its SHA-256, and this package comes as " +
                     (std::string(source) == "sdist" ? "a source distribution" : std::string("a ") + source),
                 "lock it from an index that serves a wheel for every target, or leave the package out");
  if (pname) {
    p.name = model::normalize_python_name(pname->value);
    if (p.name.empty() || p.name != pname->value || !printable_text(p.name))
      diag.error_at(pname->pos.line, pname->pos.column,
                    "`" + r.qualified("name") + "` = \"" + util::printable(pname->value, 60) + "\" is not a normalized package name (\"" +
                        util::printable(p.name, 60) + "\")",
                    k_fix);
  }
  if (version) {
    p.version = version->value;
    if (p.version.empty() || !printable_text(p.version) || p.version.find_first_of(" ,;=<>!") != std::string::npos)
      diag.error_at(version->pos.line, version->pos.column, "`" + r.qualified("version") + "` is not an exact version", k_fix);
  }
  if (index_url) p.index = index_url->value;
  std::set<std::string> targets;  // empty: every target of the lock
  if (marker) {
    p.marker = marker->value;
    if (auto t = marker_targets(p.marker))
      targets = *t;
    else
      diag.error_at(marker->pos.line, marker->pos.column,
                    "`" + r.qualified("marker") + "` = \"" + util::printable(p.marker, 120) +
                        "\" is not a marker stackpin writes: one target's (sys_platform == 'linux' and platform_machine == 'x86_64'), "
                        "or several in parentheses joined by \" or \"",
                    k_fix);
  }
  const toml::array* wheels = r.array("wheels");
  r.finish();
  if (!wheels || wheels->empty()) {
    diag.error_at(p.pos.line, p.pos.column, "`" + name + "` (" + p.name + ") lists no wheel", k_fix);
  } else {
    int i = 0;
    for (const auto& node : *wheels) {
      if (const toml::table* wt = node.as_table())
        read_wheel(*wt, name + ".wheels[" + std::to_string(i) + "]", diag, p);
      else
        diag.error(node.source(), "`" + name + ".wheels` must list tables");
      ++i;
    }
  }
  for (const auto& other : lock.packages) {
    if (other.name != p.name) continue;
    bool overlap = other.marker.empty() || p.marker.empty();
    if (auto theirs = marker_targets(other.marker))
      for (const auto& t : targets) overlap = overlap || theirs->count(t) > 0;
    if (overlap) diag.error_at(p.pos.line, p.pos.column, "the package " + p.name + " is listed twice for the same environments", k_fix);
  }
  lock.packages.push_back(std::move(p));
}

}  // namespace

util::Result<model::PyLock> parse_pylock(std::string_view text, const std::string& path) {
  model::PyLock lock;
  lock.path = path;
  lock.lines = detail::split_lines(text);
  Diagnostics diag(path, &lock.lines);
  auto doc = detail::parse_toml(text, path, diag);
  if (!doc) return diag.first();
  TableReader top(*doc, "", diag);
  if (auto v = top.string("lock-version", true, "\"1.0\"")) {
    lock.lock_version = v->value;
    if (!v->value.starts_with("1.") && v->value != "1")
      diag.error_at(v->pos.line, v->pos.column, "lock-version " + util::printable(v->value, 20) + " is not 1.x, which this stackpin reads",
                    "upgrade stackpin, or " + std::string(k_fix));
  }
  if (auto v = top.string("created-by", true)) lock.created_by = v->value;
  if (auto v = top.string("requires-python")) lock.requires_python = v->value;
  if (const toml::array* envs = top.array("environments"))
    for (const auto& e : *envs) {
      if (const auto* s = e.as_string())
        lock.environments.push_back(s->get());
      else
        diag.error(e.source(), "`environments` must list PEP 508 markers as strings", k_fix);
    }
  for (const char* ignored : {"extras", "dependency-groups", "default-groups", "tool"}) top.get(ignored);
  if (const toml::array* packages = top.array("packages")) {
    int i = 0;
    for (const auto& node : *packages) {
      if (const toml::table* t = node.as_table())
        read_package(*t, i, diag, lock);
      else
        diag.error(node.source(), "`packages` must be an array of tables: write [[packages]]");
      ++i;
    }
  }
  top.finish();
  if (diag.any()) return diag.first();
  return lock;
}

util::Result<model::PyLock> load_pylock(const std::filesystem::path& path) {
  auto text = util::read_file(path);
  if (!text) {
    auto e = std::move(text).error();
    e.context = "reading Python lock " + path.string();
    if (e.code == util::ErrorCode::not_found)
      e.hints.push_back("create it with `stackpin lock MANIFEST`, and commit it beside the stack's lock");
    return e;
  }
  return parse_pylock(*text, path.string());
}

std::string render_pylock(const model::PyLock& lock) {
  std::ostringstream o;
  o << "# The Python half of the stack (PEP 751), written by `stackpin lock`: every wheel pinned by\n"
       "# URL, size and SHA-256. stackpin's lock records this file's SHA-256: edit the manifest, not this.\n";
  o << "lock-version = " << q(lock.lock_version) << "\n";
  if (!lock.environments.empty()) {
    o << "environments = [\n";
    for (const auto& e : lock.environments) o << "  " << q(e) << ",\n";
    o << "]\n";
  }
  if (!lock.requires_python.empty()) o << "requires-python = " << q(lock.requires_python) << "\n";
  o << "created-by = " << q(lock.created_by) << "\n";
  for (const auto& p : lock.packages) {
    o << "\n[[packages]]\nname = " << q(p.name) << "\nversion = " << q(p.version) << "\n";
    if (!p.marker.empty()) o << "marker = " << q(p.marker) << "\n";
    if (!p.index.empty()) o << "index = " << q(p.index) << "\n";
    for (const auto& w : p.wheels) {
      o << "\n[[packages.wheels]]\nname = " << q(w.name) << "\nurl = " << q(w.url) << "\nsize = " << w.size
        << "\nhashes = { sha256 = " << q(w.sha256) << " }\n";
    }
  }
  return o.str();
}

std::string pylock_file_name(const std::string& manifest_name) { return "pylock." + manifest_name + ".toml"; }

}  // namespace format
