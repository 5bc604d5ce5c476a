// What stage, unstage and status share (staging.hpp).
#include "provision/staging.hpp"

#include <map>

#include "core/provision/stage.hpp"
#include "format/receipt.hpp"
#include "gen/quote.hpp"
#include "probe/files_in_use.hpp"
#include "provision/state.hpp"
#include "util/file_io.hpp"
#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;

namespace detail {

const std::vector<std::string>& activation_names() {
  static const std::vector<std::string> k_names{"activate.sh", "activate.ps1", "activate.cmd", "check-cudnn.ps1"};
  return k_names;
}

util::Status refuse_files_in_use(const fs::path& dest, const std::vector<std::string>& rels, const std::string& verb) {
  std::vector<fs::path> paths;
  std::map<fs::path, std::string> rel_of;
  for (const auto& r : rels) {
    fs::path rel = fs::path(r).make_preferred();
    if (rel_of.emplace(dest / rel, rel.string()).second) paths.push_back(dest / rel);
  }
  auto held = probe::files_in_use(paths);
  if (held.empty()) return {};
  std::vector<std::string> files;
  std::map<unsigned long, std::string> programs;
  bool unnamed = false;
  constexpr std::size_t shown = 8;
  for (const auto& f : held) {
    std::vector<std::string> by;
    for (const auto& h : f.holders) {
      by.push_back(h.process + " (pid " + std::to_string(h.pid) + ")");
      programs.emplace(h.pid, by.back());
    }
    unnamed = unnamed || by.empty();
    if (files.size() < shown)
      files.push_back(rel_of[f.path] + ", held by " + (by.empty() ? "a program Windows did not name" : util::join(by, " and ")));
  }
  if (held.size() > shown) files.push_back("and " + std::to_string(held.size() - shown) + " more");
  util::Error e(util::ErrorCode::conflict, "cannot " + verb + " " + dest.string() + ": " + std::to_string(held.size()) +
                                               " file(s) there are in use, and Windows does not let a file in use be moved or removed: " +
                                               util::join(files, "; ") + "; nothing was changed");
  std::vector<std::string> names;
  for (const auto& [pid, name] : programs) names.push_back(name);
  if (!names.empty()) e.hints.push_back("close " + util::join(names, ", ") + ", then run stackpin again");
  if (unnamed)
    e.hints.push_back(
        "close the programs that use CUDA or cuDNN from this folder (Python, Jupyter, an IDE, a training run), then run stackpin "
        "again; Resource Monitor (resmon.exe, CPU tab, Associated Handles) shows which program holds a file");
  return e;
}

std::string staged_what(const model::Receipt& r) {
  std::vector<std::string> parts;
  if (!r.cudnn_version.empty()) parts.push_back("cuDNN " + r.cudnn_version);
  if (!r.cuda_version.empty())
    parts.push_back("CUDA " + r.cuda_version + " (" + std::to_string(r.cuda_archives.size()) + " component" +
                    (r.cuda_archives.size() == 1 ? "" : "s") + ")");
  return util::join(parts, " and ");
}

}  // namespace detail

util::Result<model::Receipt> staged_receipt(const fs::path& dest_in) {
  fs::path dest = util::io::absolute_path(dest_in);
  SP_TRY_ASSIGN(auto r, detail::load_receipt(model::StateDir{dest}));
  if (!r)
    return util::Error(util::ErrorCode::not_found, "nothing staged in " + dest.string() + " (no .stackpin/receipt.json)")
        .with_hint("stage the tree first: stackpin stage MANIFEST --target windows --dest " + gen::sh_quote(dest.string()));
  return std::move(*r);
}

}  // namespace core
