// The lock file is TOML, written by hand here rather than through a TOML serializer, so that its
// keys come out in a fixed, reviewable order (a lock is read in code review: inputs first, then
// what they resolved to) and every string is quoted the same way. Strings are written as JSON
// strings, which are valid TOML basic strings. Reading is strict (unknown keys are errors) and
// every error carries the lock's file:line:col, like a manifest's.
#include "format/lock_file.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <sstream>

#include "json_impl.hpp"
#include "toml_schema.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace format {
namespace {

using detail::Diagnostics;
using detail::TableReader;

std::string q(const std::string& s) { return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

bool is_hex_of(const std::string& s, std::size_t n) { return s.size() == n && util::is_hex(s); }

template <class F>
void read_array_of_tables(TableReader& parent, const std::string& key, Diagnostics& diag, F&& read_one);

// A list of GPU targets of one kind in a [[...archives.libraries]] entry: "sm_90a" (sass), or
// { target = "compute_121", isa = "9.1" } (ptx).
void read_gpu_targets(TableReader& r, const char* key, model::CodeKind kind, Diagnostics& diag, model::LockedLibrary& lib) {
  const toml::array* arr = r.array(key);
  if (!arr) return;
  const std::string fix = "regenerate the lock with `stackpin lock --archives DIR`";
  for (const auto& el : *arr) {
    std::string name;
    std::optional<model::Version> isa;
    if (kind == model::CodeKind::sass && el.is_string()) {
      name = el.as_string()->get();
    } else if (kind == model::CodeKind::ptx && el.is_table()) {
      TableReader t(*el.as_table(), r.qualified(key) + "[]", diag);
      if (auto v = t.string("target", true)) name = v->value;
      if (auto v = t.version("isa", 2, 2, "\"9.1\"")) isa = v->value;
      t.finish();
      if (name.empty()) continue;
    } else {
      diag.error(el.source(),
                 "`" + r.qualified(key) + "` must list " +
                     (kind == model::CodeKind::sass ? std::string("SASS targets as strings (\"sm_90a\")")
                                                    : std::string("PTX targets as { target = \"compute_121\", isa = \"9.1\" }")),
                 fix);
      continue;
    }
    auto target = model::parse_gpu_target(name);
    if (!target || target->kind != kind) {
      diag.error(el.source(),
                 "`" + r.qualified(key) + "` lists \"" + util::printable(name, 40) + "\", which is not " +
                     (kind == model::CodeKind::sass ? "a SASS target (sm_86, sm_90a, sm_100f)" : "a PTX target (compute_121)"),
                 fix);
      continue;
    }
    model::TargetImages ti;
    ti.target = *target;
    ti.ptx_isa = isa;
    lib.targets.push_back(ti);
  }
}

void read_library(const toml::table& t, const std::string& name, Diagnostics& diag, model::LockedArchive& a) {
  TableReader r(t, name, diag);
  model::LockedLibrary lib;
  lib.pos = detail::pos_of(t);
  auto path = r.string("path", true);
  read_gpu_targets(r, "sass", model::CodeKind::sass, diag, lib);
  read_gpu_targets(r, "ptx", model::CodeKind::ptx, diag, lib);
  r.finish();
  if (path) {
    lib.path = path->value;
    const bool bad = lib.path.empty() || lib.path.front() == '/' || lib.path.find('\\') != std::string::npos ||
                     std::any_of(lib.path.begin(), lib.path.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
    if (bad)
      diag.error_at(path->pos.line, path->pos.column, "`" + r.qualified("path") + "` must be a relative path inside the archive",
                    "regenerate the lock with `stackpin lock --archives DIR`");
  }
  std::sort(lib.targets.begin(), lib.targets.end(), [](const auto& x, const auto& y) { return x.target < y.target; });
  a.libraries.push_back(std::move(lib));
}

// One [[cudnn.archives]] or (`cuda`) [[cuda.archives]] entry of a lock.
void read_archive(const toml::table& t, int index, Diagnostics& diag, model::Lock& lock, bool cuda) {
  TableReader r(t, std::string(cuda ? "cuda" : "cudnn") + ".archives[" + std::to_string(index) + "]", diag);
  model::LockedArchive a;
  a.pos = detail::pos_of(t);
  std::optional<model::Located<std::string>> component, version;
  if (cuda) {
    component = r.string("component", true);
    version = r.string("version", true);
  }
  auto platform = r.choice("platform", model::platform_names(), true);
  auto origin = r.choice("origin", {"nvidia", "local"}, true);
  auto url = r.string("url");
  auto file = r.string("file", true);
  auto sha = r.string("sha256", true);
  auto md5 = r.string("md5");
  auto size = r.integer("size", true);
  auto source = r.string("source");
  auto kernels_read = r.boolean("kernels_read");
  read_array_of_tables(r, "libraries", diag, [&](const toml::table& lt, int li, Diagnostics& d) {
    read_library(lt, r.name() + ".libraries[" + std::to_string(li) + "]", d, a);
  });
  r.finish();
  a.kernels_read = kernels_read && kernels_read->value;
  if (!a.kernels_read && !a.libraries.empty())
    diag.error_at(a.libraries.front().pos.line, a.libraries.front().pos.column,
                  "`" + r.qualified("libraries") + "` is given without `kernels_read = true`",
                  "regenerate the lock with `stackpin lock --archives DIR`");
  if (component) {
    a.component = component->value;
    static const std::regex k_id(R"([a-z0-9_]{1,64})");
    if (!std::regex_match(a.component, k_id))
      diag.error_at(component->pos.line, component->pos.column, "`" + r.qualified("component") + "` is not a CUDA component name",
                    "regenerate the lock with `stackpin lock`");
  }
  if (version) a.version = version->value;
  if (platform) a.platform = *model::parse_platform(model::platform_names()[platform->value]);
  if (origin) a.origin = origin->value == 0 ? model::Origin::nvidia : model::Origin::local;
  if (url) a.url = url->value;
  if (file) {
    a.file = file->value;
    if (a.file.empty() || a.file.find_first_of("/\\") != std::string::npos || a.file == "." || a.file == "..")
      diag.error_at(file->pos.line, file->pos.column, "`" + r.qualified("file") + "` must be a plain file name, without directories",
                    "regenerate the lock with `stackpin lock`");
  }
  if (sha) {
    a.sha256 = sha->value;
    if (!is_hex_of(sha->value, 64))
      diag.error_at(sha->pos.line, sha->pos.column, "`" + r.qualified("sha256") + "` is not 64 lowercase hexadecimal digits",
                    "regenerate the lock with `stackpin lock`");
  }
  if (md5) {
    a.md5 = md5->value;
    if (!is_hex_of(md5->value, 32))
      diag.error_at(md5->pos.line, md5->pos.column, "`" + r.qualified("md5") + "` is not 32 hexadecimal digits");
  }
  if (size) {
    if (size->value <= 0)
      diag.error_at(size->pos.line, size->pos.column, "`" + r.qualified("size") + "` must be a positive number of bytes");
    a.size = static_cast<std::uint64_t>(size->value);
  }
  if (source) a.source = source->value;
  if (cuda) {
    if (platform && component && lock.cuda_archive_for(a.component, a.platform))
      diag.error_at(platform->pos.line, platform->pos.column,
                    "the lock pins two archives of " + a.component + " for " + std::string(model::to_string(a.platform)),
                    "regenerate the lock with `stackpin lock`");
    lock.cuda_archives.push_back(std::move(a));
    return;
  }
  if (platform && lock.archive_for(a.platform))
    diag.error_at(platform->pos.line, platform->pos.column, "the lock pins two archives for " + std::string(model::to_string(a.platform)),
                  "regenerate the lock with `stackpin lock`");
  lock.archives.push_back(std::move(a));
}

void read_driver(const toml::table& t, int index, Diagnostics& diag, model::Lock& lock) {
  TableReader r(t, "driver[" + std::to_string(index) + "]", diag);
  model::LockedDriver d;
  auto os = r.choice("os", {"linux", "windows"}, true);
  if (auto v = r.string("floor")) d.floor = v->value;
  if (auto v = r.string("minimum")) d.minimum = v->value;
  if (auto v = r.string("required", true)) d.required = v->value;
  if (auto v = r.string("source")) d.source = v->value;
  r.finish();
  if (os) d.os = os->value == 0 ? model::Os::linux : model::Os::windows;
  lock.drivers.push_back(std::move(d));
}

void read_framework(const toml::table& t, int index, Diagnostics& diag, model::Lock& lock) {
  TableReader r(t, "frameworks[" + std::to_string(index) + "]", diag);
  model::LockedFramework f;
  f.pos = detail::pos_of(t);
  if (auto v = r.string("name", true)) f.name = v->value;
  if (auto v = r.string("version", true)) f.version = v->value;
  if (auto v = r.string("requirement", true)) f.requirement = v->value;
  if (auto v = r.string("index_url", true)) f.index_url = v->value;
  if (auto v = r.string("bundled_cudnn")) f.bundled_cudnn = v->value;
  r.finish();
  lock.frameworks.push_back(std::move(f));
}

void read_gpu(const toml::table& t, int index, Diagnostics& diag, model::Lock& lock) {
  TableReader r(t, "gpus[" + std::to_string(index) + "]", diag);
  model::LockedGpu g;
  g.pos = detail::pos_of(t);
  if (auto v = r.version("compute_capability", 2, 2, "\"8.6\"", true)) g.cc = v->value.text();
  if (auto v = r.string("architecture")) g.arch = v->value;
  if (const toml::array* a = r.array("models"))
    for (const auto& el : *a) {
      if (!el.is_string()) {
        diag.error(el.source(), "`gpus[" + std::to_string(index) + "].models` must list strings");
        continue;
      }
      g.models.push_back(el.as_string()->get());
    }
  if (auto v = r.string("cudnn")) g.cudnn = v->value;
  if (auto v = r.string("nvcc")) g.nvcc = v->value;
  if (auto v = r.string("torch")) g.torch = v->value;
  if (auto v = r.string("onnxruntime")) g.onnxruntime = v->value;
  if (auto v = r.string("tensorflow")) g.tensorflow = v->value;
  r.finish();
  lock.gpus.push_back(std::move(g));
}

template <class F>
void read_array_of_tables(TableReader& parent, const std::string& key, Diagnostics& diag, F&& read_one) {
  const toml::array* arr = parent.array(key);
  if (!arr) return;
  int i = 0;
  for (const auto& node : *arr) {
    if (const toml::table* t = node.as_table())
      read_one(*t, i, diag);
    else
      diag.error(node.source(), "`" + parent.qualified(key) + "` must be an array of tables: write [[" + parent.qualified(key) + "]]");
    ++i;
  }
}

// What `lock` read from an archive's libraries: kernels_read, then one table per library with GPU code.
void write_kernels(std::ostream& o, const model::LockedArchive& a, const char* table) {
  if (!a.kernels_read) return;
  o << "kernels_read = true\n";
  for (const auto& lib : a.libraries) {
    o << "\n[[" << table << ".libraries]]\npath = " << q(lib.path) << "\n";
    std::string sass, ptx;
    for (const auto& t : lib.targets) {
      if (t.target.kind == model::CodeKind::sass) sass += (sass.empty() ? "" : ", ") + q(t.target.name());
      if (t.target.kind == model::CodeKind::ptx)
        ptx += (ptx.empty() ? "" : ", ") + std::string("{ target = ") + q(t.target.name()) +
               (t.ptx_isa ? ", isa = " + q(t.ptx_isa->text()) : std::string()) + " }";
    }
    if (!sass.empty()) o << "sass = [" << sass << "]\n";
    if (!ptx.empty()) o << "ptx = [" << ptx << "]\n";
  }
}

}  // namespace

util::Result<model::Lock> parse_lock(std::string_view text, const std::string& path) {
  model::Lock lock;
  lock.path = path;
  lock.lines = detail::split_lines(text);
  Diagnostics diag(path, &lock.lines);
  auto doc = detail::parse_toml(text, path, diag);
  if (!doc) return diag.first();
  TableReader top(*doc, "", diag);
  if (auto s = top.integer("schema", true, "1")) {
    lock.schema = static_cast<int>(s->value);
    if (s->value != 1)
      diag.error_at(s->pos.line, s->pos.column,
                    "lock schema " + std::to_string(s->value) + " is not supported: this stackpin reads schema 1",
                    s->value > 1 ? "upgrade stackpin, or regenerate the lock with this one (`stackpin lock`)" : "regenerate the lock");
  }
  if (auto v = top.string("generated_by")) lock.generated_by = v->value;
  if (auto v = top.string("manifest", true)) lock.manifest = v->value;
  if (auto v = top.string("name", true)) lock.name = v->value;
  if (const toml::table* in = top.subtable("inputs")) {
    for (const auto& [k, node] : *in) {
      const auto* s = node.as_string();
      if (!s) {
        diag.error(node.source(), "`inputs.\"" + std::string(k.str()) + "\"` must be a string");
        continue;
      }
      lock.inputs[std::string(k.str())] = {s->get(), detail::pos_of(node)};
    }
  }
  if (const toml::table* t = top.subtable("cuda")) {
    TableReader r(*t, "cuda", diag);
    if (auto v = r.string("version", true)) lock.cuda = v->value;
    read_array_of_tables(r, "archives", diag, [&](const toml::table& a, int i, Diagnostics& d) { read_archive(a, i, d, lock, true); });
    r.finish();
  }
  read_array_of_tables(top, "driver", diag, [&](const toml::table& t, int i, Diagnostics& d) { read_driver(t, i, d, lock); });
  if (const toml::table* t = top.subtable("cudnn")) {
    TableReader r(*t, "cudnn", diag);
    if (auto v = r.string("version", true)) lock.cudnn = v->value;
    if (auto v = r.integer("cuda", true)) lock.cudnn_cuda = static_cast<int>(v->value);
    read_array_of_tables(r, "archives", diag, [&](const toml::table& a, int i, Diagnostics& d) { read_archive(a, i, d, lock, false); });
    r.finish();
  }
  read_array_of_tables(top, "frameworks", diag, [&](const toml::table& t, int i, Diagnostics& d) { read_framework(t, i, d, lock); });
  read_array_of_tables(top, "gpus", diag, [&](const toml::table& t, int i, Diagnostics& d) { read_gpu(t, i, d, lock); });
  if (const toml::table* t = top.subtable("python")) {
    TableReader r(*t, "python", diag);
    lock.python_lock_pos = detail::pos_of(*t);
    auto file = r.string("lock", true);
    auto sha = r.string("sha256", true);
    r.finish();
    if (file) {
      lock.python_lock = file->value;
      if (lock.python_lock.empty() || lock.python_lock.find_first_of("/\\") != std::string::npos || lock.python_lock == "." ||
          lock.python_lock == "..")
        diag.error_at(file->pos.line, file->pos.column, "`python.lock` must be a plain file name beside the lock",
                      "regenerate the lock with `stackpin lock`");
    }
    if (sha) {
      lock.python_lock_sha256 = sha->value;
      if (!is_hex_of(sha->value, 64))
        diag.error_at(sha->pos.line, sha->pos.column, "`python.sha256` is not 64 hex digits", "regenerate the lock with `stackpin lock`");
    }
  }
  if (const toml::table* t = top.subtable("docker")) {
    TableReader r(*t, "docker", diag);
    if (auto v = r.string("base_image")) lock.base_image = v->value;
    if (auto v = r.string("base_digest")) lock.base_digest = v->value;
    r.finish();
  }
  top.finish();
  if (diag.any()) return diag.first();
  return lock;
}

util::Result<model::Lock> load_lock(const std::filesystem::path& path) {
  auto text = util::read_file(path);
  if (!text) {
    auto e = std::move(text).error();
    e.context = "reading lock file " + path.string();
    if (e.code == util::ErrorCode::not_found)
      e.hints.push_back("create it with `stackpin lock MANIFEST`, and commit it beside the manifest");
    return e;
  }
  return parse_lock(*text, path.string());
}

namespace {
// A value shown inside a TOML comment: TOML allows no control character there but tab, and a line
// break would end the comment and make the rest of the value a key.
std::string in_comment(std::string s) {
  for (auto& c : s)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) c = '?';
  return s;
}
}  // namespace

std::string render_lock(const model::Lock& l) {
  std::ostringstream o;
  o << "# stackpin lock file for " << in_comment(l.manifest) << ", written by `stackpin lock`: commit it beside the manifest.\n"
    << "# It pins what the manifest leaves open. Commands given --locked refuse to run when the manifest\n"
    << "# no longer says what [inputs] records; run `stackpin lock` again after editing the manifest.\n"
    << "schema = 1\n"
    << "generated_by = " << q(l.generated_by) << "\n"
    << "manifest = " << q(l.manifest) << "\n"
    << "name = " << q(l.name) << "\n";
  o << "\n# What the manifest said, as stackpin read it.\n[inputs]\n";
  for (const auto& [k, v] : l.inputs) o << q(k) << " = " << q(v.value) << "\n";
  if (!l.cuda.empty()) o << "\n[cuda]\nversion = " << q(l.cuda) << "\n";
  for (const auto& a : l.cuda_archives) {
    o << "\n[[cuda.archives]]\ncomponent = " << q(a.component) << "\nversion = " << q(a.version)
      << "\nplatform = " << q(model::to_string(a.platform)) << "\norigin = " << q(model::to_string(a.origin)) << "\n";
    if (!a.url.empty()) o << "url = " << q(a.url) << "\n";
    o << "file = " << q(a.file) << "\nsha256 = " << q(a.sha256) << "\nsize = " << a.size << "\n";
    if (!a.md5.empty()) o << "md5 = " << q(a.md5) << "\n";
    if (!a.source.empty()) o << "source = " << q(a.source) << "\n";
    write_kernels(o, a, "cuda.archives");
  }
  for (const auto& d : l.drivers) {
    o << "\n[[driver]]\nos = " << q(model::to_string(d.os)) << "\n";
    if (!d.floor.empty()) o << "floor = " << q(d.floor) << "\n";
    if (!d.minimum.empty()) o << "minimum = " << q(d.minimum) << "\n";
    o << "required = " << q(d.required) << "\n";
    if (!d.source.empty()) o << "source = " << q(d.source) << "\n";
  }
  if (!l.cudnn.empty()) {
    o << "\n[cudnn]\nversion = " << q(l.cudnn) << "\ncuda = " << l.cudnn_cuda << "\n";
    for (const auto& a : l.archives) {
      o << "\n[[cudnn.archives]]\nplatform = " << q(model::to_string(a.platform)) << "\norigin = " << q(model::to_string(a.origin)) << "\n";
      if (!a.url.empty()) o << "url = " << q(a.url) << "\n";
      o << "file = " << q(a.file) << "\nsha256 = " << q(a.sha256) << "\nsize = " << a.size << "\n";
      if (!a.md5.empty()) o << "md5 = " << q(a.md5) << "\n";
      if (!a.source.empty()) o << "source = " << q(a.source) << "\n";
      write_kernels(o, a, "cudnn.archives");
    }
  }
  for (const auto& f : l.frameworks) {
    o << "\n[[frameworks]]\nname = " << q(f.name) << "\nversion = " << q(f.version) << "\nrequirement = " << q(f.requirement)
      << "\nindex_url = " << q(f.index_url) << "\n";
    if (!f.bundled_cudnn.empty()) o << "bundled_cudnn = " << q(f.bundled_cudnn) << "\n";
  }
  for (const auto& g : l.gpus) {
    o << "\n[[gpus]]\ncompute_capability = " << q(g.cc) << "\n";
    if (!g.arch.empty()) o << "architecture = " << q(g.arch) << "\n";
    if (!g.models.empty()) {
      o << "models = [";
      for (std::size_t i = 0; i < g.models.size(); ++i) o << (i ? ", " : "") << q(g.models[i]);
      o << "]\n";
    }
    if (!g.cudnn.empty()) o << "cudnn = " << q(g.cudnn) << "\n";
    if (!g.nvcc.empty()) o << "nvcc = " << q(g.nvcc) << "\n";
    if (!g.torch.empty()) o << "torch = " << q(g.torch) << "\n";
    if (!g.onnxruntime.empty()) o << "onnxruntime = " << q(g.onnxruntime) << "\n";
    if (!g.tensorflow.empty()) o << "tensorflow = " << q(g.tensorflow) << "\n";
  }
  if (!l.python_lock.empty()) o << "\n[python]\nlock = " << q(l.python_lock) << "\nsha256 = " << q(l.python_lock_sha256) << "\n";
  if (!l.base_image.empty() || !l.base_digest.empty()) {
    o << "\n[docker]\n";
    if (!l.base_image.empty()) o << "base_image = " << q(l.base_image) << "\n";
    if (!l.base_digest.empty()) o << "base_digest = " << q(l.base_digest) << "\n";
  }
  return o.str();
}

JsonDoc to_json(const model::Lock& l, const std::string& written_to, bool changed) {
  using nlohmann::json;
  json archives = json::array(), drivers = json::array(), frameworks = json::array(), inputs = json::object();
  for (const auto& [k, v] : l.inputs) inputs[k] = v.value;
  auto archive = [](const model::LockedArchive& a) {
    json j{{"platform", model::to_string(a.platform)},
           {"origin", model::to_string(a.origin)},
           {"url", a.url},
           {"file", a.file},
           {"sha256", a.sha256},
           {"md5", a.md5},
           {"size", a.size},
           {"source", a.source}};
    if (!a.component.empty()) {
      j["component"] = a.component;
      j["version"] = a.version;
    }
    if (a.kernels_read) {
      json libs = json::array();
      for (const auto& lib : a.libraries) {
        json sass = json::array(), ptx = json::array();
        for (const auto& t : lib.targets) {
          if (t.target.kind == model::CodeKind::sass) sass.push_back(t.target.name());
          if (t.target.kind == model::CodeKind::ptx)
            ptx.push_back(json{{"target", t.target.name()}, {"isa", t.ptx_isa ? t.ptx_isa->text() : std::string()}});
        }
        libs.push_back(json{{"path", lib.path}, {"sass", sass}, {"ptx", ptx}});
      }
      j["libraries"] = libs;  // absent: the archive was not at hand when it was locked
    }
    return j;
  };
  for (const auto& a : l.archives) archives.push_back(archive(a));
  json cuda_archives = json::array();
  for (const auto& a : l.cuda_archives) cuda_archives.push_back(archive(a));
  for (const auto& d : l.drivers)
    drivers.push_back(
        {{"os", model::to_string(d.os)}, {"floor", d.floor}, {"minimum", d.minimum}, {"required", d.required}, {"source", d.source}});
  for (const auto& f : l.frameworks)
    frameworks.push_back({{"name", f.name},
                          {"version", f.version},
                          {"requirement", f.requirement},
                          {"index_url", f.index_url},
                          {"bundled_cudnn", f.bundled_cudnn}});
  json gpus = json::array();
  for (const auto& g : l.gpus)
    gpus.push_back({{"compute_capability", g.cc},
                    {"architecture", g.arch},
                    {"models", g.models},
                    {"cudnn", g.cudnn},
                    {"nvcc", g.nvcc},
                    {"torch", g.torch},
                    {"onnxruntime", g.onnxruntime},
                    {"tensorflow", g.tensorflow}});
  JsonDoc doc;
  doc.impl().value =
      json{{"lock", written_to},
           {"gpus", gpus},
           {"changed", changed},
           {"manifest", l.manifest},
           {"name", l.name},
           {"inputs", inputs},
           {"cuda", l.cuda},
           {"cuda_archives", cuda_archives},
           {"cudnn", l.cudnn},
           {"cudnn_cuda", l.cudnn_cuda},
           {"archives", archives},
           {"drivers", drivers},
           {"frameworks", frameworks},
           {"base_image", l.base_image},
           {"base_digest", l.base_digest},
           {"python_lock", l.python_lock.empty() ? json(nullptr) : json{{"file", l.python_lock}, {"sha256", l.python_lock_sha256}}}};
  return doc;
}

}  // namespace format
