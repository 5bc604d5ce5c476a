// Every quoting function on arbitrary strings, read back by the real consumer wherever it runs
// here: POSIX sh (dash) for sh_quote; Python 3 for py_quote (ast.literal_eval), toml_quote
// (tomllib), yaml_quote (PyYAML) and json_quote (json). Consumers run in batches (one process per
// few hundred inputs, not one per input). PowerShell, cmd and the Dockerfile builder do not run
// here: their quoting is read back by decoders written from the languages' rules (PowerShell's
// single-quoted strings, including its four typographic apostrophes; cmd's "%%" inside quotes;
// a Dockerfile's double-quoted words, where '\' escapes '"', '$' and '\'). A string that does not
// come back is written to quote-roundtrip-<n>.txt (in $STACKPIN_FUZZ_ARTIFACTS, else the current
// directory) before the target aborts, since the batch may have moved past the input at fault.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "gen/manifest_toml.hpp"
#include "gen/quote.hpp"
#include "util/strings.hpp"

namespace {
namespace fs = std::filesystem;

const char* k_python = R"PY(
import ast, json, struct, sys, tomllib, yaml
data = open(sys.argv[1], 'rb').read()
out = open(sys.argv[2], 'wb')
i = 0
while i < len(data):
    kind = chr(data[i]); n = struct.unpack('<Q', data[i + 1:i + 9])[0]; text = data[i + 9:i + 9 + n].decode('utf-8'); i += 9 + n
    try:
        if kind == 'p': v = ast.literal_eval(text)
        elif kind == 't': v = tomllib.loads('v = ' + text)['v']
        elif kind == 'y': v = yaml.safe_load('v: ' + text)['v']
        else: v = json.loads(text)
        b = v.encode('utf-8', 'surrogatepass'); out.write(b'o' + struct.pack('<Q', len(b)) + b)
    except Exception as e:
        b = repr(e).encode('utf-8', 'replace'); out.write(b'e' + struct.pack('<Q', len(b)) + b)
)PY";

std::string python() {
  for (const char* p : {"/usr/bin/python3", "/usr/local/bin/python3"})
    if (::access(p, X_OK) == 0) return p;
  return "";
}

