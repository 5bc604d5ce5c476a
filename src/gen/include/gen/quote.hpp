#pragma once
// The one quoting module for generated scripts: every path or value a script embeds goes through
// it. Shells differ: POSIX sh single quotes take everything literally except the quote itself;
// PowerShell single-quoted strings take everything literally ($, backticks) and double the quote;
// cmd has no escape for a double quote inside quotes and expands %VAR% even there.
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace gen {

// 'it'\''s' : safe for any byte string.
std::string sh_quote(std::string_view s);
// 'it''s' : safe for any string (no expansion of $ or `).
std::string ps_quote(std::string_view s);
// "C:\Program Files\x" with % doubled (for .cmd/.bat files). Errors (unsupported): a double
// quote, newline or carriage return, which cmd cannot carry inside a quoted argument.
util::Result<std::string> cmd_quote(std::string_view s);

// Text for a comment line of any of these scripts: a line break in a value must not end the
// comment and turn the rest into code, so CR and LF become '?'.
std::string comment_safe(std::string s);

}  // namespace gen
