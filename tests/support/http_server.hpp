#pragma once
// A small HTTP/1.1 server on 127.0.0.1 for download tests: files served from memory with Range
// support, fault modes chosen per path and request number (cut, stall, drip, wrong bytes, 404, a
// 200 that ignores Range, an error status), a log of the requests it got, and proxy behaviour
// (absolute-URI request lines are served from the same files, by path). A path ending in '/' is
// served as text/html (a wheel index's pages), every other as application/octet-stream.
//
// One thread accepts; each connection gets its own thread and is closed after one response.
// A test may also answer requests itself (handle_with): a registry's API, say.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace testing_support {

struct Fault {
  enum class Kind {
    none,
    cut_after,     // announce the full length, send `bytes` body bytes, close
    stall_after,   // send `bytes` body bytes, then send nothing for `stall_ms`, then close
    drip,          // send `bytes` body bytes, then the rest one byte every `stall_ms` (never silent for long)
    wrong_bytes,   // the body has the right length but every byte inverted
    not_found,     // 404
    ignore_range,  // answer a Range request with 200 and the whole body
    status,        // answer `status` (503, 429, 403, ...) with a short text body
  };
  Kind kind = Kind::none;
  std::uint64_t bytes = 0;
  int stall_ms = 0;
  int status = 503;
};

struct RecordedRequest {
  std::string method;
  std::string target;         // as sent: "/a/b" or, through a proxy, "http://host/a/b"
  std::string path;           // "/a/b"
  std::string range;          // the Range header's value, "" if none
  std::string host;           // the Host header
  std::string user_agent;     // the User-Agent header
  std::string authorization;  // the Authorization header, "" if none
  std::string body;           // the request's body (Content-Length bytes, at most 64 MiB)
  bool absolute_uri = false;
  int status = 0;  // what the server answered
};

class HttpServer {
 public:
  HttpServer();   // listens on an ephemeral port; throws std::runtime_error when it cannot
  ~HttpServer();  // stops accepting, wakes stalled handlers, joins every thread
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return m_port; }
  std::string base() const;                        // "http://127.0.0.1:PORT"
  std::string url(const std::string& path) const;  // base() + path

  void serve(const std::string& path, std::string body);
  // Applies `f` to request number `request_no` (1-based, counted per path); 0 = every request.
  void fault(const std::string& path, Fault f, int request_no = 0);
  // The first `k` requests for `path` get `status`.
  void fail_first(const std::string& path, int k, int status = 503);

  // A handler asked first for every request: it returns the whole response to send (status line,
  // headers, body), or nullopt to let the files and faults above answer. Called on the
  // connection's thread: it must guard what it shares.
  using Handler = std::function<std::optional<std::string>(const RecordedRequest&)>;
  void handle_with(Handler h);
  // "HTTP/1.1 STATUS REASON" with these headers, Content-Length and the body (none for HEAD-like
  // answers when `head_only`).
  static std::string response(int status, const std::vector<std::pair<std::string, std::string>>& headers, const std::string& body,
                              bool head_only = false);

  std::vector<RecordedRequest> requests() const;
  std::vector<RecordedRequest> requests_for(const std::string& path) const;

 private:
  void accept_loop();
  void handle(int fd);
  void respond(int fd, RecordedRequest& r);
  bool stall(int ms);  // false when the server is stopping

  int m_listen = -1;
  int m_port = 0;
  bool m_stop = false;
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  std::map<std::string, std::string> m_files;
  std::map<std::string, std::map<int, Fault>> m_faults;
  std::map<std::string, int> m_counts;
  std::vector<RecordedRequest> m_log;
  Handler m_handler;
  std::thread m_acceptor;
  std::vector<std::thread> m_handlers;
};

}  // namespace testing_support
