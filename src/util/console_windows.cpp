// The process's entry on Windows, and the C runtime's multibyte conversions in UTF-8.
//
// stackpin's strings are UTF-8 on every platform. On Windows the arguments come from the wide
// command line and the console is switched to UTF-8 output. The C++ runtime converts between a
// std::filesystem::path (UTF-16) and std::string through the C runtime's mbrtowc and wcrtomb,
// which msvcrt lacks and mingw-w64 supplies statically for the ANSI code page only (one- and
// two-byte code pages: not UTF-8). Left so, a user folder named in Chinese is created under the
// bytes of its UTF-8 name read as Latin-1, and a path outside Latin-1 read from the file system
// cannot be turned into a string at all. This file gives the program UTF-8 versions of those
// functions and a MB_CUR_MAX that says so, which is what the UCRT does under a UTF-8 locale: with
// static linking the linker takes them instead of the runtime library's, for the C++ runtime and
// for stackpin alike. A character outside the Basic Multilingual Plane (an emoji in a folder
// name) is a surrogate pair in UTF-16, carried across two calls in the conversion state.
//
// The definitions live beside prepare_console(), which main() calls, so that the linker always
// takes this object from the library.
#include <windows.h>
// after windows.h
#include <io.h>
#include <shellapi.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <cwchar>

#include "util/env.hpp"
#include "util/strings.hpp"

namespace {

constexpr std::size_t k_invalid = static_cast<std::size_t>(-1);
constexpr std::size_t k_incomplete = static_cast<std::size_t>(-2);

std::size_t invalid() {
  errno = EILSEQ;
  return k_invalid;
}

// One UTF-8 sequence of at most `n` bytes at `s`: the bytes it takes (1 to 4) with its code point
// in `cp`, k_incomplete when `n` ends inside it, k_invalid when it is not UTF-8 (a stray
// continuation byte, an overlong form, a surrogate's code, past U+10FFFF).
std::size_t decode(const char* s, std::size_t n, unsigned& cp) {
  if (n == 0) return k_incomplete;
  auto b = [&](std::size_t i) { return static_cast<unsigned>(static_cast<unsigned char>(s[i])); };
  const unsigned c = b(0);
  const std::size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (len == 0 || (len == 2 && c < 0xC2)) return invalid();
  for (std::size_t i = 1; i < len; ++i) {
    if (i >= n) return k_incomplete;
    if ((b(i) & 0xC0) != 0x80) return invalid();
  }
  unsigned v = len == 1 ? c : c & (0x7F >> len);
  for (std::size_t i = 1; i < len; ++i) v = v << 6 | (b(i) & 0x3F);
  if ((len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10FFFF)) || (v >= 0xD800 && v <= 0xDFFF)) return invalid();
  cp = v;
  return len;
}

