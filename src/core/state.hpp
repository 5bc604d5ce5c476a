#pragma once
// DEST/.stackpin/: the lock that serializes runs on one DEST, the journal that makes staging all
// or nothing across crashes, and the receipt (state.cpp explains the journal).
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

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
  // Finishes or rolls back an interrupted operation. Returns what was done ("" when nothing).
  util::Result<std::string> recover();
  util::Result<std::optional<model::Receipt>> read_receipt() const;

 private:
  model::StateDir m_dirs;
  std::optional<util::FileLock> m_lock;
  bool m_created_dest = false, m_created_root = false;
};

// Appends journal records; `fault` (tests) is called before every record with its sequence number.
class Journal {
 public:
  static util::Result<Journal> begin(const model::StateDir& dirs, const std::string& op,
                                     const std::function<void(int)>& fault);
  util::Status record(const std::string& kind, const std::string& a = {}, const std::string& b = {});

 private:
  Journal(util::DurableAppender f, std::function<void(int)> fault) : m_file(std::move(f)), m_fault(std::move(fault)) {}
  util::DurableAppender m_file;
  std::function<void(int)> m_fault;
  int m_seq = 0;
};

// Removes exactly what `r` lists from DEST, restoring backups. With `force` false, refuses when a
// staged file changed (modified is filled, nothing is touched). Idempotent: used to roll an
// interrupted unstage forward.
util::Status remove_staged(const model::StateDir& dirs, const model::Receipt& r, bool force,
                           std::vector<std::string>& modified, std::uint64_t& removed, std::uint64_t& restored);

std::int64_t mtime_ns(const std::filesystem::path& p);
std::string rel_string(const std::filesystem::path& p);

}  // namespace core::detail
