// status: re-hash every staged file against DEST's receipt and report the drift as findings.
#include <set>
#include <system_error>

#include "core/provision/stage.hpp"

#include "core/inspect/cudnn_whole.hpp"
#include "crypto/sha256.hpp"
#include "probe/cudnn_whole.hpp"
#include "provision/staging.hpp"
#include "provision/state.hpp"
#include "util/file_io.hpp"

namespace core {
namespace fs = std::filesystem;

util::Result<model::StatusReport> status(const fs::path& dest_in, const knowledge::KnowledgeBase& kb) {
  fs::path dest = util::io::absolute_path(dest_in);
  model::StatusReport report;
  auto& findings = report.findings;
  report.dest = dest.string();
  model::StateDir dirs{dest};
  std::error_code ec;
  if (fs::exists(dirs.journal(), ec)) {
    report.pending = "an interrupted stage or unstage; the next stage/unstage finishes or rolls it back";
    auto& f = model::add_finding(findings, "status.pending", model::Severity::warning, dirs.journal().string());
    f.seen = report.pending;
    f.fix = "run `stackpin stage` again (or `stackpin unstage`)";
  }
  if (!fs::exists(dirs.receipt(), ec)) {
    util::Error e(util::ErrorCode::not_found, "nothing staged in " + dest.string() + " (no .stackpin/receipt.json)");
    // after a run killed before its commit there is no receipt yet, only its journal: say so
    if (!report.pending.empty()) e.hints.push_back(".stackpin/journal is left by " + report.pending);
    return e;
  }
  SP_TRY_ASSIGN(auto loaded, detail::load_receipt(dirs));
  if (!loaded) return util::Error(util::ErrorCode::not_found, "nothing staged in " + dest.string() + " (no .stackpin/receipt.json)");
  const auto& r = loaded;
  report.cudnn_version = r->cudnn_version;
  report.archive_file = r->archive_file;
  report.cuda_version = r->cuda_version;
  for (const auto& a : r->cuda_archives) report.cuda_components.push_back(a.component + " " + a.version);
  report.target = r->target;
  report.layout = r->layout;
  std::uint64_t drift = 0;
  for (const auto& f : r->files) {
    if (f.type == "removed") continue;
    ++report.files;
    fs::path p = dest / f.path;
    auto st = fs::symlink_status(p, ec);
    struct {
      std::string rule, seen, expected, fix;
    } d;
    if (!fs::exists(st)) {
      d.rule = "status.missing";
      d.seen = "missing";
      d.expected = f.type == "symlink" ? "symlink to " + f.link : f.sha256;
      d.fix = "restage with `stackpin stage` (it restores the receipt's files)";
    } else if (f.type == "symlink") {
      if (!fs::is_symlink(st)) {
        d.rule = "status.type";
        d.seen = "not a symlink";
        d.expected = "symlink to " + f.link;
      } else if (auto t = fs::read_symlink(p, ec).string(); t != f.link) {
        d.rule = "status.modified";
        d.seen = "symlink to " + t;
        d.expected = "symlink to " + f.link;
      }
    } else if (!fs::is_regular_file(st)) {
      d.rule = "status.type";
      d.seen = fs::is_symlink(st) ? "a symlink" : "not a regular file";
      d.expected = "the staged file";
    } else {
      auto h = crypto::hash_file(p);
      std::string actual = h ? crypto::to_hex(h->digest) : "unreadable";
      if (actual != f.sha256) {
        d.rule = "status.modified";
        d.seen = "sha256 " + actual + (h ? ", " + std::to_string(h->size) + " bytes" : "");
        d.expected = "sha256 " + f.sha256 + ", " + std::to_string(f.size) + " bytes";
      }
    }
    if (!d.rule.empty()) {
      auto& x = model::add_finding(findings, d.rule, model::Severity::error, f.path);
      x.seen = d.seen;
      x.expected = d.expected;
      x.fix = d.fix.empty() ? "something changed this file after staging; `stackpin stage --force` restages it" : d.fix;
      ++drift;
    }
  }
  auto& ok = model::add_finding(findings, "status.intact", drift ? model::Severity::note : model::Severity::ok, dest.string());
  ok.seen = std::to_string(report.files - drift) + " of " + std::to_string(report.files) + " staged files match the receipt (" +
            detail::staged_what(*r) + (r->archive_file.empty() ? "" : ", " + r->archive_file) + ")";
  // the cuDNN as the files themselves say it is: each directory the receipt put its libraries in
  if (!r->cudnn_version.empty()) {
    std::set<std::string> dirs_of_libraries;
    for (const auto& f : r->files) {
      const std::string name = fs::path(f.path).filename().string();
      if (f.type != "removed" && (name.starts_with("libcudnn") || (name.starts_with("cudnn") && name.ends_with(".dll"))))
        dirs_of_libraries.insert(fs::path(f.path).parent_path().generic_string());
    }
    for (const auto& d : dirs_of_libraries)
      add_cudnn_whole_findings(probe::read_cudnn_whole(dest / d, (dest / d).string(), kb.facts().cudnn_majors), findings);
  }
  return report;
}

}  // namespace core