// A code point as UTF-8 into `out` (room for 4): the bytes written.
std::size_t encode(char* out, unsigned v) {
  if (v < 0x80) {
    out[0] = static_cast<char>(v);
    return 1;
  }
  if (v < 0x800) {
    out[0] = static_cast<char>(0xC0 | v >> 6);
    out[1] = static_cast<char>(0x80 | (v & 0x3F));
    return 2;
  }
  if (v < 0x10000) {
    out[0] = static_cast<char>(0xE0 | v >> 12);
    out[1] = static_cast<char>(0x80 | ((v >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (v & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | v >> 18);
  out[1] = static_cast<char>(0x80 | ((v >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((v >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (v & 0x3F));
  return 4;
}

bool high_surrogate(unsigned u) { return u >= 0xD800 && u <= 0xDBFF; }
bool low_surrogate(unsigned u) { return u >= 0xDC00 && u <= 0xDFFF; }

// The half of a surrogate pair that one call leaves for the next, in the caller's mbstate_t (zero:
// none): mbrtowc keeps the low half it still owes, wcrtomb the high half it was given.
static_assert(sizeof(mbstate_t) >= sizeof(unsigned));
unsigned pending(const mbstate_t* ps) {
  unsigned v = 0;
  std::memcpy(&v, ps, sizeof v);
  return v;
}
void set_pending(mbstate_t* ps, unsigned v) { std::memcpy(ps, &v, sizeof v); }

mbstate_t own_mbrtowc_state{}, own_wcrtomb_state{};  // for callers that pass no state

}  // namespace

extern "C" {

// A character outside the BMP is two UTF-16 units: the first call takes the first three bytes of
// its four and gives the high surrogate, keeping the low one in the state; the next call takes the
// fourth byte and gives it. So each call gives one unit for the bytes it takes, as the C++
// runtime's conversion loop expects.
std::size_t mbrtowc(wchar_t* pwc, const char* s, std::size_t n, mbstate_t* ps) {
  if (!ps) ps = &own_mbrtowc_state;
  if (!s) {
    set_pending(ps, 0);
    return 0;
  }
  if (unsigned low = pending(ps)) {
    if (n == 0) return k_incomplete;
    set_pending(ps, 0);
    if ((static_cast<unsigned char>(s[0]) & 0xC0) != 0x80) return invalid();
    if (pwc) *pwc = static_cast<wchar_t>(low);
    return 1;
  }
  unsigned cp = 0;
  std::size_t k = decode(s, n, cp);
  if (k == k_invalid || k == k_incomplete) return k;
  if (cp >= 0x10000) {
    if (pwc) *pwc = static_cast<wchar_t>(0xD800 + ((cp - 0x10000) >> 10));
    set_pending(ps, 0xDC00 + ((cp - 0x10000) & 0x3FF));
    return 3;
  }
  if (pwc) *pwc = static_cast<wchar_t>(cp);
  return cp == 0 ? 0 : k;
}

std::size_t mbrlen(const char* s, std::size_t n, mbstate_t* ps) { return mbrtowc(nullptr, s, n, ps); }

std::size_t mbsrtowcs(wchar_t* dst, const char** src, std::size_t len, mbstate_t* /*ps*/) {
  const char* s = *src;
  std::size_t count = 0;
  for (;;) {
    unsigned cp = 0;
    std::size_t k = decode(s, MB_LEN_MAX, cp);
    if (k == k_invalid || k == k_incomplete) {
      if (dst) *src = s;
      return invalid();
    }
    const std::size_t units = cp >= 0x10000 ? 2 : 1;
    if (dst && count + units > len) break;
    if (dst && units == 2) {
      dst[count] = static_cast<wchar_t>(0xD800 + ((cp - 0x10000) >> 10));
      dst[count + 1] = static_cast<wchar_t>(0xDC00 + ((cp - 0x10000) & 0x3FF));
    } else if (dst) {
      dst[count] = static_cast<wchar_t>(cp);
    }
    if (cp == 0) {
      if (dst) *src = nullptr;
      return count;
    }
    s += k;
    count += units;
  }
  *src = s;
  return count;
}

// The other way: a high surrogate gives no bytes and is kept in the state; the low one that
// follows gives the character's four.
std::size_t wcrtomb(char* s, wchar_t wc, mbstate_t* ps) {
  if (!ps) ps = &own_wcrtomb_state;
  char buf[MB_LEN_MAX];
  if (!s) {
    set_pending(ps, 0);
    s = buf;
    wc = L'\0';
  }
  const auto u = static_cast<unsigned>(wc);
  if (unsigned high = pending(ps)) {
    set_pending(ps, 0);
    if (!low_surrogate(u)) return invalid();
    return encode(s, 0x10000 + ((high - 0xD800) << 10) + (u - 0xDC00));
  }
  if (high_surrogate(u)) {
    set_pending(ps, u);
    return 0;
  }
  if (low_surrogate(u)) return invalid();
  return encode(s, u);
}

std::size_t wcsrtombs(char* dst, const wchar_t** src, std::size_t len, mbstate_t* /*ps*/) {
  const wchar_t* w = *src;
  std::size_t count = 0;
  for (;;) {
    auto u = static_cast<unsigned>(w[0]);
    std::size_t units = 1;
    if (high_surrogate(u) && low_surrogate(static_cast<unsigned>(w[1]))) {
      u = 0x10000 + ((u - 0xD800) << 10) + (static_cast<unsigned>(w[1]) - 0xDC00);
      units = 2;
    } else if (high_surrogate(u) || low_surrogate(u)) {
      if (dst) *src = w;
      return invalid();
    }
    if (u == 0) {
      if (dst) {
        if (count < len) dst[count] = '\0';
        *src = nullptr;
      }
      return count;
    }
    char buf[4];
    std::size_t k = encode(buf, u);
    if (dst) {
      if (count + k > len) break;
      std::memcpy(dst + count, buf, k);
    }
    count += k;
    w += units;
  }
  *src = w;
  return count;
}

// MB_CUR_MAX reads ___mb_cur_max_func() through its import pointer; the C++ runtime sizes its
// conversion buffers by it. Four: the most one wcrtomb call writes (the low half of a pair).
// (the C headers declare it imported from msvcrt.dll: here it is defined instead, on purpose)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wattributes"
int ___mb_cur_max_func(void) { return 4; }
#pragma GCC diagnostic pop
int (*__imp____mb_cur_max_func)(void) = &___mb_cur_max_func;

}  // extern "C"

namespace util {

std::vector<std::string> program_arguments(int argc, char** argv) {
  // argv is the ANSI code page's rendering of the command line; the wide one is what was typed
  int n = 0;
  wchar_t** w = CommandLineToArgvW(GetCommandLineW(), &n);
  if (!w) return std::vector<std::string>(argv + (argc > 0 ? 1 : 0), argv + argc);
  std::vector<std::string> out;
  for (int i = 1; i < n; ++i) out.push_back(utf16_to_utf8(reinterpret_cast<const char16_t*>(w[i])));
  LocalFree(w);
  return out;
}

bool is_terminal(int stream) { return ::_isatty(stream) != 0; }

void prepare_console() { SetConsoleOutputCP(CP_UTF8); }

}  // namespace util
