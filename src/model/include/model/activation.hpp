#pragma once
// `stackpin activate`: what it changed in a scope's persistent environment, and the record kept in
// DEST/.stackpin/ so that --undo restores only what stackpin itself changed.
#include <optional>
#include <string>
#include <vector>

namespace model {

// One variable stackpin set (CUDNN_PATH, CUDA_PATH, CUDA_PATH_VX_Y): its value before the first
// activation (none: it did not exist) and the value stackpin wrote.
struct ActivationVar {
  std::string name;
  std::optional<std::string> before;
  std::string after;
};

// A PATH entry stackpin took out, as written, and its 0-based position in the value it was in.
struct RemovedPathEntry {
  std::string entry;
  int index = 0;
};

// DEST/.stackpin/activation-<scope>.json
struct ActivationRecord {
  int schema = 1;
  std::string scope;                    // "user" or "machine"
  std::vector<std::string> path_added;  // directories stackpin put on PATH (absent before)
  std::vector<RemovedPathEntry> path_removed;
  std::vector<ActivationVar> vars;
};

// One value as it was and as it is (or would be, with --dry-run); nullopt: absent.
struct ActivationChange {
  std::string name;
  std::optional<std::string> before, after;
  bool changed() const { return before != after; }
};

struct ActivationReport {
  std::string scope;  // "user" or "machine"
  std::string where;  // "HKCU\Environment"
  bool undo = false;
  bool dry_run = false;
  bool files = false;                     // Linux: the changes are files (name: the path; before/after: the content)
  std::vector<ActivationChange> changes;  // Path first, then the variables
  std::vector<std::string> path_first;    // the directories put first
  std::vector<std::string> path_removed;  // entries taken out (activation) or put back (undo)
  std::vector<std::string> stale;         // cuDNN DLLs left on PATH inside toolkit directories
  std::vector<std::string> left_alone;    // undo: values changed since activation, not touched
  std::vector<std::string> notes;         // what the user still has to know or do
  std::string record;                     // the record file (written, or removed by --undo)
  bool changed() const {
    for (const auto& c : changes)
      if (c.changed()) return true;
    return false;
  }
};

}  // namespace model
