// An OCI registry's HTTP API (distribution-spec 1.1) as stackpin's mirrors use it.
//
// Why it works this way: a registry is reached through net::attempt like every other server, with
// fail_on_error off so that the client reads each answer itself: a 401 carries the challenge
// (WWW-Authenticate) that says how to authenticate, a 429 says when to come back (Retry-After),
// a 202 of an upload says where to send the next chunk (Location) and what the registry holds
// (Range). Authentication happens once when the client connects (its GET /v2/ is challenged
// unless the registry is open), and again whenever a token nears its expiry or a request is
// refused with 401. Uploads are chunked so that a cut connection costs one chunk at most: the
// registry is asked what it holds (GET on the upload's URL) and the upload resumes there.
#include "core/archives/registry.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "core/archives/http.hpp"
#include "crypto/sha256.hpp"
#include "format/oci.hpp"
#include "model/oci.hpp"
#include "probe/program.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "util/url.hpp"

namespace core {
namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

namespace {

constexpr std::uint64_t k_manifest_limit = 4u << 20;  // the size distribution itself refuses above
constexpr std::uint64_t k_answer_limit = 64u << 10;   // error bodies, tokens
constexpr long k_longest_retry_after_s = 60;

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// distribution-spec: [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(\/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*
bool repository_ok(std::string_view r) {
  if (r.empty() || r.size() > 255) return false;
  for (const auto& part : util::split(std::string(r), '/')) {
    if (part.empty() || !lower_alnum(part.front()) || !lower_alnum(part.back())) return false;
    for (std::size_t i = 0; i < part.size(); ++i) {
      char c = part[i];
      if (lower_alnum(c) || c == '-') continue;
      if (c == '.' && lower_alnum(part[i + 1])) continue;
      if (c == '_' && (lower_alnum(part[i + 1]) || (part[i + 1] == '_' && i + 2 < part.size() && lower_alnum(part[i + 2])))) {
        if (part[i + 1] == '_') ++i;
        continue;
      }
      return false;
    }
  }
  return true;
}

bool tag_ok(std::string_view t) {
  if (t.empty() || t.size() > 128) return false;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  if (!word(t.front())) return false;
  return std::all_of(t.begin(), t.end(), [&](char c) { return word(c) || c == '.' || c == '-'; });
}

bool host_ok(std::string_view h) {
  if (h.empty() || h.size() > 255) return false;
  return std::all_of(h.begin(), h.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']';
  });
}

// The host without its port: "127.0.0.1", "localhost", "::1".
std::string host_name(const std::string& host) {
  if (!host.empty() && host.front() == '[') return host.substr(1, host.find(']') - 1);
  auto colon = host.rfind(':');
  return colon == std::string::npos ? host : host.substr(0, colon);
}

// This machine by its name: exactly "localhost", "::1", or an IPv4 literal in 127.0.0.0/8 (not a
// name that merely starts with "127.").
bool loopback(const std::string& host) {
  std::string h = util::to_lower(host_name(host));
  if (h == "localhost" || h == "::1") return true;
  auto parts = util::split(h, '.');
  if (parts.size() != 4 || parts[0] != "127") return false;
  return std::all_of(parts.begin(), parts.end(), [](const std::string& p) {
    return !p.empty() && p.size() <= 3 && std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
           std::stoi(p) <= 255;
  });
}

// "scheme://host:port" of an absolute http(s) URL, lower case, the scheme's port written out; "" otherwise.
std::string origin_of(const std::string& url) {
  auto end = url.find("://");
  if (end == std::string::npos) return {};
  std::string scheme = util::to_lower(url.substr(0, end));
  if (scheme != "http" && scheme != "https") return {};
  std::string authority = util::to_lower(url.substr(end + 3, url.find_first_of("/?#", end + 3) - (end + 3)));
  if (authority.find('@') != std::string::npos) return {};  // userinfo: not a registry's URL
  auto bracket = authority.rfind(']');
  if (authority.find(':', bracket == std::string::npos ? 0 : bracket) == std::string::npos) authority += scheme == "https" ? ":443" : ":80";
  return scheme + "://" + authority;
}

// One challenge of WWW-Authenticate: `Bearer realm="...",service="...",scope="..."` or `Basic realm="..."`.
struct Challenge {
  std::string scheme;  // lower case
  std::map<std::string, std::string> params;
};

std::optional<Challenge> parse_challenge(const std::string& header) {
  Challenge c;
  std::size_t i = 0;
  while (i < header.size() && header[i] == ' ') ++i;
  std::size_t start = i;
  while (i < header.size() && header[i] != ' ') ++i;
  c.scheme = util::to_lower(header.substr(start, i - start));
  if (c.scheme.empty()) return std::nullopt;
  while (i < header.size()) {
    while (i < header.size() && (header[i] == ' ' || header[i] == ',')) ++i;
    std::size_t eq = header.find('=', i);
    if (eq == std::string::npos) break;
    std::string key = util::to_lower(header.substr(i, eq - i));
    i = eq + 1;
    std::string value;
    if (i < header.size() && header[i] == '"') {
      ++i;
      while (i < header.size() && header[i] != '"') {
        if (header[i] == '\\' && i + 1 < header.size()) ++i;
        value += header[i++];
      }
      ++i;
    } else {
      std::size_t end = header.find(',', i);
      value = header.substr(i, end == std::string::npos ? std::string::npos : end - i);
      i = end == std::string::npos ? header.size() : end;
    }
    c.params[key] = value;
  }
  return c;
}

struct Credentials {
  std::string username, password, identity_token;
  std::string source;  // where they came from, for messages (never the secret)
};

// A credential helper's answer for `host` (`docker-credential-NAME get`, the host on stdin).
util::Result<std::optional<Credentials>> from_helper(const std::string& helper, const std::string& host, const util::Env& env,
                                                     const std::string& config) {
  std::string program = "docker-credential-" + helper;
  if (helper.empty() || helper.find_first_of("/\\") != std::string::npos)
    return Error(ErrorCode::invalid, config + " names the credential helper '" + util::printable(helper, 80) + "', which is not a name");
  auto run = probe::run_program_with_input({program, "get"}, env, 30000, host);
  if (!run.started)
    return Error(ErrorCode::not_found,
                 config + " says to ask " + program + " for " + host + "'s credentials, and it cannot run: " + run.error)
        .with_hint("install " + program + ", or remove the entry from " + config);
  if (run.timed_out) return Error(ErrorCode::io, program + " gave no answer for " + host + " within 30 s");
  if (run.exit_code != 0) {
    // "credentials not found in native keychain": no credentials for this host
    if (util::to_lower(run.output).find("not found") != std::string::npos) return std::optional<Credentials>();
    return Error(ErrorCode::io, program + " get failed for " + host + " (exit " + std::to_string(run.exit_code) + ")");
  }
  SP_TRY_ASSIGN(auto a, format::read_credential_helper_answer(run.output, program));
  return std::optional<Credentials>(Credentials{a.username, a.password, a.identity_token, program});
}

util::Result<std::optional<Credentials>> from_auth_file(const fs::path& path, const std::string& host, const util::Env& env) {
  auto text = util::read_file(path);
  if (!text) {
    if (text.error().code == ErrorCode::not_found) return std::optional<Credentials>();
    return std::move(text).error();
  }
  SP_TRY_ASSIGN(auto cfg, format::read_docker_config(*text, path.string()));
  if (auto it = cfg.cred_helpers.find(host); it != cfg.cred_helpers.end()) return from_helper(it->second, host, env, path.string());
  std::vector<std::string> keys = {host, "https://" + host, "http://" + host, "https://" + host + "/v2/"};
  if (host == "docker.io" || host == "registry-1.docker.io" || host == "index.docker.io")
    keys.emplace_back("https://index.docker.io/v1/");  // where `docker login` files Docker Hub
  for (const std::string& key : keys) {
    auto it = cfg.auths.find(key);
    if (it == cfg.auths.end()) continue;
    const auto& a = it->second;
    if (a.username.empty() && a.password.empty() && a.identity_token.empty()) break;  // an entry a credsStore fills
    return std::optional<Credentials>(Credentials{a.username, a.password, a.identity_token, path.string()});
  }
  if (!cfg.creds_store.empty()) return from_helper(cfg.creds_store, host, env, path.string());
  return std::optional<Credentials>();
}

util::Result<std::optional<Credentials>> credentials_for(const std::string& host, const util::Env* env) {
  if (!env) return std::optional<Credentials>();
  auto user = env->get("STACKPIN_REGISTRY_USERNAME");
  auto pass = env->get("STACKPIN_REGISTRY_PASSWORD");
  auto only = env->get("STACKPIN_REGISTRY_HOST");  // when set, the variables are for that registry alone
  if (user && pass && !user->empty() && (!only || only->empty() || util::to_lower(*only) == host))
    return std::optional<Credentials>(Credentials{*user, *pass, "", "STACKPIN_REGISTRY_USERNAME and STACKPIN_REGISTRY_PASSWORD"});
  if (auto file = env->get("REGISTRY_AUTH_FILE"); file && !file->empty()) {
    SP_TRY_ASSIGN(auto c, from_auth_file(*file, host, *env));
    if (c) return c;
  }
  fs::path dir;
  if (auto d = env->get("DOCKER_CONFIG"); d && !d->empty()) {
    dir = *d;
  } else if (auto home = env->get(util::host_is_windows() ? "USERPROFILE" : "HOME"); home && !home->empty()) {
    dir = fs::path(*home) / ".docker";
  } else {
    return std::optional<Credentials>();
  }
  return from_auth_file(dir / "config.json", host, *env);
}

// "sha256:<hex>" of `bytes`: a manifest's digest.
std::string sha256_digest(std::string_view bytes) { return "sha256:" + crypto::to_hex(crypto::sha256_of(bytes)); }

// What came back from one exchange: the attempt (status, headers, error) and the body, kept up to
// the limit the request set.
struct Answer {
  net::Attempt attempt;
  std::string body;
  long status() const { return attempt.response.status; }
};

class Client final : public RegistryClient {
 public:
  Client(OciReference ref, RegistryOptions o, bool push) : m_ref(std::move(ref)), m_o(std::move(o)), m_push(push) {
    if (!m_o.sleep) m_o.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  }

