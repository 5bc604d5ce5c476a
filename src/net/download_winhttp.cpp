// One transfer through WinHTTP, the HTTP client every Windows 10/11 has: TLS by Schannel with the
// machine's certificate store (a company's TLS-intercepting proxy CA installed by group policy is
// trusted as the browser trusts it), and no TLS library for stackpin.exe to carry and update.
//
// The contract is download.cpp's (see download.hpp): one attempt, classified as transient or not;
// resumption by a plain "Range: bytes=N-" request, so a server that ignores the range answers 200
// and the sink starts over; error statuses never reach the sink. The proxy is the one the caller
// resolved ("" connects directly), so WinHTTP never reads another setting of its own. WinHTTP
// follows redirects itself (at most 10, never from https to http), except for a request with an
// Authorization header, whose redirects are followed here so that the header stays with its host
// (WinHTTP would send it on to a registry's blob storage). file:// URLs are read here
// directly; ftp:// is not offered by WinHTTP and is refused with what to use instead.
//
// Slow servers are cut as download.cpp cuts them: WinHTTP's receive timeout catches silence only,
// so a server that drips a byte every few seconds would hold a read loop for ever. The rate is
// therefore checked after each read, over windows of rate_window_s from the first body byte, and
// each read waits at most the stall timeout, the rate window (a window without a single byte is too
// slow whatever min_rate is) and what is left of the deadline. A WinHTTP timeout ends the request,
// so whichever of the three was shortest names the limit that ended the attempt.
#include <windows.h>
// after windows.h
#include <winhttp.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include "net/download.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "util/url.hpp"

namespace net {

namespace {

using util::Error;
using util::ErrorCode;

std::wstring wide(std::string_view s) {
  auto u = util::utf8_to_utf16(s);
  return std::wstring(u.begin(), u.end());
}

std::string narrow(const std::wstring& s) { return util::utf16_to_utf8(std::u16string(s.begin(), s.end())); }

struct Handle {
  HINTERNET h = nullptr;
  Handle() = default;
  explicit Handle(HINTERNET x) : h(x) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (h) WinHttpCloseHandle(h);
  }
};

std::string win_text(DWORD code) {
  wchar_t* text = nullptr;
  HMODULE from = GetModuleHandleW(L"winhttp.dll");
  DWORD n = FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS |
                               (from ? FORMAT_MESSAGE_FROM_HMODULE : 0),
                           from, code, 0, reinterpret_cast<wchar_t*>(&text), 0, nullptr);
  std::string out = n ? narrow(std::wstring(text, n)) : std::string();
  if (text) LocalFree(text);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == '.' || out.back() == ' ')) out.pop_back();
  return (out.empty() ? std::string("WinHTTP error") : out) + " (" + std::to_string(code) + ")";
}

// Hands the response head to the sink; false (the attempt recorded as aborted) when it refuses.
bool start_sink(Attempt& a, const Sink& sink, const std::string& what) {
  if (!sink.start || sink.start(a.response)) return true;
  a.aborted_by_sink = true;
  a.error = Error(ErrorCode::io, what + "aborted by stackpin");
  return false;
}

// Hands one block of the body to the sink and reports progress; false when the sink refuses.
bool deliver(Attempt& a, const Sink& sink, const Progress& progress, const char* data, std::size_t n, const std::string& what) {
  bool ok = true;
  try {  // nothing may unwind through the transfer: an exception aborts it
    ok = !sink.data || sink.data(data, n);
  } catch (...) {
    ok = false;
  }
  if (!ok) {
    a.aborted_by_sink = true;
    a.error = Error(ErrorCode::io, what + "aborted by stackpin");
    return false;
  }
  a.response.bytes += n;
  if (progress) progress(a.response.bytes, a.response.length);
  return true;
}

