// One transfer through libcurl's easy interface.
//
// Why it works this way: the caller (core::fetch) owns retries and the partial file, so a
// transfer here is a single attempt that reports, besides the error, whether another attempt may
// succeed. The classification follows what a retry can change: a refused or reset connection, a
// timeout or stall, a cut transfer and HTTP 408/429/5xx may clear up; an HTTP 4xx, a TLS failure
// (certificate, handshake, CA bundle) or a malformed URL will not, and retrying them only delays
// the message the user needs. Resumption uses CURLOPT_RANGE rather than CURLOPT_RESUME_FROM:
// libcurl fails a RESUME_FROM transfer whose server ignores the range, whereas with a plain range
// request the server's 200 reaches the sink, which then starts over from byte zero; the sink learns
// which one happened from Response::range_honoured before the first body byte. FAILONERROR keeps
// error pages out of the sink. The proxy is the caller's (Request::proxy), never the environment.
//
// Slow servers: a stall (no byte for stall_timeout_s) is not the only way a transfer never ends. A
// mirror or proxy that drips one byte every two seconds is never silent for long, so the rate is
// checked as well, over windows of rate_window_s from the first body byte, and the caller may set a
// deadline that bounds the attempt whatever it receives. libcurl's CURLOPT_LOW_SPEED_LIMIT/TIME is
// not used for either: its speed is a moving average over the last few seconds, so a transfer that
// sent a burst and then nothing is caught late; it ends with CURLE_OPERATION_TIMEDOUT, the code of
// every other timeout, so the message could not say how many bytes the window held or which option
// to change; and WinHTTP has nothing like it. The xferinfo callback below measures it all itself.
#include "net/download.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string_view>

