// The report part of `stackpin doctor --json`. Every view is its own key: "windows" now, the
// Linux checks add theirs beside it; a view doctor did not take is null.
#include <nlohmann/json.hpp>

#include "format/json.hpp"
#include "json_impl.hpp"

namespace format {

using nlohmann::json;

namespace {

json opt_int(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }

json dir_json(const model::SearchDir& d) {
  return json{{"source", model::to_string(d.source)},
              {"why", d.why},
              {"raw", d.raw},
              {"windows_path", d.windows_path},
              {"local_path", d.local_path},
              {"mapping", model::to_string(d.mapping)},
              {"exists", d.exists},
              {"quoted", d.quoted},
              {"searched", d.searched},
              {"path_index", opt_int(d.path_index)},
              {"duplicate_of", opt_int(d.duplicate_of)},
              {"unexpanded", d.unexpanded},
              {"cuda_version", d.cuda_version}};
}

json copy_json(const model::DllCopy& c) {
  return json{{"dir", c.dir},         {"windows_path", c.windows_path}, {"local_path", c.local_path},
              {"version", c.version}, {"version_from", c.version_from}, {"machine", c.machine}};
}

json order_json(const model::SearchOrder& o) {
  json dirs = json::array();
  for (const auto& d : o.dirs) dirs.push_back(dir_json(d));
  json dlls = json::array();
  for (const auto& l : o.dlls) {
    json copies = json::array();
    for (const auto& c : l.copies) copies.push_back(copy_json(c));
    const auto* w = l.winner();
    dlls.push_back(json{{"name", l.name}, {"why", l.why}, {"winner", w ? copy_json(*w) : json(nullptr)}, {"copies", std::move(copies)}});
  }
  return json{{"kind", o.kind}, {"title", o.title}, {"dirs", std::move(dirs)}, {"dlls", std::move(dlls)}, {"notes", o.notes}};
}

}  // namespace

JsonDoc to_json(const model::DoctorReport& r) {
  const auto& e = r.expected;
  json expected{{"manifest", e.manifest},
                {"cudnn_version", e.cudnn_version},
                {"cudnn_major", opt_int(e.cudnn_major)},
                {"cuda_version", e.cuda_version},
                {"windows_layout", e.windows_layout},
                {"windows_cudnn_dir", e.windows_cudnn_dir},
                {"windows_cuda_path", e.windows_cuda_path},
                {"windows_arch", e.windows_arch}};
  json windows = nullptr;
  if (r.windows) {
    const auto& w = *r.windows;
    json drives = json::array();
    for (const auto& [drive, dir] : w.drives) drives.push_back(json{{"drive", drive}, {"local_path", dir}});
    windows = json{{"drives", std::move(drives)},
                   {"path", w.path},
                   {"user_path", w.user_path ? json(*w.user_path) : json(nullptr)},
                   {"path_length", w.path_length},
                   {"app_dir", w.app_dir},
                   {"cwd", w.cwd},
                   {"python", w.python},
                   {"dll_dirs", w.dll_dirs},
                   {"machine", w.machine},
                   {"machine_from", w.machine_from},
                   {"desktop", order_json(w.desktop)},
                   {"python_order", w.python_order ? order_json(*w.python_order) : json(nullptr)}};
  }
  JsonDoc d;
  json machine = r.machine ? to_json(*r.machine).impl().value : json(nullptr);
  d.impl().value = json{{"expected", std::move(expected)}, {"windows", std::move(windows)}, {"machine", std::move(machine)}};
  return d;
}

}  // namespace format
