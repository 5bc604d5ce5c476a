// POSIX rename(2) and unlink(2) do not wait for other processes: a process that has a library
// open or mapped keeps the old file while the name moves on, so no file is ever held.
#include "probe/files_in_use.hpp"

namespace probe {

std::vector<FileInUse> files_in_use(const std::vector<std::filesystem::path>&) { return {}; }

}  // namespace probe
