// JsonDoc, the JSON value the renderers build, and the --json envelope every command prints.
#include "format/json.hpp"

#include <nlohmann/json.hpp>

#include "json_impl.hpp"

namespace format {

using nlohmann::json;

JsonDoc::JsonDoc() : m_impl(std::make_unique<Impl>()) {}
JsonDoc::~JsonDoc() = default;
JsonDoc::JsonDoc(const JsonDoc& other) : m_impl(std::make_unique<Impl>(*other.m_impl)) {}
JsonDoc& JsonDoc::operator=(const JsonDoc& other) {
  *m_impl = *other.m_impl;
  return *this;
}
std::string JsonDoc::dump(int indent) const { return m_impl->value.dump(indent, ' ', false, json::error_handler_t::replace); }

namespace {
json location_json(const util::SourceLocation& loc) { return json{{"file", loc.file}, {"line", loc.line}, {"column", loc.column}}; }
}  // namespace

JsonDoc to_json(const model::Finding& f) {
  json j{{"rule", f.rule},         {"severity", model::to_string(f.severity)},
         {"subject", f.subject},   {"seen", f.seen},
         {"expected", f.expected}, {"fix", f.fix},
         {"source", f.source}};
  j["where"] = f.where ? location_json(*f.where) : json(nullptr);
  return wrap(std::move(j));
}

JsonDoc to_json(const util::Error& e) {
  json j{{"code", util::to_string(e.code)}, {"message", e.message}, {"context", e.context}, {"hints", e.hints}};
  j["where"] = e.where ? location_json(*e.where) : json(nullptr);
  return wrap(std::move(j));
}

JsonDoc to_json(const model::CheckReport& r) {
  json drivers = json::array();
  for (const auto& d : r.drivers) {
    json dj{{"os", model::to_string(d.os)}, {"effective", d.effective}, {"release_na", d.release_na}, {"source", d.source}};
    dj["family_floor"] = d.family_floor ? json(d.family_floor->text()) : json(nullptr);
    dj["release_min"] = d.release_min ? json(d.release_min->text()) : json(nullptr);
    dj["pinned"] = d.pinned ? json(d.pinned->text()) : json(nullptr);
    drivers.push_back(std::move(dj));
  }
  json wheels = json::array();
  for (const auto& w : r.wheels)
    wheels.push_back({{"framework", w.framework},
                      {"version", w.version},
                      {"variant", w.variant},
                      {"requirement", w.requirement},
                      {"index_url", w.index_url},
                      {"bundled_cudnn", w.bundled_cudnn},
                      {"source", w.source}});
  json archives = json::array();
  for (const auto& a : r.archives) {
    json aj{{"platform", model::to_string(a.platform)}, {"file", a.file},     {"known", a.known},
            {"cross_checked", a.cross_checked},         {"sha256", a.sha256}, {"url", a.url}};
    aj["size"] = a.size ? json(*a.size) : json(nullptr);
    archives.push_back(std::move(aj));
  }
  json j{{"manifest", r.manifest_path}, {"name", r.name},   {"cuda", r.cuda_version}, {"cudnn", r.cudnn_version},
         {"drivers", drivers},          {"wheels", wheels}, {"archives", archives},   {"rules_examined", r.examined}};
  j["cudnn_cuda_major"] = r.cudnn_cuda_major ? json(*r.cudnn_cuda_major) : json(nullptr);
  json components = json::array();
  for (const auto& c : r.cuda_components)
    components.push_back({{"platform", model::to_string(c.platform)},
                          {"component", c.component},
                          {"name", c.name},
                          {"version", c.version},
                          {"via", c.via},
                          {"url", c.url},
                          {"sha256", c.sha256},
                          {"md5", c.md5},
                          {"size", c.size},
                          {"source", c.source}});
  j["cuda_components"] = std::move(components);
  json gpus = json::array();
  for (const auto& g : r.gpus)
    gpus.push_back({{"compute_capability", g.cc},
                    {"architecture", g.arch},
                    {"models", g.names},
                    {"cudnn", g.cudnn},
                    {"nvcc", g.nvcc},
                    {"torch", g.torch},
                    {"onnxruntime", g.onnxruntime},
                    {"tensorflow", g.tensorflow}});
  j["gpus"] = std::move(gpus);
  if (r.windows) {
    const auto& w = *r.windows;
    j["windows"] = {{"dll_dir", w.dll_dir},
                    {"import_lib_dir", w.import_lib_dir},
                    {"include_dir", w.include_dir},
                    {"main_dll", w.main_dll},
                    {"verified", w.verified},
                    {"zlibwapi_needed", w.zlibwapi_needed},
                    {"source", w.source}};
  } else {
    j["windows"] = nullptr;
  }
  json findings = json::array();
  for (const auto& f : r.findings) findings.push_back(to_json(f).impl().value);
  j["findings"] = std::move(findings);
  return wrap(std::move(j));
}

JsonDoc to_json(const std::vector<model::CheckReport>& reports) {
  json arr = json::array();
  for (const auto& r : reports) arr.push_back(to_json(r).impl().value);
  return wrap(json{{"manifests", std::move(arr)}});
}

JsonDoc to_json(const model::ConvReport& r) {
  auto lib = [](const model::LoadedLibrary& l) {
    return json{{"what", l.what}, {"requested", l.requested}, {"path", l.path}, {"error", l.error}, {"tried", l.tried}};
  };
  json gpus = json::array();
  for (const auto& g : r.gpus)
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
                    {"memory", g.memory},
                    {"architecture", g.architecture},
                    {"cudnn_kernels", g.cudnn_kernels}});
  json cases = json::array();
  for (const auto& c : r.cases)
    cases.push_back({{"device", c.device},
                     {"op", c.op},
                     {"dtype", c.dtype},
                     {"shape", c.shape},
                     {"algo", c.algo},
                     {"status", c.status},
                     {"ms", c.ms},
                     {"gflops", c.gflops},
                     {"max_abs_err", c.max_abs_err},
                     {"tolerance", c.tolerance},
                     {"non_finite", c.non_finite},
                     {"ok", c.ok},
                     {"detail", c.detail}});
  return wrap(json{{"cudart", lib(r.cudart)},
                   {"cudnn", lib(r.cudnn)},
                   {"cudnn_version", r.cudnn_version},
                   {"cudnn_version_raw", r.cudnn_version_raw},
                   {"cudnn_built_with_cuda", r.cudnn_built_with_cuda},
                   {"runtime_version", r.runtime_version},
                   {"driver_version", r.driver_version},
                   {"gpus", gpus},
                   {"cases", cases},
                   {"nothing_to_run", r.nothing_to_run},
                   {"framework", r.framework ? json{{"framework", r.framework->framework},
                                                    {"python", r.framework->python},
                                                    {"installed", r.framework->installed},
                                                    {"version", r.framework->version},
                                                    {"gpu", r.framework->gpu},
                                                    {"cudnn_version", r.framework->cudnn_version},
                                                    {"loaded_cudnn", r.framework->loaded_cudnn},
                                                    {"ran", r.framework->ran},
                                                    {"max_abs_err", r.framework->max_abs_err},
                                                    {"non_finite", r.framework->non_finite},
                                                    {"error", r.framework->error}}
                                             : json(nullptr)}});
}