  util::Status connect() {
    m_scheme = m_ref.plain_http ? "http" : "https";
    auto ping = exchange(request("GET", base_url() + "/v2/"), k_answer_limit, nullptr);
    if (ping.attempt.error && !m_ref.plain_http && loopback(m_ref.host)) {
      // a registry on this machine often speaks plain HTTP (Docker allows it for loopback too)
      m_scheme = "http";
      auto plain = exchange(request("GET", base_url() + "/v2/"), k_answer_limit, nullptr);
      // only a registry's answer counts: a TLS server answering plain HTTP with 400 keeps the TLS error
      if (!plain.attempt.error && (plain.status() == 200 || plain.status() == 401))
        ping = std::move(plain);
      else
        m_scheme = "https";
    }
    if (ping.attempt.error)
      return Error(ping.attempt.error->code, "cannot reach the registry " + m_ref.host + ": " + ping.attempt.error->message)
          .with_hint(m_ref.plain_http || loopback(m_ref.host)
                         ? "is the registry running on " + m_ref.host + "?"
                         : "a registry that speaks plain HTTP needs oci+http:// (" + m_ref.host + " is not on this machine)");
    if (ping.status() == 401) {
      SP_TRY(authenticate(ping));
      // the credentials are judged now, so that a refusal says so rather than a 401 on each blob later
      auto again = exchange(request("GET", base_url() + "/v2/"), k_answer_limit, nullptr);
      if (!again.attempt.error && again.status() == 401)
        return Error(ErrorCode::io, "the registry " + m_ref.host + " refused the credentials from " +
                                        (m_credentials ? m_credentials->source : std::string("nowhere (none found)")) + detail(again.body))
            .with_hint("log in with `docker login " + m_ref.host + "`, or set STACKPIN_REGISTRY_USERNAME and STACKPIN_REGISTRY_PASSWORD");
    } else if (ping.status() != 200) {
      return Error(ErrorCode::io,
                   base_url() + "/v2/ answered HTTP " + std::to_string(ping.status()) + ": not an OCI registry" + detail(ping.body))
          .with_hint("check the host and port of " + m_ref.text());
    }
    return {};
  }

