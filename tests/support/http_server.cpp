// A loopback HTTP server for fetch tests: ranges, faults, slow (stalled, dripping) and cut-short answers.
#include "http_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <stdexcept>

namespace testing_support {

namespace {

bool send_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool send_all(int fd, const std::string& s) { return send_all(fd, s.data(), s.size()); }

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const char* reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 307: return "Temporary Redirect";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 416: return "Range Not Satisfiable";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

}  // namespace

HttpServer::HttpServer() {
  m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (m_listen < 0) throw std::runtime_error("socket() failed");
  int one = 1;
  ::setsockopt(m_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(m_listen, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(m_listen, 64) != 0)
    throw std::runtime_error("cannot listen on 127.0.0.1");
  socklen_t len = sizeof addr;
  ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&addr), &len);
  m_port = ntohs(addr.sin_port);
  m_acceptor = std::thread([this] { accept_loop(); });
}

HttpServer::~HttpServer() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_all();
  m_acceptor.join();
  ::close(m_listen);
  std::vector<std::thread> handlers;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    handlers.swap(m_handlers);
  }
  for (auto& t : handlers) t.join();
}

std::string HttpServer::base() const { return "http://127.0.0.1:" + std::to_string(m_port); }
std::string HttpServer::url(const std::string& path) const { return base() + path; }

void HttpServer::serve(const std::string& path, std::string body) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_files[path] = std::move(body);
}

void HttpServer::fault(const std::string& path, Fault f, int request_no) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_faults[path][request_no] = f;
}

void HttpServer::fail_first(const std::string& path, int k, int status) {
  Fault f;
  f.kind = Fault::Kind::status;
  f.status = status;
  for (int i = 1; i <= k; ++i) fault(path, f, i);
}

std::vector<RecordedRequest> HttpServer::requests() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_log;
}

std::vector<RecordedRequest> HttpServer::requests_for(const std::string& path) const {
  std::vector<RecordedRequest> out;
  for (auto& r : requests())
    if (r.path == path) out.push_back(r);
  return out;
}

void HttpServer::accept_loop() {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (m_stop) return;
    }
    pollfd p{m_listen, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    int fd = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> lock(m_mutex);
    m_handlers.emplace_back([this, fd] { handle(fd); });
  }
}

bool HttpServer::stall(int ms) {
  std::unique_lock<std::mutex> lock(m_mutex);
  return !m_wake.wait_for(lock, std::chrono::milliseconds(ms), [this] { return m_stop; });
}

void HttpServer::handle(int fd) {
  std::string head;
  char buf[4096];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    head.append(buf, static_cast<std::size_t>(n));
    if (!std::isalpha(static_cast<unsigned char>(head[0]))) {  // not HTTP (a TLS ClientHello): refuse at once
      send_all(fd, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      ::shutdown(fd, SHUT_RDWR);
      ::close(fd);
      return;
    }
  }
  RecordedRequest r;
  std::uint64_t content_length = 0;
  std::size_t eol = head.find("\r\n");
  if (eol != std::string::npos) {
    std::string line = head.substr(0, eol);
    std::size_t a = line.find(' '), b = line.rfind(' ');
    if (a != std::string::npos && b > a) {
      r.method = line.substr(0, a);
      r.target = line.substr(a + 1, b - a - 1);
    }
    std::size_t pos = eol + 2;
    while (pos < head.size()) {
      std::size_t e = head.find("\r\n", pos);
      if (e == std::string::npos || e == pos) break;
      std::string h = head.substr(pos, e - pos);
      pos = e + 2;
      std::size_t colon = h.find(':');
      if (colon == std::string::npos) continue;
      std::string name = lower(h.substr(0, colon)), value = h.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      if (name == "range") r.range = value;
      if (name == "host") r.host = value;
      if (name == "user-agent") r.user_agent = value;
      if (name == "authorization") r.authorization = value;
      if (name == "content-length") content_length = std::strtoull(value.c_str(), nullptr, 10);
    }
  }
  // the body: what came with the head, then the rest of Content-Length
  if (std::size_t end = head.find("\r\n\r\n"); end != std::string::npos && content_length > 0 && content_length <= (64u << 20)) {
    r.body = head.substr(end + 4);
    while (r.body.size() < content_length) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0) break;
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      r.body.append(buf, static_cast<std::size_t>(n));
    }
    if (r.body.size() > content_length) r.body.resize(content_length);
  }
  r.path = r.target;
  if (r.target.rfind("http://", 0) == 0) {
    r.absolute_uri = true;
    std::size_t slash = r.target.find('/', 7);
    r.path = slash == std::string::npos ? "/" : r.target.substr(slash);
  }
  if (!r.method.empty()) respond(fd, r);
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

