#pragma once
// What the probe layer's Windows files share: a handle closed on scope exit, and UTF-16 text from
// the API as stackpin's UTF-8. Included only by *_windows.cpp.
#include <windows.h>

#include <string>
#include <string_view>

#include "util/strings.hpp"

namespace probe::windows {

// INVALID_HANDLE_VALUE (CreateFileW's failure) and null (most others') both read as "no handle".
class Handle {
 public:
  Handle() = default;
  explicit Handle(HANDLE v) : h(v == INVALID_HANDLE_VALUE ? nullptr : v) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  void reset() {
    if (h) CloseHandle(h);
    h = nullptr;
  }
  bool ok() const { return h != nullptr; }
  HANDLE h = nullptr;
};

inline std::string utf8(std::wstring_view s) { return util::utf16_to_utf8(std::u16string(s.begin(), s.end())); }

}  // namespace probe::windows
