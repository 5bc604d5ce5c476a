#pragma once
// DEST/.stackpin/: the lock that serializes runs on one DEST, the journal that makes staging all
// or nothing across crashes, and the receipt (state.cpp explains the journal).
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/contracts.hpp"
#include "model/staging.hpp"
#include "util/file_lock.hpp"
#include "util/result.hpp"

namespace core::detail {

class State {
 public:
  // Creates DEST and DEST/.stackpin when missing (remembering that it did) and takes the lock.
  static util::Result<State> open(const std::filesystem::path& dest, const std::function<void()>& on_wait);
  const model::StateDir& dirs() const { return m_dirs; }
  // Undoes what this run created (DEST/.stackpin, DEST) when nothing was staged.
  void discard_created();
  // Removes DEST/.stackpin and everything in it, the lock last (util::FileLock::release_and_remove):
  // the State holds no lock afterwards.
  void remove_root();
  // remove_root() when DEST/.stackpin holds nothing but the lock (nothing staged, nothing pending).
  void remove_root_if_only_the_lock();
  // Finishes or rolls back an interrupted operation. Returns what was done ("" when nothing).
  // `force`: an interrupted unstage is finished as `unstage --force` would (changed files go too).
  util::Result<std::string> recover(bool force = false);
  util::Result<std::optional<model::Receipt>> read_receipt() const;

 private:
  model::StateDir m_dirs;
  std::optional<util::FileLock> m_lock;
  bool m_created_dest = false, m_created_root = false;
};

// Appends journal records; `fault` (tests) is called before every record with its sequence number.
class Journal {
 public:
  static util::Result<Journal> begin(const model::StateDir& dirs, const std::string& op, const std::function<void(int)>& fault);
  util::Status record(const std::string& kind, const std::string& a = {}, const std::string& b = {});
  // Closes the journal file; the operation is over (done, or about to be rolled back).
  void close() { m_file.close(); }

 private:
  Journal(util::DurableAppender f, std::function<void(int)> fault) : m_file(std::move(f)), m_fault(std::move(fault)) {}
  util::DurableAppender m_file;
  std::function<void(int)> m_fault;
  int m_seq = 0;
};

// Removes exactly what `r` lists from DEST, restoring backups. With `force` false, refuses when a
// staged file changed (modified is filled, nothing is touched). Idempotent: used to roll an
// interrupted unstage forward.
util::Status remove_staged(const model::StateDir& dirs, const model::Receipt& r, bool force, std::vector<std::string>& modified,
                           std::uint64_t& removed, std::uint64_t& restored);

// Paths read from stackpin's own state files (receipt, journal, build-files record) are untrusted:
// a tree copied from another machine carries whatever its .stackpin/ says. Each is judged like an
// archive entry before anything is created, moved or removed through it: DEST-relative, no
// absolute path, drive letter, "..", backslash or control character, not inside .stackpin/, and no
// link on the way from DEST to it that leads out of DEST or into .stackpin/ (way_into_dest).
// `source` names the file and entry in the error. Errors: unsafe (the hint says what to do about
// the state file).
util::Status check_dest_path(const model::StateDir& dirs, const std::string& rel, const std::string& source);
// The same for a path under DEST/.stackpin/ that must start with `area` + "/" ("backup"): stackpin
// made every folder there, so no link at all is on the way, DEST/.stackpin itself included.
util::Status check_state_path(const model::StateDir& dirs, const std::string& rel, const std::string& area, const std::string& source);
// DEST/.stackpin is absent or a real folder: not a link (out of DEST, or anywhere), not a file. Every
// command checks it before it reads, locks, writes or cleans anything there. Errors: unsafe.
util::Status check_state_root(const model::StateDir& dirs);
// The way from DEST to the folder of DEST/`parts`, as it is on disk: every folder on it that exists
// is a real folder, or a link that resolves to a folder inside DEST (the runfile toolkit's
// lib64 -> targets/x86_64-linux/lib) and not into DEST/.stackpin. `refuse(why)` makes the error.
util::Status way_into_dest(const model::StateDir& dirs, const std::vector<std::string>& parts,
                           const std::function<util::Error(const std::string&)>& refuse);
// way_into_dest for a file stage is about to place (`rel`, '/'-separated): checked for every file
// before DEST changes, and again right before each move. Errors: unsafe, naming the link.
util::Status check_stage_target(const model::StateDir& dirs, const std::string& rel);

// Reads and validates DEST/.stackpin/receipt.json: it parses, every path in it passes
// check_dest_path / check_state_path, every type is one stackpin writes. nullopt when there is
// none. Errors: parse / invalid (a receipt stackpin cannot read), unsafe, io.
util::Result<std::optional<model::Receipt>> load_receipt(const model::StateDir& dirs);

// One record of DEST/.stackpin/journal (state.cpp lists them).
struct JournalRecord {
  std::string kind, a, b;
};
// Parses and validates a journal's text: the header, known records only, every path checked as
// check_dest_path does, backups where stackpin keeps them. Nothing is acted on before the whole
// journal passes. Errors: unsafe (naming the journal's line).
util::Result<std::vector<JournalRecord>> read_journal(const model::StateDir& dirs, const std::string& text);

// Whether DEST/.stackpin holds what a killed run leaves (an extraction directory tmp-*, a
// half-written .NAME.tmp-* file): the next run that takes the lock removes them.
bool has_strays(const model::StateDir& dirs);

std::int64_t mtime_ns(const std::filesystem::path& p);
std::string rel_string(const std::filesystem::path& p);

}  // namespace core::detail
