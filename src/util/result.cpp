// Error codes' names and Error's text.
#include "util/result.hpp"

namespace util {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::usage: return "usage";
    case ErrorCode::parse: return "parse";
    case ErrorCode::invalid: return "invalid";
    case ErrorCode::not_found: return "not_found";
    case ErrorCode::io: return "io";
    case ErrorCode::mismatch: return "mismatch";
    case ErrorCode::unsafe: return "unsafe";
    case ErrorCode::conflict: return "conflict";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::internal: return "internal";
  }
  return "internal";
}

SourceLocation make_location(std::string file, int line, int column, const std::string& line_text) {
  SourceLocation loc;
  loc.file = std::move(file);
  loc.line = line;
  loc.column = column;
  constexpr std::size_t k_max = 160, k_before = 60;
  if (line_text.size() <= k_max) {
    loc.excerpt = line_text;
    return loc;
  }
  auto boundary = [&](std::size_t i) {  // back to the start of a UTF-8 sequence
    while (i > 0 && i < line_text.size() && (static_cast<unsigned char>(line_text[i]) & 0xC0) == 0x80) --i;
    return i;
  };
  std::size_t col = column > 0 ? static_cast<std::size_t>(column - 1) : 0;
  std::size_t start = col > k_before ? boundary(col - k_before) : 0;
  std::size_t end = boundary(std::min(line_text.size(), start + k_max));
  if (end <= start) end = std::min(line_text.size(), start + k_max);
  std::string out = start > 0 ? "..." : "";
  out += line_text.substr(start, end - start);
  if (end < line_text.size()) out += "...";
  loc.excerpt = std::move(out);
  if (column > 0) loc.column = static_cast<int>(col - start + (start > 0 ? 3 : 0) + 1);
  return loc;
}

}  // namespace util
