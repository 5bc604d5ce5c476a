// The receipt stage writes into DEST (JSON), read back with every field validated.
#include "format/receipt.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_impl.hpp"

#include "model/contracts.hpp"
#include "model/manifest.hpp"
#include "model/platform.hpp"
#include "model/version.hpp"
#include "util/strings.hpp"

namespace format {

using nlohmann::json;

namespace {

// A receipt is another machine's file as soon as a tree is copied: every value is checked here,
// against what stage writes, before any command acts on it or a generator writes it into a script,
// a loader entry, a CMake or pkg-config file (a version holding a line break would add a command
// to every login shell). Paths are judged against DEST by the commands that use them (state.cpp).
util::Status check_values(const model::Receipt& r, const std::string& path) {
  auto bad = [&](const std::string& field, const std::string& value, const std::string& why) {
    util::Error e(util::ErrorCode::unsafe, path + ": " + field + " \"" + util::printable(value) + "\" " + why);
    e.hints.push_back(
        "stackpin never writes such a value: the receipt was edited or the tree was copied from elsewhere; nothing was "
        "changed. Check DEST by hand, then remove DEST/.stackpin to start over");
    return e;
  };
  auto plain = [](const std::string& v) {
    return util::is_valid_utf8(v) &&
           std::none_of(v.begin(), v.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  };
  auto version = [](const std::string& v) {
    auto parsed = model::Version::parse(v);
    return v.empty() || (parsed && parsed->text() == v);
  };
  auto sha = [](const std::string& v) { return v.empty() || (v.size() == 64 && util::is_hex(v)); };
  auto charset = [](const std::string& v, std::string_view extra) {
    return !v.empty() && v.size() <= 128 && std::all_of(v.begin(), v.end(), [&](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || extra.find(c) != std::string_view::npos;
    });
  };
  auto file_name = [&](const std::string& v) { return v.empty() || (plain(v) && v.find_first_of("/\\") == std::string::npos); };

  // every text field: valid UTF-8 without control characters (no line breaks, no tabs)
  std::vector<std::pair<std::string, const std::string*>> text{
      {"stackpin_version", &r.stackpin_version}, {"manifest.path", &r.manifest_path}, {"dest", &r.dest}, {"prefix", &r.prefix}};
  for (std::size_t i = 0; i < r.files.size(); ++i) {
    const auto& f = r.files[i];
    const std::string at = "files[" + std::to_string(i) + "].";
    for (auto [k, v] : {std::pair<const char*, const std::string*>{"path", &f.path},
                        {"from", &f.from},
                        {"archive", &f.archive},
                        {"link", &f.link},
                        {"backup", &f.backup},
                        {"type", &f.type}})
      text.push_back({at + k, v});
    if (!sha(f.sha256)) return bad(at + "sha256", f.sha256, "is not a SHA-256");
  }
  for (std::size_t i = 0; i < r.created_dirs.size(); ++i) text.push_back({"created_dirs[" + std::to_string(i) + "]", &r.created_dirs[i]});
  for (const auto& [field, value] : text)
    if (!plain(*value)) return bad(field, *value, "holds a control character or is not valid UTF-8");

  if (!r.manifest_name.empty() && !charset(r.manifest_name, "._-")) return bad("manifest.name", r.manifest_name, "is not a manifest name");
  if (!sha(r.manifest_sha256)) return bad("manifest.sha256", r.manifest_sha256, "is not a SHA-256");
  if (!version(r.cudnn_version)) return bad("cudnn.version", r.cudnn_version, "is not a version stackpin writes");
  if (r.cudnn_cuda_major < 0 || r.cudnn_cuda_major > 99)
    return bad("cudnn.cuda_major", std::to_string(r.cudnn_cuda_major), "is not a CUDA major version");
  if (!version(r.cuda_version)) return bad("cuda.version", r.cuda_version, "is not a version stackpin writes");
  if (!model::parse_platform(r.platform)) return bad("platform", r.platform, "is not a platform stackpin knows");
  if (r.target != "linux" && r.target != "windows") return bad("target", r.target, "is not linux or windows");
  bool layout_known = false;
  for (const char* l : {model::to_string(model::LinuxLayout::lib64), model::to_string(model::LinuxLayout::deb),
                        model::to_string(model::WindowsLayout::isolated), model::to_string(model::WindowsLayout::cuda_merge)})
    layout_known = layout_known || r.layout == l;
  if (!layout_known) return bad("layout", r.layout, "is not a layout stackpin knows");
  // a Windows tree staged on Linux without a Windows prefix records DEST as it was there
  if (!r.prefix.empty() && r.prefix.front() != '/' && (r.target == "linux" || !model::is_windows_absolute(r.prefix)))
    return bad("prefix", r.prefix, "is not an absolute path");
  if (!file_name(r.archive_file)) return bad("archive.file", r.archive_file, "is not a file name");
  if (!sha(r.archive_sha256)) return bad("archive.sha256", r.archive_sha256, "is not a SHA-256");
  for (std::size_t i = 0; i < r.cuda_archives.size(); ++i) {
    const auto& a = r.cuda_archives[i];
    const std::string at = "cuda.archives[" + std::to_string(i) + "].";
    if (!charset(a.component, "_") || std::any_of(a.component.begin(), a.component.end(), [](char c) { return c >= 'A' && c <= 'Z'; }))
      return bad(at + "component", a.component, "is not a CUDA component name");
    if (!version(a.version)) return bad(at + "version", a.version, "is not a version stackpin writes");
    if (!file_name(a.file)) return bad(at + "file", a.file, "is not a file name");
    if (!sha(a.sha256)) return bad(at + "sha256", a.sha256, "is not a SHA-256");
  }
  return {};
}

}  // namespace

std::string write_receipt(const model::Receipt& r) {
  json files = json::array();
  for (const auto& f : r.files) {
    json j{{"path", f.path}, {"type", f.type}, {"from", f.from}};
    if (!f.archive.empty()) j["archive"] = f.archive;
    if (f.type == "file") {
      j["sha256"] = f.sha256;
      j["size"] = f.size;
      j["mode"] = f.mode;
      j["mtime_ns"] = f.mtime_ns;
    }
    if (f.type == "symlink") j["link"] = f.link;
    if (!f.backup.empty()) j["backup"] = f.backup;
    files.push_back(std::move(j));
  }
  json j{{"schema", r.schema},
         {"stackpin_version", r.stackpin_version},
         {"manifest", {{"path", r.manifest_path}, {"name", r.manifest_name}, {"sha256", r.manifest_sha256}}},
         {"cudnn", {{"version", r.cudnn_version}, {"cuda_major", r.cudnn_cuda_major}}},
         {"platform", r.platform},
         {"target", r.target},
         {"layout", r.layout},
         {"dest", r.dest},
         {"prefix", r.prefix},
         {"archive", {{"file", r.archive_file}, {"sha256", r.archive_sha256}, {"size", r.archive_size}}},
         {"files", std::move(files)},
         {"created_dirs", r.created_dirs}};
  if (!r.cuda_version.empty()) {
    json archives = json::array();
    for (const auto& a : r.cuda_archives)
      archives.push_back({{"component", a.component}, {"version", a.version}, {"file", a.file}, {"sha256", a.sha256}, {"size", a.size}});
    j["cuda"] = {{"version", r.cuda_version}, {"archives", std::move(archives)}};
  }
  // stage refuses names, a DEST and a manifest path that are not valid UTF-8 before anything moves,
  // so nothing is replaced here in practice; `replace` keeps a bug from becoming an exception
  return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

util::Result<model::Receipt> parse_receipt(std::string_view text, const std::string& path) {
  model::Receipt r;
  try {
    json j = json::parse(text);
    r.schema = j.at("schema").get<int>();
    if (r.schema != 1)
      return util::Error(util::ErrorCode::invalid, path + ": receipt schema " + std::to_string(r.schema) + " is not supported")
          .with_hint("it was written by a newer stackpin; use that version");
    r.stackpin_version = j.value("stackpin_version", "");
    const auto& m = j.at("manifest");
    r.manifest_path = m.value("path", "");
    r.manifest_name = m.value("name", "");
    r.manifest_sha256 = m.value("sha256", "");
    r.cudnn_version = j.at("cudnn").at("version").get<std::string>();
    r.cudnn_cuda_major = j.at("cudnn").at("cuda_major").get<int>();
    r.platform = j.at("platform").get<std::string>();
    r.target = j.at("target").get<std::string>();
    r.layout = j.at("layout").get<std::string>();
    r.dest = j.at("dest").get<std::string>();
    r.prefix = j.value("prefix", "");
    const auto& a = j.at("archive");
    r.archive_file = a.at("file").get<std::string>();
    r.archive_sha256 = a.at("sha256").get<std::string>();
    r.archive_size = a.at("size").get<std::uint64_t>();
    if (auto c = j.find("cuda"); c != j.end()) {
      r.cuda_version = c->at("version").get<std::string>();
      for (const auto& a : c->at("archives")) {
        model::ReceiptArchive x;
        x.component = a.at("component").get<std::string>();
        x.version = a.at("version").get<std::string>();
        x.file = a.at("file").get<std::string>();
        x.sha256 = a.at("sha256").get<std::string>();
        x.size = a.at("size").get<std::uint64_t>();
        r.cuda_archives.push_back(std::move(x));
      }
    }
    for (const auto& f : j.at("files")) {
      model::StagedFile s;
      s.path = f.at("path").get<std::string>();
      s.type = f.at("type").get<std::string>();
      s.from = f.value("from", "");
      s.archive = f.value("archive", "");
      s.sha256 = f.value("sha256", "");
      s.size = f.value("size", std::uint64_t{0});
      s.mode = f.value("mode", 0u);
      s.mtime_ns = f.value("mtime_ns", std::int64_t{0});
      s.link = f.value("link", "");
      s.backup = f.value("backup", "");
      r.files.push_back(std::move(s));
    }
    for (const auto& d : j.at("created_dirs")) r.created_dirs.push_back(d.get<std::string>());
  } catch (const json::exception& e) {
    return util::Error(util::ErrorCode::parse, path + " is not a valid stackpin receipt: " + e.what())
        .with_hint("if the tree was staged by hand or the receipt was edited, restage with `stackpin stage`");
  }
  SP_TRY(check_values(r, path));
  return r;
}

JsonDoc to_json(const model::VerifyReport& r) {
  json arr = json::array();
  for (const auto& a : r.archives) {
    json j{{"platform", model::to_string(a.platform)},
           {"expected_file", a.expected_file},
           {"path", a.path},
           {"found_by_content", a.found_by_content},
           {"expected_sha256", a.expected_sha256},
           {"actual_sha256", a.actual_sha256},
           {"ok", a.ok}};
    j["expected_size"] = a.expected_size ? json(*a.expected_size) : json(nullptr);
    j["actual_size"] = a.actual_size ? json(*a.actual_size) : json(nullptr);
    arr.push_back(std::move(j));
  }
  return wrap(json{{"archives", arr}});
}

namespace {
json cuda_archives_json(const std::vector<model::ReceiptArchive>& archives) {
  json out = json::array();
  for (const auto& a : archives)
    out.push_back({{"component", a.component}, {"version", a.version}, {"file", a.file}, {"sha256", a.sha256}, {"size", a.size}});
  return out;
}
}  // namespace

JsonDoc to_json(const model::StageReport& r) {
  json plan = json::array();
  for (const auto& p : r.plan)
    plan.push_back({{"from", p.from}, {"to", p.to}, {"type", p.type}, {"size", p.size}, {"replaces", p.replaces}});
  return wrap(
      json{{"dest", r.dest},
           {"prefix", r.prefix},
           {"target", r.target},
           {"layout", r.layout},
           {"platform", r.platform},
           {"archive", {{"path", r.archive_path}, {"sha256", r.archive_sha256}, {"size", r.archive_size}, {"cudnn_whole", r.cudnn_whole}}},
           {"cuda", {{"version", r.cuda_version}, {"archives", cuda_archives_json(r.cuda_archives)}}},
           {"dry_run", r.dry_run},
           {"no_op", r.no_op},
           {"replaced_previous", r.replaced_previous},
           {"files", r.files},
           {"bytes", r.bytes},
           {"plan", plan},
           {"stale", r.stale},
           {"removed_stale", r.removed_stale},
           {"recovered", r.recovered},
           {"activation", r.activation},
           {"activation_note", r.activation_note},
           {"next_steps", r.next_steps},
           {"build_files", r.build_files},
           {"build_files_note", r.build_files_note}});
}

JsonDoc to_json(const model::UnstageReport& r) {
  return wrap(
      json{{"dest", r.dest}, {"removed", r.removed}, {"restored", r.restored}, {"modified", r.modified}, {"recovered", r.recovered}});
}

JsonDoc to_json(const model::StatusReport& r) {
  return wrap(json{{"dest", r.dest},
                   {"cudnn", r.cudnn_version},
                   {"archive", r.archive_file},
                   {"cuda", r.cuda_version},
                   {"cuda_components", r.cuda_components},
                   {"target", r.target},
                   {"layout", r.layout},
                   {"files", r.files},
                   {"pending", r.pending}});
}

JsonDoc to_json(const model::DebReport& r) {
  json packages = json::array();
  for (const auto& p : r.packages)
    packages.push_back({{"name", p.name},
                        {"version", p.version},
                        {"architecture", p.architecture},
                        {"role", p.role},
                        {"path", p.path},
                        {"sha256", p.sha256},
                        {"size", p.size},
                        {"unchanged", p.unchanged},
                        {"files", p.files},
                        {"installed_size_kib", p.installed_size_kib},
                        {"depends", p.depends},
                        {"recommends", p.recommends},
                        {"conflicts", p.conflicts},
                        {"provides", p.provides},
                        {"sonames", p.sonames},
                        {"contents", p.contents}});
  return wrap(json{{"archive", {{"path", r.archive_path}, {"sha256", r.archive_sha256}, {"cudnn_whole", r.cudnn_whole}}},
                   {"dry_run", r.dry_run},
                   {"platform", r.platform},
                   {"libdir", r.libdir},
                   {"includedir", r.includedir},
                   {"cuda",
                    {{"version", r.cuda_version},
                     {"archives", r.cuda_archives},
                     {"home", r.cuda_home},
                     {"mtime", r.cuda_mtime},
                     {"mtime_source", r.cuda_mtime_source}}},
                   {"mtime", r.mtime},
                   {"mtime_source", r.mtime_source},
                   {"packages", packages},
                   {"notes", r.notes}});
}

JsonDoc to_json(const model::ApplyReport& r) {
  json steps = json::array();
  for (const auto& s : r.steps)
    steps.push_back({{"name", s.name}, {"status", model::to_string(s.status)}, {"detail", s.detail}, {"lines", s.lines}});
  return wrap(json{{"manifest", r.manifest},
                   {"target", r.target},
                   {"layout", r.layout},
                   {"platform", r.platform},
                   {"dest", r.dest},
                   {"prefix", r.prefix},
                   {"dry_run", r.dry_run},
                   {"changed", r.changed()},
                   {"failed", r.failed()},
                   {"steps", steps},
                   {"remaining", r.remaining}});
}

}  // namespace format
