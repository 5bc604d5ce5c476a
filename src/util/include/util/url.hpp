#pragma once
// URL text: percent-decoding, for file:// paths (net's WinHTTP backend) and wheel file names (the
// Python lock), which both take a URL's path back to the bytes it names.
#include <string>
#include <string_view>

namespace util {

// `s` with every %XX escape (two hex digits, either case) replaced by its byte; a '%' not followed
// by two hex digits stays as it is.
std::string percent_decode(std::string_view s);

}  // namespace util