JsonDoc to_json(const model::DiffReport& r) {
  auto opt = [](const std::optional<std::string>& v) { return v ? json(*v) : json(nullptr); };
  json rows = json::array();
  for (const auto& row : r.rows)
    rows.push_back({{"group", row.group},
                    {"component", row.component},
                    {"a", opt(row.a)},
                    {"b", opt(row.b)},
                    {"weight", model::to_string(row.weight)},
                    {"reason", row.reason}});
  auto c = r.counts();
  return wrap(json{{"a", {{"path", r.a.path}, {"name", r.a.name}}},
                   {"b", {{"path", r.b.path}, {"name", r.b.name}}},
                   {"counts",
                    {{"differences", c.differences()},
                     {"breaking", c.breaking},
                     {"likely_breaking", c.likely_breaking},
                     {"compatible", c.compatible},
                     {"same", c.same}}},
                   {"rows", std::move(rows)}});
}

util::Result<std::optional<std::string>> json_string_at(std::string_view text, const std::vector<std::string>& keys) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end(), nullptr, false);
  } catch (const json::exception& e) {  // some errors throw even with exceptions off (a number out of range)
    return util::Error(util::ErrorCode::parse, std::string("not a JSON document: ") + e.what());
  }
  if (doc.is_discarded()) return util::Error(util::ErrorCode::parse, "not a JSON document");
  const json* cur = &doc;
  for (const auto& k : keys) {
    if (!cur->is_object()) return std::optional<std::string>();
    auto it = cur->find(k);
    if (it == cur->end()) return std::optional<std::string>();
    cur = &*it;
  }
  if (!cur->is_string()) return std::optional<std::string>();
  return std::optional<std::string>(cur->get<std::string>());
}

