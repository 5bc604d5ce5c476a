#pragma once
// The one error every refusal of a hostile archive entry gives (paths.cpp, extract.cpp).
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace archive_io::detail {

// unsafe: `unsafe archive entry "NAME": WHY`, with the hint that nothing was staged.
util::Error unsafe_entry(std::string_view name, const std::string& why);

}  // namespace archive_io::detail
