#pragma once
// The one quoting module for generated scripts: every path or value a script embeds goes through
// it. Shells differ: POSIX sh single quotes take everything literally except the quote itself;
// PowerShell single-quoted strings take everything literally ($, backticks) and double the quote;
// cmd has no escape for a double quote inside quotes and expands %VAR% even there; CMake quoted
// arguments expand ${VAR} and take backslash escapes; pkg-config values expand ${var} and split
// arguments at unescaped blanks and quotes.
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace gen {

// A path, platform, image reference, tag, name or label that needs no quoting anywhere a generator
// writes one (shells, YAML, HCL and JSON values, cache entries' comma-separated key=value lists):
// only ASCII letters and digits and . _ - / : @, and not empty.
bool plain_reference(std::string_view s);

// 'it'\''s' : safe for any byte string.
std::string sh_quote(std::string_view s);
// 'it''s' : safe for any string (no expansion of $ or `); the typographic single quotes that
// PowerShell also reads as quotes (U+2018 to U+201B) are doubled like the apostrophe.
std::string ps_quote(std::string_view s);
// 'it\'s \u00e9' : a Python 3 str literal holding `s`, in ASCII only (\\, \', control characters
// and every non-ASCII character escaped), so that it survives any console code page and any
// enclosing script. Bytes that are not UTF-8 become \ufffd (a str holds code points).
std::string py_quote(std::string_view s);
// "C:\Program Files\x" with % doubled (for .cmd/.bat files). Errors (unsupported): a double
// quote, newline or carriage return, which cmd cannot carry inside a quoted argument.
util::Result<std::string> cmd_quote(std::string_view s);

// "C:/x \"q\" \$HOME" : a CMake quoted argument holding `s` literally (\, " and $ escaped; line
// breaks and tabs as \n, \r, \t). A ';' stays a list separator, as it is in any CMake path.
std::string cmake_quote(std::string_view s);
// /opt/a\ b\$c : a pkg-config (.pc) value that pkg-config and pkgconf read back as `s` literally:
// every byte that is not a letter, digit or one of / . _ + , : = @ ^ ~ % - is escaped with a
// backslash (bytes >= 0x80 are kept as they are). Errors (unsupported): a line break, which a .pc
// file cannot hold.
util::Result<std::string> pc_escape(std::string_view s);

// "a \"b\" \u0001" : a JSON string literal holding `s` (", \ and control characters escaped;
// UTF-8 passes through).
std::string json_quote(std::string_view s);
// ["a", "b"]: a JSON array of json_quote'd strings, on one line (also a YAML flow sequence).
std::string json_list(const std::vector<std::string>& items);

// "a: \"b\" #c\n" : a YAML double-quoted scalar that YAML 1.1 and 1.2 parsers (PyYAML, ruamel)
// read back as `s` exactly, on one line, so it is also safe inside a comment. Escaped: \ and ",
// every line break YAML knows (\n, \r, U+0085, U+2028, U+2029), tab, the other C0 and C1 control
// characters, DEL, U+FEFF, U+FFFE and U+FFFF; other UTF-8 passes through. Bytes that are not UTF-8
// (a manifest read by toml++ never has them) become U+FFFD, since YAML text is Unicode.
std::string yaml_quote(std::string_view s);

// "a \"b\" \$HOME" : a Dockerfile double-quoted word (a LABEL or ENV value) that the builder
// reads back as `s`: it expands $VAR there, so '\', '"' and '$' are escaped with '\'. A
// Dockerfile instruction is one line, so line breaks, tabs and the other control characters
// (which no label needs) become spaces.
std::string dockerfile_quote(std::string_view s);

// Text for a comment line of any of these scripts: a line break in a value must not end the
// comment and turn the rest into code, so CR and LF become '?'.
std::string comment_safe(std::string s);

}  // namespace gen