util::Result<std::vector<VersionJsonComponent>> version_json_components(std::string_view text) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end(), nullptr, false);
  } catch (const json::exception& e) {
    return util::Error(util::ErrorCode::parse, std::string("not a JSON document: ") + e.what());
  }
  if (doc.is_discarded() || !doc.is_object()) return util::Error(util::ErrorCode::parse, "not a JSON object");
  std::vector<VersionJsonComponent> out;
  for (auto it = doc.begin(); it != doc.end() && out.size() < 512; ++it) {
    if (it.key() == "cuda" || it.key().size() > 256 || !it->is_object()) continue;
    auto v = it->find("version");
    if (v == it->end() || !v->is_string() || v->get_ref<const std::string&>().size() > 256) continue;
    auto n = it->find("name");
    std::string name = n != it->end() && n->is_string() && n->get_ref<const std::string&>().size() <= 256 ? n->get<std::string>() : "";
    out.push_back({it.key(), name, v->get<std::string>()});
  }
  return out;
}

JsonDoc empty_object() { return wrap(json::object()); }

JsonDoc generated_json(const std::string& kind, const std::vector<GeneratedFile>& files) {
  json arr = json::array();
  for (const auto& f : files) arr.push_back({{"path", f.path}, {"bytes", f.bytes}, {"text", f.text ? json(*f.text) : json(nullptr)}});
  return wrap(json{{"kind", kind}, {"files", std::move(arr)}});
}

JsonDoc sbom_json(const std::string& file, std::size_t packages, std::size_t files, const std::vector<std::string>& notes,
                  const std::optional<std::string>& document) {
  json j{{"file", file}, {"packages", packages}, {"files", files}, {"notes", notes}};
  if (document) j["document"] = json::parse(*document, nullptr, false);
  return wrap(std::move(j));
}

JsonDoc captured_json(const std::string& manifest_text, const std::string& output, const std::string& name, const std::string& cuda,
                      const std::string& cudnn) {
  return wrap(json{{"manifest", manifest_text},
                   {"output", output.empty() || output == "-" ? json(nullptr) : json(output)},
                   {"name", name},
                   {"cuda", cuda},
                   {"cudnn", cudnn}});
}

std::string envelope(const std::string& command, bool ok, const std::vector<model::Finding>& findings, const JsonDoc& report,
                     const util::Error* error) {
  json f = json::array();
  for (const auto& x : findings) f.push_back(to_json(x).impl().value);
  json j{{"schema", 1}, {"command", command}, {"ok", ok}, {"findings", std::move(f)}, {"report", report.impl().value}};
  j["error"] = error ? to_json(*error).impl().value : json(nullptr);
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace format