namespace net {

namespace {

void global_init() {
  static const bool k_done = [] {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    std::atexit([] { curl_global_cleanup(); });
    return true;
  }();
  (void)k_done;
}

struct Transfer {
  CURL* curl = nullptr;
  const Request* req = nullptr;
  const Sink* sink = nullptr;
  const Progress* progress = nullptr;
  Response response;
  Headers headers;             // of the response being received (a redirect's are dropped at its successor's status line)
  std::uint64_t uploaded = 0;  // body bytes handed to libcurl
  bool body_failed = false;    // the body function gave too few or too many bytes
  bool started = false;
  bool aborted = false;
  Limit limit = Limit::none;  // which limit on_progress aborted the transfer for
  curl_off_t last_now = -1;
  std::chrono::steady_clock::time_point last_data = std::chrono::steady_clock::now();
  // the current rate window: when it began (at the first body byte, then at each window's end) and
  // the body bytes delivered by then
  std::optional<std::chrono::steady_clock::time_point> window_start;
  std::uint64_t window_bytes = 0;
  // what the window that was too slow held, for the message
  std::uint64_t slow_bytes = 0;
  double slow_seconds = 0;
};

// min_rate bytes a second for `window_s` seconds, saturating rather than wrapping for absurd values.
std::uint64_t bytes_due(std::uint64_t min_rate, long window_s) {
  auto w = static_cast<std::uint64_t>(std::max(window_s, 1L));
  return min_rate > std::numeric_limits<std::uint64_t>::max() / w ? std::numeric_limits<std::uint64_t>::max() : min_rate * w;
}

// libcurl calls this at least once a second, also while it connects and waits for the response
// head. It aborts when the deadline has passed, when no byte arrived for stall_timeout_s, and when a
// rate window (which begins at the first body byte, so a slow head is the stall timeout's business)
// ended with fewer than min_rate * rate_window_s bytes: a drip, which the stall check never sees.
int on_progress(void* user, curl_off_t, curl_off_t down, curl_off_t, curl_off_t up) {
  const curl_off_t now = down + up;  // an upload is progress too
  auto& t = *static_cast<Transfer*>(user);
  const Request& req = *t.req;
  auto clock = std::chrono::steady_clock::now();
  if (req.deadline && clock >= *req.deadline) {
    t.limit = Limit::deadline;
    return 1;
  }
  if (now != t.last_now) {
    t.last_now = now;
    t.last_data = clock;
  } else if (clock - t.last_data >= std::chrono::seconds(req.stall_timeout_s)) {
    t.limit = Limit::stall;
    return 1;
  }
  if (req.min_rate == 0 || !t.window_start) return 0;
  const auto window = std::chrono::seconds(std::max(req.rate_window_s, 1L));
  if (clock - *t.window_start < window) return 0;
  std::uint64_t got = t.response.bytes - t.window_bytes;
  if (got < bytes_due(req.min_rate, req.rate_window_s)) {
    t.limit = Limit::rate;
    t.slow_bytes = got;
    t.slow_seconds = std::chrono::duration<double>(clock - *t.window_start).count();
    return 1;
  }
  t.window_start = clock;
  t.window_bytes = t.response.bytes;
  return 0;
}

// "0.5 B/s", "512 B/s": a rate the way the message compares it with --min-rate
std::string rate_text(double bytes_per_s) {
  char buf[64];
  if (bytes_per_s < 100)
    std::snprintf(buf, sizeof buf, "%.1f", bytes_per_s);
  else
    std::snprintf(buf, sizeof buf, "%.0f", bytes_per_s);
  return std::string(buf) + " B/s";
}

bool start(Transfer& t) {
  t.started = true;
  long status = 0;
  curl_easy_getinfo(t.curl, CURLINFO_RESPONSE_CODE, &status);
  curl_off_t length = -1;
  curl_easy_getinfo(t.curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
  char* url = nullptr;
  curl_easy_getinfo(t.curl, CURLINFO_EFFECTIVE_URL, &url);
  t.response.status = status;
  if (length >= 0) t.response.length = static_cast<std::uint64_t>(length);
  if (url) t.response.effective_url = url;
  t.response.headers = t.headers;
  // Over HTTP(S) only a 206 honours the range (a 200 is the whole file); file:// and ftp:// honour
  // it by seeking (REST), whatever their response code says.
  char* scheme = nullptr;
  curl_easy_getinfo(t.curl, CURLINFO_SCHEME, &scheme);
  bool http = scheme && (std::string_view(scheme) == "HTTP" || std::string_view(scheme) == "HTTPS" || std::string_view(scheme) == "http" ||
                         std::string_view(scheme) == "https");
  t.response.range_honoured = t.req->offset > 0 && (http ? status == 206 : true);
  if (t.sink->start && !t.sink->start(t.response)) {
    t.aborted = true;
    return false;
  }
  return true;
}

size_t on_write(char* data, size_t size, size_t n, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  size_t bytes = size * n;
  try {  // nothing may unwind through libcurl's C frames: an exception aborts the transfer
    if (!t.started && !start(t)) return 0;
    if (bytes == 0) return 0;
    if (t.sink->data && !t.sink->data(data, bytes)) {
      t.aborted = true;
      return 0;
    }
    if (!t.window_start) t.window_start = std::chrono::steady_clock::now();  // the first rate window begins with the body
    t.response.bytes += bytes;
    if (*t.progress) (*t.progress)(t.response.bytes, t.response.length);
  } catch (...) {
    t.aborted = true;
    return 0;
  }
  return bytes;
}

// One header line of a response: a status line starts a new response (after a redirect, or a
// 100 Continue), so the headers kept are always those of the last one.
size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  size_t bytes = size * n;
  try {
    std::string_view line(data, bytes);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (line.rfind("HTTP/", 0) == 0) {
      t.headers.clear();
      return bytes;
    }
    auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return bytes;
    std::string name(line.substr(0, colon));
    for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    if (t.headers.size() < 256) t.headers.emplace_back(std::move(name), std::string(value));
  } catch (...) {
    return 0;
  }
  return bytes;
}

// libcurl asks for the next piece of the body.
size_t on_read(char* buffer, size_t size, size_t n, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::uint64_t left = t.req->body_length - t.uploaded;
  size_t room = static_cast<size_t>(std::min<std::uint64_t>(size * n, left));
  if (room == 0) return 0;
  size_t got = 0;
  try {
    got = t.req->body ? t.req->body(buffer, room) : 0;
  } catch (...) {
    got = 0;
  }
  if (got == 0 || got > room) {
    t.body_failed = true;
    return CURL_READFUNC_ABORT;
  }
  t.uploaded += got;
  return got;
}

bool tls_failure(CURLcode c) {
  switch (c) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_USE_SSL_FAILED: return true;
    default: return false;
  }
}

bool transient_failure(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_HTTP3:
    case CURLE_QUIC_CONNECT_ERROR: return true;
    default: return false;
  }
}

