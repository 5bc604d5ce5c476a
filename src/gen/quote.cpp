#include "gen/quote.hpp"

#include <cstdio>
#include <utility>

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

std::string cmake_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '$': out += "\\$"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

util::Result<std::string> pc_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r')
      return util::Error(util::ErrorCode::unsupported, "a pkg-config file cannot hold the value \"" + std::string(s) + "\": it has a line break")
          .with_hint("choose a path without line breaks");
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || u >= 0x80 ||
                 std::string_view("/._+,:=@^~%-").find(c) != std::string_view::npos;
    if (!plain) out += '\\';
    out += c;
  }
  return out;
}

std::string comment_safe(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '\r') c = '?';
  return s;
}

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace gen
