#include "model/lock.hpp"

namespace model {

util::SourceLocation Lock::locate(Pos pos) const {
  util::SourceLocation loc;
  loc.file = path;
  loc.line = pos.line;
  loc.column = pos.column;
  if (pos.line > 0 && static_cast<std::size_t>(pos.line) <= lines.size()) loc.excerpt = lines[pos.line - 1];
  return loc;
}

const LockedArchive* Lock::archive_for(Platform p) const {
  for (const auto& a : archives)
    if (a.platform == p) return &a;
  return nullptr;
}

}  // namespace model
