#pragma once
// Checks for generated Windows scripts by class of defect (script_lint.cpp), since neither
// PowerShell nor cmd runs on these machines: a small PowerShell tokenizer (strings of every kind,
// here-strings, comments, $( ) subexpressions inside strings, backtick escapes) that finds
//   drive-variable   `$name:` inside an expandable string, which PowerShell reads as a
//                    drive-qualified variable and refuses to parse (write ${name}:)
//   literalpath-glob a wildcard in a string given to -LiteralPath, which never expands one
//   unterminated     a string, here-string, subexpression or comment still open at the end
//   no-bom           a script without a UTF-8 byte order mark (Windows PowerShell 5.1 reads
//                    it in the ANSI code page)
// and for cmd scripts
//   cmd-codepage     non-ASCII text without `chcp 65001` before it and the code page restored
//   cmd-percent      a lone % inside a quoted value (cmd expands %NAME% even there)
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace script_lint {

struct Finding {
  int line = 0;
  std::string kind;  // one of the classes above
  std::string text;  // the offending excerpt
};
std::string describe(const std::vector<Finding>& findings);

std::vector<Finding> lint_powershell(std::string_view script);
std::vector<Finding> lint_cmd(std::string_view script);

// The value of a PowerShell single-quoted string literal at the start of `text` (its quotes
// included), as PowerShell reads it; nullopt when it is not one or is unterminated. The four
// typographic apostrophes delimit too, and two quote characters in a row stand for the second.
std::optional<std::string> read_ps_single_quoted(std::string_view text, std::size_t* length = nullptr);

// `$Name = '<literal>'` assignments at the start of a line, decoded: name -> value.
std::map<std::string, std::string> ps_literal_assignments(std::string_view script);

}  // namespace script_lint
