// String helpers: split, join, trim, case, ASCII and UTF-8 checks, bounded number parsing.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace util {

std::vector<std::string> split(std::string_view text, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string_view trim(std::string_view text);
std::string to_lower(std::string_view text);
bool is_ascii(std::string_view text);
bool is_hex(std::string_view text);
// Parses a non-negative decimal integer that fits in uint64; nullopt otherwise.
std::optional<std::uint64_t> parse_u64(std::string_view text);
// "a", "a or b", "a, b or c" (for error messages listing valid values).
std::string one_of(const std::vector<std::string>& values);
// Last path component of a URL or path ('/' or '\\' separated), without query or fragment.
std::string basename_of(std::string_view path_or_url);
// Human-readable byte count: "705,347,747 bytes (672.7 MiB)".
std::string format_bytes(std::uint64_t bytes);
// A size in a word: "127 KiB" below one MiB (rounded up), else "4.0 MiB" (one decimal).
std::string short_size(std::uint64_t bytes);
// UTF-8 as RFC 3629 defines it: shortest forms only, no surrogates, nothing above U+10FFFF.
bool is_valid_utf8(std::string_view text);
// Length in bytes of the valid UTF-8 sequence at the start of `text` (0 when there is none).
std::size_t utf8_sequence_length(std::string_view text);
// `text` fit to quote in a message: control characters and bytes that are not valid UTF-8 are
// written \xNN, and a text longer than `max_bytes` is cut there with "... (N bytes in all)".
std::string printable(std::string_view text, std::size_t max_bytes = 200);
// The code point of the UTF-8 sequence of `n` bytes (1 to 4, as utf8_sequence_length measured it)
// at the start of `text`.
char32_t utf8_code_point(std::string_view text, std::size_t n);
// Appends `c` (at most U+10FFFF) to `out` in UTF-8.
void append_utf8(std::string& out, char32_t c);
// UTF-8 to UTF-16 (Windows' wide strings, kept as char16_t so the code is the same everywhere);
// bytes that are not valid UTF-8 become U+FFFD each.
std::u16string utf8_to_utf16(std::string_view text);
// UTF-16 to UTF-8; an unpaired surrogate becomes U+FFFD.
std::string utf16_to_utf8(std::u16string_view text);

}  // namespace util
