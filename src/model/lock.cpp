// Lock lookups: the locked archive for a platform, locations in the lock file.
#include "model/lock.hpp"

namespace model {

util::SourceLocation Lock::locate(Pos pos) const { return locate_in(path, lines, pos); }

const LockedArchive* Lock::archive_for(Platform p) const {
  for (const auto& a : archives)
    if (a.platform == p) return &a;
  return nullptr;
}

const LockedArchive* Lock::cuda_archive_for(const std::string& component, Platform p) const {
  for (const auto& a : cuda_archives)
    if (a.component == component && a.platform == p) return &a;
  return nullptr;
}

}  // namespace model
