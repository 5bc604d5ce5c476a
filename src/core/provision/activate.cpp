// Activation of a staged Windows tree in the User or Machine environment.
//
// Why it works this way: the decision (which entries go, which stay, the new value) is the PATH
// rule's, shared with activate.ps1 and doctor, so the three cannot disagree. The record keeps the
// values from before the first activation: activating again (a new version) and then undoing
// returns to the machine as it was, not to the previous activation. Undo touches a variable only
// while it still holds what stackpin wrote, and puts removed PATH entries back at their old
// positions only when they are not there already: a change the user made since is theirs.
#include "core/provision/activate.hpp"

#include <algorithm>
#include <set>

#include "core/layout/activation.hpp"
#include "core/windows/windows_path_rule.hpp"
#include "format/activation.hpp"
#include "gen/activate_windows.hpp"
#include "model/contracts.hpp"
#include "provision/state.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core {

namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

namespace {

fs::path record_path(const fs::path& state, util::EnvScope scope) {
  return model::StateDir{state}.root() / (std::string("activation-") + util::to_string(scope) + ".json");
}

std::string version_var(std::string v) {
  std::replace(v.begin(), v.end(), '.', '_');
  return "CUDA_PATH_V" + v;
}

// The variables activation sets, in order.
std::vector<std::pair<std::string, std::string>> wanted_vars(const gen::WindowsActivation& a) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!a.cudnn_version.empty()) out.emplace_back("CUDNN_PATH", a.cudnn_root);
  if (!a.cuda_path.empty()) {
    out.emplace_back("CUDA_PATH", a.cuda_path);
    if (!a.cuda_version.empty()) out.emplace_back(version_var(a.cuda_version), a.cuda_path);
  }
  return out;
}

bool contains_dir(const std::vector<WinPathEntry>& entries, const std::string& dir) {
  return std::any_of(entries.begin(), entries.end(),
                     [&](const WinPathEntry& e) { return same_windows_path(e.path, normalize_windows_path(dir)); });
}

util::Result<std::optional<model::ActivationRecord>> read_record(const fs::path& file, util::EnvScope scope) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::optional<model::ActivationRecord>();
  SP_TRY_ASSIGN(auto text, util::read_file(file));
  SP_TRY_ASSIGN(auto r, format::parse_activation_record(text, file.string(), util::to_string(scope)));
  return std::optional<model::ActivationRecord>(std::move(r));
}

std::optional<std::string> value_of(const std::optional<util::PersistentValue>& v) {
  return v ? std::optional<std::string>(v->value) : std::nullopt;
}

// Writes the planned values; the first error stops (what was written before it is in the record).
util::Status apply_changes(util::PersistentEnv& store, util::EnvScope scope, const model::ActivationReport& r, bool path_expandable) {
  for (const auto& c : r.changes) {
    if (!c.changed()) continue;
    if (!c.after) {
      SP_TRY(store.remove(scope, c.name));
    } else {
      SP_TRY(store.set(scope, c.name, util::PersistentValue{*c.after, c.name == "Path" ? path_expandable : false}));
    }
  }
  if (r.changed()) store.announce();
  return {};
}

util::Result<model::ActivationReport> undo(const WindowsTree& tree, util::PersistentEnv& store, const ActivateOptions& o,
                                           model::ActivationReport report) {
  const fs::path file = record_path(o.state, o.scope);
  SP_TRY_ASSIGN(auto rec, read_record(file, o.scope));
  if (!rec)
    return Error(ErrorCode::not_found,
                 "no activation of " + std::string(util::to_string(o.scope)) + " scope is recorded in " + file.string())
        .with_hint("stackpin activate --undo restores only what `stackpin activate` recorded for this tree and scope");
  report.record = file.string();
  SP_TRY_ASSIGN(auto path, store.get(o.scope, "Path"));
  const std::string before = path ? path->value : "";
  auto entries = parse_windows_path_list(before, tree.vars);
  std::vector<std::string> kept;
  for (const auto& e : entries)
    if (std::none_of(rec->path_added.begin(), rec->path_added.end(),
                     [&](const std::string& a) { return same_windows_path(e.path, normalize_windows_path(a)); }))
      kept.push_back(e.raw);
  auto removed = rec->path_removed;
  std::sort(removed.begin(), removed.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  for (const auto& r : removed) {
    auto now = parse_windows_path_list(util::join(kept, ";"), tree.vars);
    auto parsed = parse_windows_path_list(r.entry, tree.vars);
    if (!parsed.empty() && contains_dir(now, parsed.front().path)) continue;
    kept.insert(kept.begin() + std::min<std::size_t>(static_cast<std::size_t>(r.index), kept.size()), r.entry);
    report.path_removed.push_back(r.entry);
  }
  model::ActivationChange pc{"Path", path ? std::optional<std::string>(before) : std::nullopt, util::join(kept, ";")};
  if (!path && kept.empty()) pc.after = std::nullopt;
  report.changes.push_back(pc);
  for (const auto& v : rec->vars) {
    SP_TRY_ASSIGN(auto cur, store.get(o.scope, v.name));
    model::ActivationChange c{v.name, value_of(cur), value_of(cur)};
    if (cur && cur->value == v.after)
      c.after = v.before;
    else
      report.left_alone.push_back(v.name + (cur ? " = " + cur->value : std::string(" (absent)")) +
                                  ": changed since activation, left alone");
    report.changes.push_back(c);
  }
  if (o.dry_run) return report;
  SP_TRY(apply_changes(store, o.scope, report, path ? path->expandable : true));
  std::error_code ec;
  fs::remove(file, ec);
  if (ec)
    return Error(ErrorCode::io, "restored the " + report.scope + " environment but cannot remove " + file.string() + ": " + ec.message());
  return report;
}

}  // namespace

