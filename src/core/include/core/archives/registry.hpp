#pragma once
// An OCI registry as a mirror of archives: `oci://HOST[:PORT]/REPOSITORY[:TAG|@DIGEST]` references,
// the registry's HTTP API (distribution-spec 1.1) with its authentication, and the blob and
// manifest requests that `stackpin mirror` and fetch's oci:// mirrors make.
//
// Transport: HTTPS with the system's CAs, or the PEM bundle SSL_CERT_FILE names (libcurl; WinHTTP
// uses the Windows store). Plain HTTP only for `oci+http://` (asked for explicitly) and, after an
// HTTPS attempt that fails, for a loopback host (an IPv4 literal in 127.0.0.0/8, ::1, localhost)
// whose plain answer is a registry's, as Docker does. The Authorization header goes to the
// registry's own scheme, host and port only.
//
// Authentication, as a registry asks for it in its 401's WWW-Authenticate: Basic (the credentials
// are sent to that host only), or Bearer (the Docker token flow: a token for
// "repository:REPO:pull[,push]" from the realm, asked with the credentials when there are some, or
// with an identity token as OAuth2's refresh token; renewed before it expires). Credentials, first
// found wins: STACKPIN_REGISTRY_USERNAME and STACKPIN_REGISTRY_PASSWORD (for the registry
// STACKPIN_REGISTRY_HOST names, or every one when it is unset); the auth file
// REGISTRY_AUTH_FILE names; DOCKER_CONFIG/config.json (else ~/.docker/config.json): its
// credHelpers entry for the host (docker-credential-NAME get), its auths entry, its credsStore.
//
// Every answer is untrusted: a manifest is read only up to 4 MiB and must hash to the digest it was
// asked by, a blob must be the digest and size it was asked for, 429 waits as Retry-After says (at
// most 60 s, at most --retries times), redirects to blob storage are followed without the
// registry's Authorization.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "net/download.hpp"
#include "util/env.hpp"
#include "util/result.hpp"

namespace core {

struct OciReference {
  std::string host;         // "registry.example:5000", lower case
  std::string repository;   // "team/cuda-mirror"
  std::string tag;          // "" when none
  std::string digest;       // "sha256:<hex>", "" when none
  bool plain_http = false;  // oci+http://: HTTP allowed explicitly
  // oci://host/repo (no tag or digest), with oci+http:// kept
  std::string repository_url() const;
  // the whole reference as given, normalised
  std::string text() const;
};

// Whether `url` is an oci:// or oci+http:// reference.
bool is_oci_url(std::string_view url);

// Parses oci://HOST[:PORT]/REPOSITORY[:TAG|@sha256:HEX] (and oci+http://). The repository follows
// the distribution spec's grammar (lower-case path components of [a-z0-9] with . _ __ - between);
// a tag is [A-Za-z0-9_][A-Za-z0-9._-]{0,127}. Errors: usage, naming what is wrong.
util::Result<OciReference> parse_oci_reference(const std::string& url);

// oci://HOST/REPO@sha256:<hex>: the blob of an archive in a mirror (fetch's candidate URL).
std::string oci_blob_url(const OciReference& repository, const std::string& sha256_hex);

// The blob's URL in the registry's own API (https://HOST/v2/REPO/blobs/sha256:HEX; http:// for
// oci+http://), for a client that pulls anonymously by URL (Docker's ADD). Errors: usage (not an
// oci:// repository, or one with a tag or digest).
util::Result<std::string> oci_blob_http_url(const std::string& repository, const std::string& sha256_hex);

// A tag made of free text: the characters a tag cannot hold become '-', at most 128.
std::string oci_tag_from(const std::string& text);

struct RegistryOptions {
  const util::Env* env = nullptr;  // credentials, SSL_CERT_FILE, proxies, HOME; nullptr = none
  std::string user_agent = "stackpin";
  int retries = 5;                              // for transient failures and 429
  std::chrono::milliseconds retry_delay{1000};  // first backoff, doubled each time
  long connect_timeout_s = 30;
  long stall_timeout_s = 60;
  std::function<void(std::chrono::milliseconds)> sleep;  // default: sleep_for
};

class RegistryClient {
 public:
  // A client for `ref`'s repository; `push` asks for push access as well as pull. The registry
  // is reached (GET /v2/) and authenticated here. Errors: io (unreachable, TLS, HTTP errors,
  // credentials refused or missing where they are needed: the message says which), invalid (a
  // registry answer that cannot be read, a credentials file that is not JSON).
  static util::Result<std::shared_ptr<RegistryClient>> connect(const OciReference& ref, const RegistryOptions& o, bool push);

  virtual ~RegistryClient() = default;

  // "https://host" or "http://host", as reached
  virtual std::string base_url() const = 0;
  virtual const OciReference& reference() const = 0;

  // A GET of the blob `digest` with this client's authorization (renewed when near its expiry),
  // for a caller that streams it (fetch's transfer): redirects are followed, without it.
  virtual util::Result<net::Request> blob_request(const std::string& digest) = 0;
  // After a 401 to a request made with blob_request: forget the token (the next one asks anew).
  virtual void authorization_refused() = 0;

  // HEAD: the blob's size when the repository has it, nullopt when not.
  virtual util::Result<std::optional<std::uint64_t>> blob_size(const std::string& digest) = 0;

  // Uploads `size` bytes of `file` as blob `digest` in chunks of `chunk` bytes (PATCH with
  // Content-Range), resuming after a cut connection from what the registry says it holds; the
  // bytes are hashed as they are read and the upload is committed (PUT ?digest=) only when they
  // are `digest`. `progress` gets the bytes the registry holds. Errors: mismatch (the file is not
  // `digest`: nothing committed), io.
  virtual util::Status upload_blob(const std::string& digest, std::uint64_t size, const std::filesystem::path& file, std::uint64_t chunk,
                                   const std::function<void(std::uint64_t)>& progress) = 0;
  // Uploads small content (a manifest's config) in one request.
  virtual util::Status upload_small_blob(const std::string& digest, const std::string& bytes) = 0;

  // PUT a manifest (or index) of `media_type` under `reference` (a tag or its digest).
  virtual util::Status put_manifest(const std::string& reference, const std::string& media_type, const std::string& bytes) = 0;

  // GET a manifest or index by tag or digest, accepting the OCI manifest and index types; at most
  // 4 MiB. A digest reference must hash to itself; the digest a tag resolved to is returned
  // (Docker-Content-Digest must equal the bytes' digest when given). Errors: not_found, invalid,
  // io.
  struct Manifest {
    std::string media_type;  // the Content-Type
    std::string digest;      // "sha256:<hex>" of the bytes
    std::string bytes;
  };
  virtual util::Result<Manifest> get_manifest(const std::string& reference) = 0;
};

}  // namespace core
