#pragma once
// HTTP(S), FTP and file:// downloads: through libcurl on Linux (download.cpp, the only file that
// includes <curl/curl.h>) and WinHTTP on Windows (download_winhttp.cpp). One call is one transfer attempt: retries, resumption policy and
// where the bytes go are the caller's decisions, and so is the proxy: libcurl is told it (or told there is none), so that it never reads
// the process environment itself.
//
// The same call makes the other requests of an HTTP API (an OCI registry's): another method, extra
// headers, a body read from the caller, the response's headers, and (fail_on_error = false) every
// status handed to the sink so that the caller reads the error body and WWW-Authenticate itself.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/result.hpp"

namespace net {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string url;
  std::uint64_t offset = 0;  // resume: ask for bytes offset.. (HTTP "Range: bytes=N-")
  long connect_timeout_s = 30;
  long stall_timeout_s = 60;  // abort (transient) when no byte arrives for this long, the response head included
  // A server that drips (a byte every few seconds) never stalls, so the rate is checked too: from
  // the first body byte on, each rate_window_s must bring at least min_rate * rate_window_s bytes,
  // else the attempt is aborted as too slow (transient: a retry resumes with Range). 0 = no check,
  // which keeps callers that do not set it (small manifests, index pages) as they were.
  std::uint64_t min_rate = 0;  // bytes per second
  long rate_window_s = 60;
  // When set, the attempt is aborted once this time passes, whatever the state of the transfer:
  // the caller's bound on all its attempts (permanent: the same request can only fail again).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::string user_agent = "stackpin";
  std::string proxy;     // "scheme://host:port" for this URL; "" = connect directly
  std::string no_proxy;  // hosts that bypass the proxy (the no_proxy syntax)
  // The request itself: GET unless told, with these headers as given. An "Authorization" header is
  // never sent on to another host or port when the server redirects (a registry's blob storage).
  std::string method = "GET";  // GET, HEAD, POST, PUT, PATCH, DELETE
  Headers headers;
  // A body (PUT, PATCH, POST): `body_length` bytes pulled from `body` (returns the bytes it put in
  // the buffer, at most `size`; 0 before body_length bytes, or more than asked, aborts the
  // request). No body function: an empty body.
  std::function<std::size_t(char* buffer, std::size_t size)> body;
  std::uint64_t body_length = 0;
  // false: every status reaches the sink with its body and headers, and only a failure to get an
  // answer is an error; true: HTTP errors (>= 400) are errors and their bodies never reach the sink
  bool fail_on_error = true;
  bool follow_redirects = true;  // false: a 3xx reaches the sink (with fail_on_error = false) or is an error
  // A PEM bundle that replaces the system's CA certificates (SSL_CERT_FILE); "" = the system's.
  // libcurl only: WinHTTP trusts the Windows certificate store.
  std::string ca_file;
};

// What the server answered, known before the first body byte is delivered.
struct Response {
  long status = 0;                      // HTTP status; 0 for file://
  bool range_honoured = false;          // offset > 0 and the body starts at offset (206, or file://)
  std::optional<std::uint64_t> length;  // body length the server announced, if any
  std::uint64_t bytes = 0;              // body bytes delivered to the sink in this attempt
  std::string effective_url;
  Headers headers;  // the last response's headers (after redirects), names in lower case, values trimmed
  // The value of header `name` (lower case), the first if it is repeated.
  std::optional<std::string> header(const std::string& name) const;
};

// Seconds to wait that a Retry-After value asks for (delay-seconds, or an HTTP-date measured from
// `now_unix`); nullopt when it is neither.
std::optional<long> retry_after_seconds(const std::string& value, long long now_unix);

// Receives the body. `start` is called once, before the first byte (or at the end of an empty
// body), with the response head: a receiver that asked for a range must restart from zero when
// range_honoured is false. Either returning false aborts the transfer.
struct Sink {
  std::function<bool(const Response& head)> start;
  std::function<bool(const char* data, std::size_t size)> data;
};

// Called as bytes arrive: body bytes received so far in this attempt and the announced length.
using Progress = std::function<void(std::uint64_t received, std::optional<std::uint64_t> length)>;

// Which of the request's limits ended an attempt: none, stall_timeout_s of silence, a rate window
// below min_rate, or the deadline.
enum class Limit { none, stall, rate, deadline };

// One attempt's outcome. `error` is set on failure, and `transient` says whether trying again may
// succeed (connection refused or reset, timeouts, stalls and a transfer below min_rate, a cut
// transfer, HTTP 5xx and 429); HTTP 4xx, TLS failures, malformed URLs, the deadline and an abort by
// the sink are permanent. `response` holds what was received even on failure (bytes already
// delivered, the status).
struct Attempt {
  Response response;
  std::optional<util::Error> error;
  bool transient = false;
  bool aborted_by_sink = false;
  Limit limit = Limit::none;  // set when one of the request's limits aborted the attempt
};

// Runs one transfer. Error codes: not_found (HTTP 404/410, missing file://), io (everything else:
// network, TLS, HTTP errors, aborted), usage (malformed URL, unsupported scheme).
Attempt attempt(const Request& req, const Sink& sink, const Progress& progress = {});

// attempt() as a Result, for callers that do not retry.
util::Result<Response> download(const Request& req, const Sink& sink, const Progress& progress = {});

// The transport's version ("libcurl/7.88.1 OpenSSL/3.0.x ...", "WinHTTP (Windows 10.0.19045)").
std::string transport_version_text();

}  // namespace net