void HttpServer::handle_with(Handler h) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_handler = std::move(h);
}

std::string HttpServer::response(int status, const std::vector<std::pair<std::string, std::string>>& headers, const std::string& body,
                                 bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) + "\r\n";
  for (const auto& [n, v] : headers) out += n + ": " + v + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  if (!head_only) out += body;
  return out;
}

void HttpServer::respond(int fd, RecordedRequest& r) {
  Handler handler;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    handler = m_handler;
  }
  if (handler) {
    if (auto answer = handler(r)) {
      std::size_t sp = answer->find(' ');
      r.status = sp == std::string::npos ? 0 : std::atoi(answer->c_str() + sp + 1);
      {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_log.push_back(r);
      }
      send_all(fd, *answer);
      return;
    }
  }
  std::string body;
  bool exists = false;
  Fault f;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    int n = ++m_counts[r.path];
    auto it = m_files.find(r.path);
    exists = it != m_files.end();
    if (exists) body = it->second;
    auto fit = m_faults.find(r.path);
    if (fit != m_faults.end()) {
      auto one = fit->second.find(n);
      if (one != fit->second.end())
        f = one->second;
      else if ((one = fit->second.find(0)) != fit->second.end())
        f = one->second;
    }
  }
  auto record = [&](int status) {
    r.status = status;
    std::lock_guard<std::mutex> lock(m_mutex);
    m_log.push_back(r);
  };
  auto simple = [&](int status) {
    record(status);
    std::string text = std::to_string(status) + " " + reason(status) + "\n";
    send_all(fd, "HTTP/1.1 " + std::to_string(status) + " " + reason(status) + "\r\nContent-Type: text/plain\r\nContent-Length: " +
                     std::to_string(text.size()) + "\r\nConnection: close\r\n\r\n" + (r.method == "HEAD" ? "" : text));
  };
  if (f.kind == Fault::Kind::status) return simple(f.status);
  if (!exists || f.kind == Fault::Kind::not_found) return simple(404);
  if (f.kind == Fault::Kind::wrong_bytes)
    for (auto& c : body) c = static_cast<char>(~static_cast<unsigned char>(c));

  std::uint64_t from = 0;
  int status = 200;
  if (!r.range.empty() && f.kind != Fault::Kind::ignore_range && r.range.rfind("bytes=", 0) == 0) {
    std::string spec = r.range.substr(6);
    std::size_t dash = spec.find('-');
    from = std::stoull(spec.substr(0, dash));
    if (from >= body.size()) {
      record(416);
      send_all(fd, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */" + std::to_string(body.size()) +
                       "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    status = 206;
  }
  record(status);
  std::string part = body.substr(from);
  // a folder's page (a wheel index's /simple/NAME/) is HTML, which pip requires of an index
  const bool page = !r.path.empty() && r.path.back() == '/';
  std::string h = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) +
                  "\r\nContent-Type: " + (page ? "text/html" : "application/octet-stream") + "\r\n" +
                  "Content-Length: " + std::to_string(part.size()) + "\r\nAccept-Ranges: bytes\r\nConnection: close\r\n";
  if (status == 206)
    h +=
        "Content-Range: bytes " + std::to_string(from) + "-" + std::to_string(body.size() - 1) + "/" + std::to_string(body.size()) + "\r\n";
  h += "\r\n";
  if (!send_all(fd, h) || r.method == "HEAD") return;
  if (f.kind == Fault::Kind::cut_after || f.kind == Fault::Kind::stall_after) {
    std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(f.bytes, part.size()));
    if (!send_all(fd, part.data(), n)) return;
    if (f.kind == Fault::Kind::stall_after) stall(f.stall_ms);
    return;
  }
  if (f.kind == Fault::Kind::drip) {  // until the body is sent, the client hangs up or the server stops
    std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(f.bytes, part.size()));
    if (!send_all(fd, part.data(), n)) return;
    for (std::size_t i = n; i < part.size(); ++i)
      if (!stall(f.stall_ms) || !send_all(fd, part.data() + i, 1)) return;
    return;
  }
  send_all(fd, part);
}

}  // namespace testing_support