[[noreturn]] void keep_and_fail(const std::string& original, const std::string& what) {
  static int n = 0;
  const char* dir = std::getenv("STACKPIN_FUZZ_ARTIFACTS");
  fs::path p = fs::path(dir && *dir ? dir : ".") / ("quote-roundtrip-" + std::to_string(::getpid()) + "-" + std::to_string(++n) + ".txt");
  fuzz::write_file(p, original);
  fuzz::fail(what + " (the string is in " + p.string() + ")");
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct Batch {
  std::vector<std::string> sh;                         // originals, for sh_quote
  std::vector<std::pair<char, std::string>> py_kinds;  // (kind, original)
  std::string py_input;
  // the scratch root first, so that it outlives this batch (statics end in reverse order) and the
  // last flush, at exit, still has it
  Batch() : py(python()) { (void)fuzz::scratch_root(); }
  const std::string py;  // a member, not a function's static: it must outlive the last flush at exit
  ~Batch() { flush(); }

  void flush() {
    flush_sh();
    flush_python();
  }

  void flush_sh() {
    if (sh.empty()) return;
    auto dir = fuzz::scratch_root();
    std::string script = "printf '%s\\000'";
    for (const auto& s : sh) script += " " + gen::sh_quote(s);
    script += "\n";
    fuzz::write_file(dir / "quote.sh", script);
    std::string cmd = "/bin/sh " + (dir / "quote.sh").string() + " > " + (dir / "quote.sh.out").string();
    if (std::system(cmd.c_str()) != 0) fuzz::fail("sh could not run the quoted words");
    std::string out = slurp(dir / "quote.sh.out");
    std::size_t at = 0;
    for (const auto& s : sh) {
      auto end = out.find('\0', at);
      if (end == std::string::npos) keep_and_fail(s, "sh printed fewer words than it was given");
      if (out.compare(at, end - at, s) != 0) keep_and_fail(s, "sh read sh_quote's word back as another string");
      at = end + 1;
    }
    sh.clear();
  }

  void flush_python() {
    if (py_kinds.empty()) return;
    if (py.empty()) {
      py_kinds.clear();
      py_input.clear();
      return;
    }
    auto dir = fuzz::scratch_root();
    fuzz::write_file(dir / "quote.py", k_python);
    fuzz::write_file(dir / "quote.in", py_input);
    std::string cmd = py + " " + (dir / "quote.py").string() + " " + (dir / "quote.in").string() + " " + (dir / "quote.out").string();
    if (std::system(cmd.c_str()) != 0) fuzz::fail("python3 (with tomllib and yaml) could not run the check");
    std::string out = slurp(dir / "quote.out");
    std::size_t at = 0;
    for (const auto& [kind, original] : py_kinds) {
      if (at + 9 > out.size()) keep_and_fail(original, "python3 answered fewer values than it was given");
      char status = out[at];
      std::uint64_t n = 0;
      for (int k = 7; k >= 0; --k) n = (n << 8) | static_cast<unsigned char>(out[at + 1 + k]);
      std::string value = out.substr(at + 9, n);
      at += 9 + n;
      const char* name = kind == 'p'   ? "py_quote (ast.literal_eval)"
                         : kind == 't' ? "toml_quote (tomllib)"
                         : kind == 'y' ? "yaml_quote (PyYAML)"
                                       : "json_quote (json)";
      if (status != 'o') keep_and_fail(original, std::string(name) + " gave text the consumer refuses: " + value);
      if (value != original) keep_and_fail(original, std::string(name) + " reads back as another string");
    }
    py_kinds.clear();
    py_input.clear();
  }

  void python_check(char kind, const std::string& original, const std::string& quoted) {
    py_kinds.emplace_back(kind, original);
    py_input += kind;
    std::uint64_t n = quoted.size();
    for (int k = 0; k < 8; ++k) py_input += static_cast<char>((n >> (8 * k)) & 0xFF);
    py_input += quoted;
  }
};

// PowerShell: a single-quoted string is delimited by any of ' U+2018 U+2019 U+201A U+201B, and
// two of them in a row stand for the second one (the tokenizer's ScanStringLiteral).
bool ps_quote_char(std::string_view s, std::size_t i, std::size_t& len) {
  if (s[i] == '\'') {
    len = 1;
    return true;
  }
  if (i + 2 < s.size() && static_cast<unsigned char>(s[i]) == 0xE2 && static_cast<unsigned char>(s[i + 1]) == 0x80) {
    auto t = static_cast<unsigned char>(s[i + 2]);
    if (t >= 0x98 && t <= 0x9B) {
      len = 3;
      return true;
    }
  }
  return false;
}

std::optional<std::string> ps_read(std::string_view q) {
  std::size_t len = 0;
  if (q.empty() || !ps_quote_char(q, 0, len)) return std::nullopt;
  std::string out;
  std::size_t i = len;
  while (i < q.size()) {
    std::size_t l1 = 0, l2 = 0;
    if (ps_quote_char(q, i, l1)) {
      if (i + l1 < q.size() && ps_quote_char(q, i + l1, l2)) {
        out.append(q.substr(i + l1, l2));
        i += l1 + l2;
        continue;
      }
      return i + l1 == q.size() ? std::optional<std::string>(out) : std::nullopt;  // the closing quote must end it
    }
    out += q[i++];
  }
  return std::nullopt;  // unterminated
}

// cmd inside "...": %% is one %, a lone % would start a variable; no " and no line break inside.
std::optional<std::string> cmd_read(std::string_view q) {
  if (q.size() < 2 || q.front() != '"' || q.back() != '"') return std::nullopt;
  std::string out;
  for (std::size_t i = 1; i + 1 < q.size(); ++i) {
    char c = q[i];
    if (c == '"' || c == '\n' || c == '\r') return std::nullopt;
    if (c == '%') {
      if (i + 2 >= q.size() || q[i + 1] != '%') return std::nullopt;
      ++i;
    }
    out += c;
  }
  return out;
}

// A Dockerfile double-quoted word as the builder reads it: '\' before '"', '$' or '\' stands for
// that character (other backslashes stay), an unescaped '$' would expand a variable, an unescaped
// '"' ends the word. nullopt where the word is not one closed, expansion-free string.
std::optional<std::string> dockerfile_read(const std::string& q) {
  if (q.size() < 2 || q.front() != '"' || q.back() != '"') return std::nullopt;
  std::string out;
  for (std::size_t i = 1; i + 1 < q.size(); ++i) {
    char c = q[i];
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return std::nullopt;  // an instruction is one line
    if (c == '\\' && i + 2 < q.size() && (q[i + 1] == '"' || q[i + 1] == '$' || q[i + 1] == '\\')) {
      out += q[++i];
      continue;
    }
    if (c == '\\' && i + 2 == q.size()) return std::nullopt;  // it would escape the closing quote
    if (c == '"' || c == '$') return std::nullopt;
    out += c;
  }
  return out;
}

// What a label can hold of `s`: control characters become spaces.
std::string one_line(std::string s) {
  for (auto& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Batch batch;
  std::string s(fuzz::as_text(data, size));
  if (s.find('\0') == std::string::npos) batch.sh.push_back(s);  // a shell word cannot hold NUL

  auto docker = dockerfile_read(gen::dockerfile_quote(s));
  if (!docker || *docker != one_line(s))
    keep_and_fail(s, "the Dockerfile builder would read dockerfile_quote's word back as another string");

  auto ps = ps_read(gen::ps_quote(s));
  if (!ps || *ps != s) keep_and_fail(s, "PowerShell would read ps_quote's string back as another string");
  if (auto c = gen::cmd_quote(s)) {
    auto back = cmd_read(*c);
    if (!back || *back != s) keep_and_fail(s, "cmd would read cmd_quote's string back as another string");
  } else {
    FUZZ_CHECK(s.find_first_of("\"\r\n") != std::string::npos, "cmd_quote refused a string it can hold");
  }
  if (util::is_valid_utf8(s)) {
    batch.python_check('p', s, gen::py_quote(s));
    batch.python_check('t', s, gen::toml_quote(s));
    batch.python_check('y', s, gen::yaml_quote(s));
    batch.python_check('j', s, gen::json_quote(s));
  }
  FUZZ_CHECK(util::is_ascii(gen::py_quote(s)), "py_quote gave non-ASCII text");
  FUZZ_CHECK(gen::yaml_quote(s).find_first_of("\r\n") == std::string::npos, "yaml_quote gave a line break");
  if (batch.sh.size() >= 400 || batch.py_kinds.size() >= 1600) batch.flush();
  return 0;
}