// file:///C:/dir/file, file://server/share/file and file:///dir/file (the current drive)
Attempt file_attempt(const Request& req, const Sink& sink, const Progress& progress) {
  Attempt a;
  std::string rest = req.url.substr(7);
  std::string path;
  if (rest.rfind('/', 0) == 0) {
    path = util::percent_decode(rest.substr(1));
    if (path.size() < 2 || path[1] != ':') path = "/" + path;  // no drive letter: a path on the current drive
  } else {
    path = "//" + util::percent_decode(rest);  // a UNC host
  }
  std::unique_ptr<FILE, int (*)(FILE*)> f(util::open_file(std::filesystem::path(wide(path)), "rb"), &std::fclose);
  const std::string what = "download of " + req.url + " failed: ";
  if (!f) {
    int e = errno;
    a.error = Error(e == ENOENT ? ErrorCode::not_found : ErrorCode::io, what + "no such file (" + util::os_error_text(e) + ")");
    return a;
  }
  if (_fseeki64(f.get(), 0, SEEK_END) != 0) {
    a.error = Error(ErrorCode::io, what + "cannot read " + path);
    return a;
  }
  const std::int64_t size = _ftelli64(f.get());
  if (size < 0 || static_cast<std::uint64_t>(size) < req.offset ||
      _fseeki64(f.get(), static_cast<std::int64_t>(req.offset), SEEK_SET) != 0) {
    a.error = Error(ErrorCode::io, what + "the file is shorter than the " + std::to_string(req.offset) + " bytes asked to skip");
    return a;
  }
  a.response.effective_url = req.url;
  a.response.range_honoured = req.offset > 0;
  a.response.length = static_cast<std::uint64_t>(size) - req.offset;
  if (!start_sink(a, sink, what)) return a;
  std::vector<char> buf(512 * 1024);
  for (;;) {
    std::size_t n = std::fread(buf.data(), 1, buf.size(), f.get());
    if (n == 0) break;
    if (!deliver(a, sink, progress, buf.data(), n, what)) return a;
  }
  if (std::ferror(f.get())) a.error = Error(ErrorCode::io, what + "cannot read " + path);
  return a;
}

// WinHTTP's failures, in download.cpp's terms
void classify(Attempt& a, DWORD code, const Request& req) {
  const std::string what = "download of " + req.url + " failed: ";
  const std::string detail = win_text(code);
  switch (code) {
    case ERROR_WINHTTP_SECURE_FAILURE:
    case ERROR_WINHTTP_SECURE_CERT_DATE_INVALID:
    case ERROR_WINHTTP_SECURE_CERT_CN_INVALID:
    case ERROR_WINHTTP_SECURE_INVALID_CA:
    case ERROR_WINHTTP_SECURE_CERT_REV_FAILED:
    case ERROR_WINHTTP_SECURE_CHANNEL_ERROR:
    case ERROR_WINHTTP_SECURE_INVALID_CERT:
    case ERROR_WINHTTP_SECURE_CERT_REVOKED:
    case ERROR_WINHTTP_SECURE_CERT_WRONG_USAGE:
      a.error = Error(ErrorCode::io, what + "TLS failure (" + detail + "); not retried");
      a.error->hints.push_back("the server's certificate or TLS handshake was refused: check the URL's scheme and host");
      a.error->hints.push_back("a proxy that intercepts TLS needs its CA certificate in the Windows certificate store");
      return;
    case ERROR_WINHTTP_UNRECOGNIZED_SCHEME:
    case ERROR_WINHTTP_INVALID_URL:
      a.error = Error(ErrorCode::invalid, what + detail);
      a.error->hints.push_back("URLs must be http://, https:// or file://");
      return;
    case ERROR_WINHTTP_NAME_NOT_RESOLVED:
      a.error = Error(ErrorCode::io, what + "host not found (" + detail + ")");
      a.error->hints.push_back("no network or no DNS here? use --mirror with a local copy, or --offline with a filled cache");
      return;
    case ERROR_WINHTTP_TIMEOUT:
      a.transient = true;
      a.error = Error(ErrorCode::io, what + "timed out or stalled (" + detail + ") (transient)");
      return;
    case ERROR_WINHTTP_CANNOT_CONNECT:
      a.transient = true;
      a.error = Error(ErrorCode::io, what + "connection failed (" + detail + ") (transient)");
      return;
    case ERROR_WINHTTP_CONNECTION_ERROR:
    case ERROR_WINHTTP_INVALID_SERVER_RESPONSE:
      a.transient = true;
      a.error = Error(ErrorCode::io, what + "connection cut (" + detail + ") (transient)");
      return;
    default: a.error = Error(ErrorCode::io, what + "network error (" + detail + ")");
  }
}