  std::string base_url() const override { return m_scheme + "://" + m_ref.host; }
  const OciReference& reference() const override { return m_ref; }

  util::Result<net::Request> blob_request(const std::string& digest) override {
    std::lock_guard<std::mutex> l(m_mutex);
    SP_TRY(fresh_authorization());
    return request("GET", repo_url("/blobs/" + digest));
  }

  void authorization_refused() override {
    std::lock_guard<std::mutex> l(m_mutex);
    m_expires = std::chrono::steady_clock::now();  // renewed before the next request
    if (m_challenge && m_challenge->scheme == "basic") m_expires.reset();
  }

  util::Result<std::optional<std::uint64_t>> blob_size(const std::string& digest) override {
    SP_TRY_ASSIGN(auto a, call("HEAD", repo_url("/blobs/" + digest), "look for blob " + digest, 0, nullptr, {}));
    if (a.status() == 404) return std::optional<std::uint64_t>();
    if (a.status() != 200) return unexpected(a, "look for blob " + digest);
    auto len = a.attempt.response.length;
    if (!len)
      if (auto h = a.attempt.response.header("content-length");
          h && !h->empty() && h->size() < 20 && std::all_of(h->begin(), h->end(), [](char c) { return c >= '0' && c <= '9'; }))
        len = std::stoull(*h);
    if (!len) return Error(ErrorCode::invalid, "the registry " + m_ref.host + " gave no size for blob " + digest);
    return std::optional<std::uint64_t>(*len);
  }

  util::Status upload_small_blob(const std::string& digest, const std::string& bytes) override {
    SP_TRY_ASSIGN(std::string location, start_upload(digest));
    SP_TRY_ASSIGN(auto a, call("PUT", with_query(location, "digest=" + util::percent_encode(digest)), "upload blob " + digest,
                               k_answer_limit, &bytes, {{"Content-Type", "application/octet-stream"}}));
    if (a.status() != 201) return unexpected(a, "upload blob " + digest);
    return {};
  }

