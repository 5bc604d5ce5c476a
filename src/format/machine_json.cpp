// The machine report of `doctor` as JSON: every field of model::MachineReport, unknowns as null
// where the model keeps them optional and as "" where it keeps text.
#include <nlohmann/json.hpp>

#include "format/json.hpp"
#include "json_impl.hpp"

namespace format {

using nlohmann::json;

namespace {

json candidate(const model::LoaderCandidate& c) { return json{{"path", c.path}, {"real_path", c.real_path}, {"via", c.via}}; }

}  // namespace

JsonDoc to_json(const model::MachineReport& r) {
  json toolkits = json::array();
  for (const auto& t : r.toolkits) {
    json components = json::array();
    for (const auto& c : t.components) components.push_back({{"id", c.id}, {"name", c.name}, {"version", c.version}});
    json wheels = json::array();
    for (const auto& w : t.wheels) wheels.push_back({{"distribution", w.distribution}, {"dist_info", w.dist_info}, {"version", w.version}});
    toolkits.push_back({{"root", t.root},
                        {"aliases", t.aliases},
                        {"version", t.version},
                        {"version_source", model::to_string(t.version_source)},
                        {"version_detail", t.version_detail},
                        {"cuda_h_version", t.cuda_h_version},
                        {"is_default", t.is_default},
                        {"components", components},
                        {"wheels", wheels}});
  }
  json cudnn = json::array();
  for (const auto& c : r.cudnn) {
    json whole = json::array();
    for (const auto& w : c.whole)
      whole.push_back({{"major", w.major},
                       {"release", w.release ? json(w.release->text()) : json(nullptr)},
                       {"release_source", w.release_source},
                       {"present", w.present},
                       {"missing", w.missing},
                       {"problems", w.problems},
                       {"whole", w.whole()}});
    json kernels = json::array();
    for (const auto& k : c.kernels) {
      json sass = json::array(), ptx = json::array();
      for (const auto& t : k.targets) {
        if (t.target.kind == model::CodeKind::sass) sass.push_back(t.target.name());
        if (t.target.kind == model::CodeKind::ptx) ptx.push_back(t.target.name());
      }
      kernels.push_back({{"path", k.path}, {"sass", sass}, {"ptx", ptx}});
    }
    cudnn.push_back({{"dir", c.dir},
                     {"aliases", c.aliases},
                     {"kind", model::to_string(c.kind)},
                     {"kind_detail", c.kind_detail},
                     {"major", c.major},
                     {"header_version", c.header_version},
                     {"header_path", c.header_path},
                     {"library_version", c.library_version},
                     {"library_version_source", c.library_version_source},
                     {"package_version", c.package_version},
                     {"package_source", c.package_source},
                     {"files", c.files},
                     {"missing", c.missing},
                     {"contents_known", c.contents_known},
                     {"headers_expected", c.headers_expected},
                     {"half_copied", c.half_copied},
                     {"mixed", c.mixed},
                     {"versions_seen", c.versions_seen},
                     {"problems", c.problems},
                     {"whole", whole},
                     {"kernels", kernels}});
  }
  json loader = json::array();
  for (const auto& l : r.loader) {
    json shadowed = json::array();
    for (const auto& s : l.shadowed) shadowed.push_back(candidate(s));
    loader.push_back(
        {{"soname", l.soname}, {"winner", l.winner ? candidate(*l.winner) : json(nullptr)}, {"shadowed", shadowed}, {"notes", l.notes}});
  }
  json llp = json::array();
  for (const auto& e : r.ld_library_path) llp.push_back({{"entry", e.text}, {"exists", e.exists}, {"relative", e.relative}});
  json conda = nullptr;
  if (r.conda) {
    json pkgs = json::array();
    for (const auto& p : r.conda->packages) pkgs.push_back({{"name", p.name}, {"version", p.version}, {"build", p.build}});
    conda = {{"prefix", r.conda->prefix},
             {"cudatoolkit", r.conda->cudatoolkit},
             {"cuda_version", r.conda->cuda_version},
             {"cudnn", r.conda->cudnn},
             {"packages", pkgs},
             {"problems", r.conda->problems}};
  }
  json frameworks = json::array();
  for (const auto& f : r.python.frameworks) frameworks.push_back({{"name", f.name}, {"version", f.version}, {"location", f.location}});
  json nvcc = nullptr;
  if (r.nvcc)
    nvcc = {{"path", r.nvcc->path},
            {"real_path", r.nvcc->real_path},
            {"toolkit_root", r.nvcc->toolkit_root},
            {"version", r.nvcc->version},
            {"version_source", r.nvcc->version_source}};

  json j{{"root", r.root},
         {"os", {{"id", r.os.id}, {"version_id", r.os.version_id}, {"pretty_name", r.os.pretty_name}, {"source", r.os.source}}},
         {"arch", r.arch},
         {"wsl",
          {{"wsl", r.wsl.wsl},
           {"version", r.wsl.version},
           {"evidence", r.wsl.evidence},
           {"windows_driver_mapped", r.wsl.windows_driver_mapped},
           {"windows_driver_path", r.wsl.windows_driver_path}}},
         {"driver",
          {{"version", r.driver.version},
           {"source", model::to_string(r.driver.source)},
           {"detail", r.driver.detail},
           {"tried", r.driver.tried}}},
         {"gpus",
          [&] {
            json g = json::array();
            for (const auto& d : r.gpus) g.push_back({{"index", d.index}, {"name", d.name}, {"compute_capability", d.cc}});
            return g;
          }()},
         {"toolkits", toolkits},
         {"nvcc", nvcc},
         {"cudnn", cudnn},
         {"loader", loader},
         {"ld_library_path", llp},
         {"ld_cache", r.ld_cache},
         {"ld_cache_error", r.ld_cache_error},
         {"default_dirs", r.default_dirs},
         {"conda", conda},
         {"python",
          {{"python", r.python.python}, {"site_packages", r.python.site_packages}, {"frameworks", frameworks}, {"error", r.python.error}}},
         {"skipped", r.skipped}};
  JsonDoc d;
  d.impl().value = std::move(j);
  return d;
}

}  // namespace format