std::optional<std::uint64_t> content_length(HINTERNET request) {
  wchar_t buf[32] = {};
  DWORD len = sizeof buf;
  if (!WinHttpQueryHeaders(request, WINHTTP_QUERY_CONTENT_LENGTH, WINHTTP_HEADER_NAME_BY_INDEX, buf, &len, WINHTTP_NO_HEADER_INDEX))
    return std::nullopt;
  std::uint64_t v = 0;
  for (const wchar_t* p = buf; *p; ++p) {
    if (*p < L'0' || *p > L'9' || v > (UINT64_MAX - 9) / 10) return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(*p - L'0');
  }
  return v;
}

std::string effective_url(HINTERNET request, const std::string& fallback) {
  DWORD len = 0;
  WinHttpQueryOption(request, WINHTTP_OPTION_URL, nullptr, &len);
  if (len == 0) return fallback;
  std::wstring buf(len / sizeof(wchar_t) + 1, L'\0');
  if (!WinHttpQueryOption(request, WINHTTP_OPTION_URL, buf.data(), &len)) return fallback;
  buf.resize(len / sizeof(wchar_t));
  return narrow(buf);
}

// "http://proxy:3128" or "proxy:3128" as WinHTTP names a proxy ("http=proxy:3128" is not needed:
// one proxy serves both schemes here); no_proxy's commas become WinHTTP's semicolons
std::wstring proxy_name(const std::string& proxy) {
  std::string p = proxy;
  for (std::string_view scheme : {"http://", "https://"})
    if (p.rfind(scheme, 0) == 0) p = p.substr(scheme.size());
  while (!p.empty() && p.back() == '/') p.pop_back();
  return wide(p);
}

std::wstring bypass_list(const std::string& no_proxy) {
  std::string out;
  for (char c : no_proxy) out += c == ',' ? ';' : c;
  return wide(out);
}

using Clock = std::chrono::steady_clock;

int seconds_ms(long s) {
  return static_cast<int>(std::clamp<long long>(static_cast<long long>(s) * 1000, 1, std::numeric_limits<int>::max()));
}

// A timeout of `ms`, or what is left until the request's deadline when that is sooner (at least
// 1 ms: WinHTTP reads 0 as no timeout); `by_deadline` says which one it is.
int capped_ms(const Request& req, int ms, bool& by_deadline) {
  by_deadline = false;
  if (!req.deadline) return ms;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*req.deadline - Clock::now()).count();
  if (left >= ms) return ms;
  by_deadline = true;
  return static_cast<int>(std::max<long long>(left, 1));
}

