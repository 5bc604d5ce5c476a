#include "registry.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <stdexcept>

#include "util/fs.hpp"
#include "util/url.hpp"

namespace testing_support {
namespace fs = std::filesystem;

namespace {

bool on_path(const std::string& name) { return !tool_path(name).empty(); }

void must(const RunResult& r, const std::string& what) {
  if (r.exit_code != 0) throw std::runtime_error(what + " failed: " + show(r));
}

bool connects(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::string skopeo() { return tool_path("skopeo"); }

std::string registry_tools_missing() {
  for (const char* tool : {"docker-registry", "skopeo", "htpasswd", "openssl"})
    if (!on_path(tool)) return std::string(tool) + " is not installed (scripts/install-deps.sh --tools installs it)";
  return {};
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("bind failed");
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

Registry::Registry(const fs::path& dir, const RegistryOptions& o) : m_dir(dir) {
  fs::create_directories(dir / "data");
  std::string config =
      "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: " +
      (dir / "data").string() + "\n  delete:\n    enabled: true\n";
  if (!o.user.empty()) {
    auto h = run_process({tool_path("htpasswd"), "-Bbn", o.user, o.password});
    must(h, "htpasswd");
    if (!util::write_file_atomic(dir / "htpasswd", h.out).ok()) throw std::runtime_error("cannot write htpasswd");
    config += "auth:\n  htpasswd:\n    realm: stackpin-test\n    path: " + (dir / "htpasswd").string() + "\n";
  }
  m_port = free_port();
  config += "http:\n  addr: 127.0.0.1:" + std::to_string(m_port) + "\n  secret: stackpin-test\n";
  if (o.tls) {
    const fs::path t = dir / "tls";
    fs::create_directories(t);
    auto sh = [&](const std::string& cmd) { must(run_process({"/bin/sh", "-c", cmd}, {}, t), cmd); };
    sh("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj '/CN=stackpin test CA' -keyout ca.key -out ca.crt 2>/dev/null");
    sh("openssl req -newkey rsa:2048 -nodes -subj '/CN=127.0.0.1' -keyout server.key -out server.csr 2>/dev/null");
    sh("printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext && openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
       "-days 2 -extfile san.ext -out server.crt 2>/dev/null");
    // skopeo's --cert-dir takes every *.key there for a client key: the CA alone in a folder of its own
    fs::create_directories(dir / "trust");
    fs::copy_file(t / "ca.crt", dir / "trust" / "ca.crt");
    config += "  tls:\n    certificate: " + (t / "server.crt").string() + "\n    key: " + (t / "server.key").string() + "\n";
  }
  if (!util::write_file_atomic(dir / "config.yml", config).ok()) throw std::runtime_error("cannot write the registry's config");
  m_process = std::make_unique<Process>(std::vector<std::string>{tool_path("docker-registry"), "serve", (dir / "config.yml").string()});
  for (int i = 0; i < 200; ++i) {
    if (connects(m_port)) return;
    if (!m_process->running()) throw std::runtime_error("docker-registry exited: " + show(m_process->wait()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("docker-registry did not listen on port " + std::to_string(m_port) + " within 10 s");
}

Registry::~Registry() = default;  // Process kills it

CuttingRelay::CuttingRelay(int port, std::uint64_t cut_after) : m_target(port), m_cut_after(cut_after) {
  m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(m_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(m_listen, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(m_listen, 64) != 0)
    throw std::runtime_error("relay: cannot listen");
  socklen_t len = sizeof a;
  ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&a), &len);
  m_port = ntohs(a.sin_port);
  m_acceptor = std::thread([this] { accept_loop(); });
}

CuttingRelay::~CuttingRelay() {
  m_stop = true;
  if (m_acceptor.joinable()) m_acceptor.join();
  for (auto& t : m_threads)
    if (t.joinable()) t.join();
  ::close(m_listen);
}

std::vector<std::string> CuttingRelay::request_lines() const {
  std::lock_guard<std::mutex> l(m_mutex);
  return m_lines;
}

void CuttingRelay::accept_loop() {
  while (!m_stop) {
    pollfd p{m_listen, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    int fd = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    m_threads.emplace_back([this, fd] { relay(fd); });
  }
}

void CuttingRelay::relay(int client) {
  int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(m_target));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(server);
    ::close(client);
    return;
  }
  char buf[16384];
  bool open = true, first = true;
  while (open && !m_stop) {
    pollfd p[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
    if (::poll(p, 2, 100) <= 0) continue;
    for (int i = 0; i < 2 && open; ++i) {
      if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int from = i == 0 ? client : server, to = i == 0 ? server : client;
      ssize_t n = ::recv(from, buf, sizeof buf, 0);
      if (n <= 0) {
        open = false;
        break;
      }
      std::size_t take = static_cast<std::size_t>(n);
      if (i == 0 && first) {
        first = false;
        std::string line(buf, take);
        line = line.substr(0, line.find("\r\n"));
        std::lock_guard<std::mutex> l(m_mutex);
        m_lines.push_back(line);
      }
      if (i == 0 && !m_cut) {
        std::uint64_t before = m_sent.fetch_add(take);
        if (before + take >= m_cut_after) {  // forward up to the cut, then drop the connection
          take = static_cast<std::size_t>(m_cut_after > before ? m_cut_after - before : 0);
          if (take) ::send(to, buf, take, MSG_NOSIGNAL);
          m_cut = true;
          open = false;
          break;
        }
      }
      if (::send(to, buf, take, MSG_NOSIGNAL) != static_cast<ssize_t>(take)) open = false;
    }
  }
  ::shutdown(client, SHUT_RDWR);
  ::shutdown(server, SHUT_RDWR);
  ::close(client);
  ::close(server);
}

FakeRegistry::FakeRegistry(const fs::path& archive, const std::string& sha256) : blob_path("/store/" + sha256) {
  storage.serve(blob_path, read_text(archive));
  const std::string good = "Basic " + util::base64_encode("fleet:s3cret");
  api.handle_with([this, good, sha256](const RecordedRequest& r) -> std::optional<std::string> {
    const std::string challenge = "Bearer realm=\"" + api.url("/token") + "\",service=\"fake\"";
    if (r.path.rfind("/token", 0) == 0) {
      if (r.authorization != good) return HttpServer::response(401, {}, "{}");
      if (!contains(r.path, "scope=repository%3Ateam%2Fcuda%3Apull")) return HttpServer::response(400, {}, "scope?");
      return HttpServer::response(200, {{"Content-Type", "application/json"}}, R"({"token":"tok-1","expires_in":300})");
    }
    if (r.authorization != "Bearer tok-1") return HttpServer::response(401, {{"WWW-Authenticate", challenge}}, "");
    if (r.path == "/v2/") return HttpServer::response(200, {}, "{}");
    if (r.path == "/v2/team/cuda/blobs/sha256:" + sha256) {
      std::lock_guard<std::mutex> l(mutex);
      if (++blob_requests == 1) return HttpServer::response(429, {{"Retry-After", "1"}}, "slow down");
      return HttpServer::response(307, {{"Location", storage.url(blob_path)}}, "");
    }
    return HttpServer::response(404, {}, R"({"errors":[{"code":"MANIFEST_UNKNOWN","message":"no"}]})");
  });
}

}  // namespace testing_support
