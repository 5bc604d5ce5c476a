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
// for stackpin alike. Characters outside the Basic Multilingual Plane (a conversion of one
// std::mbrtowc call gives one UTF-16 unit) are refused as invalid sequences, not mangled.
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
#include <cwchar>

#include "util/env.hpp"
#include "util/strings.hpp"

namespace {

constexpr std::size_t k_invalid = static_cast<std::size_t>(-1);
constexpr std::size_t k_incomplete = static_cast<std::size_t>(-2);

// One UTF-8 sequence of at most `n` bytes at `s` as one UTF-16 unit: the bytes it took (0 for
// NUL), k_incomplete when `n` ends inside it, k_invalid (errno EILSEQ) when it is not UTF-8 or
// needs a surrogate pair.
std::size_t utf8_to_unit(wchar_t* out, const char* s, std::size_t n) {
  if (n == 0) return k_incomplete;
  auto b = [&](std::size_t i) { return static_cast<unsigned>(static_cast<unsigned char>(s[i])); };
  unsigned c = b(0);
  std::size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 0;
  if (len == 0 || (len == 2 && c < 0xC2)) {  // a continuation byte, an overlong lead, or four bytes
    errno = EILSEQ;
    return k_invalid;
  }
  for (std::size_t i = 1; i < len; ++i) {
    if (i >= n) return k_incomplete;
    if ((b(i) & 0xC0) != 0x80) {
      errno = EILSEQ;
      return k_invalid;
    }
  }
  unsigned v = len == 1 ? c : len == 2 ? (c & 0x1F) << 6 | (b(1) & 0x3F) : (c & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
  if ((len == 3 && v < 0x800) || (v >= 0xD800 && v <= 0xDFFF)) {  // overlong, or a surrogate's code
    errno = EILSEQ;
    return k_invalid;
  }
  if (out) *out = static_cast<wchar_t>(v);
  return v == 0 ? 0 : len;
}

std::size_t unit_to_utf8(char* out, wchar_t wc) {
  unsigned v = static_cast<unsigned>(wc);
  if (v >= 0xD800 && v <= 0xDFFF) {  // half of a pair: see the comment at the top
    errno = EILSEQ;
    return k_invalid;
  }
  if (v < 0x80) {
    out[0] = static_cast<char>(v);
    return 1;
  }
  if (v < 0x800) {
    out[0] = static_cast<char>(0xC0 | v >> 6);
    out[1] = static_cast<char>(0x80 | (v & 0x3F));
    return 2;
  }
  out[0] = static_cast<char>(0xE0 | v >> 12);
  out[1] = static_cast<char>(0x80 | ((v >> 6) & 0x3F));
  out[2] = static_cast<char>(0x80 | (v & 0x3F));
  return 3;
}

int utf8_mb_cur_max() { return 3; }

}  // namespace

extern "C" {

std::size_t mbrtowc(wchar_t* pwc, const char* s, std::size_t n, mbstate_t* /*ps*/) {
  if (!s) return 0;
  return utf8_to_unit(pwc, s, n);
}

std::size_t mbrlen(const char* s, std::size_t n, mbstate_t* ps) { return mbrtowc(nullptr, s, n, ps); }

std::size_t mbsrtowcs(wchar_t* dst, const char** src, std::size_t len, mbstate_t* /*ps*/) {
  const char* s = *src;
  std::size_t count = 0;
  for (;;) {
    if (dst && count == len) break;
    wchar_t wc = 0;
    std::size_t k = utf8_to_unit(&wc, s, MB_LEN_MAX);
    if (k == k_invalid || k == k_incomplete) {
      if (dst) *src = s;
      errno = EILSEQ;
      return k_invalid;
    }
    if (dst) dst[count] = wc;
    if (k == 0) {
      if (dst) *src = nullptr;
      return count;
    }
    s += k;
    ++count;
  }
  *src = s;
  return count;
}

std::size_t wcrtomb(char* s, wchar_t wc, mbstate_t* /*ps*/) {
  char buf[MB_LEN_MAX];
  return unit_to_utf8(s ? s : buf, s ? wc : L'\0');
}

std::size_t wcsrtombs(char* dst, const wchar_t** src, std::size_t len, mbstate_t* /*ps*/) {
  const wchar_t* w = *src;
  std::size_t count = 0;
  for (;; ++w) {
    char buf[MB_LEN_MAX];
    std::size_t k = unit_to_utf8(buf, *w);
    if (k == k_invalid) {
      if (dst) *src = w;
      return k_invalid;
    }
    if (*w == L'\0') {
      if (dst) {
        if (count < len) dst[count] = '\0';
        *src = nullptr;
      }
      return count;
    }
    if (dst) {
      if (count + k > len) break;
      for (std::size_t i = 0; i < k; ++i) dst[count + i] = buf[i];
    }
    count += k;
  }
  *src = w;
  return count;
}

// MB_CUR_MAX reads ___mb_cur_max_func() through its import pointer; the C++ runtime sizes its
// conversion buffers by it, so it must say three bytes per UTF-16 unit.
// (the C headers declare it imported from msvcrt.dll: here it is defined instead, on purpose)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wattributes"
int ___mb_cur_max_func(void) { return utf8_mb_cur_max(); }
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
