// OCI manifests and indexes as JSON, and the other JSON a registry client reads: the token
// endpoint's answer, a registry's error body, Docker's config.json and a credential helper's answer.
// Everything read here is untrusted (a registry, a proxy, another user's config file).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "format/json.hpp"
#include "model/oci.hpp"
#include "util/result.hpp"

namespace format {

// The canonical bytes stackpin pushes: keys sorted, no blanks. Their SHA-256 is the digest.
std::string write_oci_manifest(const model::oci::ImageManifest& m);
std::string write_oci_index(const model::oci::ImageIndex& i);

// Reads a manifest (`what` names it in errors: the reference it came from). Refused: not JSON,
// schemaVersion other than 2, a mediaType other than the image manifest's, a descriptor without a
// media type, with a malformed sha256 digest (other algorithms are refused too) or size, or with
// `urls` (content outside the registry). Errors: invalid.
util::Result<model::oci::ImageManifest> read_oci_manifest(std::string_view bytes, const std::string& what);
util::Result<model::oci::ImageIndex> read_oci_index(std::string_view bytes, const std::string& what);

// The Docker token endpoint's answer: `token` (or OAuth2's `access_token`) and its lifetime.
struct RegistryToken {
  std::string token;
  long expires_in = 60;  // seconds (the spec's default when absent)
};
util::Result<RegistryToken> read_registry_token(std::string_view bytes, const std::string& what);

// "CODE: message; CODE: message" from a registry's {"errors": [...]} body; "" when it has none.
std::string registry_error_text(std::string_view body);

// ~/.docker/config.json: `auths` (per registry: `auth`, base64 of "user:password", or `username`
// and `password`, or an `identitytoken`), `credHelpers` (registry -> helper name) and
// `credsStore` (the helper for every other registry). Unknown keys are ignored.
struct DockerAuth {
  std::string username, password, identity_token;
};
struct DockerConfig {
  std::map<std::string, DockerAuth> auths;  // keyed as written ("registry.example:5000", "https://index.docker.io/v1/")
  std::map<std::string, std::string> cred_helpers;
  std::string creds_store;
};
util::Result<DockerConfig> read_docker_config(std::string_view text, const std::string& path);

// A credential helper's `get` answer: {"Username": ..., "Secret": ...}. Errors: invalid.
util::Result<DockerAuth> read_credential_helper_answer(std::string_view text, const std::string& helper);

// The --json data of `stackpin mirror push` and `pull`.
JsonDoc to_json(const model::MirrorPushReport& r);
JsonDoc to_json(const model::MirrorPullReport& r);

}  // namespace format
