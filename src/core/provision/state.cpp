// The journal (DEST/.stackpin/journal) is a list of tab-separated records, each flushed to disk
// before the change it announces:
//   op stage|unstage     what the run does
//   tmp NAME             its extraction directory under .stackpin/
//   mkdir REL            a directory it is about to create in DEST
//   backup REL BAK       it is about to move DEST/REL (an existing file) to .stackpin/BAK
//   place REL            it is about to move a staged file to DEST/REL (after REL's backup, if any)
//   commit               everything is in place; receipt.json.new holds the receipt
// A stage without "commit" is rolled back by walking the records backwards: a placed REL is
// removed (at that point DEST/REL is either the new file or absent, never the original, which was
// backed up first), a backup is moved back, created directories are removed when empty. A stage
// with "commit" is rolled forward (receipt.json.new renamed). An interrupted unstage is finished,
// since each of its steps is idempotent. Every command that takes the lock recovers first.
#include "provision/state.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "archive/paths.hpp"
#include "core/provision/stage.hpp"
#include "crypto/sha256.hpp"
#include "format/receipt.hpp"
#include "provision/build_files.hpp"
#include "util/env.hpp"
#include "util/file_io.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core::detail {
namespace fs = std::filesystem;

std::int64_t mtime_ns(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  if (ec) return 0;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::string rel_string(const fs::path& p) { return p.generic_string(); }

namespace {
util::Error cannot_create(const fs::path& dir, const fs::path& dest, const std::error_code& ec) {
  util::Error e(util::ErrorCode::io, "cannot create " + dir.string() + ": " + ec.message());
  if (ec == std::errc::permission_denied || ec == std::errc::operation_not_permitted)
    e.hints.push_back(write_access_hint(dest, util::host_is_windows()));
  return e;
}
}  // namespace

util::Result<State> State::open(const fs::path& dest, const std::function<void()>& on_wait) {
  State s;
  s.m_dirs.dest = dest;
  std::error_code ec;
  // "created" only when this process made the directory: a concurrent run on the same DEST may
  // make it between the exists() check and ours, and must not have it removed under it.
  SP_TRY(check_state_root(s.m_dirs));  // nothing is created, locked or cleaned through a link
  // each folder this run makes is 0755 whatever the umask: a umask of 0 (a container's) must not
  // let every user swap what stackpin unpacks, backs up or records there
  auto make = [&](const fs::path& dir, bool& made) -> util::Status {
    made = fs::create_directory(dir, ec);
    if (ec) return cannot_create(dir, dest, ec);
    if (made)
      fs::permissions(
          dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec,
          fs::perm_options::replace, ec);
    return {};
  };
  if (!fs::exists(dest, ec)) {
    std::vector<fs::path> missing;
    for (fs::path p = dest; !p.empty() && !fs::exists(fs::symlink_status(p, ec)); p = p.parent_path()) {
      missing.push_back(p);
      if (p == p.parent_path()) break;
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      bool made = false;
      SP_TRY(make(*it, made));
      if (*it == dest) s.m_created_dest = made;
    }
  } else if (!fs::is_directory(dest, ec)) {
    return util::Error(util::ErrorCode::io, dest.string() + " exists and is not a directory");
  }
  if (!fs::exists(fs::symlink_status(s.m_dirs.root(), ec))) {
    bool made = false;
    if (auto st = make(s.m_dirs.root(), made); !st) {
      s.discard_created();
      return std::move(st).error();
    }
    s.m_created_root = made;
  }
  struct Ctx {
    const std::function<void()>* f;
  } ctx{&on_wait};
  auto lock = util::FileLock::acquire(
      s.m_dirs.lock(),
      [](void* c) {
        if (*static_cast<Ctx*>(c)->f) (*static_cast<Ctx*>(c)->f)();
      },
      &ctx);
  if (!lock) {
    auto err = std::move(lock).error();
    s.discard_created();
    return err;
  }
  s.m_lock.emplace(std::move(lock).value());
  return s;
}

void State::remove_root() {
  std::error_code ec, ignored;  // what cannot be removed stays; the rest still goes
  for (fs::directory_iterator it(m_dirs.root(), ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() != m_dirs.lock().filename()) fs::remove_all(it->path(), ignored);
  if (m_lock) util::FileLock::release_and_remove(std::move(*m_lock), m_dirs.lock());
  m_lock.reset();
  fs::remove(m_dirs.root(), ec);  // only when empty: a run waiting on the lock on Windows keeps it
}

void State::remove_root_if_only_the_lock() {
  std::error_code ec;
  for (fs::directory_iterator it(m_dirs.root(), ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() != m_dirs.lock().filename()) return;
  remove_root();
}

void State::discard_created() {
  std::error_code ec;
  if (m_created_root) remove_root();
  if (m_created_dest) fs::remove(m_dirs.dest, ec);  // only when empty
  m_created_root = m_created_dest = false;
}

namespace {
util::Error hostile_state(const std::string& source, const std::string& rel, const std::string& why) {
  util::Error e(util::ErrorCode::unsafe, source + ": the path \"" + util::printable(rel) + "\" " + why);
  e.hints.push_back(
      "stackpin never writes such a path: the state file was edited or the tree was copied from elsewhere; "
      "nothing was changed. Check DEST by hand, then remove DEST/.stackpin to start over");
  return e;
}

std::string link_text(const fs::path& p) {
  std::error_code ec;
  auto t = fs::read_symlink(p, ec);
  return ec ? std::string() : " (to " + t.string() + ")";
}

// `p` lies in `root` (or is it), both made canonical by the caller.
bool within(const fs::path& p, const fs::path& root) {
  auto rel = p.lexically_relative(root);
  return !rel.empty() && *rel.begin() != "..";
}
}  // namespace

util::Status way_into_dest(const model::StateDir& dirs, const std::vector<std::string>& parts,
                           const std::function<util::Error(const std::string&)>& refuse) {
  std::error_code ec;
  fs::path cur = dirs.dest;
  std::optional<fs::path> real_dest;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    cur /= parts[i];
    auto st = fs::symlink_status(cur, ec);
    if (!fs::exists(st)) break;  // nothing below a missing folder exists yet: stackpin creates it, 0755
    if (util::io::is_link(cur)) {
      if (!real_dest) real_dest = fs::weakly_canonical(dirs.dest, ec);
      fs::path to = fs::canonical(cur, ec);
      if (ec) return refuse("goes through the link " + cur.string() + link_text(cur) + ", which leads nowhere");
      if (!within(to, *real_dest))
        return refuse("goes through the link " + cur.string() + link_text(cur) + ", which leads out of DEST to " + to.string());
      if (within(to, *real_dest / model::StateDir::k_name))
        return refuse("goes through the link " + cur.string() + link_text(cur) + ", which leads into DEST/" + model::StateDir::k_name);
      if (!fs::is_directory(to, ec)) break;
      continue;
    }
    if (!fs::is_directory(st)) break;  // nothing can be below a file: whatever is done through it fails harmlessly
  }
  return {};
}

util::Status check_state_root(const model::StateDir& dirs) {
  std::error_code ec;
  auto st = fs::symlink_status(dirs.root(), ec);
  if (!fs::exists(st)) return {};
  const bool link = util::io::is_link(dirs.root());
  if (!link && fs::is_directory(st)) return {};
  util::Error e(util::ErrorCode::unsafe, dirs.root().string() + " is " +
                                             (link ? "a link" + link_text(dirs.root()) : std::string("not a folder")) +
                                             ": stackpin keeps its lock, journal, receipt and backups only in a real folder inside DEST");
  e.hints.push_back("nothing was read or changed through it; a tree copied from elsewhere? Remove " + dirs.root().string() +
                    " (the link, not what it points to), then run stackpin again");
  return e;
}

util::Status check_dest_path(const model::StateDir& dirs, const std::string& rel, const std::string& source) {
  auto parts = archive_io::split_entry_path(rel, archive_io::NameRules::posix);
  if (!parts)
    return hostile_state(source, rel,
                         "is not a path inside DEST (" + parts.error().message.substr(parts.error().message.rfind(": ") + 2) + ")");
  if (archive_io::join_path(*parts) != rel) return hostile_state(source, rel, "is not in the form stackpin writes");
  if (util::to_lower((*parts)[0]) == model::StateDir::k_name) return hostile_state(source, rel, "is inside DEST/.stackpin");
  return way_into_dest(dirs, *parts, [&](const std::string& why) { return hostile_state(source, rel, why); });
}

util::Status check_state_path(const model::StateDir& dirs, const std::string& rel, const std::string& area, const std::string& source) {
  auto parts = archive_io::split_entry_path(rel, archive_io::NameRules::posix);
  if (!parts || archive_io::join_path(*parts) != rel || parts->size() < 2 || (*parts)[0] != area)
    return hostile_state(source, rel, "is not a path under DEST/.stackpin/" + area + "/");
  // stackpin's own folders are real folders it made: no link at all on the way, .stackpin included
  SP_TRY(check_state_root(dirs));
  fs::path cur = dirs.root();
  std::error_code ec;
  for (std::size_t i = 0; i + 1 < parts->size(); ++i) {
    cur /= (*parts)[i];
    if (util::io::is_link(cur))
      return hostile_state(source, rel, "goes through the link " + cur.string() + link_text(cur) + ", which may lead out of DEST");
    if (!fs::is_directory(fs::symlink_status(cur, ec))) break;
  }
  return {};
}

util::Status check_stage_target(const model::StateDir& dirs, const std::string& rel) {
  auto parts = util::split(rel, '/');
  return way_into_dest(dirs, parts, [&](const std::string& why) {
    util::Error e(util::ErrorCode::unsafe, "cannot stage into " + dirs.dest.string() + ": DEST/" + rel + " " + why);
    e.hints.push_back(
        "stackpin writes only into real folders inside DEST, or links that stay inside it; replace the link with a "
        "folder, or pass the folder it points to as --dest; nothing was staged");
    return e;
  });
}

util::Result<std::optional<model::Receipt>> load_receipt(const model::StateDir& dirs) {
  std::error_code ec;
  SP_TRY(check_state_root(dirs));
  if (!fs::exists(dirs.receipt(), ec)) return std::optional<model::Receipt>();
  SP_TRY_ASSIGN(auto text, util::read_file(dirs.receipt()));
  const std::string source = dirs.receipt().string();
  SP_TRY_ASSIGN(auto r, format::parse_receipt(text, source));
  for (std::size_t i = 0; i < r.files.size(); ++i) {
    const auto& f = r.files[i];
    std::string where = source + ": files[" + std::to_string(i) + "]";
    if (f.type != "file" && f.type != "symlink" && f.type != "removed")
      return hostile_state(where, f.path, "has the type \"" + util::printable(f.type) + "\", which stackpin never writes");
    if (f.type == "file" && !(f.sha256.size() == 64 && util::is_hex(f.sha256)))
      return hostile_state(where, f.path, "has no SHA-256 to check it by");
    SP_TRY(check_dest_path(dirs, f.path, where));
    if (!f.backup.empty()) SP_TRY(check_state_path(dirs, f.backup, "backup", where + ".backup"));
  }
  for (std::size_t i = 0; i < r.created_dirs.size(); ++i)
    if (auto s = check_dest_path(dirs, r.created_dirs[i], source + ": created_dirs[" + std::to_string(i) + "]"); !s)
      return std::move(s).error();
  return std::optional<model::Receipt>(std::move(r));
}

util::Result<std::optional<model::Receipt>> State::read_receipt() const { return load_receipt(m_dirs); }

namespace {
// Version 2: a place record carries the proof of the file it placed (version 1's did not, so its
// rollback removed whatever was at the path).
const char* const k_journal_version = "2";

// What a place record's proof says: "sha256:HEX" (a file) or "link:TARGET" (a symlink).
bool valid_proof(const std::string& proof) {
  if (proof.rfind("sha256:", 0) == 0) return proof.size() == 7 + 64 && util::is_hex(proof.substr(7));
  if (proof.rfind("link:", 0) == 0) {
    std::string t = proof.substr(5);
    return !t.empty() && std::none_of(t.begin(), t.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  }
  return false;
}

// DEST/rel is, right now, exactly what `proof` says stackpin placed there.
bool matches_proof(const fs::path& p, const std::string& proof) {
  std::error_code ec;
  auto st = fs::symlink_status(p, ec);
  if (proof.rfind("link:", 0) == 0) return fs::is_symlink(st) && fs::read_symlink(p, ec).string() == proof.substr(5);
  if (!fs::is_regular_file(st)) return false;
  auto h = crypto::hash_file(p);
  return h && "sha256:" + crypto::to_hex(h->digest) == proof;
}
}  // namespace

util::Result<Journal> Journal::begin(const model::StateDir& dirs, const std::string& op, const std::function<void(int)>& fault) {
  SP_TRY_ASSIGN(auto f, util::DurableAppender::open(dirs.journal()));
  Journal j(std::move(f), fault);
  SP_TRY(j.record("stackpin-journal", k_journal_version));
  SP_TRY(j.record("op", op));
  return j;
}

util::Status Journal::record(const std::string& kind, const std::string& a, const std::string& b) {
  if (m_fault) m_fault(++m_seq);
  std::string line = kind;
  if (!a.empty() || !b.empty()) line += "\t" + a;
  if (!b.empty()) line += "\t" + b;
  return m_file.append_line(line);
}

namespace {
// Removes the directories left empty under .stackpin/backup/ (and backup/ itself when empty).
void prune_backup_dirs(const model::StateDir& dirs) {
  std::error_code ec;
  if (!fs::exists(dirs.backup(), ec)) return;
  std::vector<fs::path> all;
  for (auto& e : fs::recursive_directory_iterator(dirs.backup(), ec)) all.push_back(e.path());
  std::sort(all.rbegin(), all.rend());  // children before their parents
  for (const auto& p : all)
    if (fs::is_directory(fs::symlink_status(p, ec))) fs::remove(p, ec);  // only when empty
  fs::remove(dirs.backup(), ec);
}
}  // namespace

util::Status remove_staged(const model::StateDir& dirs, const model::Receipt& r, bool force, std::vector<std::string>& modified,
                           std::uint64_t& removed, std::uint64_t& restored) {
  std::error_code ec;
  // What is at each path now, judged once before anything changes. stackpin removes a file only
  // when it is the staged copy (its hash, or its link text), or when --force says a changed one
  // goes too; it moves a backup back only where nothing is, so a file at that path is never lost.
  struct Now {
    bool present = false, ours = false, backup_kept = false;
  };
  std::vector<Now> now(r.files.size());
  std::vector<std::string> blocked;
  for (std::size_t i = 0; i < r.files.size(); ++i) {
    const auto& f = r.files[i];
    SP_TRY(check_dest_path(dirs, f.path, dirs.receipt().string()));
    if (!f.backup.empty()) SP_TRY(check_state_path(dirs, f.backup, "backup", dirs.receipt().string()));
    fs::path p = dirs.dest / f.path;
    Now& n = now[i];
    n.present = fs::exists(fs::symlink_status(p, ec));
    n.backup_kept = !f.backup.empty() && fs::exists(fs::symlink_status(dirs.root() / f.backup, ec));
    if (n.present && f.type == "symlink") n.ours = fs::is_symlink(fs::symlink_status(p, ec)) && fs::read_symlink(p, ec).string() == f.link;
    if (n.present && f.type == "file" && fs::is_regular_file(fs::symlink_status(p, ec))) {
      auto h = crypto::hash_file(p);
      n.ours = h && crypto::to_hex(h->digest) == f.sha256;
    }
    // a file whose backup is gone was restored by an unstage cut short: what is there is the original
    const bool original_back = !f.backup.empty() && !n.backup_kept;
    if (f.type != "removed" && n.present && !n.ours && !original_back) modified.push_back(f.path);
    // a file moved aside (--remove-stale) whose place has been taken since: its backup cannot go back
    if (f.type == "removed" && n.present && n.backup_kept) blocked.push_back(f.path);
  }
  if (!blocked.empty())
    return util::Error(util::ErrorCode::conflict, "stackpin would move back the file(s) it moved aside, but " + util::join(blocked, ", ") +
                                                      " in " + dirs.dest.string() + " now hold other files")
        .with_hint("nothing was removed; move those files away (their originals are in " + (dirs.root() / "backup").string() +
                   "), then run again");
  std::vector<std::string> own_changed = build_files_changed(dirs);
  if (!force) {
    modified.insert(modified.end(), own_changed.begin(), own_changed.end());
    if (!modified.empty())
      return util::Error(util::ErrorCode::conflict, std::to_string(modified.size()) + " staged file(s) in " + dirs.dest.string() +
                                                        " changed since staging: " + util::join(modified, ", "))
          .with_hint("nothing was removed; rerun with --force to remove them anyway");
  }
  // Idempotent, so that an interrupted unstage can simply run again.
  for (std::size_t i = r.files.size(); i-- > 0;) {
    const auto& f = r.files[i];
    const Now& n = now[i];
    // validated when the receipt was read and above; again here, right before the change
    SP_TRY(check_dest_path(dirs, f.path, dirs.receipt().string()));
    if (!f.backup.empty()) SP_TRY(check_state_path(dirs, f.backup, "backup", dirs.receipt().string()));
    fs::path p = dirs.dest / f.path;
    const bool original_back = !f.backup.empty() && !n.backup_kept;
    // a file whose backup went back already is the original, even when its bytes are the staged ones
    if (f.type != "removed" && n.present && !original_back && (n.ours || force)) {
      fs::remove(p, ec);
      if (ec) return util::Error(util::ErrorCode::io, "cannot remove " + p.string() + ": " + ec.message());
      ++removed;
    }
    if (n.backup_kept && !fs::exists(fs::symlink_status(p, ec))) {
      fs::rename(dirs.root() / f.backup, p, ec);
      if (ec) return util::Error(util::ErrorCode::io, "cannot restore " + p.string() + ": " + ec.message());
      ++restored;
    }
  }
  remove_build_files(dirs, force);  // first: they sit in folders staging created (lib64/pkgconfig)
  // only empty folders: a record naming a file or a link (the toolkit's lib64) never removes it
  for (auto it = r.created_dirs.rbegin(); it != r.created_dirs.rend(); ++it) util::io::remove_empty_directory(dirs.dest / *it);
  prune_backup_dirs(dirs);
  return {};
}

util::Result<std::vector<JournalRecord>> read_journal(const model::StateDir& dirs, const std::string& text) {
  const std::string source = dirs.journal().string();
  auto bad = [&](std::size_t line, const std::string& why) {
    util::Error e(util::ErrorCode::unsafe, source + ":" + std::to_string(line) + ": " + why);
    e.hints.push_back(
        "stackpin did not write this journal: nothing was replayed or rolled back. Check DEST by hand, then remove "
        "DEST/.stackpin/journal (an interrupted stage of another machine's tree cannot be finished here)");
    return e;
  };
  std::vector<JournalRecord> recs;
  std::size_t n = 0;
  bool header = false;
  std::string op, version;
  auto lines = util::split(text, '\n');
  // a record cut short by a crash was never acted on (each change follows its record's flush)
  if (!text.empty() && text.back() != '\n') lines.pop_back();
  for (const auto& line : lines) {
    ++n;
    if (line.empty()) continue;
    auto f = util::split(line, '\t');
    JournalRecord r{f[0], f.size() > 1 ? f[1] : "", f.size() > 2 ? f[2] : ""};
    if (f.size() > 3) return bad(n, "a record with more fields than stackpin writes");
    if (recs.empty()) {
      if (r.kind != "stackpin-journal") return bad(n, "not a stackpin journal (no \"stackpin-journal\" header)");
      if (r.a != k_journal_version && r.a != "1")
        return bad(n, "a journal of version \"" + util::printable(r.a) + "\", which this stackpin does not know");
      version = r.a;
      header = true;
    } else if (r.kind == "op") {
      if (!op.empty() || (r.a != "stage" && r.a != "unstage"))
        return bad(n, "the operation \"" + util::printable(r.a) + "\" is unknown or repeated");
      op = r.a;
    } else if (r.kind == "tmp") {
      if (r.a.rfind("tmp-", 0) != 0 || r.a.find('/') != std::string::npos || r.a.find("..") != std::string::npos || !r.b.empty())
        return bad(n, "the extraction directory \"" + util::printable(r.a) + "\" is not one stackpin makes");
    } else if (r.kind == "mkdir") {
      SP_TRY(check_dest_path(dirs, r.a, source + ":" + std::to_string(n)));
      if (!r.b.empty()) return bad(n, "a mkdir record with a second field");
    } else if (r.kind == "place") {
      SP_TRY(check_dest_path(dirs, r.a, source + ":" + std::to_string(n)));
      if (!(version == "1" && r.b.empty()) && !valid_proof(r.b))
        return bad(n, "the place record of " + util::printable(r.a) + " does not say which file it placed");
    } else if (r.kind == "backup") {
      SP_TRY(check_dest_path(dirs, r.a, source + ":" + std::to_string(n)));
      if (r.b != "backup/" + r.a) return bad(n, "the backup of " + util::printable(r.a) + " is not kept where stackpin keeps it");
      SP_TRY(check_state_path(dirs, r.b, "backup", source + ":" + std::to_string(n)));
    } else if (r.kind != "commit" && r.kind != "done") {
      return bad(n, "the record \"" + util::printable(r.kind) + "\" is not one stackpin writes");
    }
    if (r.kind != "stackpin-journal" && op.empty() && r.kind != "op") return bad(n, "a record before the journal's operation");
    recs.push_back(std::move(r));
  }
  (void)header;  // an empty journal: killed before its first record, so nothing was done
  // A version 1 journal (an older stackpin's) says where files were placed but not which: an
  // unstage, or a stage that reached its commit, is finished without removing anything it places,
  // but a stage cut short cannot be rolled back safely.
  if (version == "1" && op == "stage" && std::none_of(recs.begin(), recs.end(), [](const JournalRecord& r) { return r.kind == "commit"; }))
    return bad(1,
               "a stage of an older stackpin (journal version 1) cut short: its records do not prove which files it placed, "
               "so it is not rolled back. The files it moved aside are in DEST/.stackpin/backup/");
  return recs;
}

bool has_strays(const model::StateDir& dirs) {
  std::error_code ec;
  if (!check_state_root(dirs)) return false;  // refused by whatever reads it next
  for (fs::directory_iterator it(dirs.root(), ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind("tmp-", 0) == 0 || (name.rfind(".", 0) == 0 && name.find(".tmp-") != std::string::npos)) return true;
  }
  return false;
}

namespace {
// Stray extraction directories of runs killed before their journal existed (a kill during the
// extraction, which happens before anything in DEST changes), and the temporary files
// (.NAME.tmp-*, util::write_file_atomic's) of a receipt.json.new, an activation script or the
// build-files record whose write was interrupted. Called under the lock, so no other run is using them.
void remove_strays(const model::StateDir& dirs) {
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dirs.root(), ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("tmp-", 0) == 0 || (name.rfind(".", 0) == 0 && name.find(".tmp-") != std::string::npos)) fs::remove_all(e.path(), ec);
  }
}
}  // namespace

namespace {
util::Error refuse_rollback(const std::string& where, const fs::path& p, const std::string& why) {
  util::Error e(util::ErrorCode::unsafe, where + ": " + p.string() + " " + why + "; nothing was rolled back");
  e.hints.push_back(
      "stackpin removes or replaces only what it can prove it put there, and this journal names something else: it was not "
      "written by the run that left it. Check DEST by hand, then remove DEST/.stackpin/journal");
  return e;
}
}  // namespace

util::Result<std::string> State::recover(bool force) {
  std::error_code ec;
  if (!fs::exists(m_dirs.journal(), ec)) {
    remove_strays(m_dirs);
    return std::string();
  }
  SP_TRY_ASSIGN(auto text, util::read_file(m_dirs.journal()));
  SP_TRY_ASSIGN(auto recs, read_journal(m_dirs, text));
  std::string op;
  bool committed = false;
  std::string tmp;
  for (const auto& r : recs) {
    if (r.kind == "op") op = r.a;
    if (r.kind == "commit") committed = true;
    if (r.kind == "tmp") tmp = r.a;
  }
  std::string done;
  if (op == "stage" && committed) {
    if (fs::exists(m_dirs.root() / "receipt.json.new", ec)) fs::rename(m_dirs.root() / "receipt.json.new", m_dirs.receipt(), ec);
    if (ec) return util::Error(util::ErrorCode::io, "cannot finish the interrupted stage: " + ec.message());
    done = "finished an interrupted stage (its files were all in place)";
  } else if (op == "stage") {
    // First the proof, for every record, before anything moves: a placed path holds the file the
    // record names or nothing (a run killed before its move), and a backup goes back only where
    // nothing is (its file was moved away, and whatever stage placed there was removed first).
    // A journal that says otherwise was not written by the run that left it, and nothing is done.
    std::set<std::string> emptied;   // paths the rollback will have cleared when it reaches a record
    std::set<std::string> restored;  // paths whose backup is gone: never moved, or already moved back by a rollback cut short
    for (const auto& r : recs)
      if (r.kind == "backup" && !fs::exists(fs::symlink_status(m_dirs.root() / r.b, ec))) restored.insert(r.a);
    for (auto it = recs.rbegin(); it != recs.rend(); ++it) {
      const std::string where = m_dirs.journal().string() + ": the " + it->kind + " record of " + util::printable(it->a);
      fs::path p = m_dirs.dest / it->a;
      const bool present = (it->kind == "place" || it->kind == "backup") && fs::exists(fs::symlink_status(p, ec));
      if (it->kind == "place") {
        if (present && !emptied.count(it->a) && !restored.count(it->a) && !matches_proof(p, it->b))
          return refuse_rollback(where, p, "holds a file other than the one the record placed (" + it->b.substr(0, 7 + 12) + "...)");
        emptied.insert(it->a);
      } else if (it->kind == "backup" && fs::exists(fs::symlink_status(m_dirs.root() / it->b, ec))) {
        if (present && !emptied.count(it->a)) return refuse_rollback(where, p, "is not empty, so its backup cannot go back there");
        emptied.erase(it->a);
      }
    }
    for (auto it = recs.rbegin(); it != recs.rend(); ++it) {
      // validated when the journal was read; the parents again right before each change
      if (!it->a.empty() && (it->kind == "place" || it->kind == "backup" || it->kind == "mkdir"))
        SP_TRY(check_dest_path(m_dirs, it->a, m_dirs.journal().string()));
      if (it->kind == "place") {
        // not where the backup went back already (a rollback cut short): that is the original
        if (!restored.count(it->a) && matches_proof(m_dirs.dest / it->a, it->b)) fs::remove(m_dirs.dest / it->a, ec);
      } else if (it->kind == "backup") {
        fs::path b = m_dirs.root() / it->b;
        SP_TRY(check_state_path(m_dirs, it->b, "backup", m_dirs.journal().string()));
        if (fs::exists(fs::symlink_status(b, ec)) && !fs::exists(fs::symlink_status(m_dirs.dest / it->a, ec))) {
          fs::rename(b, m_dirs.dest / it->a, ec);
          if (ec) return util::Error(util::ErrorCode::io, "cannot restore " + (m_dirs.dest / it->a).string() + ": " + ec.message());
        }
      } else if (it->kind == "mkdir") {
        util::io::remove_empty_directory(m_dirs.dest / it->a);  // never a file or link the record names
      }
    }
    fs::remove(m_dirs.root() / "receipt.json.new", ec);
    prune_backup_dirs(m_dirs);  // the directories the backups were moved into
    done = "rolled back an interrupted stage (DEST is as it was before it)";
  } else if (op == "unstage") {
    SP_TRY_ASSIGN(auto receipt, read_receipt());
    if (receipt) {
      std::vector<std::string> modified;
      std::uint64_t removed = 0, restored = 0;
      SP_TRY(remove_staged(m_dirs, *receipt, force, modified, removed, restored));
      fs::remove(m_dirs.receipt(), ec);
    }
    done = "finished an interrupted unstage";
  }
  if (!tmp.empty()) fs::remove_all(m_dirs.root() / tmp, ec);
  remove_strays(m_dirs);
  fs::remove(m_dirs.journal(), ec);
  util::sync_directory(m_dirs.root());
  return done;
}

}  // namespace core::detail