  util::Status upload_blob(const std::string& digest, std::uint64_t size, const fs::path& file, std::uint64_t chunk,
                           const std::function<void(std::uint64_t)>& progress) override {
    if (chunk == 0) chunk = 512u << 20;
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(util::open_file(file, "rb"), &std::fclose);
    if (!in) return Error(ErrorCode::io, "cannot read " + file.string() + ": " + util::os_error_text(errno));
    // The file is hashed on a thread of its own, reading it a second time (from the page cache),
    // while the chunks go out: the hash costs the upload nothing, and the upload is committed only
    // when the file is `digest` (the registry checks the bytes it received against it as well).
    std::future<util::Result<std::string>> file_digest = std::async(std::launch::async, [&file]() -> util::Result<std::string> {
      SP_TRY_ASSIGN(auto h, crypto::hash_file(file));
      return "sha256:" + crypto::to_hex(h.digest);
    });
    int restarts = 0;
    SP_TRY_ASSIGN(std::string location, start_upload(digest));
    // a session the push gives up on is cancelled (best effort: the registry expires it anyway)
    auto abandon = [&](Error e) {
      (void)call("DELETE", location, "cancel the upload of " + digest, k_answer_limit, nullptr, {});
      return e;
    };
    std::uint64_t offset = 0;  // what the registry holds
    int failures = 0;
    std::chrono::milliseconds delay = m_o.retry_delay;
    while (offset < size) {
      const std::uint64_t n = std::min(chunk, size - offset);
      bool read_failed = false;
      net::Request req;
      {
        std::lock_guard<std::mutex> l(m_mutex);  // a token near its end is renewed before the chunk, not refused after it
        SP_TRY(fresh_authorization());
        req = request("PATCH", location);
      }
      req.headers.emplace_back("Content-Type", "application/octet-stream");
      req.headers.emplace_back("Content-Range", std::to_string(offset) + "-" + std::to_string(offset + n - 1));
      req.body_length = n;
      if (util::seek_file(in.get(), offset) != 0) return abandon(Error(ErrorCode::io, "cannot read " + file.string()));
      req.body = [&](char* buf, std::size_t max) -> std::size_t {
        std::size_t got = std::fread(buf, 1, max, in.get());
        if (got == 0) read_failed = true;
        return got;
      };
      auto a = exchange(req, k_answer_limit, nullptr);
      if (read_failed) return abandon(Error(ErrorCode::io, "cannot read " + file.string() + " (it changed or shrank while being pushed)"));
      if (!a.attempt.error && a.status() == 202) {
        if (auto loc = a.attempt.response.header("location")) {
          SP_TRY_ASSIGN(location, absolute(*loc));
        }
        auto now = held(a, offset + n);
        if (!now)
          return abandon(Error(ErrorCode::invalid, "the registry " + m_ref.host + " answered a chunk of " + digest +
                                                       " with a Range that does not start at 0: " +
                                                       util::printable(a.attempt.response.header("range").value_or(""), 60)));
        if (*now > offset) {
          offset = std::min(*now, size);
          failures = 0;
          delay = m_o.retry_delay;
          if (progress) progress(offset);
          continue;
        }
        // accepted, and nothing more held: counted as a failure, so that a registry that never moves on ends the push
      }
      // a cut connection, a busy registry, an expired token: ask what it holds, and go on from there
      bool transient =
          a.attempt.error ? a.attempt.transient : (a.status() == 202 || a.status() == 401 || a.status() == 429 || a.status() >= 500);
      if (a.status() == 401) authorization_refused();
      if (!transient && a.status() != 416 && a.status() != 404) {
        if (a.attempt.error)
          return abandon(Error(a.attempt.error->code, "pushing blob " + digest + " to " + m_ref.host + ": " + a.attempt.error->message));
        return abandon(unexpected(a, "upload a chunk of blob " + digest));
      }
      if (++failures > m_o.retries)
        return abandon(Error(ErrorCode::io, "pushing blob " + digest + " to " + m_ref.host + " failed after " + std::to_string(failures) +
                                                " attempts at byte " + std::to_string(offset) + ": " + what_failed(a))
                           .with_hint("run `stackpin mirror push` again: blobs the registry already holds are not sent again"));
      if (transient) {
        m_o.sleep(wait_for(a, delay));
        delay = std::min<std::chrono::milliseconds>(delay * 2, std::chrono::seconds(30));
      }
      SP_TRY(fresh_authorization_locked());
      SP_TRY_ASSIGN(auto st, call("GET", location, "ask about the upload of " + digest, k_answer_limit, nullptr, {}));
      if (st.status() == 204) {
        if (auto loc = st.attempt.response.header("location")) {
          SP_TRY_ASSIGN(location, absolute(*loc));
        }
        auto now = held(st, 0);
        if (!now)
          return abandon(Error(ErrorCode::invalid, "the registry " + m_ref.host + " reports the upload of " + digest +
                                                       " with a Range that does not start at 0"));
        offset = std::min(*now, size);
        continue;
      }
      // the upload is gone (expired, or the registry lost it): start over, a few times at most
      if (++restarts > 3) return unexpected(st, "resume the upload of " + digest);
      SP_TRY_ASSIGN(location, start_upload(digest));
      offset = 0;
    }
    auto hashed = file_digest.get();
    if (!hashed) return abandon(std::move(hashed).error());
    const std::string& actual = *hashed;
    if (actual != digest)
      return abandon(Error(ErrorCode::mismatch, file.string() + " is not " + digest + " (its bytes hash to " + actual +
                                                    "); nothing was committed to " + m_ref.host)
                         .with_hint("the file changed after it was verified: fetch it again with `stackpin fetch --verify-cached`"));
    static const std::string k_empty;
    // the registry may move and hash a large blob before it answers: give the commit time
    auto done = call("PUT", with_query(location, "digest=" + util::percent_encode(digest)), "commit blob " + digest, k_answer_limit,
                     &k_empty, {}, std::max<long>(m_o.stall_timeout_s, 600));
    if (!done || done->status() != 201) {
      // a commit whose answer was lost (or retried after it succeeded) may still have landed
      if (auto there = blob_size(digest); there && *there && **there == size) return {};
      if (!done) return abandon(std::move(done).error());
      return abandon(unexpected(*done, "commit blob " + digest));
    }
    if (auto d = done->attempt.response.header("docker-content-digest"); d && *d != digest)
      return Error(ErrorCode::mismatch, "the registry " + m_ref.host + " committed " + digest + " as " + util::printable(*d, 100));
    return {};
  }