WindowsTree live_windows_tree(const util::Env& env, std::string_view path_value) {
  WindowsTree t;
  for (char d = 'A'; d <= 'Z'; ++d) t.drives[d] = fs::path(std::string(1, d) + ":\\");
  std::map<std::string, std::string> overrides;
  std::vector<std::string> names{"SystemRoot",  "windir",      "SystemDrive",  "ProgramFiles", "ProgramFiles(x86)", "ProgramW6432",
                                 "ProgramData", "USERPROFILE", "LOCALAPPDATA", "APPDATA",      "CUDA_PATH"};
  for (auto& n : windows_path_variables(path_value)) names.push_back(std::move(n));  // and every %NAME% the value uses
  for (const auto& n : names)
    if (auto v = env.get(n)) overrides[n] = *v;
  t.vars = windows_default_vars(overrides);
  return t;
}

util::Result<model::ActivationReport> activate_windows(const model::Manifest& m, const knowledge::KnowledgeBase& kb,
                                                       const WindowsTree& tree, util::PersistentEnv& store, const ActivateOptions& o) {
  model::ActivationReport report;
  report.scope = util::to_string(o.scope);
  report.where = store.where(o.scope);
  report.undo = o.undo;
  report.dry_run = o.dry_run;
  std::error_code ec;
  SP_TRY(detail::check_state_root(model::StateDir{o.state}));  // its activation record is read and written there
  if (!fs::is_regular_file(model::StateDir{o.state}.receipt(), ec))
    return Error(ErrorCode::not_found, "nothing is staged at " + o.state.string() + " (no .stackpin\\receipt.json)")
        .with_hint("stage the tree first: stackpin stage MANIFEST --target windows --dest " + o.state.string());
  if (o.undo) return undo(tree, store, o, std::move(report));

  SP_TRY_ASSIGN(auto a, o.root.empty() ? windows_activation(m, kb) : windows_activation_at(m, kb, o.root));
  const auto first = gen::first_path_dirs(a);
  for (const auto& d : first) SP_TRY(check_path_entry(d));
  const fs::path file = record_path(o.state, o.scope);
  SP_TRY_ASSIGN(auto old, read_record(file, o.scope));
  model::ActivationRecord rec = old ? *old : model::ActivationRecord{};
  rec.scope = report.scope;

  SP_TRY_ASSIGN(auto path, store.get(o.scope, "Path"));
  const std::string before = path ? path->value : "";
  const auto entries = parse_windows_path_list(before, tree.vars);
  // what an earlier activation of this tree put on PATH and this one does not (the tree moved,
  // or its layout changed) is stackpin's own to take out again
  auto ours_before = [&](const WinPathEntry& e) {
    return std::any_of(rec.path_added.begin(), rec.path_added.end(),
                       [&](const std::string& a) { return same_windows_path(e.path, normalize_windows_path(a)); }) &&
           !contains_dir(parse_windows_path_list(util::join(first, ";"), tree.vars), e.path);
  };
  std::vector<std::string> base;
  for (const auto& e : entries)
    if (!ours_before(e)) base.push_back(e.raw);
  rec.path_added.erase(std::remove_if(rec.path_added.begin(), rec.path_added.end(),
                                      [&](const std::string& a) {
                                        return !contains_dir(parse_windows_path_list(util::join(first, ";"), tree.vars),
                                                             normalize_windows_path(a));
                                      }),
                       rec.path_added.end());
  PathDecision d = decide_path(tree, util::join(base, ";"), first);
  for (const auto& dir : first)
    if (!contains_dir(entries, dir) && std::none_of(rec.path_added.begin(), rec.path_added.end(), [&](const std::string& x) {
          return same_windows_path(x, normalize_windows_path(dir));
        }))
      rec.path_added.push_back(dir);
  // positions in the value as it was before, counted over its non-empty entries
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (std::find(d.removed.begin(), d.removed.end(), entries[i].raw) != d.removed.end())
      rec.path_removed.push_back({entries[i].raw, static_cast<int>(i)});
  report.path_first = first;
  report.path_removed = d.removed;
  report.stale = d.stale;
  report.changes.push_back({"Path", path ? std::optional<std::string>(before) : std::nullopt, d.value});
  for (const auto& wanted : wanted_vars(a)) {
    const std::string& name = wanted.first;
    const std::string& value = wanted.second;
    SP_TRY_ASSIGN(auto cur, store.get(o.scope, name));
    report.changes.push_back({name, value_of(cur), value});
    auto it = std::find_if(rec.vars.begin(), rec.vars.end(), [&](const model::ActivationVar& v) { return v.name == name; });
    if (it == rec.vars.end())
      rec.vars.push_back({name, value_of(cur), value});  // the value from before stackpin, kept across re-activations
    else
      it->after = value;
  }
  report.record = file.string();
  if (o.dry_run || !report.changed()) return report;
  SP_TRY(util::write_file_atomic(file, format::write_activation_record(rec)));
  SP_TRY(apply_changes(store, o.scope, report, path ? path->expandable : true));
  return report;
}

}  // namespace core
