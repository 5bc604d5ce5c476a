// The PowerShell tokenizer follows the language's rules for what matters here: single-quoted
// strings ('' and the typographic apostrophes), expandable strings ("" and `" escapes, the
// typographic double quotes, $( ) subexpressions that hold code with strings of their own,
// ${braced} names), here-strings (@' '@ and @" "@, their terminator at the start of a line), line
// comments and <# #> block comments. It is not a parser: it walks the text once with a stack of
// contexts and reports what PowerShell itself would refuse or misread.
#include "script_lint.hpp"

#include <algorithm>
#include <cctype>

namespace script_lint {

namespace {

// The UTF-8 length of a PowerShell quote character at s[i]: ' or ‘ ’ ‚ ‛ (single), " or “ ” „ (double).
std::size_t quote_at(std::string_view s, std::size_t i, bool single) {
  if (i >= s.size()) return 0;
  if (s[i] == (single ? '\'' : '"')) return 1;
  if (i + 2 < s.size() && static_cast<unsigned char>(s[i]) == 0xE2 && static_cast<unsigned char>(s[i + 1]) == 0x80) {
    auto t = static_cast<unsigned char>(s[i + 2]);
    if (single ? (t >= 0x98 && t <= 0x9B) : (t >= 0x9C && t <= 0x9E)) return 3;
  }
  return 0;
}

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Scopes and drives that may follow $ with a colon: $env:Path, $script:x, ...
bool qualifier(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* q : {"env", "global", "local", "script", "private", "using", "variable", "function", "alias", "workflow"})
    if (name == q) return true;
  return false;
}

struct Lexer {
  std::string_view s;
  std::size_t i = 0;
  int line = 1;
  std::vector<Finding> out;

  void add(const std::string& kind, std::size_t at, std::size_t len) {
    int ln = 1;
    for (std::size_t k = 0; k < at && k < s.size(); ++k)
      if (s[k] == '\n') ++ln;
    out.push_back({ln, kind, std::string(s.substr(at, std::min<std::size_t>(len, 80)))});
  }
  bool at_line_start(std::size_t k) const { return k == 0 || s[k - 1] == '\n'; }

  // code until `closer` (')' of a subexpression, or end of text when 0); returns false at EOF when a closer was expected
  bool code(char closer) {
    int depth = 0;
    while (i < s.size()) {
      char c = s[i];
      if (std::size_t q = quote_at(s, i, true)) {
        single_quoted(q);
        continue;
      }
      if (std::size_t q = quote_at(s, i, false)) {
        double_quoted(q);
        continue;
      }
      if (c == '@' && i + 1 < s.size() && (s[i + 1] == '\'' || s[i + 1] == '"') && i + 2 < s.size() &&
          (s[i + 2] == '\n' || s[i + 2] == '\r')) {
        here_string(s[i + 1]);
        continue;
      }
      if (c == '<' && i + 1 < s.size() && s[i + 1] == '#') {
        std::size_t start = i;
        auto end = s.find("#>", i + 2);
        if (end == std::string_view::npos) {
          add("unterminated", start, 20);
          i = s.size();
          return closer == 0;
        }
        i = end + 2;
        continue;
      }
      if (c == '#') {
        auto end = s.find('\n', i);
        i = end == std::string_view::npos ? s.size() : end;
        continue;
      }
      if (c == '`') {
        i += 2;
        continue;
      }
      if (c == '-' && i + 12 <= s.size()) {
        std::string word(s.substr(i, 12));
        std::transform(word.begin(), word.end(), word.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        if (word == "-literalpath" && (i + 12 == s.size() || !name_char(s[i + 12]))) {
          literal_path_argument(i);
          continue;
        }
      }
      if (c == '(' || c == '{' || c == '[') ++depth;
      if (c == ')' || c == '}' || c == ']') {
        if (depth == 0 && c == closer) {
          ++i;
          return true;
        }
        --depth;
      }
      ++i;
    }
    return closer == 0;
  }

  void single_quoted(std::size_t q) {
    std::size_t start = i;
    i += q;
    while (i < s.size()) {
      if (std::size_t a = quote_at(s, i, true)) {
        if (std::size_t b = quote_at(s, i + a, true)) {
          i += a + b;
          continue;
        }
        i += a;
        return;
      }
      ++i;
    }
    add("unterminated", start, 40);
  }

  void double_quoted(std::size_t q) {
    std::size_t start = i;
    i += q;
    while (i < s.size()) {
      if (std::size_t a = quote_at(s, i, false)) {
        if (std::size_t b = quote_at(s, i + a, false)) {
          i += a + b;
          continue;
        }
        i += a;
        return;
      }
      if (s[i] == '`') {
        i += 2;
        continue;
      }
      if (s[i] == '$') {
        variable_in_string();
        continue;
      }
      ++i;
    }
    add("unterminated", start, 40);
  }

  // at '$' inside an expandable string
  void variable_in_string() {
    std::size_t start = i;
    ++i;
    if (i >= s.size()) return;
    if (s[i] == '(') {
      ++i;
      if (!code(')')) add("unterminated", start, 40);
      return;
    }
    if (s[i] == '{') {
      auto end = s.find('}', i);
      i = end == std::string_view::npos ? s.size() : end + 1;
      return;
    }
    std::size_t n0 = i;
    while (i < s.size() && name_char(s[i])) ++i;
    if (i == n0) return;  // a lone $, or $$, $?, $^: literal or automatic
    std::string name(s.substr(n0, i - n0));
    if (i < s.size() && s[i] == ':') {
      if (!qualifier(name)) add("drive-variable", start, i - start + 1);
      ++i;
      while (i < s.size() && name_char(s[i])) ++i;
    }
  }

  void here_string(char kind) {
    std::size_t start = i;
    i += 2;
    std::string closing = std::string(1, kind) + "@";
    while (i < s.size()) {
      if (at_line_start(i) && s.substr(i, 2) == closing) {
        i += 2;
        return;
      }
      if (kind == '"' && s[i] == '`') {
        i += 2;
        continue;
      }
      if (kind == '"' && s[i] == '$') {
        variable_in_string();
        continue;
      }
      ++i;
    }
    add("unterminated", start, 20);
  }

  // the argument after -LiteralPath: a parenthesized expression or one word
  void literal_path_argument(std::size_t at) {
    i += 12;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t arg = i;
    if (i < s.size() && s[i] == '(') {
      ++i;
      code(')');
    } else {
      while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) && s[i] != ')' && s[i] != ';') {
        if (std::size_t q = quote_at(s, i, true))
          single_quoted(q);
        else if (std::size_t q2 = quote_at(s, i, false))
          double_quoted(q2);
        else
          ++i;
      }
    }
    std::string_view text = s.substr(arg, i - arg);
    // a wildcard inside a string literal of the argument
    for (std::size_t k = 0; k < text.size(); ++k) {
      char c = text[k];
      if (c != '\'' && c != '"') continue;
      auto end = text.find(c, k + 1);
      if (end == std::string_view::npos) break;
      std::string_view lit = text.substr(k + 1, end - k - 1);
      if (lit.find_first_of("*?") != std::string_view::npos) add("literalpath-glob", at, i - at);
      k = end;
    }
  }
};

}  // namespace