  util::Status put_manifest(const std::string& reference, const std::string& media_type, const std::string& bytes) override {
    SP_TRY_ASSIGN(auto a, call("PUT", repo_url("/manifests/" + reference), "put manifest " + reference, k_answer_limit, &bytes,
                               {{"Content-Type", media_type}}));
    if (a.status() != 201 && a.status() != 200) return unexpected(a, "put manifest " + reference);
    std::string digest = sha256_digest(bytes);
    if (auto d = a.attempt.response.header("docker-content-digest"); d && *d != digest)
      return Error(ErrorCode::mismatch, "the registry " + m_ref.host + " stored manifest " + reference + " as " + util::printable(*d, 100) +
                                            ", not as its bytes' " + digest);
    return {};
  }

  util::Result<Manifest> get_manifest(const std::string& reference) override {
    net::Headers accept = {{"Accept", std::string(model::oci::k_index_type) + ", " + model::oci::k_manifest_type}};
    SP_TRY_ASSIGN(auto a, call("GET", repo_url("/manifests/" + reference), "get manifest " + reference, k_manifest_limit, nullptr, accept));
    if (a.status() == 404)
      return Error(ErrorCode::not_found, m_ref.repository_url() + " has no manifest " + reference + detail(a.body))
          .with_hint("push the stack first: stackpin mirror push MANIFEST " + m_ref.repository_url());
    if (a.status() != 200) return unexpected(a, "get manifest " + reference);
    Manifest m;
    m.media_type = a.attempt.response.header("content-type").value_or("");
    if (auto semi = m.media_type.find(';'); semi != std::string::npos) m.media_type.resize(semi);
    m.bytes = std::move(a.body);
    m.digest = sha256_digest(m.bytes);
    if (model::oci::is_sha256_digest(reference) && reference != m.digest)
      return Error(ErrorCode::mismatch, "the registry " + m_ref.host + " answered manifest " + reference + " with bytes that hash to " +
                                            m.digest + "; nothing kept");
    if (auto d = a.attempt.response.header("docker-content-digest"); d && d->rfind("sha256:", 0) == 0 && *d != m.digest)
      return Error(ErrorCode::mismatch, "the registry " + m_ref.host + " says manifest " + reference + " is " + util::printable(*d, 100) +
                                            ", its bytes hash to " + m.digest + "; nothing kept");
    return m;
  }

 private:
  std::string repo_url(const std::string& rest) const { return base_url() + "/v2/" + m_ref.repository + rest; }

  // A Location as the registry gives it: a path on the registry, or an absolute http(s) URL (not
  // plain HTTP when the registry is reached over HTTPS: the archive would travel in clear).
  util::Result<std::string> absolute(const std::string& location) const {
    if (location.find("://") == std::string::npos) return base_url() + (location.rfind('/', 0) == 0 ? "" : "/") + location;
    std::string origin = origin_of(location);
    if (origin.empty())
      return Error(ErrorCode::invalid,
                   "the registry " + m_ref.host + " sent an upload to " + util::printable(location, 200) + ", which is not an http(s) URL");
    if (m_scheme == "https" && origin.rfind("http://", 0) == 0)
      return Error(ErrorCode::invalid, "the registry " + m_ref.host + " sent an upload from https to plain http (" +
                                           util::printable(location, 200) + "); not followed")
          .with_hint("a registry behind a TLS proxy must know its scheme (X-Forwarded-Proto): fix its configuration");
    return location;
  }

  static std::string with_query(const std::string& url, const std::string& query) {
    return url + (url.find('?') == std::string::npos ? "?" : "&") + query;
  }

  // A request as every one of this client's goes out: the proxy, user agent, timeouts and CA bundle
  // of its options, without credentials.
  net::Request plain_request(const std::string& method, const std::string& url) const {
    net::Request req = http_request(url, m_o.env);
    req.method = method;
    req.user_agent = m_o.user_agent;
    req.connect_timeout_s = m_o.connect_timeout_s;
    req.stall_timeout_s = m_o.stall_timeout_s;
    if (m_o.env)
      if (auto ca = m_o.env->get("SSL_CERT_FILE"); ca && !ca->empty()) req.ca_file = *ca;
    return req;
  }

  net::Request request(const std::string& method, const std::string& url) const {
    net::Request req = plain_request(method, url);
    // the registry's credentials go to the registry's own scheme, host and port, nowhere else (an
    // upload's Location may name another)
    if (!m_authorization.empty() && origin_of(url) == origin_of(base_url())) req.headers.emplace_back("Authorization", m_authorization);
    return req;
  }

