// Activation of a staged Linux/WSL2 tree: the files `stackpin generate` writes, installed.
//
// Why it works this way: every file activation writes has a name of stackpin's own, derived from
// the manifest's name, and content stackpin renders again from the receipt, so --undo needs no
// record: it removes a file only while it still holds what stackpin would write, and the
// ~/.profile block only between its markers. ldconfig runs only for the real root: a --root is an
// image or chroot being prepared, whose loader cache is built there.
#include <algorithm>
#include <cctype>
#include <set>

#include "core/provision/activate.hpp"
#include "format/receipt.hpp"
#include "gen/activate.hpp"
#include "gen/quote.hpp"
#include "model/contracts.hpp"
#include "probe/program.hpp"
#include "provision/state.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core {

namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

namespace {

// The manifest's name as a file name: lower case, [a-z0-9._-], "stack" when nothing is left.
std::string slug(const std::string& name) {
  std::string out;
  for (char c : util::to_lower(name)) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '-';
  while (!out.empty() && (out.front() == '-' || out.front() == '.')) out.erase(out.begin());
  return out.empty() ? "stack" : out.substr(0, 64);
}

std::optional<std::string> read_if_there(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  auto t = util::read_file(p);
  return t ? std::optional<std::string>(*t) : std::nullopt;
}

std::string begin_marker(const std::string& s) { return "# >>> stackpin activate " + s + " >>>"; }
std::string end_marker(const std::string& s) { return "# <<< stackpin activate " + s + " <<<"; }

// `profile` without the block between the markers (and the markers); nullopt when it has none.
std::optional<std::string> without_block(const std::string& profile, const std::string& s) {
  auto b = profile.find(begin_marker(s));
  if (b == std::string::npos) return std::nullopt;
  auto e = profile.find(end_marker(s), b);
  if (e == std::string::npos) return std::nullopt;
  e = profile.find('\n', e);
  e = e == std::string::npos ? profile.size() : e + 1;
  if (b > 0 && profile[b - 1] == '\n' && b > 1 && profile[b - 2] == '\n') --b;  // the blank line activation put before it
  return profile.substr(0, b) + profile.substr(e);
}

// Writes `file` whole (a symbolic link's target, so that a dotfile manager's link stays one),
// keeping the permissions an existing file had.
util::Status write_or_explain(const fs::path& file, const std::string& content, util::EnvScope scope) {
  std::error_code ec;
  const bool link = fs::is_symlink(fs::symlink_status(file, ec));
  fs::path target = link ? fs::weakly_canonical(file, ec) : file;
  if (link && ec) return Error(ErrorCode::io, "cannot follow the link " + file.string() + ": " + ec.message());
  auto old = fs::status(target, ec);
  const bool existed = !ec && fs::exists(old);
  fs::create_directories(target.parent_path(), ec);
  auto st = util::write_file_atomic(target, content);
  if (!st && scope == util::EnvScope::machine)
    return std::move(st).error().with_hint("the machine scope writes system files: run it with sudo, or use --scope user");
  if (st && existed) fs::permissions(target, old.permissions(), fs::perm_options::replace, ec);
  return st;
}

}  // namespace