void classify(Attempt& a, CURLcode c, const std::string& detail, const Request& req) {
  using util::ErrorCode;
  const std::string what = "download of " + req.url + " failed: ";
  if (c == CURLE_HTTP_RETURNED_ERROR) {
    long s = a.response.status;
    a.transient = s == 408 || s == 429 || s >= 500;
    ErrorCode code = (s == 404 || s == 410) ? ErrorCode::not_found : ErrorCode::io;
    std::string text = what + "HTTP " + std::to_string(s) + (s == 404 || s == 410 ? " (the server has no such file)" : "");
    a.error = util::Error(code, text + (a.transient ? " (transient)" : ""));
    if (s == 403) a.error->hints.push_back("the server refuses access: check the URL, a proxy's rules, or use --mirror");
    return;
  }
  if (a.aborted_by_sink) {
    a.error = util::Error(ErrorCode::io, what + "aborted by stackpin");
    return;
  }
  if (c == CURLE_TOO_MANY_REDIRECTS) {
    a.error = util::Error(ErrorCode::io, what + "too many redirects (" + detail + ")");
    return;
  }
  if (tls_failure(c)) {
    a.error = util::Error(ErrorCode::io, what + "TLS failure (" + detail + "); not retried");
    a.error->hints.push_back("the server's certificate or TLS handshake was refused: check the URL's scheme and host");
    a.error->hints.push_back("a proxy that intercepts TLS needs its CA certificate in the system store (update-ca-certificates)");
    return;
  }
  if (c == CURLE_FILE_COULDNT_READ_FILE || c == CURLE_REMOTE_FILE_NOT_FOUND) {
    a.error = util::Error(ErrorCode::not_found, what + "no such file (" + detail + ")");
    return;
  }
  if (c == CURLE_URL_MALFORMAT || c == CURLE_UNSUPPORTED_PROTOCOL) {
    a.error = util::Error(ErrorCode::invalid, what + detail);
    a.error->hints.push_back("URLs must be http://, https://, ftp:// or file://");
    return;
  }
  a.transient = transient_failure(c);
  std::string kind = c == CURLE_OPERATION_TIMEDOUT                                         ? "timed out or stalled"
                     : c == CURLE_COULDNT_CONNECT                                          ? "connection failed"
                     : c == CURLE_PARTIAL_FILE || c == CURLE_RECV_ERROR                    ? "connection cut"
                     : c == CURLE_COULDNT_RESOLVE_HOST || c == CURLE_COULDNT_RESOLVE_PROXY ? "host not found"
                                                                                           : "network error";
  a.error = util::Error(ErrorCode::io, what + kind + " (" + detail + ")" + (a.transient ? " (transient)" : ""));
  if (c == CURLE_COULDNT_RESOLVE_HOST || c == CURLE_COULDNT_RESOLVE_PROXY)
    a.error->hints.push_back("no network or no DNS here? use --mirror with a local copy, or --offline with a filled cache");
}

// The error of an attempt that on_progress (or the deadline's timeout) ended.
void limit_error(Attempt& a, const Transfer& t, const Request& req) {
  const std::string what = "download of " + req.url + " failed: ";
  a.limit = t.limit;
  switch (t.limit) {
    case Limit::stall:
      a.transient = true;
      a.error = util::Error(util::ErrorCode::io, what + "stalled, no data for " + std::to_string(req.stall_timeout_s) + " s (transient)");
      a.error->hints.push_back("raise --stall-timeout SECONDS if the server is slow to start sending");
      return;
    case Limit::rate:
      a.transient = true;
      a.error = util::Error(util::ErrorCode::io, what + "too slow: " + std::to_string(t.slow_bytes) + " bytes in the last " +
                                                     std::to_string(req.rate_window_s) + " s (" +
                                                     rate_text(static_cast<double>(t.slow_bytes) / std::max(t.slow_seconds, 1e-3)) +
                                                     "), below --min-rate " + std::to_string(req.min_rate) + " B/s (transient)");
      a.error->hints.push_back("if this link is really this slow, lower --min-rate (0 turns the check off) or lengthen --rate-window");
      return;
    case Limit::deadline:
      a.error = util::Error(util::ErrorCode::io, what + "not finished by its deadline (" + std::to_string(t.response.bytes) +
                                                     " bytes received in this attempt)");
      return;
    case Limit::none: return;
  }
}

}  // namespace

