#pragma once
// Error values and Result<T>: every expected failure in stackpin travels as an Error, never as an
// exception, so that one renderer (cli) prints it the same way everywhere and --json carries it.
#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace util {

enum class ErrorCode {
  usage,        // the command line is wrong (exit 2)
  parse,        // a file (manifest, lock, data) is malformed; has a location
  invalid,      // a file parses but its contents are not acceptable (missing key for a command, ...)
  not_found,    // a file, archive or key the command needs is absent
  io,           // reading or writing failed (permissions, disk full, read-only)
  mismatch,     // hash, size or content differs from the pin
  unsafe,       // hostile or unsafe input refused (archive escaping its root, ...)
  conflict,     // another run holds the lock, a file changed underneath us
  unsupported,  // valid but not something stackpin can do (unknown layout, platform)
  internal,     // a bug (exit 70)
};

const char* to_string(ErrorCode code);

// Where in a text file an error was found. `excerpt` is the offending line (without newline) so
// that the renderer can show it with a caret without re-reading the file.
struct SourceLocation {
  std::string file;
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based; 0 = unknown
  std::string excerpt;
};

// A location whose excerpt is `line`, cut to a window of at most ~160 bytes around `column` (on
// UTF-8 boundaries, "..." marking each cut, the column moved to match), so that an error in a line
// of megabytes shows the part that matters, once.
SourceLocation make_location(std::string file, int line, int column, const std::string& line_text);

struct Error {
  ErrorCode code = ErrorCode::internal;
  std::string message;                  // one sentence: what is wrong
  std::string context;                  // what stackpin was doing ("reading manifest ...")
  std::optional<SourceLocation> where;  // file:line:col when the error is in a file
  std::vector<std::string> hints;       // what to do about it

  Error() = default;
  Error(ErrorCode c, std::string msg) : code(c), message(std::move(msg)) {}
  Error& with_hint(std::string h) & {
    hints.push_back(std::move(h));
    return *this;
  }
  Error&& with_hint(std::string h) && {
    hints.push_back(std::move(h));
    return std::move(*this);
  }
  Error&& with_context(std::string c) && {
    context = std::move(c);
    return std::move(*this);
  }
  Error&& at(SourceLocation loc) && {
    where = std::move(loc);
    return std::move(*this);
  }
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : m_v(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : m_v(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return m_v.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(m_v);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(m_v);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(m_v));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& {
    assert(!ok());
    return std::get<1>(m_v);
  }
  Error&& error() && {
    assert(!ok());
    return std::get<1>(std::move(m_v));
  }

 private:
  std::variant<T, Error> m_v;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : m_error(std::move(error)) {}
  bool ok() const { return !m_error.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const& {
    assert(!ok());
    return *m_error;
  }
  Error&& error() && {
    assert(!ok());
    return std::move(*m_error);
  }

 private:
  std::optional<Error> m_error;
};

using Status = Result<void>;

}  // namespace util

// Propagating an error to the caller, the one way every function does it:
//   SP_TRY(expr);                   expr gives a Status or a Result<T>; on an error, return it
//   SP_TRY_ASSIGN(auto x, expr);    expr gives a Result<T>; on an error return it, else x = the value
// (macros, since a function cannot return from its caller; each expands to plain statements, no
// compiler extension).
#define SP_CONCAT_INNER(a, b) a##b
#define SP_CONCAT(a, b) SP_CONCAT_INNER(a, b)
#define SP_TRY(expr)                                               \
  do {                                                             \
    auto&& sp_try_status_ = (expr);                                \
    if (!sp_try_status_) return std::move(sp_try_status_).error(); \
  } while (0)
#define SP_TRY_ASSIGN(lhs, expr) SP_TRY_ASSIGN_IMPL(SP_CONCAT(sp_try_result_, __LINE__), lhs, expr)
#define SP_TRY_ASSIGN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                       \
  if (!tmp) return std::move(tmp).error(); \
  lhs = std::move(tmp).value()