  static std::string detail(const std::string& body) {
    std::string t = format::registry_error_text(body);
    return t.empty() ? "" : " (" + t + ")";
  }

  static std::string what_failed(const Answer& a) {
    if (a.attempt.error) return a.attempt.error->message;
    return "HTTP " + std::to_string(a.status()) + detail(a.body);
  }

  Error unexpected(const Answer& a, const std::string& what) const {
    long s = a.status();
    Error e(s == 404 ? ErrorCode::not_found : ErrorCode::io, "the registry " + m_ref.host + " refused to " + what + " in " +
                                                                 m_ref.repository + ": HTTP " + std::to_string(s) + detail(a.body));
    if (s == 401 || s == 403)
      e.with_hint("the credentials used (" + (m_credentials ? m_credentials->source : std::string("none")) + ") may not " +
                  (m_push ? "push to" : "pull from") + " " + m_ref.repository);
    return e;
  }

  // The bytes the registry says it holds, from a Range of "0-LAST"; `expected` without a Range.
  // Distribution writes "0-0" both for nothing and for one byte: it is read as one byte only when
  // one byte is what the registry should hold (`expected`). nullopt for a Range that does not
  // start at 0.
  static std::optional<std::uint64_t> held(const Answer& a, std::uint64_t expected) {
    auto range = a.attempt.response.header("range");
    if (!range) return expected;
    std::string r = *range;
    if (r.rfind("bytes=", 0) == 0) r = r.substr(6);
    if (r.rfind("0-", 0) != 0) return std::nullopt;
    std::uint64_t last = 0;
    for (std::size_t i = 2; i < r.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(r[i])) || last > (UINT64_MAX - 9) / 10) return std::nullopt;
      last = last * 10 + static_cast<std::uint64_t>(r[i] - '0');
    }
    if (r.size() == 2) return std::nullopt;
    if (last == 0) return expected == 1 ? 1 : 0;
    return last + 1;
  }

  // The wait before the next attempt: Retry-After when the registry gave one (at most a minute),
  // else the backoff.
  std::chrono::milliseconds wait_for(const Answer& a, std::chrono::milliseconds backoff) const {
    if (auto ra = a.attempt.response.header("retry-after")) {
      auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
      if (auto s = net::retry_after_seconds(*ra, now)) return std::chrono::seconds(std::min(*s, k_longest_retry_after_s));
    }
    return backoff;
  }

  // One exchange, its body kept up to `limit` (more is an error: nothing is kept).
  Answer exchange(net::Request req, std::uint64_t limit, const std::string* body) {
    req.fail_on_error = false;
    std::size_t sent = 0;
    if (body) {
      req.body_length = body->size();
      req.body = [body, &sent](char* buf, std::size_t max) {
        std::size_t n = std::min(max, body->size() - sent);
        std::copy_n(body->data() + sent, n, buf);
        sent += n;
        return n;
      };
    }
    Answer out;
    bool too_long = false;
    net::Sink sink;
    sink.data = [&](const char* data, std::size_t n) {
      if (out.body.size() + n > limit) {
        too_long = true;
        return false;
      }
      out.body.append(data, n);
      return true;
    };
    out.attempt = net::attempt(req, sink);
    if (too_long) {
      out.attempt.error = Error(ErrorCode::invalid, "the registry " + m_ref.host + " answered " + req.method + " " + req.url +
                                                        " with more than " + std::to_string(limit) + " bytes; nothing kept");
      out.attempt.transient = false;
      out.body.clear();
    }
    return out;
  }

  // An exchange with the registry's rules applied: authentication (once more after a 401), waits
  // on 429 and, for everything but a body that cannot be sent twice, retries of transient failures.
  util::Result<Answer> call(const std::string& method, const std::string& url, const std::string& what, std::uint64_t limit,
                            const std::string* body, const net::Headers& headers, long stall_timeout_s = 0) {
    std::chrono::milliseconds delay = m_o.retry_delay;
    bool reauthenticated = false;
    for (int attempt = 0;; ++attempt) {
      net::Request req;
      {
        std::lock_guard<std::mutex> l(m_mutex);
        SP_TRY(fresh_authorization());
        req = request(method, url);
      }
      if (stall_timeout_s > 0) req.stall_timeout_s = stall_timeout_s;
      for (const auto& h : headers) req.headers.push_back(h);
      Answer a = exchange(req, limit, body);
      bool retry = false;
      if (a.attempt.error) {
        retry = a.attempt.transient;
      } else if (a.status() == 401 && !reauthenticated) {
        reauthenticated = true;
        std::lock_guard<std::mutex> l(m_mutex);
        SP_TRY(authenticate(a));
        continue;
      } else {
        retry = a.status() == 429 || a.status() == 408 || a.status() >= 500;
      }
      if (!retry || attempt >= m_o.retries) {
        if (a.attempt.error)
          return Error(a.attempt.error->code, "cannot " + what + " in " + m_ref.repository_url() + ": " + a.attempt.error->message)
              .with_hint(a.attempt.transient ? "raise --retries if the registry is busy" : "check the registry's address and certificate");
        return a;
      }
      m_o.sleep(wait_for(a, delay));
      delay = std::min<std::chrono::milliseconds>(delay * 2, std::chrono::seconds(30));
    }
  }

  util::Status fresh_authorization_locked() {
    std::lock_guard<std::mutex> l(m_mutex);
    return fresh_authorization();
  }

  // A token near its end is renewed before it is used (the caller holds m_mutex).
  util::Status fresh_authorization() {
    if (!m_challenge || !m_expires || std::chrono::steady_clock::now() + std::chrono::seconds(5) < *m_expires) return {};
    return obtain(*m_challenge);
  }

  util::Status authenticate(const Answer& refused) {
    auto header = refused.attempt.response.header("www-authenticate");
    auto c = header ? parse_challenge(*header) : std::nullopt;
    if (!c || (c->scheme != "basic" && c->scheme != "bearer"))
      return Error(ErrorCode::io, "the registry " + m_ref.host + " asks for authentication (HTTP 401) in a way stackpin does not speak: " +
                                      util::printable(header.value_or("no WWW-Authenticate"), 200))
          .with_hint("stackpin speaks Basic and Bearer (the Docker token flow)");
    m_challenge = c;
    return obtain(*c);
  }

  util::Result<const std::optional<Credentials>*> credentials() {
    if (!m_looked_up) {
      SP_TRY_ASSIGN(m_credentials, credentials_for(m_ref.host, m_o.env));
      m_looked_up = true;
    }
    return &m_credentials;
  }

  util::Status obtain(const Challenge& c) {
    SP_TRY_ASSIGN(const std::optional<Credentials>* creds, credentials());
    const std::string login_hint =
        "log in with `docker login " + m_ref.host + "`, or set STACKPIN_REGISTRY_USERNAME and STACKPIN_REGISTRY_PASSWORD";
    if (c.scheme == "basic") {
      if (!*creds || (*creds)->username.empty())
        return Error(ErrorCode::io, "the registry " + m_ref.host + " asks for a user name and password, and none were found for it")
            .with_hint(login_hint);
      if (m_scheme == "http" && !loopback(m_ref.host) && !m_ref.plain_http)
        return Error(ErrorCode::io, "stackpin does not send a password to " + m_ref.host + " over plain HTTP");
      m_authorization = "Basic " + util::base64_encode((*creds)->username + ":" + (*creds)->password);
      m_expires.reset();
      return {};
    }
    // Bearer: a token from the realm, for this repository
    auto realm = c.params.find("realm");
    if (realm == c.params.end() || (realm->second.rfind("https://", 0) != 0 && realm->second.rfind("http://", 0) != 0))
      return Error(ErrorCode::io, "the registry " + m_ref.host + " asks for a token without a usable realm");
    const std::string& realm_url = realm->second;
    std::string host_of_realm = realm_url.substr(realm_url.find("://") + 3);
    host_of_realm = host_of_realm.substr(0, host_of_realm.find_first_of("/?"));
    const bool realm_plain = realm_url.rfind("http://", 0) == 0;
    std::string scope = "repository:" + m_ref.repository + (m_push ? ":pull,push" : ":pull");
    std::string query = "scope=" + util::percent_encode(scope);
    if (auto svc = c.params.find("service"); svc != c.params.end()) query = "service=" + util::percent_encode(svc->second) + "&" + query;
    net::Request req = plain_request("GET", with_query(realm_url, query));
    std::string form;
    if (*creds) {
      if (realm_plain && !loopback(host_of_realm) && !m_ref.plain_http)
        return Error(ErrorCode::io, "stackpin does not send credentials to the token service " + realm_url + " over plain HTTP");
      if (!(*creds)->identity_token.empty()) {  // OAuth2: the identity token is a refresh token, posted to the realm itself
        req = plain_request("POST", realm_url);
        req.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
        form = "grant_type=refresh_token&client_id=stackpin&refresh_token=" + util::percent_encode((*creds)->identity_token) + "&" + query;
      } else {
        req.headers.emplace_back("Authorization", "Basic " + util::base64_encode((*creds)->username + ":" + (*creds)->password));
      }
    }
    Answer a = exchange(req, k_answer_limit, form.empty() ? nullptr : &form);
    if (a.attempt.error)
      return Error(a.attempt.error->code,
                   "cannot get a token for " + m_ref.repository_url() + " from " + realm_url + ": " + a.attempt.error->message);
    if (a.status() == 401 || a.status() == 403)
      return Error(ErrorCode::io, "the token service " + realm_url + " refused " +
                                      (*creds ? "the credentials from " + (*creds)->source : std::string("anonymous access")) + " for " +
                                      scope + detail(a.body))
          .with_hint(login_hint);
    if (a.status() != 200)
      return Error(ErrorCode::io, "the token service " + realm_url + " answered HTTP " + std::to_string(a.status()) + detail(a.body));
    SP_TRY_ASSIGN(auto token, format::read_registry_token(a.body, "the answer of the token service " + realm_url));
    m_authorization = "Bearer " + token.token;
    m_expires = std::chrono::steady_clock::now() + std::chrono::seconds(token.expires_in);
    return {};
  }

  // POST a new upload session; returns its URL. A registry that already holds the blob may say so
  // (201 with a Location of the blob), which is an upload done.
  util::Result<std::string> start_upload(const std::string& digest) {
    static const std::string k_empty;
    SP_TRY_ASSIGN(auto a, call("POST", repo_url("/blobs/uploads/"), "start the upload of " + digest, k_answer_limit, &k_empty, {}));
    if (a.status() != 202) return unexpected(a, "start the upload of " + digest);
    auto loc = a.attempt.response.header("location");
    if (!loc || loc->empty()) return Error(ErrorCode::invalid, "the registry " + m_ref.host + " started an upload without a Location");
    return absolute(*loc);  // checked: an http(s) URL, not a downgrade from https
  }

  OciReference m_ref;
  RegistryOptions m_o;
  bool m_push = false;
  std::string m_scheme = "https";
  std::mutex m_mutex;  // guards the authorization below
  std::string m_authorization;
  std::optional<Challenge> m_challenge;
  std::optional<std::chrono::steady_clock::time_point> m_expires;  // of a token
  std::optional<Credentials> m_credentials;
  bool m_looked_up = false;
};

}  // namespace