util::Result<model::ActivationReport> activate_linux(const model::Manifest& m, const LinuxActivateOptions& o) {
  model::ActivationReport report;
  report.files = true;
  report.scope = util::to_string(o.scope);
  report.undo = o.undo;
  report.dry_run = o.dry_run;
  // read as every other command reads it: DEST/.stackpin a real folder, every path and value checked
  // before any of them reaches a script or a loader entry
  SP_TRY_ASSIGN(auto loaded, detail::load_receipt(model::StateDir{o.state}));
  if (!loaded)
    return Error(ErrorCode::not_found, "nothing is staged at " + o.state.string() + " (no .stackpin/receipt.json)")
        .with_hint("stage the tree first: stackpin stage MANIFEST --target linux --dest " + o.state.string());
  const model::Receipt& r = *loaded;
  std::error_code ec;
  if (r.target != "linux")
    return Error(ErrorCode::invalid, o.state.string() + " holds a tree staged for " + r.target + ", not for Linux")
        .with_hint("activate a Windows tree on the Windows machine: stackpin.exe activate");
  gen::LinuxActivation a{m.name.value, r.cudnn_version, r.prefix.empty() ? o.state.string() : r.prefix};
  a.cuda_version = r.cuda_version;
  a.cuda_bin = std::any_of(r.files.begin(), r.files.end(), [](const model::StagedFile& f) { return f.path.rfind("bin/", 0) == 0; });
  const std::string s = slug(m.name.value);

  std::vector<std::pair<fs::path, std::optional<std::string>>> wanted;  // file -> content (nullopt: remove)
  std::optional<std::pair<fs::path, std::string>> profile_edit;         // ~/.profile and its new text
  if (o.scope == util::EnvScope::machine) {
    report.where = (o.root / "etc").string();
    SP_TRY_ASSIGN(auto conf, gen::render_ld_so_conf(a));
    wanted.push_back({o.root / "etc" / "profile.d" / ("stackpin-" + s + ".sh"), gen::render_profile_d(a)});
    wanted.push_back({o.root / "etc" / "ld.so.conf.d" / ("stackpin-" + s + ".conf"), conf});
  } else {
    if (o.home.empty())
      return Error(ErrorCode::not_found, "no home directory: HOME is unset").with_hint("set HOME, or use --scope machine (as root)");
    report.where = o.home.string();
    const fs::path snippet = o.home / ".config" / "stackpin" / ("activate-" + s + ".sh");
    wanted.push_back({snippet, gen::render_profile_d(a)});
    const fs::path profile = o.home / ".profile";
    std::string old = read_if_there(profile).value_or("");
    std::string block = begin_marker(s) + "\n. " + gen::sh_quote(snippet.string()) + "\n" + end_marker(s) + "\n";
    std::string base = without_block(old, s).value_or(old);
    std::string next = o.undo ? base : base + (base.empty() || base.back() != '\n' ? "\n" : "") + (base.empty() ? "" : "\n") + block;
    if (next != old) profile_edit = std::make_pair(profile, next);
    report.changes.push_back({profile.string(), read_if_there(profile), next});
    // bash reads the first of these it finds at login, and then not ~/.profile
    for (const char* first : {".bash_profile", ".bash_login"})
      if (!o.undo && fs::exists(o.home / first, ec)) {
        report.notes.push_back("bash login shells read ~/" + std::string(first) +
                               " instead of ~/.profile: add `. ~/.profile` to it, "
                               "or source " +
                               snippet.string() + " there");
        break;
      }
  }
  std::set<fs::path> keep;  // undo: files changed since activation
  for (auto& [file, content] : wanted) {
    auto now = read_if_there(file);
    if (o.undo) {
      if (now && *now != *content) {
        report.left_alone.push_back(file.string() + ": changed since activation, left alone");
        keep.insert(file);
      }
      content = keep.count(file) ? now : std::nullopt;
    }
    report.changes.push_back({file.string(), now, content});
  }
  if (o.dry_run || !report.changed()) return report;
  for (const auto& [file, content] : wanted) {
    if (keep.count(file)) continue;
    if (!content) {
      fs::remove(file, ec);
      if (ec) return Error(ErrorCode::io, "cannot remove " + file.string() + ": " + ec.message());
    } else {
      SP_TRY(write_or_explain(file, *content, o.scope));
    }
  }
  if (profile_edit) SP_TRY(write_or_explain(profile_edit->first, profile_edit->second, o.scope));
  if (o.scope == util::EnvScope::machine && o.root == fs::path("/") && o.env) {
    auto run = probe::run_program({"ldconfig"}, *o.env, 120000);
    if (!run.started || run.exit_code != 0)
      return Error(ErrorCode::io, "wrote the loader entry, but ldconfig failed: " + (run.error.empty() ? run.output : run.error))
          .with_hint("run ldconfig as root");
  }
  return report;
}

}  // namespace core
