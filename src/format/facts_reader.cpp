// Reads the knowledge data files (data/knowledge/*.toml) into model::Facts, every fact with its source.
#include "format/facts_reader.hpp"

#include <algorithm>
#include <map>
#include <regex>

#include "toml_schema.hpp"
#include "util/strings.hpp"

namespace format {
namespace {

using detail::Diagnostics;
using detail::TableReader;
using model::Version;

struct Doc {
  std::string name;
  std::vector<std::string> lines;
  Diagnostics diag;
  std::optional<toml::table> table;
  Doc(std::string n, std::string_view text) : name(std::move(n)), lines(detail::split_lines(text)), diag(name, &lines) {
    table = detail::parse_toml(text, name, diag);
  }
};

// Helpers that read one key of a data entry; errors go to the reader's diagnostics.
std::string str(TableReader& r, const char* key, bool required = false) {
  auto s = r.string(key, required);
  return s ? s->value : std::string();
}

Version ver(TableReader& r, const char* key, std::size_t min_parts = 1, std::size_t max_parts = 4) {
  auto v = r.version(key, min_parts, max_parts, "\"1.2.3\"", true);
  return v ? v->value : Version();
}

std::optional<Version> opt_ver(TableReader& r, const char* key, std::size_t min_parts = 1, std::size_t max_parts = 4) {
  auto v = r.version(key, min_parts, max_parts, "\"1.2.3\"", false);
  if (!v) return std::nullopt;
  return v->value;
}

std::vector<std::string> strings(TableReader& r, const char* key, bool required = false) {
  std::vector<std::string> out;
  const toml::array* a = r.array(key);
  if (!a) {
    if (required) {
      auto p = detail::pos_of(r.table());
      r.diag().error_at(p.line, p.column, "missing required key `" + r.qualified(key) + "`");
    }
    return out;
  }
  for (const auto& el : *a) {
    if (!el.is_string()) {
      r.diag().error(el.source(), "`" + r.qualified(key) + "` must list strings");
      continue;
    }
    out.push_back(el.as_string()->get());
  }
  return out;
}

model::Sources sources(TableReader& r) { return strings(r, "source", true); }

int integer(TableReader& r, const char* key, bool required = true) {
  auto i = r.integer(key, required);
  return i ? static_cast<int>(i->value) : 0;
}

bool boolean(TableReader& r, const char* key, bool dflt) {
  const toml::node* n = r.get(key);
  if (!n) return dflt;
  if (!n->is_boolean()) {
    r.diag().error(n->source(), "`" + r.qualified(key) + "` must be true or false");
    return dflt;
  }
  return n->as_boolean()->get();
}

// Calls fn(reader) for every table of the array-of-tables `key` in `doc`'s top table.
template <class Fn>
void each(TableReader& top, const char* key, Fn fn) {
  const toml::node* n = top.get(key);
  if (!n) return;
  if (!n->is_array_of_tables()) {
    top.diag().error(n->source(), std::string("`") + key + "` must be an array of tables ([[" + key + "]])");
    return;
  }
  int i = 0;
  for (const auto& el : *n->as_array()) {
    TableReader r(*el.as_table(), std::string(key) + "[" + std::to_string(++i) + "]", top.diag());
    fn(r);
    r.finish();
  }
}

template <class Fn>
void table(TableReader& top, const char* key, Fn fn) {
  if (const toml::table* t = top.subtable(key)) {
    TableReader r(*t, key, top.diag());
    fn(r);
    r.finish();
  }
}

void check_schema(TableReader& top) {
  auto s = top.integer("schema", true);
  if (s && s->value != 1)
    top.diag().error_at(s->pos.line, s->pos.column, "knowledge data schema " + std::to_string(s->value) + " is not supported");
}

void read_drivers(TableReader& top, model::Facts& f) {
  each(top, "family", [&](TableReader& r) {
    model::DriverFamily d;
    d.cuda_major = integer(r, "cuda_major");
    d.linux = ver(r, "linux");
    d.windows = ver(r, "windows");
    d.below = opt_ver(r, "below");
    d.source = sources(r);
    d.note = str(r, "note");
    f.driver_families.push_back(std::move(d));
  });
  each(top, "release", [&](TableReader& r) {
    model::DriverRelease d;
    d.cuda = ver(r, "cuda", 3, 3);
    d.label = str(r, "label");
    d.linux = opt_ver(r, "linux");
    d.windows = opt_ver(r, "windows");
    d.windows_na = boolean(r, "windows_na", false);
    d.source = sources(r);
    d.note = str(r, "note");
    f.driver_releases.push_back(std::move(d));
  });
}

void read_archives(TableReader& top, model::Facts& f) {
  f.cudnn_base_url = str(top, "base_url", true);
  str(top, "url_pattern");
  each(top, "archive", [&](TableReader& r) {
    model::CudnnArchiveFact a;
    a.version = ver(r, "version", 4, 4);
    a.cuda = integer(r, "cuda");
    auto p = r.choice("platform", model::platform_names(), true);
    if (p) a.platform = static_cast<model::Platform>(p->value);
    a.file = str(r, "file", true);
    a.url = str(r, "url", true);
    a.sha256 = str(r, "sha256", true);
    if (a.sha256.size() != 64 || !util::is_hex(a.sha256)) {
      auto pos = r.key_pos("sha256");
      r.diag().error_at(pos.line, pos.column, "`" + r.qualified("sha256") + "` is not 64 hex digits");
    }
    if (auto s = r.integer("size")) a.size = static_cast<std::uint64_t>(s->value);
    a.md5 = str(r, "md5");
    a.released = str(r, "released");
    a.cross_checked = boolean(r, "cross_checked", false);
    a.caveat = str(r, "caveat");
    a.source = sources(r);
    f.cudnn_archives.push_back(std::move(a));
  });
}

void read_layout_rules(TableReader& top, const char* key, std::vector<model::LayoutRule>& out) {
  each(top, key, [&](TableReader& r) {
    model::LayoutRule l;
    if (auto p = r.choice("platform", model::platform_names())) l.platform = model::parse_platform(model::platform_names()[p->value]);
    l.from = ver(r, "from", 3, 3);
    l.until = opt_ver(r, "until", 3, 3);
    l.dirs = strings(r, "dirs", true);
    l.verified = boolean(r, "verified", true);
    l.source = sources(r);
    l.note = str(r, "note");
    out.push_back(std::move(l));
  });
}

void read_layouts(TableReader& top, model::Facts& f) {
  read_layout_rules(top, "windows_import_lib_dir", f.windows_import_lib_dir);
  read_layout_rules(top, "windows_dll_dir", f.windows_dll_dir);
  read_layout_rules(top, "linux_lib_dir", f.linux_lib_dir);
  each(top, "major", [&](TableReader& r) {
    model::CudnnMajorContents m;
    m.major = integer(r, "major");
    m.linux_libraries = strings(r, "linux_libraries", true);
    m.linux_optional_libraries = strings(r, "linux_optional_libraries");
    m.headers = strings(r, "headers", true);
    m.windows_dlls = strings(r, "windows_dlls", true);
    m.windows_optional_dlls = strings(r, "windows_optional_dlls");
    m.windows_import_libs = strings(r, "windows_import_libs", true);
    m.main_dll = str(r, "main_dll", true);
    m.soname = str(r, "soname", true);
    m.source = sources(r);
    m.note = str(r, "note");
    f.cudnn_majors.push_back(std::move(m));
  });
}

model::OnnxRuntimeRow onnxruntime_row(TableReader& r) {
  model::OnnxRuntimeRow o;
  o.first = ver(r, "first", 2, 3);
  o.last = ver(r, "last", 2, 3);
  o.cuda_major = integer(r, "cuda_major");
  o.cuda = str(r, "cuda");
  o.cudnn_major = integer(r, "cudnn_major");
  o.cudnn_linux = opt_ver(r, "cudnn_linux");
  o.cudnn_windows = opt_ver(r, "cudnn_windows");
  o.note = str(r, "note");
  // the facts' table says it in its note ("Available in PyPI" / "Not available in PyPI")
  if (r.get("pypi"))
    o.pypi = boolean(r, "pypi", false);
  else if (o.note.find("Not available in PyPI") != std::string::npos)
    o.pypi = false;
  else if (o.note.find("Available in PyPI") != std::string::npos)
    o.pypi = true;
  o.source = sources(r);
  return o;
}

void read_frameworks(TableReader& top, model::Facts& f) {
  table(top, "torch_index", [&](TableReader& r) {
    f.torch_index_pattern = str(r, "url_pattern", true);
    f.torch_install_flag = str(r, "install_flag");
    str(r, "note");
    f.torch_index_source = sources(r);
  });
  each(top, "torch", [&](TableReader& r) {
    model::TorchRelease t;
    t.release = ver(r, "release", 2, 3);
    t.python = str(r, "python");
    t.variants = strings(r, "variants", true);
    t.stable_cuda = strings(r, "stable_cuda");
    t.experimental_cuda = strings(r, "experimental_cuda");
    if (const toml::table* c = r.subtable("cudnn")) {
      for (auto&& [k, v] : *c) {
        auto parsed = v.is_string() ? Version::parse(v.as_string()->get()) : std::nullopt;
        if (!parsed) {
          r.diag().error(v.source(), "`" + r.qualified("cudnn") + "." + std::string(k.str()) + "` must be a version string");
          continue;
        }
        t.cudnn[std::string(k.str())] = *parsed;
      }
    }
    t.source = sources(r);
    t.note = str(r, "note");
    f.torch.push_back(std::move(t));
  });
  each(top, "tensorflow", [&](TableReader& r) {
    model::TensorflowBuild t;
    t.version = ver(r, "version", 2, 3);
    auto os = r.choice("os", {"linux", "windows"}, true);
    if (os) t.os = os->value == 0 ? model::Os::linux : model::Os::windows;
    t.package = str(r, "package", true);
    t.cuda = ver(r, "cuda", 1, 3);
    t.cudnn = ver(r, "cudnn", 1, 3);
    t.python = str(r, "python");
    t.source = sources(r);
    f.tensorflow.push_back(std::move(t));
  });
  table(top, "tensorflow_notes", [&](TableReader& r) {
    f.tensorflow_windows_native_gpu_last = opt_ver(r, "windows_native_gpu_last");
    f.tensorflow_notes = str(r, "text");
    f.tensorflow_notes_source = sources(r);
  });
  each(top, "onnxruntime", [&](TableReader& r) { f.onnxruntime.push_back(onnxruntime_row(r)); });
  table(top, "onnxruntime_notes", [&](TableReader& r) {
    f.onnxruntime_notes = str(r, "text");
    f.onnxruntime_notes_source = sources(r);
  });
}

void read_windows_runtime(TableReader& top, model::Facts& f) {
  table(top, "zlibwapi", [&](TableReader& r) {
    model::ZlibwapiFact z;
    z.from = ver(r, "from", 3, 3);
    z.until = ver(r, "until", 3, 3);
    z.dll = str(r, "dll", true);
    z.note = str(r, "note");
    z.source = sources(r);
    f.zlibwapi = std::move(z);
  });
  table(top, "vc_runtime", [&](TableReader& r) {
    f.vc_runtime_note = str(r, "note");
    f.vc_runtime_source = sources(r);
  });
}

// Tables whose text is kept for people but not used by any rule yet: every key must still be a
// string or an array of strings, so that a typo'd structure is noticed.
void read_text_table(TableReader& top, const char* key) {
  table(top, key, [&](TableReader& r) {
    for (auto&& [k, v] : r.table()) {
      std::string name(k.str());
      if (v.is_string())
        str(r, name.c_str());
      else
        strings(r, name.c_str());
    }
  });
}

void read_conda(TableReader& top, model::Facts& f) {
  table(top, "cuda_version", [&](TableReader& r) {
    f.conda_cuda_versions = strings(r, "versions");
    str(r, "note");
    f.conda_source = sources(r);
  });
  each(top, "conda_forge_cudnn", [&](TableReader& r) {
    model::CondaCudnn c;
    c.version = ver(r, "version", 4, 4);
    if (const toml::array* a = r.array("cuda_majors"))
      for (const auto& el : *a) {
        if (el.is_integer())
          c.cuda_majors.push_back(static_cast<int>(el.as_integer()->get()));
        else
          r.diag().error(el.source(), "`" + r.qualified("cuda_majors") + "` must list integers");
      }
    c.note = str(r, "note");
    c.source = sources(r);
    f.conda_forge_cudnn.push_back(std::move(c));
  });
  read_text_table(top, "nvidia_channel");
  read_text_table(top, "pytorch_channel");
}

std::vector<int> integers(TableReader& r, const char* key) {
  std::vector<int> out;
  if (const toml::array* a = r.array(key))
    for (const auto& el : *a) {
      if (el.is_integer())
        out.push_back(static_cast<int>(el.as_integer()->get()));
      else
        r.diag().error(el.source(), "`" + r.qualified(key) + "` must list integers");
    }
  return out;
}

void read_cuda_components(TableReader& top, model::Facts& f) {
  each(top, "set", [&](TableReader& r) {
    model::CudaComponentSet s;
    s.name = str(r, "name", true);
    s.cuda_majors = integers(r, "cuda_majors");
    s.components = strings(r, "components", true);
    s.optional = strings(r, "optional");
    s.note = str(r, "note");
    s.source = sources(r);
    auto p = detail::pos_of(r.table());
    if (s.cuda_majors.empty())
      r.diag().error_at(p.line, p.column, "`" + r.qualified("cuda_majors") + "` must list at least one CUDA major");
    for (const auto& other : f.cuda_sets)
      for (int major : s.cuda_majors)
        if (other.name == s.name && std::count(other.cuda_majors.begin(), other.cuda_majors.end(), major))
          r.diag().error_at(p.line, p.column, "set \"" + s.name + "\" is defined twice for CUDA " + std::to_string(major));
    f.cuda_sets.push_back(std::move(s));
  });
}

void read_containers(TableReader& top, model::Facts& f) {
  table(top, "apt_naming", [&](TableReader& r) {
    f.apt_naming_v8 = str(r, "v8", true);
    f.apt_naming_v9 = str(r, "v9", true);
    for (auto&& [k, v] : r.table()) {
      std::string name(k.str());
      if (name != "source" && v.is_string()) str(r, name.c_str());
    }
    f.apt_naming_source = sources(r);
  });
  each(top, "apt_pin", [&](TableReader& r) {
    model::AptPin a;
    a.cuda = ver(r, "cuda", 2, 3);
    a.os = str(r, "os", true);
    a.cudnn = ver(r, "cudnn", 4, 4);
    a.package = str(r, "package", true);
    a.package_dev = str(r, "package_dev");
    a.note = str(r, "note");
    a.source = sources(r);
    f.apt_pins.push_back(std::move(a));
  });
  each(top, "docker_tag", [&](TableReader& r) {
    model::DockerTag d;
    d.tag = str(r, "tag", true);
    d.cuda = ver(r, "cuda", 3, 3);
    d.flavor = str(r, "flavor", true);
    d.os = str(r, "os", true);
    d.cudnn = ver(r, "cudnn", 4, 4);
    d.apt_package = str(r, "apt_package");
    d.note = str(r, "note");
    d.source = sources(r);
    f.docker_tags.push_back(std::move(d));
  });
  table(top, "docker_tag_naming", [&](TableReader& r) {
    strings(r, "repositories");
    f.docker_suffix_history = str(r, "suffix_history");
    for (auto&& [k, v] : r.table()) {
      std::string name(k.str());
      if (name != "source" && name != "repositories" && v.is_string()) str(r, name.c_str());
    }
    f.docker_source = sources(r);
  });
}

// A list of compute capabilities ("8.6"): two-part versions.
std::vector<Version> ccs(TableReader& r, const char* key, bool required = false) {
  std::vector<Version> out;
  for (const auto& s : strings(r, key, required)) {
    auto v = Version::parse(s);
    if (!v || v->size() != 2) {
      auto p = detail::pos_of(r.table());
      r.diag().error_at(p.line, p.column, "`" + r.qualified(key) + "` lists \"" + s + "\", not a compute capability (\"8.6\")");
      continue;
    }
    out.push_back(*v);
  }
  return out;
}

Version cc(TableReader& r, const char* key) { return ver(r, key, 2, 2); }

void read_gpus(TableReader& top, model::Facts& f) {
  each(top, "arch", [&](TableReader& r) {
    model::GpuArch a;
    a.cc = cc(r, "cc");
    a.name = str(r, "name");
    a.targets = strings(r, "targets", true);
    a.note = str(r, "note");
    a.source = sources(r);
    f.gpu_archs.push_back(std::move(a));
  });
  each(top, "gpu", [&](TableReader& r) {
    model::GpuModel g;
    g.name = str(r, "name", true);
    g.aliases = strings(r, "aliases");
    g.listed_as = str(r, "listed_as");
    g.cc = cc(r, "cc");
    auto seg = r.choice("segment", {"geforce", "workstation", "datacenter", "jetson"}, true);
    if (seg) g.segment = std::vector<std::string>{"geforce", "workstation", "datacenter", "jetson"}[seg->value];
    g.note = str(r, "note");
    g.source = sources(r);
    f.gpu_models.push_back(std::move(g));
  });
  each(top, "ptx", [&](TableReader& r) {
    model::PtxIsaRelease x;
    x.isa = ver(r, "isa", 2, 2);
    x.cuda = ver(r, "cuda", 2, 2);
    x.source = sources(r);
    f.ptx_isa.push_back(std::move(x));
  });
}

// The platform of a framework build's row: linux-x86_64, linux-sbsa (aarch64 wheels) or windows-x86_64.
model::Platform wheel_platform(TableReader& r) {
  auto p = r.choice("platform", {"linux-x86_64", "linux-sbsa", "windows-x86_64"}, true);
  if (!p) return model::Platform::linux_x86_64;  // the error is reported
  return p->value == 0 ? model::Platform::linux_x86_64 : p->value == 1 ? model::Platform::linux_sbsa : model::Platform::windows_x86_64;
}

void read_gpu_support(TableReader& top, model::Facts& f) {
  each(top, "cudnn", [&](TableReader& r) {
    model::CudnnArchSupport c;
    c.from = ver(r, "from", 3, 4);
    c.until = opt_ver(r, "until", 3, 4);
    c.cuda_major = integer(r, "cuda_major");
    c.min_cc = cc(r, "min_cc");
    if (r.get("max_cc")) c.max_cc = cc(r, "max_cc");
    c.ccs = ccs(r, "ccs");
    c.note = str(r, "note");
    c.source = sources(r);
    f.cudnn_arch.push_back(std::move(c));
  });
  each(top, "nvcc", [&](TableReader& r) {
    model::NvccArchs n;
    n.cuda = ver(r, "cuda", 2, 2);
    n.sass = ccs(r, "sass", true);
    n.ptx = ccs(r, "ptx");
    n.deprecated = ccs(r, "deprecated");
    n.removed_since = ccs(r, "removed_since");
    n.family = strings(r, "family");
    n.note = str(r, "note");
    n.source = sources(r);
    f.nvcc_archs.push_back(std::move(n));
  });
  each(top, "torch", [&](TableReader& r) {
    model::TorchArchs t;
    t.release = ver(r, "release", 2, 2);
    t.variant = str(r, "variant", true);
    t.platform = wheel_platform(r);
    t.sass = ccs(r, "sass", true);
    t.ptx = ccs(r, "ptx");
    t.note = str(r, "note");
    t.source = sources(r);
    f.torch_archs.push_back(std::move(t));
  });
  each(top, "framework", [&](TableReader& r) {
    model::FrameworkArchs a;
    auto name = r.choice("name", {"onnxruntime-gpu", "tensorflow"}, true);
    if (name) a.framework = name->value == 0 ? "onnxruntime-gpu" : "tensorflow";
    a.from = ver(r, "from", 2, 3);
    a.until = opt_ver(r, "until", 2, 3);
    a.cuda_major = integer(r, "cuda_major");
    a.platform = wheel_platform(r);
    a.sass = ccs(r, "sass");
    a.ptx = ccs(r, "ptx");
    a.sass_a = ccs(r, "sass_a");
    a.ptx_a = ccs(r, "ptx_a");
    a.inferred = boolean(r, "inferred", false);
    a.jit_fails = ccs(r, "jit_fails");
    a.jit_fails_note = str(r, "jit_fails_note");
    a.jit_fails_source = strings(r, "jit_fails_source");
    if (!a.jit_fails.empty() && (a.jit_fails_source.empty() || a.jit_fails_note.empty())) {
      auto p = detail::pos_of(r.table());
      r.diag().error_at(p.line, p.column, "`jit_fails` needs `jit_fails_note` and `jit_fails_source` (the report of the failure)");
    }
    a.note = str(r, "note");
    a.source = sources(r);
    f.framework_archs.push_back(std::move(a));
  });
}

// onnxruntime-gpu releases after the last row of the facts' table, in frameworks.toml's schema,
// appended to its rows (frameworks.toml is the importer's and is rewritten by it).
void read_onnxruntime_builds(TableReader& top, model::Facts& f) {
  each(top, "onnxruntime", [&](TableReader& r) { f.onnxruntime.push_back(onnxruntime_row(r)); });
}

// The variants published beside RELEASE.md's, merged into the frameworks.toml row of the release.
void read_torch_wheels(TableReader& top, model::Facts& f) {
  each(top, "torch", [&](TableReader& r) {
    Version release = ver(r, "release", 2, 2);
    auto row = std::find_if(f.torch.begin(), f.torch.end(), [&](const model::TorchRelease& t) { return t.release == release; });
    auto variants = strings(r, "variants", true);
    auto linux_only = strings(r, "linux_only");
    std::map<std::string, Version> first;
    if (const toml::table* fp = r.subtable("first_patch"))
      for (auto&& [k, v] : *fp) {
        auto parsed = v.is_string() ? Version::parse(v.as_string()->get()) : std::nullopt;
        if (!parsed) {
          r.diag().error(v.source(), "`" + r.qualified("first_patch") + "." + std::string(k.str()) + "` must be a version string");
          continue;
        }
        first[std::string(k.str())] = *parsed;
      }
    auto pins = [&](const char* key) {
      std::map<std::string, Version> out;
      if (const toml::table* t = r.subtable(key))
        for (auto&& [k, v] : *t) {
          auto parsed = v.is_string() ? Version::parse(v.as_string()->get()) : std::nullopt;
          static const std::regex k_variant(R"(cu\d{3})");
          if (!parsed || !std::regex_match(std::string(k.str()), k_variant)) {
            r.diag().error(v.source(),
                           "`" + r.qualified(key) + "." + std::string(k.str()) + "` must be a CUDA variant (cu130) with a version string");
            continue;
          }
          out[std::string(k.str())] = *parsed;
        }
      return out;
    };
    auto wheel_cudnn = pins("wheel_cudnn");
    auto wheel_cuda = pins("wheel_cuda");
    std::string pins_note = str(r, "wheel_pins_note");
    model::Sources pins_source = strings(r, "wheel_pins_source");
    std::string note = str(r, "note");
    auto src = sources(r);
    if (row == f.torch.end()) {
      auto p = detail::pos_of(r.table());
      r.diag().error_at(p.line, p.column, "torch " + release.text() + " has no [[torch]] row in frameworks.toml to add wheels to");
      return;
    }
    for (const auto& v : variants)
      if (std::find(row->variants.begin(), row->variants.end(), v) == row->variants.end()) row->extra_variants.push_back(v);
    row->linux_only = linux_only;
    row->first_patch = first;
    row->wheels_note = note;
    row->wheels_source = src;
    row->wheel_cudnn = std::move(wheel_cudnn);
    row->wheel_cuda = std::move(wheel_cuda);
    row->wheel_pins_note = pins_note;
    row->wheel_pins_source = std::move(pins_source);
    if ((!row->wheel_cudnn.empty() || !row->wheel_cuda.empty()) && row->wheel_pins_source.empty()) {
      auto p = detail::pos_of(r.table());
      r.diag().error_at(p.line, p.column, "torch " + release.text() + "'s wheel pins have no wheel_pins_source");
    }
  });
}

using Reader = void (*)(TableReader&, model::Facts&);
const std::vector<std::pair<std::string, Reader>>& readers() {
  static const std::vector<std::pair<std::string, Reader>> k_readers{{"drivers.toml", read_drivers},
                                                                     {"cudnn-archives.toml", read_archives},
                                                                     {"cudnn-layouts.toml", read_layouts},
                                                                     {"frameworks.toml", read_frameworks},
                                                                     {"windows-runtime.toml", read_windows_runtime},
                                                                     {"conda.toml", read_conda},
                                                                     {"containers.toml", read_containers},
                                                                     {"cuda-components.toml", read_cuda_components},
                                                                     {"gpus.toml", read_gpus},
                                                                     {"gpu-support.toml", read_gpu_support},
                                                                     {"torch-wheels.toml", read_torch_wheels},
                                                                     {"onnxruntime-builds.toml", read_onnxruntime_builds}};
  return k_readers;
}

}  // namespace

const std::vector<std::string>& facts_file_names() {
  static const std::vector<std::string> k_names = [] {
    std::vector<std::string> n;
    for (const auto& [name, fn] : readers()) n.push_back(name);
    return n;
  }();
  return k_names;
}

util::Status read_facts_file(const std::string& name, std::string_view text, model::Facts& facts) {
  const auto& all = readers();
  auto reader = std::find_if(all.begin(), all.end(), [&](const auto& r) { return r.first == name; });
  if (reader == all.end()) return util::Error(util::ErrorCode::not_found, "no knowledge data file is called " + name);
  Doc doc(name, text);
  if (doc.table) {
    TableReader top(*doc.table, "", doc.diag);
    check_schema(top);
    reader->second(top, facts);
    top.finish();
  }
  if (doc.diag.any()) {
    auto e = doc.diag.first();
    e.context = "reading stackpin's knowledge data";
    return e;
  }
  return {};
}

util::Result<model::Facts> parse_facts(const std::vector<std::pair<std::string, std::string_view>>& files) {
  model::Facts facts;
  for (const std::string& name : facts_file_names()) {
    auto it = std::find_if(files.begin(), files.end(), [&](const auto& p) { return p.first == name; });
    if (it == files.end()) return util::Error(util::ErrorCode::not_found, "knowledge data file " + name + " is missing");
    SP_TRY(read_facts_file(name, it->second, facts));
  }
  return facts;
}

}  // namespace format