std::string OciReference::repository_url() const { return std::string(plain_http ? "oci+http://" : "oci://") + host + "/" + repository; }

std::string OciReference::text() const {
  std::string t = repository_url();
  if (!tag.empty()) t += ":" + tag;
  if (!digest.empty()) t += "@" + digest;
  return t;
}

bool is_oci_url(std::string_view url) { return url.rfind("oci://", 0) == 0 || url.rfind("oci+http://", 0) == 0; }

util::Result<OciReference> parse_oci_reference(const std::string& url) {
  OciReference r;
  std::string rest;
  if (url.rfind("oci://", 0) == 0) {
    rest = url.substr(6);
  } else if (url.rfind("oci+http://", 0) == 0) {
    rest = url.substr(11);
    r.plain_http = true;
  } else {
    return Error(ErrorCode::usage, "'" + util::printable(url, 200) + "' is not an oci:// reference")
        .with_hint("write oci://HOST[:PORT]/REPOSITORY[:TAG], or oci+http://... for a registry that speaks plain HTTP");
  }
  auto bad = [&](const std::string& why) {
    return Error(ErrorCode::usage, "'" + util::printable(url, 200) + "' is not a usable OCI reference: " + why)
        .with_hint("write oci://HOST[:PORT]/REPOSITORY[:TAG|@sha256:HEX], e.g. oci://registry.example:5000/team/cuda-mirror");
  };
  auto slash = rest.find('/');
  if (slash == std::string::npos || slash == 0) return bad("it names no repository");
  r.host = util::to_lower(rest.substr(0, slash));
  if (!host_ok(r.host)) return bad("the host '" + util::printable(r.host, 100) + "' is not a host name and port");
  std::string path = rest.substr(slash + 1);
  if (auto at = path.find('@'); at != std::string::npos) {
    r.digest = path.substr(at + 1);
    path.resize(at);
    if (!model::oci::is_sha256_digest(r.digest)) return bad("the digest is not sha256:<64 lowercase hex>");
  }
  auto colon = path.rfind(':');
  if (colon != std::string::npos && path.find('/', colon) == std::string::npos) {
    r.tag = path.substr(colon + 1);
    path.resize(colon);
    if (!tag_ok(r.tag)) return bad("the tag '" + util::printable(r.tag, 130) + "' is not [A-Za-z0-9_][A-Za-z0-9._-]{0,127}");
  }
  if (!repository_ok(path))
    return bad("the repository '" + util::printable(path, 200) +
               "' is not lower-case letters and digits separated by '/', '.', '_' or '-'");
  r.repository = path;
  return r;
}

