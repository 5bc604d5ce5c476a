// The JSON forms of an inspect report and of `lock --upgrade`'s report.
#include <nlohmann/json.hpp>

#include "format/json.hpp"
#include "json_impl.hpp"

namespace format {

using nlohmann::json;

namespace {

const char* kind_name(model::CodeKind k) {
  switch (k) {
    case model::CodeKind::sass: return "sass";
    case model::CodeKind::ptx: return "ptx";
    case model::CodeKind::lto: return "lto";
    case model::CodeKind::other: return "other";
  }
  return "other";
}

const char* variant_name(model::ArchVariant v) {
  switch (v) {
    case model::ArchVariant::plain: return "";
    case model::ArchVariant::specific: return "a";
    case model::ArchVariant::family: return "f";
  }
  return "";
}

json optional_version(const std::optional<model::Version>& v) { return v ? json(v->text()) : json(nullptr); }

json library_json(const model::InspectedLibrary& l) {
  const auto& k = l.kernels;
  json targets = json::array(), sass = json::array(), ptx = json::array(), fits = json::array();
  for (const auto& t : k.targets) {
    targets.push_back({{"name", t.target.name()},
                       {"kind", kind_name(t.target.kind)},
                       {"arch", t.target.arch.text()},
                       {"variant", variant_name(t.target.variant)},
                       {"images", t.images},
                       {"stored_bytes", t.stored_bytes},
                       {"uncompressed_bytes", t.uncompressed_bytes},
                       {"compressed", {{"lz4", t.lz4}, {"zstd", t.zstd}, {"none", t.images - t.lz4 - t.zstd}}},
                       {"ptx_isa", optional_version(t.ptx_isa)}});
    if (t.target.kind == model::CodeKind::sass) sass.push_back(t.target.name());
    if (t.target.kind == model::CodeKind::ptx) ptx.push_back(t.target.name());
  }
  for (const auto& f : l.fits)
    fits.push_back({{"gpu", f.gpu.text()},
                    {"fit", model::to_string(f.fit)},
                    {"via", f.via.empty() ? json(nullptr) : json(f.via)},
                    {"ptx_isa", optional_version(f.ptx_isa)},
                    {"jit_cuda", optional_version(f.jit_cuda)},
                    {"jit_cuda_at_least", f.jit_cuda_at_least},
                    {"jit_driver", optional_version(f.jit_driver)},
                    {"ptx_bytes", f.ptx_bytes}});
  return {{"path", k.path},
          {"archive", l.archive.empty() ? json(nullptr) : json(l.archive)},
          {"format", k.format},
          {"size", k.file_size},
          {"containers", k.containers},
          {"sections", k.sections},
          {"sass", sass},
          {"ptx", ptx},
          {"targets", targets},
          {"gpus", fits}};
}

}  // namespace

JsonDoc to_json(const model::InspectReport& r) {
  json libs = json::array(), archives = json::array(), gpus = json::array();
  for (const auto& l : r.libraries) libs.push_back(library_json(l));
  for (const auto& a : r.archives)
    archives.push_back({{"path", a.path},
                        {"sha256", a.sha256},
                        {"size", a.size},
                        {"pinned_by", a.pinned_by.empty() ? json(nullptr) : json(a.pinned_by)},
                        {"libraries", a.libraries}});
  for (const auto& g : r.gpus) gpus.push_back(g.text());
  JsonDoc d;
  d.impl().value = json{{"gpus", gpus}, {"files_seen", r.files_seen}, {"archives", archives}, {"libraries", libs}};
  return d;
}

JsonDoc to_json(const model::UpgradeReport& r) {
  json candidates = json::array();
  for (const auto& c : r.candidates)
    candidates.push_back(json{{"product", c.product},
                              {"from", c.from},
                              {"to", c.to},
                              {"fits", c.fits},
                              {"why_not", c.why_not},
                              {"changes", c.changes},
                              {"source", c.source}});
  JsonDoc d;
  d.impl().value = json{{"manifest", r.manifest}, {"candidates", std::move(candidates)}, {"notes", r.notes}};
  return d;
}

}  // namespace format
