#pragma once
// The reference OCI registry (Debian's docker-registry, distribution 2.8) started on 127.0.0.1 for a
// test, with its storage in a scratch folder; optionally with htpasswd (Basic) authentication and
// with TLS from a CA made at test time. And a TCP relay that can cut a connection once, after a
// number of bytes, to interrupt an upload or a download on the way to it.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http_server.hpp"
#include "test_support.hpp"

namespace testing_support {

// Why the registry tests cannot run here ("" when they can): docker-registry, skopeo, htpasswd or
// openssl missing (scripts/install-deps.sh --tools installs them).
std::string registry_tools_missing();
// skopeo's path, for run_process.
std::string skopeo();

struct RegistryOptions {
  bool tls = false;  // HTTPS with a certificate for 127.0.0.1 signed by a CA made for the test
  std::string user;  // with a password: htpasswd authentication
  std::string password;
};

class Registry {
 public:
  Registry(const std::filesystem::path& dir, const RegistryOptions& o = {});  // throws when it does not start
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  int port() const { return m_port; }
  std::string host() const { return "127.0.0.1:" + std::to_string(m_port); }
  // The CA's certificate (PEM) when TLS is on: SSL_CERT_FILE for stackpin; a folder holding it as
  // ca.crt, for skopeo's --cert-dir.
  std::filesystem::path ca_file() const { return m_dir / "tls" / "ca.crt"; }
  std::filesystem::path cert_dir() const { return m_dir / "trust"; }

 private:
  std::filesystem::path m_dir;
  int m_port = 0;
  std::unique_ptr<Process> m_process;
};

// Accepts on 127.0.0.1 and relays each connection to `port`; once `cut_after` bytes went from the
// clients to the server (counted over all connections), it closes that connection, once.
class CuttingRelay {
 public:
  CuttingRelay(int port, std::uint64_t cut_after);
  ~CuttingRelay();
  CuttingRelay(const CuttingRelay&) = delete;
  CuttingRelay& operator=(const CuttingRelay&) = delete;
  int port() const { return m_port; }
  bool cut() const { return m_cut.load(); }
  // The request line of each connection's first request ("PATCH /v2/... HTTP/1.1"), in order:
  // stackpin's client opens a connection per request.
  std::vector<std::string> request_lines() const;

 private:
  void accept_loop();
  void relay(int client);
  int m_listen = -1, m_port = 0, m_target = 0;
  std::uint64_t m_cut_after = 0;
  std::atomic<std::uint64_t> m_sent{0};
  std::atomic<bool> m_cut{false}, m_stop{false};
  mutable std::mutex m_mutex;
  std::vector<std::string> m_lines;
  std::thread m_acceptor;
  std::vector<std::thread> m_threads;
};

// A registry answered by a test (HttpServer::handle_with), for what the reference registry does
// not do: the Docker token flow (GET /v2/ answers 401 with a Bearer challenge whose realm is
// /token, which gives "tok-1" for Basic fleet:s3cret and the scope repository:team/cuda:pull), a
// 429 with Retry-After: 1 for the first request of the blob, then a 307 to `storage`, which serves
// the archive's bytes at `blob_path` (and whatever faults the test sets there).
struct FakeRegistry {
  HttpServer api, storage;
  std::string blob_path;
  int blob_requests = 0;  // read after the requests, when no handler runs
  std::mutex mutex;
  FakeRegistry(const std::filesystem::path& archive, const std::string& sha256);
};

// A free TCP port on 127.0.0.1 (bound and released: another process may take it in between).
int free_port();

}  // namespace testing_support
