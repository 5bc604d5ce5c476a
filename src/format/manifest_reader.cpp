// Reads a stackpin.toml manifest: every key's type and syntax, with file:line:col on each error.
#include "format/manifest_reader.hpp"

#include <algorithm>
#include <map>
#include <regex>

#include "model/pylock.hpp"
#include "toml_schema.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace format {
namespace {

using detail::Diagnostics;
using detail::TableReader;
using model::Located;
using model::Pos;

constexpr int k_schema = 1;

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 128) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  });
}

// NVIDIA's component names and the sets and aliases: lower-case letters, digits and '_'.
bool valid_component(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

void read_driver(TableReader& top, model::Manifest& m) {
  const toml::table* t = top.subtable("driver");
  if (!t) return;
  TableReader r(*t, "driver", top.diag());
  model::DriverPin d;
  d.pos = detail::pos_of(*t);
  d.linux = r.version("linux", 1, 3, "\"530.30.02\"");
  d.windows = r.version("windows", 1, 3, "\"531.14\"");
  r.finish();
  m.driver = d;
}

// One [[cudnn.archives]] or [[cuda.archives]] entry (`product` = "cudnn" or "cuda"; a CUDA one also
// names its component). At most one archive per platform (and component).
void read_archive(const toml::table& t, const std::string& product, int index, Diagnostics& diag, std::vector<model::ArchivePin>& out,
                  std::map<std::pair<std::string, model::Platform>, Pos>& seen) {
  const bool cuda = product == "cuda";
  TableReader r(t, product + ".archives[" + std::to_string(index) + "]", diag);
  model::ArchivePin a;
  a.pos = detail::pos_of(t);
  if (cuda) {
    a.component = r.string("component", true, "\"cuda_cudart\"");
    if (a.component && !valid_component(a.component->value)) {
      diag.error_at(a.component->pos.line, a.component->pos.column,
                    "`" + r.qualified("component") + "` = \"" + util::printable(a.component->value, 80) + "\" is not a CUDA component name",
                    "use NVIDIA's name from redistrib_<version>.json, e.g. component = \"cuda_cudart\"");
      a.component.reset();
    }
  }
  auto platform = r.choice("platform", model::platform_names(), true);
  auto origin = r.choice("origin", {"nvidia", "local"});
  a.url = r.string("url", false,
                   cuda ? "\"https://developer.download.nvidia.com/compute/cuda/redist/...\""
                        : "\"https://developer.download.nvidia.com/compute/cudnn/redist/...\"");
  a.file =
      r.string("file", false,
               cuda ? "\"cuda_cudart-linux-x86_64-12.4.127-archive.tar.xz\"" : "\"cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz\"");
  auto sha = r.string("sha256", false, "\"<64 hex digits>\"");
  auto size = r.integer("size", false, "705347747");
  r.finish();

  if (a.url) {
    const std::string& u = a.url->value;
    bool scheme_ok = u.rfind("https://", 0) == 0 || u.rfind("http://", 0) == 0 || u.rfind("file://", 0) == 0;
    if (!scheme_ok || util::basename_of(u).empty())
      diag.error_at(
          a.url->pos.line, a.url->pos.column,
          "`" + r.qualified("url") + "` = \"" + util::printable(u, 80) + "\" is not an http(s):// or file:// URL of a file",
          std::string("give NVIDIA's download URL, e.g. https://developer.download.nvidia.com/compute/") + product + "/redist/...");
  }
  if (a.file) {
    const std::string& f = a.file->value;
    if (f.empty() || f.find_first_of("/\\") != std::string::npos || f == "." || f == "..")
      diag.error_at(a.file->pos.line, a.file->pos.column,
                    "`" + r.qualified("file") + "` = \"" + util::printable(f, 80) + "\" must be a plain file name, without directories");
  }
  if (sha) {
    if (sha->value.size() != 64 || !util::is_hex(sha->value)) {
      diag.error_at(sha->pos.line, sha->pos.column,
                    "`" + r.qualified("sha256") + "` is not a SHA-256: expected 64 hexadecimal digits, got " +
                        std::to_string(sha->value.size()) + " character(s)" + (util::is_hex(sha->value) ? "" : " including non-hex ones"),
                    "copy the sha256 from NVIDIA's redistrib_<version>.json, or run `sha256sum` on the archive");
    } else {
      a.sha256 = Located<std::string>{util::to_lower(sha->value), sha->pos};
    }
  }
  if (size) {
    if (size->value <= 0)
      diag.error_at(size->pos.line, size->pos.column,
                    "`" + r.qualified("size") + "` must be a positive number of bytes, got " + std::to_string(size->value));
    else
      a.size = Located<std::uint64_t>{static_cast<std::uint64_t>(size->value), size->pos};
  }
  if (origin)
    a.origin = Located<model::Origin>{origin->value == 0 ? model::Origin::nvidia : model::Origin::local, origin->pos};
  else
    a.origin = Located<model::Origin>{model::Origin::nvidia, a.pos};
  if (a.origin.value == model::Origin::local && !a.url && !a.file)
    diag.error_at(a.pos.line, a.pos.column, "`" + r.name() + "` with origin = \"local\" needs `url` or `file`",
                  "add file = \"<archive file name>\" so that stackpin can find it in --archives DIR");
  if (!platform || (cuda && !a.component)) return;
  a.platform = Located<model::Platform>{static_cast<model::Platform>(platform->value), platform->pos};
  std::string component = a.component ? a.component->value : std::string();
  auto [it, inserted] = seen.emplace(std::make_pair(component, a.platform.value), a.platform.pos);
  if (!inserted) {
    diag.error_at(a.platform.pos.line, a.platform.pos.column,
                  "duplicate archive for " + (cuda ? component + " on " : std::string()) + "platform \"" +
                      model::to_string(a.platform.value) + "\" (already pinned on line " + std::to_string(it->second.line) + ")",
                  "pin one archive per " + std::string(cuda ? "component and " : "") + "platform; remove one of the two [[" + product +
                      ".archives]] entries");
    return;
  }
  out.push_back(std::move(a));
}

void read_archives(TableReader& r, const std::string& product, std::vector<model::ArchivePin>& out) {
  std::map<std::pair<std::string, model::Platform>, Pos> seen;
  if (const toml::node* n = r.get("archives")) {
    if (!n->is_array_of_tables()) {
      r.diag().error(n->source(),
                     "`" + product + ".archives` must be an array of tables: write each archive as [[" + product + ".archives]]");
    } else {
      int i = 0;
      for (const auto& el : *n->as_array()) read_archive(*el.as_table(), product, ++i, r.diag(), out, seen);
    }
  }
}

void read_cuda(TableReader& top, model::Manifest& m) {
  const toml::table* t = top.subtable("cuda");
  if (!t) return;
  TableReader r(*t, "cuda", top.diag());
  auto v = r.version("version", 2, 3, "\"12.1.1\"", true);
  model::CudaPin pin;
  pin.pos = detail::pos_of(*t);
  if (const toml::array* a = r.array("components")) {
    pin.components_pos = r.key_pos("components");
    std::map<std::string, Pos> seen;
    for (const auto& el : *a) {
      Pos at = detail::pos_of(el);
      if (!el.is_string()) {
        top.diag().error(el.source(), "`cuda.components` must list strings, found " + std::string(detail::type_name(el)),
                         "for example: components = [\"runtime\"] or [\"cuda_cudart\", \"libcublas\"]");
        continue;
      }
      const std::string& name = el.as_string()->get();
      if (!valid_component(name)) {
        top.diag().error_at(at.line, at.column, "`cuda.components` entry \"" + util::printable(name, 80) + "\" is not a component name",
                            "use a set (runtime, devel, torch), NVIDIA's name (cuda_cudart) or an alias (cudart)");
        continue;
      }
      auto [it, inserted] = seen.emplace(name, at);
      if (!inserted) {
        top.diag().error_at(at.line, at.column,
                            "`cuda.components` lists \"" + name + "\" twice (first on line " + std::to_string(it->second.line) + ")",
                            "list each component or set once");
        continue;
      }
      pin.components.push_back({name, at});
    }
    if (a->empty())
      top.diag().error_at(pin.components_pos.line, pin.components_pos.column, "`cuda.components` is empty",
                          "list what to provision, e.g. components = [\"runtime\"], or leave the key out to only check the toolkit");
  }
  read_archives(r, "cuda", pin.archives);
  r.finish();
  if (!v) return;
  pin.version = *v;
  m.cuda = std::move(pin);
}

void read_cudnn(TableReader& top, model::Manifest& m) {
  const toml::table* t = top.subtable("cudnn");
  if (!t) return;
  TableReader r(*t, "cudnn", top.diag());
  model::CudnnPin pin;
  pin.pos = detail::pos_of(*t);
  std::optional<Located<model::Version>> v;
  if (auto s = r.string("version", true, "\"8.9.5.30\"")) {
    auto parsed = model::Version::parse(s->value);
    if (parsed && parsed->size() == 4) {
      v = Located<model::Version>{*parsed, s->pos};
    } else if (parsed && parsed->size() == 3) {
      top.diag().error_at(s->pos.line, s->pos.column,
                          "`cudnn.version` = \"" + util::printable(s->value, 80) +
                              "\" has 3 parts: cuDNN is pinned with four, because the build "
                              "number matters (8.9.5.29 and 8.9.5.30 are different archives)",
                          "take the full version from NVIDIA's archive name, e.g. cudnn-...-8.9.5.30_cuda12-archive.zip");
    } else {
      top.diag().error_at(
          s->pos.line, s->pos.column,
          "`cudnn.version` = \"" + util::printable(s->value, 80) + "\" is not a cuDNN version: expected four dot-separated numbers",
          "for example: version = \"8.9.5.30\"");
    }
  }
  auto cuda = r.integer("cuda", false, "12");
  if (cuda && (cuda->value < 9 || cuda->value > 99))
    top.diag().error_at(cuda->pos.line, cuda->pos.column, "`cudnn.cuda` = " + std::to_string(cuda->value) + " is not a CUDA major version",
                        "use the number in the archive's _cudaNN suffix, e.g. cuda = 12 for ..._cuda12-archive");
  else if (cuda)
    pin.cuda = Located<int>{static_cast<int>(cuda->value), cuda->pos};
  read_archives(r, "cudnn", pin.archives);
  r.finish();
  if (v) {
    pin.version = *v;
    m.cudnn = std::move(pin);
  }
}

void read_frameworks(TableReader& top, model::Manifest& m) {
  const toml::table* t = top.subtable("frameworks");
  if (!t) return;
  m.frameworks_pos = detail::pos_of(*t);
  TableReader r(*t, "frameworks", top.diag());
  for (const auto& name : model::framework_names()) {
    auto s = r.string(name, false, "\"2.1.0\"");
    if (!s) continue;
    auto v = model::Version::parse(s->value);
    if (!v || v->size() < 2) {
      std::string hint = "write the plain release, e.g. " + name + " = \"2.1.0\"";
      if (s->value.find('+') != std::string::npos)
        hint = "write the plain release without the local tag (\"2.1.0\", not \"2.1.0+cu121\"): the CUDA variant follows from [cuda]";
      top.diag().error_at(s->pos.line, s->pos.column,
                          "`frameworks." + name + "` = \"" + util::printable(s->value, 80) + "\" is not a version", hint);
      continue;
    }
    m.frameworks[name] = Located<model::Version>{*v, s->pos};
  }
  r.finish();
}

void read_python(TableReader& top, model::Manifest& m) {
  const toml::table* t = top.subtable("python");
  if (!t) return;
  TableReader r(*t, "python", top.diag());
  m.python_pos = detail::pos_of(*t);
  m.python = r.version("version", 2, 3, "\"3.10\"", true);
  m.python_index = r.string("index", false, "\"https://mirror.example/simple\"");
  m.python_venv = r.string("venv", false, "\".venv\"");
  if (const toml::array* packages = r.array("packages")) {
    static const std::regex k_pin(R"(^([A-Za-z0-9]([A-Za-z0-9._-]{0,98}[A-Za-z0-9])?)==([A-Za-z0-9][A-Za-z0-9.+!_-]{0,63})$)");
    for (const auto& el : *packages) {
      const auto* s = el.as_string();
      std::smatch match;
      std::string text = s ? s->get() : std::string();
      if (!s || !std::regex_match(text, match, k_pin)) {
        top.diag().error(el.source(),
                         "`python.packages` lists " +
                             (s ? "\"" + util::printable(text, 60) + "\"" : std::string("a value that is not a string")) +
                             ", which is not an exact pin NAME==VERSION",
                         "write each package as \"nvidia-cudnn-cu13==9.13.0.50\"");
        continue;
      }
      const std::string pin = model::normalize_python_name(match[1].str()) + "==" + match[3].str();
      for (const auto& other : m.python_packages)
        if (other.value.substr(0, other.value.find("==")) == pin.substr(0, pin.find("==")))
          top.diag().error(el.source(), "`python.packages` pins " + pin.substr(0, pin.find("==")) + " twice",
                           "keep one pin of each package");
      m.python_packages.push_back({pin, detail::pos_of(el)});
    }
  }
  r.finish();
  for (const auto* v : {&m.python_index, &m.python_venv}) {
    if (!*v) continue;
    const std::string& s = (*v)->value;
    if (s.empty() || std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
      top.diag().error_at((*v)->pos.line, (*v)->pos.column,
                          std::string("`python.") + (v == &m.python_index ? "index" : "venv") +
                              "` must be a non-empty path or URL without control characters");
  }
}

void read_gpus(TableReader& top, model::Manifest& m) {
  const toml::table* t = top.subtable("gpus");
  if (!t) return;
  TableReader r(*t, "gpus", top.diag());
  model::GpuPins g;
  g.pos = detail::pos_of(*t);
  std::size_t written = 0;  // entries, valid or not
  auto list = [&](const char* key, auto each) {
    const toml::array* a = r.array(key);
    if (!a) return;
    written += a->size();
    for (const auto& el : *a) {
      auto pos = detail::pos_of(el);
      if (!el.is_string()) {
        top.diag().error(el.source(), "`gpus." + std::string(key) + "` must list strings, found " + std::string(detail::type_name(el)));
        continue;
      }
      each(el.as_string()->get(), model::Pos{pos.line, pos.column});
    }
  };
  list("arch", [&](const std::string& s, model::Pos pos) {
    auto v = model::Version::parse(s);
    if (!v || v->size() != 2 || v->major() < 1 || v->major() > 99 || v->minor() > 9) {
      std::string hint = "write the compute capability as major.minor, e.g. arch = [\"8.6\", \"12.0\"]";
      if (s.rfind("sm_", 0) == 0 || s.rfind("compute_", 0) == 0)
        hint = "write the compute capability, not nvcc's target name: \"8.6\" for sm_86";
      top.diag().error_at(pos.line, pos.column, "`gpus.arch` entry \"" + util::printable(s, 40) + "\" is not a compute capability", hint);
      return;
    }
    for (const auto& seen : g.arch)
      if (seen.value == *v) {
        top.diag().error_at(pos.line, pos.column, "`gpus.arch` lists " + s + " twice", "keep one");
        return;
      }
    g.arch.push_back({*v, pos});
  });
  list("models", [&](const std::string& s, model::Pos pos) {
    if (s.empty() || s.size() > 100 || !util::is_valid_utf8(s) || s.find_first_of("\n\r\t") != std::string::npos) {
      top.diag().error_at(pos.line, pos.column, "`gpus.models` entry \"" + util::printable(s, 40) + "\" is not a GPU name",
                          "name it as nvidia-smi does, e.g. models = [\"NVIDIA GeForce RTX 4090\", \"H100\"]");
      return;
    }
    g.models.push_back({s, pos});
  });
  r.finish();
  if (written > 0 && g.arch.empty() && g.models.empty()) return;  // every entry was refused above
  const bool other_keys =
      std::any_of(t->begin(), t->end(), [](const auto& kv) { return kv.first.str() != "arch" && kv.first.str() != "models"; });
  if (written == 0 && !other_keys) {  // (an unknown key is reported as such)
    top.diag().error_at(g.pos.line, g.pos.column, "[gpus] names no GPU",
                        "add arch = [\"8.6\"] and/or models = [\"RTX 4090\"], or remove [gpus]");
    return;
  }
  m.gpus = std::move(g);
}

void read_targets(TableReader& top, model::Manifest& m) {
  const toml::table* t = top.subtable("targets");
  if (!t) return;
  TableReader targets(*t, "targets", top.diag());
  if (const toml::table* w = targets.subtable("windows")) {
    TableReader r(*w, "targets.windows", top.diag());
    model::WindowsTarget wt;
    wt.pos = detail::pos_of(*w);
    auto layout = r.choice("layout", {"isolated", "cuda-merge"});
    wt.layout = layout ? Located<model::WindowsLayout>{static_cast<model::WindowsLayout>(layout->value), layout->pos}
                       : Located<model::WindowsLayout>{model::WindowsLayout::isolated, wt.pos};
    auto arch = r.choice("arch", {"x64", "arm64"});
    wt.platform =
        arch ? Located<model::Platform>{arch->value == 1 ? model::Platform::windows_arm64 : model::Platform::windows_x86_64, arch->pos}
             : Located<model::Platform>{model::Platform::windows_x86_64, wt.pos};
    wt.prefix = r.string("prefix", false, "'C:\\tools\\cudnn\\v8.9.5'");
    wt.cuda_path = r.string("cuda_path", false, "'C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.1'");
    r.finish();
    m.windows = wt;
  }
  if (const toml::table* l = targets.subtable("linux")) {
    TableReader r(*l, "targets.linux", top.diag());
    model::LinuxTarget lt;
    lt.pos = detail::pos_of(*l);
    auto layout = r.choice("layout", {"lib64", "deb"});
    lt.layout = layout ? Located<model::LinuxLayout>{static_cast<model::LinuxLayout>(layout->value), layout->pos}
                       : Located<model::LinuxLayout>{model::LinuxLayout::lib64, lt.pos};
    lt.prefix = r.string("prefix", false, "\"/usr/local/cudnn-8.9.5\"");
    if (lt.prefix && (lt.prefix->value.empty() || lt.prefix->value.front() != '/'))
      top.diag().error_at(lt.prefix->pos.line, lt.prefix->pos.column,
                          "`targets.linux.prefix` = \"" + util::printable(lt.prefix->value, 80) + "\" must be an absolute path",
                          "for example: prefix = \"/usr/local/cudnn-8.9.5\"");
    r.finish();
    m.linux = lt;
  }
  if (const toml::table* d = targets.subtable("docker")) {
    TableReader r(*d, "targets.docker", top.diag());
    model::DockerTarget dt;
    dt.pos = detail::pos_of(*d);
    dt.base_image = r.string("base_image", false, "\"nvidia/cuda:12.1.1-runtime-ubuntu22.04\"");
    auto digest = r.string("base_digest", false, "\"sha256:<64 hex digits>\"");
    if (digest) {
      const std::string& s = digest->value;
      if (s.size() != 71 || s.rfind("sha256:", 0) != 0 || !util::is_hex(s.substr(7)))
        top.diag().error_at(
            digest->pos.line, digest->pos.column, "`targets.docker.base_digest` must be \"sha256:\" followed by 64 hex digits",
            "get it with: docker buildx imagetools inspect IMAGE, or docker inspect --format '{{index .RepoDigests 0}}' IMAGE");
      else
        dt.base_digest = Located<std::string>{util::to_lower(s), digest->pos};
    }
    auto mode = r.choice("cudnn", {"archive", "apt"});
    dt.cudnn = mode ? Located<model::DockerCudnn>{static_cast<model::DockerCudnn>(mode->value), mode->pos}
                    : Located<model::DockerCudnn>{model::DockerCudnn::archive, dt.pos};
    auto cuda = r.choice("cuda", {"base", "archive"});
    dt.cuda = cuda ? Located<model::DockerCuda>{static_cast<model::DockerCuda>(cuda->value), cuda->pos}
                   : Located<model::DockerCuda>{model::DockerCuda::base, dt.pos};
    if (cuda && dt.cuda.value == model::DockerCuda::archive && mode && dt.cudnn.value == model::DockerCudnn::apt)
      top.diag().error_at(mode->pos.line, mode->pos.column,
                          "`targets.docker.cudnn = \"apt\"` needs NVIDIA's apt repository, which only NVIDIA's CUDA images configure; "
                          "`cuda = \"archive\"` starts from a plain distribution base",
                          "use cudnn = \"archive\" (the verified cuDNN archive), or cuda = \"base\" with an nvidia/cuda base_image");
    r.finish();
    m.docker = dt;
  }
  if (const toml::table* c = targets.subtable("conda")) {
    TableReader r(*c, "targets.conda", top.diag());
    model::CondaTarget ct;
    ct.pos = detail::pos_of(*c);
    if (const toml::array* ch = r.array("channels")) {
      for (const auto& el : *ch) {
        if (!el.is_string()) {
          top.diag().error(el.source(), "`targets.conda.channels` must list strings, found " + std::string(detail::type_name(el)));
          continue;
        }
        ct.channels.push_back({el.as_string()->get(), detail::pos_of(el)});
      }
    }
    ct.cudnn = r.version("cudnn", 4, 4, "\"8.9.7.29\"");
    r.finish();
    m.conda = ct;
  }
  targets.finish();
}

}  // namespace

util::Result<model::Manifest> parse_manifest(std::string_view text, const std::string& path) {
  model::Manifest m;
  m.path = path;
  m.lines = detail::split_lines(text);
  Diagnostics diag(path, &m.lines);
  auto doc = detail::parse_toml(text, path, diag);
  if (!doc) return diag.first();

  TableReader top(*doc, "", diag);
  auto schema = top.integer("schema", true, "1");
  if (schema) {
    if (schema->value != k_schema)
      diag.error_at(schema->pos.line, schema->pos.column,
                    "manifest schema " + std::to_string(schema->value) + " is not supported: this stackpin reads schema 1",
                    schema->value > k_schema ? "upgrade stackpin to read this manifest" : "set schema = 1");
    m.schema = {static_cast<int>(schema->value), schema->pos};
  }
  auto name = top.string("name", true, "\"cu121-cudnn895-torch21\"");
  if (name) {
    if (!valid_name(name->value))
      diag.error_at(name->pos.line, name->pos.column,
                    "`name` = \"" + util::printable(name->value, 80) + "\" may only contain letters, digits, '.', '_' and '-'",
                    "it names files and images; for example: name = \"cu121-cudnn895-torch21\"");
    m.name = *name;
  }
  m.description = top.string("description");
  read_cuda(top, m);
  read_driver(top, m);
  read_cudnn(top, m);
  read_frameworks(top, m);
  read_python(top, m);
  read_gpus(top, m);
  read_targets(top, m);
  top.finish();
  // A cuDNN build targets one CUDA major; left out, it is the toolkit's (CUDA 12.4.1 -> the cuda12
  // build), so that `[cudnn] version = "9.1.0.70"` alone pins a stack.
  // (only a major cuDNN builds exist for, the range an explicit cudnn.cuda may take: libFuzzer
  // found [cuda] version = "06.4.1" giving a cudnn.cuda = 6 that the reader itself refuses)
  if (m.cudnn && !m.cudnn->cuda && m.cuda && m.cuda->version.value.major() >= 9 && m.cuda->version.value.major() <= 99)
    m.cudnn->cuda = Located<int>{static_cast<int>(m.cuda->version.value.major()), m.cudnn->pos};
  if (diag.any()) return diag.first();
  return m;
}

util::Result<model::Manifest> load_manifest(const std::filesystem::path& path, std::string* bytes) {
  auto text = util::read_file(path);
  if (!text) {
    auto e = std::move(text).error();
    e.context = "reading manifest " + path.string();
    if (e.code == util::ErrorCode::not_found) e.hints.push_back("give the path of a stackpin manifest (.toml); examples are in manifests/");
    return e;
  }
  auto m = parse_manifest(*text, path.string());
  if (bytes) *bytes = std::move(*text);
  return m;
}

}  // namespace format