// min_rate bytes a second for `window_s` seconds, saturating rather than wrapping for absurd values.
std::uint64_t bytes_due(std::uint64_t min_rate, long window_s) {
  auto w = static_cast<std::uint64_t>(std::max(window_s, 1L));
  return min_rate > std::numeric_limits<std::uint64_t>::max() / w ? std::numeric_limits<std::uint64_t>::max() : min_rate * w;
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

// The errors of an attempt that one of the request's limits ended, worded as download.cpp words them.
void stalled(Attempt& a, const Request& req, const std::string& what) {
  a.limit = Limit::stall;
  a.transient = true;
  a.error = Error(ErrorCode::io, what + "stalled, no data for " + std::to_string(req.stall_timeout_s) + " s (transient)");
  a.error->hints.push_back("raise --stall-timeout SECONDS if the server is slow to start sending");
}

void too_slow(Attempt& a, const Request& req, const std::string& what, std::uint64_t bytes, double seconds) {
  a.limit = Limit::rate;
  a.transient = true;
  a.error = Error(ErrorCode::io, what + "too slow: " + std::to_string(bytes) + " bytes in the last " + std::to_string(req.rate_window_s) +
                                     " s (" + rate_text(static_cast<double>(bytes) / std::max(seconds, 1e-3)) + "), below --min-rate " +
                                     std::to_string(req.min_rate) + " B/s (transient)");
  a.error->hints.push_back("if this link is really this slow, lower --min-rate (0 turns the check off) or lengthen --rate-window");
}

void past_deadline(Attempt& a, const std::string& what) {
  a.limit = Limit::deadline;
  a.transient = false;
  a.error =
      Error(ErrorCode::io, what + "not finished by its deadline (" + std::to_string(a.response.bytes) + " bytes received in this attempt)");
}

// The response's headers, names in lower case (WinHTTP's raw head, one "Name: value" a line).
Headers response_headers(HINTERNET request) {
  Headers out;
  DWORD len = 0;
  WinHttpQueryHeaders(request, WINHTTP_QUERY_RAW_HEADERS_CRLF, WINHTTP_HEADER_NAME_BY_INDEX, WINHTTP_NO_OUTPUT_BUFFER, &len,
                      WINHTTP_NO_HEADER_INDEX);
  if (len == 0) return out;
  std::wstring buf(len / sizeof(wchar_t) + 1, L'\0');
  if (!WinHttpQueryHeaders(request, WINHTTP_QUERY_RAW_HEADERS_CRLF, WINHTTP_HEADER_NAME_BY_INDEX, buf.data(), &len,
                           WINHTTP_NO_HEADER_INDEX))
    return out;
  buf.resize(len / sizeof(wchar_t));
  for (const auto& raw : util::split(narrow(buf), '\n')) {
    std::string_view line = raw;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    auto colon = line.find(':');
    if (line.rfind("HTTP/", 0) == 0 || colon == std::string_view::npos || colon == 0) continue;
    std::string name = util::to_lower(std::string(line.substr(0, colon)));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    if (out.size() < 256) out.emplace_back(std::move(name), std::string(value));
  }
  return out;
}

// scheme://host:port of an absolute URL, in lower case, with the scheme's default port written out
std::string origin_of(const std::string& url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return {};
  std::string scheme = util::to_lower(url.substr(0, scheme_end));
  auto rest = url.substr(scheme_end + 3);
  std::string authority = util::to_lower(rest.substr(0, rest.find_first_of("/?#")));
  if (auto at = authority.rfind('@'); at != std::string::npos) authority = authority.substr(at + 1);
  if (authority.find(':', authority.rfind(']') == std::string::npos ? 0 : authority.rfind(']')) == std::string::npos)
    authority += scheme == "https" ? ":443" : ":80";
  return scheme + "://" + authority;
}

// Location resolved against the URL it answered: absolute, "//host/...", or "/path"
std::string resolve_location(const std::string& base, const std::string& location) {
  if (location.find("://") != std::string::npos) return location;
  auto scheme_end = base.find("://");
  if (location.rfind("//", 0) == 0) return base.substr(0, scheme_end + 1) + location;
  auto path_start = base.find('/', scheme_end + 3);
  std::string root = path_start == std::string::npos ? base : base.substr(0, path_start);
  if (!location.empty() && location.front() == '/') return root + location;
  auto last = base.rfind('/');
  return (last == std::string::npos || last < scheme_end + 3 ? root + "/" : base.substr(0, last + 1)) + location;
}

bool is_authorization(const std::string& name) { return util::to_lower(name) == "authorization"; }

Attempt attempt_once(const Request& req, const Sink& sink, const Progress& progress, int hops);

}  // namespace

Attempt attempt(const Request& req, const Sink& sink, const Progress& progress) { return attempt_once(req, sink, progress, 0); }

