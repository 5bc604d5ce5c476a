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
// error pages out of the sink. Proxies come from the environment, as libcurl reads it itself.
#include "net/download.hpp"

#include <curl/curl.h>

#include <string_view>

#include <chrono>
#include <cstdlib>

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
  bool started = false;
  bool aborted = false;
  bool stalled = false;
  curl_off_t last_now = -1;
  std::chrono::steady_clock::time_point last_data = std::chrono::steady_clock::now();
};

// libcurl's LOW_SPEED check averages over a window of several seconds, so a transfer that sent a
// burst and then nothing is caught late; this callback (called at least once a second) aborts
// when no body byte arrived for stall_timeout_s.
int on_progress(void* user, curl_off_t, curl_off_t now, curl_off_t, curl_off_t) {
  auto& t = *static_cast<Transfer*>(user);
  auto clock = std::chrono::steady_clock::now();
  if (now != t.last_now) {
    t.last_now = now;
    t.last_data = clock;
    return 0;
  }
  if (clock - t.last_data >= std::chrono::seconds(t.req->stall_timeout_s)) {
    t.stalled = true;
    return 1;
  }
  return 0;
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
    t.response.bytes += bytes;
    if (*t.progress) (*t.progress)(t.response.bytes, t.response.length);
  } catch (...) {
    t.aborted = true;
    return 0;
  }
  return bytes;
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
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https,ftp,ftps,file");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https,ftp,ftps");
  curl_easy_setopt(curl, CURLOPT_FAILONERROR, 1L);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, req.user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_PROXY, req.proxy.c_str());  // "" also keeps libcurl from reading *_proxy itself
  if (!req.no_proxy.empty()) curl_easy_setopt(curl, CURLOPT_NOPROXY, req.no_proxy.c_str());
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, req.connect_timeout_s);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
  if (req.offset > 0) curl_easy_setopt(curl, CURLOPT_RANGE, range.c_str());
  curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, 512L * 1024);  // fewer, larger deliveries to hash and write
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);

  CURLcode c = curl_easy_perform(curl);
  if (c == CURLE_OK && !t.started && !start(t)) c = CURLE_WRITE_ERROR;
  if (!t.started) {  // an error before any body: still report the status
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &t.response.status);
  }
  a.response = t.response;
  a.aborted_by_sink = t.aborted;
  if (c != CURLE_OK && t.stalled) {
    a.transient = true;
    a.error = util::Error(util::ErrorCode::io, "download of " + req.url + " failed: stalled, no data for " +
                                                   std::to_string(req.stall_timeout_s) + " s (transient)");
  } else if (c != CURLE_OK) {
    classify(a, c, errbuf[0] ? errbuf : curl_easy_strerror(c), req);
  }
  curl_easy_cleanup(curl);
  return a;
}

util::Result<Response> download(const Request& req, const Sink& sink, const Progress& progress) {
  auto a = attempt(req, sink, progress);
  if (a.error) return std::move(*a.error);
  return a.response;
}

std::string transport_version_text() { return curl_version(); }

}  // namespace net
