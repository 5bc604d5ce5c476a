#pragma once
// URL text: percent-decoding, for file:// paths (net's WinHTTP backend) and wheel file names (the
// Python lock), which both take a URL's path back to the bytes it names; percent-encoding of a
// query value; and base64, which HTTP's Basic authentication and Docker's config.json speak.
#include <optional>
#include <string>
#include <string_view>

namespace util {

// `s` with every %XX escape (two hex digits, either case) replaced by its byte; a '%' not followed
// by two hex digits stays as it is.
std::string percent_decode(std::string_view s);

// `s` with every byte but RFC 3986's unreserved ones (ALPHA DIGIT - . _ ~) as %XX: a query value.
std::string percent_encode(std::string_view s);

// RFC 4648 base64 with padding.
std::string base64_encode(std::string_view bytes);
// The bytes of standard base64 (padding optional, no whitespace); nullopt when it is not base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace util