namespace {

Attempt attempt_once(const Request& req, const Sink& sink, const Progress& progress, int hops) {
  if (req.url.rfind("file://", 0) == 0) return file_attempt(req, sink, progress);
  Attempt a;
  const std::string what = "download of " + req.url + " failed: ";
  if (req.url.rfind("ftp://", 0) == 0 || req.url.rfind("ftps://", 0) == 0) {
    a.error = Error(ErrorCode::invalid, what + "ftp:// is not supported by stackpin on Windows");
    a.error->hints.push_back("use an http(s):// mirror, or download the file and pass it with --mirror file://...");
    return a;
  }
  if (req.deadline && Clock::now() >= *req.deadline) {
    past_deadline(a, what);
    return a;
  }
  std::wstring url = wide(req.url);
  URL_COMPONENTS parts{};
  parts.dwStructSize = sizeof parts;
  parts.dwHostNameLength = static_cast<DWORD>(-1);
  parts.dwUrlPathLength = static_cast<DWORD>(-1);
  parts.dwExtraInfoLength = static_cast<DWORD>(-1);
  parts.dwSchemeLength = static_cast<DWORD>(-1);
  if (!WinHttpCrackUrl(url.c_str(), 0, 0, &parts) || (parts.nScheme != INTERNET_SCHEME_HTTP && parts.nScheme != INTERNET_SCHEME_HTTPS)) {
    a.error = Error(ErrorCode::invalid, what + "not an http://, https:// or file:// URL");
    a.error->hints.push_back("URLs must be http://, https:// or file://");
    return a;
  }
  std::wstring host(parts.lpszHostName, parts.dwHostNameLength);
  std::wstring path(parts.lpszUrlPath, parts.dwUrlPathLength);
  if (parts.lpszExtraInfo) path.append(parts.lpszExtraInfo, parts.dwExtraInfoLength);
  if (path.empty()) path = L"/";

  std::wstring proxy = proxy_name(req.proxy);
  std::wstring bypass = bypass_list(req.no_proxy);
  Handle session(WinHttpOpen(wide(req.user_agent).c_str(),
                             req.proxy.empty() ? WINHTTP_ACCESS_TYPE_NO_PROXY : WINHTTP_ACCESS_TYPE_NAMED_PROXY,
                             req.proxy.empty() ? WINHTTP_NO_PROXY_NAME : proxy.c_str(),
                             req.proxy.empty() || bypass.empty() ? WINHTTP_NO_PROXY_BYPASS : bypass.c_str(), 0));
  if (!session.h) {
    classify(a, GetLastError(), req);
    return a;
  }
  // Until the response head: the connect and stall timeouts, neither past the deadline.
  const int stall_ms = seconds_ms(req.stall_timeout_s);
  bool head_by_deadline = false, connect_by_deadline = false;
  const int connect_ms = capped_ms(req, seconds_ms(req.connect_timeout_s), connect_by_deadline);
  const int head_ms = capped_ms(req, stall_ms, head_by_deadline);
  WinHttpSetTimeouts(session.h, connect_ms, connect_ms, head_ms, head_ms);
  Handle connection(WinHttpConnect(session.h, host.c_str(), parts.nPort, 0));
  if (!connection.h) {
    classify(a, GetLastError(), req);
    return a;
  }
  Handle request(WinHttpOpenRequest(connection.h, wide(req.method).c_str(), path.c_str(), nullptr, WINHTTP_NO_REFERER,
                                    WINHTTP_DEFAULT_ACCEPT_TYPES, parts.nScheme == INTERNET_SCHEME_HTTPS ? WINHTTP_FLAG_SECURE : 0));
  if (!request.h) {
    classify(a, GetLastError(), req);
    return a;
  }
  // WinHTTP would send every header on to wherever a redirect points: with an Authorization
  // header (or when the caller follows redirects itself) they are followed here instead.
  const bool has_auth = std::any_of(req.headers.begin(), req.headers.end(), [](const auto& h) { return is_authorization(h.first); });
  if (has_auth || !req.follow_redirects) {
    DWORD off = WINHTTP_DISABLE_REDIRECTS;
    WinHttpSetOption(request.h, WINHTTP_OPTION_DISABLE_FEATURE, &off, sizeof off);
  }
  std::wstring headers;
  if (req.offset > 0) headers = L"Range: bytes=" + std::to_wstring(req.offset) + L"-\r\n";
  for (const auto& [name, value] : req.headers) headers += wide(name) + L": " + wide(value) + L"\r\n";
  const bool has_body = req.method == "PUT" || req.method == "PATCH" || req.method == "POST";
  const DWORD body_total = has_body ? static_cast<DWORD>(std::min<std::uint64_t>(req.body_length, 0xFFFFFFFFu)) : 0;
  if (has_body && req.body_length > 0xFFFFFFFEu) {
    a.error = Error(ErrorCode::invalid, what + "a request body of " + std::to_string(req.body_length) + " bytes is above WinHTTP's 4 GiB");
    return a;
  }
  bool sent = WinHttpSendRequest(request.h, headers.empty() ? WINHTTP_NO_ADDITIONAL_HEADERS : headers.c_str(),
                                 headers.empty() ? 0 : static_cast<DWORD>(-1L), WINHTTP_NO_REQUEST_DATA, 0, body_total, 0);
  if (sent && has_body) {  // the body, piece by piece from the caller
    std::vector<char> up(256 * 1024);
    std::uint64_t put = 0;
    while (sent && put < req.body_length) {
      std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(up.size(), req.body_length - put));
      std::size_t got = req.body ? req.body(up.data(), want) : 0;
      if (got == 0 || got > want) {
        a.error = Error(ErrorCode::io, "upload to " + req.url + " failed: the body could not be read to its " +
                                           std::to_string(req.body_length) + " bytes");
        return a;
      }
      DWORD wrote = 0;
      sent = WinHttpWriteData(request.h, up.data(), static_cast<DWORD>(got), &wrote) && wrote == got;
      put += got;
    }
  }
  if (!sent || !WinHttpReceiveResponse(request.h, nullptr)) {
    DWORD e = GetLastError();
    if (e == ERROR_WINHTTP_TIMEOUT && req.deadline && (head_by_deadline || connect_by_deadline || Clock::now() >= *req.deadline)) {
      past_deadline(a, what);
      return a;
    }
    classify(a, e, req);
    if (e == ERROR_WINHTTP_TIMEOUT) a.error->hints.push_back("raise --stall-timeout SECONDS if the server is slow to start sending");
    return a;
  }
  DWORD status = 0;
  DWORD len = sizeof status;
  WinHttpQueryHeaders(request.h, WINHTTP_QUERY_STATUS_CODE | WINHTTP_QUERY_FLAG_NUMBER, WINHTTP_HEADER_NAME_BY_INDEX, &status, &len,
                      WINHTTP_NO_HEADER_INDEX);
  a.response.status = static_cast<long>(status);
  a.response.effective_url = effective_url(request.h, req.url);
  a.response.headers = response_headers(request.h);
  if (req.follow_redirects && (status == 301 || status == 302 || status == 303 || status == 307 || status == 308)) {
    auto location = a.response.header("location");
    if (!location) {
      a.error = Error(ErrorCode::io, what + "HTTP " + std::to_string(status) + " without a Location");
      return a;
    }
    if (hops >= 10) {
      a.error = Error(ErrorCode::io, what + "too many redirects");
      return a;
    }
    Request next = req;
    next.url = resolve_location(req.url, *location);
    if (origin_of(next.url).rfind("http://", 0) != 0 && origin_of(next.url).rfind("https://", 0) != 0) {
      // never file:// (a UNC path would hand the user's credentials to another machine) nor anything else
      a.error = Error(ErrorCode::io, what + "redirected to " + next.url + ", which is not an http(s) URL; not followed");
      return a;
    }
    if (origin_of(next.url).rfind("http://", 0) == 0 && origin_of(req.url).rfind("https://", 0) == 0) {
      a.error = Error(ErrorCode::io, what + "redirected from https to plain http (" + next.url + "); not followed");
      return a;
    }
    if (origin_of(next.url) != origin_of(req.url))
      next.headers.erase(std::remove_if(next.headers.begin(), next.headers.end(), [](const auto& h) { return is_authorization(h.first); }),
                         next.headers.end());
    if (status == 303) {
      next.method = "GET";
      next.body = nullptr;
      next.body_length = 0;
    }
    return attempt_once(next, sink, progress, hops + 1);
  }
  if (status >= 400 && req.fail_on_error) {  // the error page never reaches the sink
    long s = a.response.status;
    a.transient = s == 408 || s == 429 || s >= 500;
    ErrorCode code = (s == 404 || s == 410) ? ErrorCode::not_found : ErrorCode::io;
    a.error = Error(code, what + "HTTP " + std::to_string(s) + (s == 404 || s == 410 ? " (the server has no such file)" : "") +
                              (a.transient ? " (transient)" : ""));
    if (s == 403) a.error->hints.push_back("the server refuses access: check the URL, a proxy's rules, or use --mirror");
    return a;
  }
  a.response.length = content_length(request.h);
  if (req.method == "HEAD" || status == 204 || status == 304) {  // no body follows, whatever the length says
    if (!start_sink(a, sink, what)) return a;
    return a;
  }
  a.response.range_honoured = req.offset > 0 && status == 206;
  if (!start_sink(a, sink, what)) return a;
  std::vector<char> buf(512 * 1024);
  // the current rate window: when it began (at the first body byte, then at each window's end) and
  // the body bytes delivered by then
  std::optional<Clock::time_point> window_start;
  std::uint64_t window_bytes = 0;
  const bool rate_checked = req.min_rate > 0;
  const auto window = std::chrono::seconds(std::max(req.rate_window_s, 1L));
  for (;;) {
    // Each read waits at most the stall timeout, the rate window once the body has begun (a whole
    // window without a byte is too slow) and what is left of the deadline; the shortest names the limit.
    Limit on_timeout = Limit::stall;
    int wait_ms = stall_ms;
    if (rate_checked && window_start && seconds_ms(req.rate_window_s) < wait_ms) {
      wait_ms = seconds_ms(req.rate_window_s);
      on_timeout = Limit::rate;
    }
    bool by_deadline = false;
    wait_ms = capped_ms(req, wait_ms, by_deadline);
    if (by_deadline) on_timeout = Limit::deadline;
    DWORD timeout = static_cast<DWORD>(wait_ms);
    WinHttpSetOption(request.h, WINHTTP_OPTION_RECEIVE_TIMEOUT, &timeout, sizeof timeout);
    DWORD got = 0;
    if (!WinHttpReadData(request.h, buf.data(), static_cast<DWORD>(buf.size()), &got)) {
      DWORD e = GetLastError();
      if (e != ERROR_WINHTTP_TIMEOUT)
        classify(a, e, req);
      else if (on_timeout == Limit::deadline)
        past_deadline(a, what);
      else if (on_timeout == Limit::rate)
        too_slow(a, req, what, 0, static_cast<double>(req.rate_window_s));  // not a byte for a whole window
      else
        stalled(a, req, what);
      return a;
    }
    if (got == 0) break;
    if (!deliver(a, sink, progress, buf.data(), got, what)) return a;
    auto now = Clock::now();
    if (!window_start) {
      window_start = now;  // the first rate window begins with the body
    } else if (rate_checked && now - *window_start >= window) {
      std::uint64_t in_window = a.response.bytes - window_bytes;
      if (in_window < bytes_due(req.min_rate, req.rate_window_s)) {
        too_slow(a, req, what, in_window, std::chrono::duration<double>(now - *window_start).count());
        return a;
      }
      window_start = now;
      window_bytes = a.response.bytes;
    }
    if (req.deadline && now >= *req.deadline && (!a.response.length || a.response.bytes < *a.response.length)) {
      past_deadline(a, what);
      return a;
    }
  }
  const bool no_body = req.method == "HEAD" || status == 204 || status == 304;
  if (!no_body && a.response.length && a.response.bytes < *a.response.length) {
    a.transient = true;
    a.error = Error(ErrorCode::io, what + "connection cut after " + std::to_string(a.response.bytes) + " of " +
                                       std::to_string(*a.response.length) + " bytes (transient)");
  }
  return a;
}

}  // namespace

util::Result<Response> download(const Request& req, const Sink& sink, const Progress& progress) {
  auto a = attempt(req, sink, progress);
  if (a.error) return std::move(*a.error);
  return a.response;
}

std::string transport_version_text() {
  OSVERSIONINFOW v{};
  v.dwOSVersionInfoSize = sizeof v;
  using RtlGetVersionFn = LONG(WINAPI*)(OSVERSIONINFOW*);
  auto fn = reinterpret_cast<RtlGetVersionFn>(reinterpret_cast<void*>(GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "RtlGetVersion")));
  if (fn && fn(&v) == 0)
    return "WinHTTP (Windows " + std::to_string(v.dwMajorVersion) + "." + std::to_string(v.dwMinorVersion) + "." +
           std::to_string(v.dwBuildNumber) + ")";
  return "WinHTTP";
}

}  // namespace net
