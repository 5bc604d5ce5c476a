#include "gen/quote.hpp"

namespace gen {

std::string sh_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string ps_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

util::Result<std::string> cmd_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\n' || c == '\r')
      return util::Error(util::ErrorCode::unsupported,
                         "cmd cannot quote \"" + std::string(s) + "\": it holds a double quote or a line break")
          .with_hint("choose a path without double quotes or line breaks, or use the PowerShell script");
    if (c == '%') out += "%%";
    else out += c;
  }
  return out + "\"";
}

std::string comment_safe(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '\r') c = '?';
  return s;
}

}  // namespace gen