std::string describe(const std::vector<Finding>& findings) {
  std::string out;
  for (const auto& f : findings) out += "  line " + std::to_string(f.line) + ": " + f.kind + ": " + f.text + "\n";
  return out;
}

std::vector<Finding> lint_powershell(std::string_view script) {
  Lexer lx;
  std::vector<Finding> out;
  if (script.substr(0, 3) != "\xEF\xBB\xBF")
    out.push_back({1, "no-bom", std::string(script.substr(0, 20))});
  else
    script.remove_prefix(3);
  lx.s = script;
  lx.code(0);
  out.insert(out.end(), lx.out.begin(), lx.out.end());
  return out;
}

std::vector<Finding> lint_cmd(std::string_view script) {
  std::vector<Finding> out;
  int line = 0;
  bool chcp_set = false, restored = false;
  std::size_t pos = 0;
  while (pos <= script.size()) {
    auto end = script.find('\n', pos);
    std::string_view l = script.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    ++line;
    if (l.find("chcp 65001") != std::string_view::npos) chcp_set = true;
    if (chcp_set && l.find("chcp") != std::string_view::npos && l.find("STACKPIN_CODEPAGE") != std::string_view::npos &&
        l.find("65001") == std::string_view::npos)
      restored = true;
    bool ascii = std::all_of(l.begin(), l.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (!ascii && !chcp_set) out.push_back({line, "cmd-codepage", std::string(l.substr(0, 80))});
    // inside "..." a % must be %% or start %NAME% / %%NAME% (variables the script uses)
    bool quoted = false;
    for (std::size_t k = 0; k < l.size(); ++k) {
      if (l[k] == '"') quoted = !quoted;
      if (!quoted || l[k] != '%') continue;
      if (k + 1 < l.size() && l[k + 1] == '%') {
        ++k;
        continue;
      }
      auto close = l.find('%', k + 1);
      std::string_view name = close == std::string_view::npos ? std::string_view() : l.substr(k + 1, close - k - 1);
      bool var = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '~' || c == ',' || c == '-' || c == ';' ||
               c == '=' || c == '\\';
      });
      if (!var)
        out.push_back({line, "cmd-percent", std::string(l.substr(0, 80))});
      else
        k = close;
    }
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  if (chcp_set && !restored) out.push_back({line, "cmd-codepage", "chcp 65001 without the original code page restored"});
  return out;
}

std::optional<std::string> read_ps_single_quoted(std::string_view text, std::size_t* length) {
  std::size_t q = quote_at(text, 0, true);
  if (!q) return std::nullopt;
  std::string out;
  std::size_t i = q;
  while (i < text.size()) {
    if (std::size_t a = quote_at(text, i, true)) {
      if (std::size_t b = quote_at(text, i + a, true)) {
        out.append(text.substr(i + a, b));
        i += a + b;
        continue;
      }
      if (length) *length = i + a;
      return out;
    }
    out += text[i++];
  }
  return std::nullopt;
}

std::map<std::string, std::string> ps_literal_assignments(std::string_view script) {
  std::map<std::string, std::string> out;
  std::size_t pos = 0;
  while (pos < script.size()) {
    auto end = script.find('\n', pos);
    std::string_view l = script.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    if (!l.empty() && l[0] == '$') {
      std::size_t n = 1;
      while (n < l.size() && name_char(l[n])) ++n;
      std::string name(l.substr(1, n - 1));
      if (l.substr(n, 3) == " = ")
        if (auto v = read_ps_single_quoted(script.substr(pos + n + 3))) out[name] = *v;
    }
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return out;
}

}  // namespace script_lint
