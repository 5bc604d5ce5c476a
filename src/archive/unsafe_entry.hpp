#pragma once
// The one error every refusal of a hostile archive entry gives (paths.hpp declares it for the layers
// that place an archive's files; paths.cpp, extract.cpp and the zip readers use it by this name).
#include "archive/paths.hpp"

namespace archive_io::detail {

using ::archive_io::unsafe_entry;

}  // namespace archive_io::detail