std::string oci_blob_url(const OciReference& repository, const std::string& sha256_hex) {
  return repository.repository_url() + "@sha256:" + sha256_hex;
}

util::Result<std::string> oci_blob_http_url(const std::string& repository, const std::string& sha256_hex) {
  SP_TRY_ASSIGN(auto ref, parse_oci_reference(repository));
  if (!ref.tag.empty() || !ref.digest.empty())
    return Error(ErrorCode::usage, "the archives' registry is a repository, without a tag or digest: " + repository)
        .with_hint("write oci://HOST/REPOSITORY");
  return std::string(ref.plain_http ? "http://" : "https://") + ref.host + "/v2/" + ref.repository + "/blobs/sha256:" + sha256_hex;
}

std::string oci_tag_from(const std::string& text) {
  std::string t;
  for (char c : text) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    t += ok ? c : '-';
    if (t.size() == 128) break;
  }
  if (t.empty() || !(std::isalnum(static_cast<unsigned char>(t.front())) || t.front() == '_')) t = "stack-" + t;
  return t.substr(0, 128);
}

util::Result<std::shared_ptr<RegistryClient>> RegistryClient::connect(const OciReference& ref, const RegistryOptions& o, bool push) {
  auto c = std::make_shared<Client>(ref, o, push);
  SP_TRY(c->connect());
  return std::shared_ptr<RegistryClient>(std::move(c));
}

}  // namespace core