Attempt attempt(const Request& req, const Sink& sink, const Progress& progress) {
  global_init();
  Attempt a;
  CURL* curl = curl_easy_init();
  if (!curl) {
    a.error = util::Error(util::ErrorCode::internal, "libcurl could not create a transfer");
    return a;
  }
  Transfer t;
  t.curl = curl;
  t.req = &req;
  t.sink = &sink;
  t.progress = &progress;
  char errbuf[CURL_ERROR_SIZE] = {0};
  std::string range = std::to_string(req.offset) + "-";
  curl_easy_setopt(curl, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  // A custom Authorization header stays with the host and port it was meant for: libcurl (7.83
  // and later) drops it on a redirect elsewhere, as long as CURLOPT_UNRESTRICTED_AUTH stays off.
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, req.follow_redirects ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_UNRESTRICTED_AUTH, 0L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https,ftp,ftps,file");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https,ftp,ftps");
  if (req.fail_on_error) curl_easy_setopt(curl, CURLOPT_FAILONERROR, 1L);
  if (!req.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, req.ca_file.c_str());
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
  // the method and the body: an upload is libcurl's PUT, renamed for PATCH and POST
  const bool has_body = req.method == "PUT" || req.method == "PATCH" || req.method == "POST";
  if (req.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (has_body) {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(req.body_length));
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(curl, CURLOPT_READDATA, &t);
    if (req.method != "PUT") curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  } else if (req.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }
  struct curl_slist* header_list = nullptr;
  for (const auto& [name, value] : req.headers) header_list = curl_slist_append(header_list, (name + ": " + value).c_str());
  if (has_body) header_list = curl_slist_append(header_list, "Expect:");  // no 100-continue round trip
  if (header_list) curl_easy_setopt(curl, CURLOPT_HTTPHEADER, header_list);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, req.user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_PROXY, req.proxy.c_str());  // "" also keeps libcurl from reading *_proxy itself
  if (!req.no_proxy.empty()) curl_easy_setopt(curl, CURLOPT_NOPROXY, req.no_proxy.c_str());
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, req.connect_timeout_s);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
  if (req.deadline) {
    // the callback aborts at the deadline; the timeout (rounded up, so that it is never the earlier
    // of the two) also covers a name lookup that blocks the callback
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*req.deadline - std::chrono::steady_clock::now()).count() + 1;
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(std::clamp<long long>(left, 1, std::numeric_limits<long>::max())));
  }
  if (req.offset > 0) curl_easy_setopt(curl, CURLOPT_RANGE, range.c_str());
  curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, 512L * 1024);  // fewer, larger deliveries to hash and write
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);

  CURLcode c = curl_easy_perform(curl);
  if (c == CURLE_OK && !t.started && !start(t)) c = CURLE_WRITE_ERROR;
  if (!t.started) {  // an error before any body: still report the status
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &t.response.status);
  }
  if (!t.started) t.response.headers = t.headers;
  a.response = t.response;
  a.aborted_by_sink = t.aborted;
  if (t.body_failed && c != CURLE_OK) {
    a.error = util::Error(util::ErrorCode::io, "upload to " + req.url + " failed: the body could not be read to its " +
                                                   std::to_string(req.body_length) + " bytes");
    curl_easy_cleanup(curl);
    curl_slist_free_all(header_list);
    return a;
  }
  // CURLOPT_TIMEOUT_MS came first: libcurl's timer and this clock may disagree by a few
  // milliseconds, so a timeout that close to the deadline is the deadline's
  if (c == CURLE_OPERATION_TIMEDOUT && t.limit == Limit::none && req.deadline &&
      std::chrono::steady_clock::now() + std::chrono::milliseconds(50) >= *req.deadline)
    t.limit = Limit::deadline;
  if (c != CURLE_OK && t.limit != Limit::none) {
    limit_error(a, t, req);
  } else if (c != CURLE_OK) {
    classify(a, c, errbuf[0] ? errbuf : curl_easy_strerror(c), req);
  }
  curl_easy_cleanup(curl);
  curl_slist_free_all(header_list);
  return a;
}

util::Result<Response> download(const Request& req, const Sink& sink, const Progress& progress) {
  auto a = attempt(req, sink, progress);
  if (a.error) return std::move(*a.error);
  return a.response;
}

std::string transport_version_text() { return curl_version(); }

}  // namespace net
