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
#include "state.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

#include "build_files.hpp"
#include "crypto/sha256.hpp"
#include "format/receipt.hpp"
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

util::Result<State> State::open(const fs::path& dest, const std::function<void()>& on_wait) {
  State s;
  s.m_dirs.dest = dest;
  std::error_code ec;
  // "created" only when this process made the directory: a concurrent run on the same DEST may
  // make it between the exists() check and ours, and must not have it removed under it.
  if (!fs::exists(dest, ec)) {
    bool made = fs::create_directories(dest, ec);
    if (ec) return util::Error(util::ErrorCode::io, "cannot create " + dest.string() + ": " + ec.message());
    s.m_created_dest = made;
  } else if (!fs::is_directory(dest, ec)) {
    return util::Error(util::ErrorCode::io, dest.string() + " exists and is not a directory");
  }
  if (!fs::exists(s.m_dirs.root(), ec)) {
    bool made = fs::create_directory(s.m_dirs.root(), ec);
    if (ec) {
      auto err = util::Error(util::ErrorCode::io, "cannot create " + s.m_dirs.root().string() + ": " + ec.message());
      s.discard_created();
      return err;
    }
    s.m_created_root = made;
  }
  struct Ctx {
    const std::function<void()>* f;
  } ctx{&on_wait};
  auto lock = util::FileLock::acquire(
      s.m_dirs.lock(), [](void* c) { if (*static_cast<Ctx*>(c)->f) (*static_cast<Ctx*>(c)->f)(); }, &ctx);
  if (!lock) {
    auto err = std::move(lock).error();
    s.discard_created();
    return err;
  }
  s.m_lock.emplace(std::move(lock).value());
  return s;
}

void State::discard_created() {
  std::error_code ec;
  if (m_created_root) fs::remove_all(m_dirs.root(), ec);
  if (m_created_dest) fs::remove(m_dirs.dest, ec);  // only when empty
  m_created_root = m_created_dest = false;
}

util::Result<std::optional<model::Receipt>> State::read_receipt() const {
  std::error_code ec;
  if (!fs::exists(m_dirs.receipt(), ec)) return std::optional<model::Receipt>();
  auto text = util::read_file(m_dirs.receipt());
  if (!text) return std::move(text).error();
  auto r = format::parse_receipt(*text, m_dirs.receipt().string());
  if (!r) return std::move(r).error();
  return std::optional<model::Receipt>(std::move(r).value());
}

util::Result<Journal> Journal::begin(const model::StateDir& dirs, const std::string& op, const std::function<void(int)>& fault) {
  auto f = util::DurableAppender::open(dirs.journal());
  if (!f) return std::move(f).error();
  Journal j(std::move(f).value(), fault);
  if (auto s = j.record("stackpin-journal", "1"); !s) return std::move(s).error();
  if (auto s = j.record("op", op); !s) return std::move(s).error();
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
  if (!force) {
    for (const auto& f : r.files) {
      fs::path p = dirs.dest / f.path;
      if (f.type == "file" && fs::is_regular_file(fs::symlink_status(p, ec))) {
        auto h = crypto::hash_file(p);
        if (!h || crypto::to_hex(h->digest) != f.sha256) modified.push_back(f.path);
      } else if (f.type == "symlink" && fs::is_symlink(fs::symlink_status(p, ec))) {
        if (fs::read_symlink(p, ec).string() != f.link) modified.push_back(f.path);
      } else if ((f.type == "file" || f.type == "symlink") && fs::exists(fs::symlink_status(p, ec))) {
        modified.push_back(f.path);  // replaced by something of another type
      }
    }
    if (!modified.empty())
      return util::Error(util::ErrorCode::conflict, std::to_string(modified.size()) + " staged file(s) in " + dirs.dest.string() +
                                                        " changed since staging: " + util::join(modified, ", "))
          .with_hint("nothing was removed; rerun with --force to remove them anyway");
  }
  // Idempotent, so that an interrupted unstage can simply run again: a file whose backup is
  // gone was restored by an earlier pass, so what is at its path now is the original, which must
  // stay, unless it is still the staged file itself (then the backup was lost, and the staged
  // file goes anyway).
  auto is_staged_copy = [&](const fs::path& p, const model::StagedFile& f) {
    auto st = fs::symlink_status(p, ec);
    if (f.type == "symlink") return fs::is_symlink(st) && fs::read_symlink(p, ec).string() == f.link;
    if (f.type != "file" || !fs::is_regular_file(st)) return false;
    auto h = crypto::hash_file(p);
    return h && crypto::to_hex(h->digest) == f.sha256;
  };
  for (auto it = r.files.rbegin(); it != r.files.rend(); ++it) {
    fs::path p = dirs.dest / it->path;
    fs::path b = it->backup.empty() ? fs::path() : dirs.root() / it->backup;
    bool backup_kept = !b.empty() && fs::exists(fs::symlink_status(b, ec));
    if (it->type != "removed" && fs::exists(fs::symlink_status(p, ec)) &&
        (it->backup.empty() || backup_kept || is_staged_copy(p, *it))) {
      fs::remove(p, ec);
      if (ec) return util::Error(util::ErrorCode::io, "cannot remove " + p.string() + ": " + ec.message());
      ++removed;
    }
    if (backup_kept) {
      fs::rename(b, p, ec);
      if (ec) return util::Error(util::ErrorCode::io, "cannot restore " + p.string() + ": " + ec.message());
      ++restored;
    }
  }
  remove_build_files(dirs);  // first: they sit in folders staging created (lib64/pkgconfig)
  for (auto it = r.created_dirs.rbegin(); it != r.created_dirs.rend(); ++it) fs::remove(dirs.dest / *it, ec);  // only if empty
  prune_backup_dirs(dirs);
  return {};
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

util::Result<std::string> State::recover() {
  std::error_code ec;
  if (!fs::exists(m_dirs.journal(), ec)) {
    remove_strays(m_dirs);
    return std::string();
  }
  auto text = util::read_file(m_dirs.journal());
  if (!text) return std::move(text).error();
  struct Rec {
    std::string kind, a, b;
  };
  std::vector<Rec> recs;
  for (const auto& line : util::split(*text, '\n')) {
    if (line.empty()) continue;
    auto f = util::split(line, '\t');
    recs.push_back({f[0], f.size() > 1 ? f[1] : "", f.size() > 2 ? f[2] : ""});
  }
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
    for (auto it = recs.rbegin(); it != recs.rend(); ++it) {
      if (it->kind == "place") {
        fs::remove(m_dirs.dest / it->a, ec);
      } else if (it->kind == "backup") {
        fs::path b = m_dirs.root() / it->b;
        if (fs::exists(fs::symlink_status(b, ec))) {
          fs::rename(b, m_dirs.dest / it->a, ec);
          if (ec) return util::Error(util::ErrorCode::io, "cannot restore " + (m_dirs.dest / it->a).string() + ": " + ec.message());
        }
      } else if (it->kind == "mkdir") {
        fs::remove(m_dirs.dest / it->a, ec);  // only when empty
      }
    }
    fs::remove(m_dirs.root() / "receipt.json.new", ec);
    prune_backup_dirs(m_dirs);  // the directories the backups were moved into
    done = "rolled back an interrupted stage (DEST is as it was before it)";
  } else if (op == "unstage") {
    auto receipt = read_receipt();
    if (!receipt) return std::move(receipt).error();
    if (*receipt) {
      std::vector<std::string> modified;
      std::uint64_t removed = 0, restored = 0;
      if (auto s = remove_staged(m_dirs, **receipt, true, modified, removed, restored); !s) return std::move(s).error();
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
