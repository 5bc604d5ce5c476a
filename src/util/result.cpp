#include "util/result.hpp"

namespace util {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::usage: return "usage";
    case ErrorCode::parse: return "parse";
    case ErrorCode::invalid: return "invalid";
    case ErrorCode::not_found: return "not_found";
    case ErrorCode::io: return "io";
    case ErrorCode::mismatch: return "mismatch";
    case ErrorCode::unsafe: return "unsafe";
    case ErrorCode::conflict: return "conflict";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::internal: return "internal";
  }
  return "internal";
}

}  // namespace util
