#pragma once
// libarchive converts entry names through the current locale; under the C locale it can neither
// decode UTF-8 names when reading (zip entries flagged UTF-8 come back empty) nor encode them when
// writing ("Can't translate pathname to UTF-8"). Reading and writing run under C.UTF-8 on the
// calling thread only, for as long as this object lives.
//
// On Windows libarchive converts the *_utf8 names through the Win32 API (CP_UTF8) whatever the C
// runtime's locale, and the C runtime has no per-thread uselocale: there the object does nothing.
#include <locale.h>

namespace archive_io::detail {

#ifdef _WIN32
class Utf8Locale {
 public:
  Utf8Locale() {}   // NOLINT(modernize-use-equals-default): user-provided, so that a scope
  ~Utf8Locale() {}  // NOLINT(modernize-use-equals-default): holding one is not an unused variable
  Utf8Locale(const Utf8Locale&) = delete;
  Utf8Locale& operator=(const Utf8Locale&) = delete;
};
#else
class Utf8Locale {
 public:
  Utf8Locale() {
    m_loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
    if (m_loc) m_old = uselocale(m_loc);
  }
  ~Utf8Locale() {
    if (m_loc) {
      uselocale(m_old);
      freelocale(m_loc);
    }
  }
  Utf8Locale(const Utf8Locale&) = delete;
  Utf8Locale& operator=(const Utf8Locale&) = delete;

 private:
  locale_t m_loc{}, m_old{};
};
#endif

}  // namespace archive_io::detail
