#pragma once
// HTTP requests as the archives area makes them, for the areas above: through the proxy the
// environment names for the URL.
#include <cstdint>
#include <string>

#include "net/download.hpp"
#include "util/env.hpp"
#include "util/result.hpp"

namespace core {

// A request for `url` through the environment's proxy (none without an environment).
net::Request http_request(const std::string& url, const util::Env* env);

// The body at `url`, at most `limit` bytes. Errors: those of net::download; invalid when the body
// is longer than `limit`.
util::Result<std::string> http_text(const std::string& url, std::uint64_t limit, const util::Env* env);

}  // namespace core
