// OCI manifests and indexes (image-spec 1.1) and the registry's other JSON, with nlohmann::json.
#include "format/oci.hpp"

#include <nlohmann/json.hpp>

#include "json_impl.hpp"

#include "util/strings.hpp"
#include "util/url.hpp"

namespace format {

using nlohmann::json;
using util::Error;
using util::ErrorCode;

namespace {

json descriptor_json(const model::oci::Descriptor& d) {
  json j = json::object();
  j["mediaType"] = d.media_type;
  j["digest"] = d.digest;
  j["size"] = d.size;
  if (!d.artifact_type.empty()) j["artifactType"] = d.artifact_type;
  if (!d.annotations.empty()) j["annotations"] = d.annotations;
  if (d.data) j["data"] = *d.data;
  if (!d.os.empty() || !d.architecture.empty()) j["platform"] = {{"os", d.os}, {"architecture", d.architecture}};
  return j;
}

util::Result<std::map<std::string, std::string>> annotations_of(const json& j, const std::string& where) {
  std::map<std::string, std::string> out;
  if (!j.contains("annotations")) return out;
  const auto& a = j["annotations"];
  if (!a.is_object()) return Error(ErrorCode::invalid, where + ": `annotations` is not an object");
  for (const auto& [k, v] : a.items()) {
    if (!v.is_string()) return Error(ErrorCode::invalid, where + ": annotation " + util::printable(k, 80) + " is not a string");
    out[k] = v.get<std::string>();
  }
  return out;
}

util::Result<model::oci::Descriptor> descriptor_of(const json& j, const std::string& where) {
  if (!j.is_object()) return Error(ErrorCode::invalid, where + " is not an object");
  model::oci::Descriptor d;
  if (!j.contains("mediaType") || !j["mediaType"].is_string() || j["mediaType"].get<std::string>().empty())
    return Error(ErrorCode::invalid, where + " has no media type");
  d.media_type = j["mediaType"].get<std::string>();
  if (!j.contains("digest") || !j["digest"].is_string() || !model::oci::is_sha256_digest(j["digest"].get<std::string>()))
    return Error(ErrorCode::invalid, where + " has no sha256:<64 lowercase hex> digest")
        .with_hint("stackpin reads content addressed by SHA-256 only, the digest NVIDIA publishes");
  d.digest = j["digest"].get<std::string>();
  if (!j.contains("size") || !j["size"].is_number_unsigned())
    return Error(ErrorCode::invalid, where + " has no size (a non-negative integer)");
  d.size = j["size"].get<std::uint64_t>();
  if (j.contains("urls"))
    return Error(ErrorCode::invalid, where + " points outside the registry (`urls`: a foreign layer)")
        .with_hint("stackpin pulls only what the registry itself holds; this manifest was not written by `stackpin mirror push`");
  if (j.contains("artifactType")) {
    if (!j["artifactType"].is_string()) return Error(ErrorCode::invalid, where + ": `artifactType` is not a string");
    d.artifact_type = j["artifactType"].get<std::string>();
  }
  if (j.contains("data")) {
    if (!j["data"].is_string() || !util::base64_decode(j["data"].get<std::string>()))
      return Error(ErrorCode::invalid, where + ": `data` is not base64");
    d.data = j["data"].get<std::string>();
  }
  if (j.contains("platform")) {
    const auto& p = j["platform"];
    if (!p.is_object() || !p.contains("os") || !p["os"].is_string() || !p.contains("architecture") || !p["architecture"].is_string())
      return Error(ErrorCode::invalid, where + ": `platform` needs `os` and `architecture`");
    d.os = p["os"].get<std::string>();
    d.architecture = p["architecture"].get<std::string>();
  }
  SP_TRY_ASSIGN(d.annotations, annotations_of(j, where));
  return d;
}

util::Result<json> document(std::string_view bytes, const std::string& what, const char* media_type, const char* kind) {
  json doc = json::parse(bytes, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return Error(ErrorCode::invalid, what + " is not a JSON object");
  if (!doc.contains("schemaVersion") || !doc["schemaVersion"].is_number_integer() || doc["schemaVersion"].get<long long>() != 2)
    return Error(ErrorCode::invalid, what + " is not an OCI " + kind + " (schemaVersion is not 2)");
  if (doc.contains("mediaType") && (!doc["mediaType"].is_string() || doc["mediaType"].get<std::string>() != media_type))
    return Error(ErrorCode::invalid,
                 what + " is not an OCI " + kind + ": its mediaType is " +
                     util::printable(doc["mediaType"].is_string() ? doc["mediaType"].get<std::string>() : "not a string", 120) + ", not " +
                     media_type);
  return doc;
}

std::string artifact_type_of(const json& doc) {
  return doc.contains("artifactType") && doc["artifactType"].is_string() ? doc["artifactType"].get<std::string>() : std::string();
}

}  // namespace

std::string write_oci_manifest(const model::oci::ImageManifest& m) {
  json j = json::object();
  j["schemaVersion"] = 2;
  j["mediaType"] = model::oci::k_manifest_type;
  if (!m.artifact_type.empty()) j["artifactType"] = m.artifact_type;
  j["config"] = descriptor_json(m.config);
  j["layers"] = json::array();
  for (const auto& l : m.layers) j["layers"].push_back(descriptor_json(l));
  if (!m.annotations.empty()) j["annotations"] = m.annotations;
  return j.dump();
}

std::string write_oci_index(const model::oci::ImageIndex& i) {
  json j = json::object();
  j["schemaVersion"] = 2;
  j["mediaType"] = model::oci::k_index_type;
  if (!i.artifact_type.empty()) j["artifactType"] = i.artifact_type;
  j["manifests"] = json::array();
  for (const auto& d : i.manifests) j["manifests"].push_back(descriptor_json(d));
  if (!i.annotations.empty()) j["annotations"] = i.annotations;
  return j.dump();
}

util::Result<model::oci::ImageManifest> read_oci_manifest(std::string_view bytes, const std::string& what) {
  SP_TRY_ASSIGN(json doc, document(bytes, what, model::oci::k_manifest_type, "image manifest"));
  model::oci::ImageManifest m;
  m.artifact_type = artifact_type_of(doc);
  if (!doc.contains("config")) return Error(ErrorCode::invalid, what + " has no config");
  SP_TRY_ASSIGN(m.config, descriptor_of(doc["config"], what + " config"));
  if (!doc.contains("layers") || !doc["layers"].is_array()) return Error(ErrorCode::invalid, what + " has no `layers` list");
  std::size_t n = 0;
  for (const auto& l : doc["layers"]) {
    SP_TRY_ASSIGN(auto d, descriptor_of(l, what + " layer " + std::to_string(++n)));
    m.layers.push_back(std::move(d));
  }
  SP_TRY_ASSIGN(m.annotations, annotations_of(doc, what));
  return m;
}

util::Result<model::oci::ImageIndex> read_oci_index(std::string_view bytes, const std::string& what) {
  SP_TRY_ASSIGN(json doc, document(bytes, what, model::oci::k_index_type, "image index"));
  model::oci::ImageIndex i;
  i.artifact_type = artifact_type_of(doc);
  if (!doc.contains("manifests") || !doc["manifests"].is_array()) return Error(ErrorCode::invalid, what + " has no `manifests` list");
  std::size_t n = 0;
  for (const auto& l : doc["manifests"]) {
    SP_TRY_ASSIGN(auto d, descriptor_of(l, what + " entry " + std::to_string(++n)));
    if (d.media_type != model::oci::k_manifest_type)
      return Error(ErrorCode::invalid,
                   what + " entry " + std::to_string(n) + " is a " + util::printable(d.media_type, 120) + ", not an OCI image manifest");
    i.manifests.push_back(std::move(d));
  }
  SP_TRY_ASSIGN(i.annotations, annotations_of(doc, what));
  return i;
}

util::Result<RegistryToken> read_registry_token(std::string_view bytes, const std::string& what) {
  json doc = json::parse(bytes, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return Error(ErrorCode::invalid, what + " is not a JSON object");
  RegistryToken t;
  for (const char* key : {"token", "access_token"})
    if (t.token.empty() && doc.contains(key) && doc[key].is_string()) t.token = doc[key].get<std::string>();
  if (t.token.empty()) return Error(ErrorCode::invalid, what + " holds no token");
  for (char c : t.token)  // it goes into a header line
    if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e)
      return Error(ErrorCode::invalid, what + " holds a token with blanks or control characters");
  if (doc.contains("expires_in") && doc["expires_in"].is_number_integer()) {
    long long e = doc["expires_in"].get<long long>();
    t.expires_in = e < 1 ? 1 : e > 86400 ? 86400 : static_cast<long>(e);
  }
  return t;
}

std::string registry_error_text(std::string_view body) {
  json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("errors") || !doc["errors"].is_array()) return {};
  std::string out;
  for (const auto& e : doc["errors"]) {
    if (!e.is_object()) continue;
    std::string code = e.contains("code") && e["code"].is_string() ? e["code"].get<std::string>() : "";
    std::string message = e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>() : "";
    if (code.empty() && message.empty()) continue;
    if (!out.empty()) out += "; ";
    out += util::printable(code, 60) + (message.empty() ? "" : ": " + util::printable(message, 200));
    if (out.size() > 600) break;
  }
  return out;
}

util::Result<DockerConfig> read_docker_config(std::string_view text, const std::string& path) {
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return Error(ErrorCode::parse, path + " is not a JSON object").with_hint("fix or remove it (docker login writes it)");
  DockerConfig c;
  if (doc.contains("auths")) {
    if (!doc["auths"].is_object()) return Error(ErrorCode::invalid, path + ": `auths` is not an object");
    for (const auto& item : doc["auths"].items()) {
      const std::string& host = item.key();
      const json& entry = item.value();
      if (!entry.is_object()) return Error(ErrorCode::invalid, path + ": auths." + util::printable(host, 120) + " is not an object");
      DockerAuth a;
      auto str = [&](const char* key) { return entry.contains(key) && entry[key].is_string() ? entry[key].get<std::string>() : ""; };
      if (std::string auth = str("auth"); !auth.empty()) {
        auto plain = util::base64_decode(auth);
        auto colon = plain ? plain->find(':') : std::string::npos;
        if (!plain || colon == std::string::npos)
          return Error(ErrorCode::invalid, path + ": auths." + util::printable(host, 120) + ".auth is not base64 of \"user:password\"")
              .with_hint("log in again with `docker login " + util::printable(host, 120) + "`");
        a.username = plain->substr(0, colon);
        a.password = plain->substr(colon + 1);
      } else {
        a.username = str("username");
        a.password = str("password");
      }
      a.identity_token = str("identitytoken");
      c.auths[host] = std::move(a);
    }
  }
  if (doc.contains("credHelpers")) {
    if (!doc["credHelpers"].is_object()) return Error(ErrorCode::invalid, path + ": `credHelpers` is not an object");
    for (const auto& [host, helper] : doc["credHelpers"].items()) {
      if (!helper.is_string()) return Error(ErrorCode::invalid, path + ": credHelpers." + util::printable(host, 120) + " is not a string");
      c.cred_helpers[host] = helper.get<std::string>();
    }
  }
  if (doc.contains("credsStore")) {
    if (!doc["credsStore"].is_string()) return Error(ErrorCode::invalid, path + ": `credsStore` is not a string");
    c.creds_store = doc["credsStore"].get<std::string>();
  }
  return c;
}

util::Result<DockerAuth> read_credential_helper_answer(std::string_view text, const std::string& helper) {
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("Secret") || !doc["Secret"].is_string())
    return Error(ErrorCode::invalid, "the credential helper " + helper + " did not answer {\"Username\": ..., \"Secret\": ...}");
  DockerAuth a;
  a.username = doc.contains("Username") && doc["Username"].is_string() ? doc["Username"].get<std::string>() : "";
  a.password = doc["Secret"].get<std::string>();
  // docker's convention: the user name "<token>" means the secret is an identity token
  if (a.username == "<token>") {
    a.identity_token = a.password;
    a.username.clear();
    a.password.clear();
  }
  return a;
}

namespace {

json items_json(const std::vector<model::MirrorItem>& items) {
  json arr = json::array();
  for (const auto& it : items)
    arr.push_back(json{{"product", it.product},
                       {"component", it.component},
                       {"version", it.version},
                       {"platform", it.platform},
                       {"cuda", it.cuda},
                       {"file", it.file},
                       {"url", it.url},
                       {"sha256", it.sha256},
                       {"size", it.size},
                       {"status", it.status},
                       {"manifest_digest", it.manifest_digest},
                       {"path", it.path}});
  return arr;
}

}  // namespace

JsonDoc to_json(const model::MirrorPushReport& r) {
  return wrap(json{{"repository", r.repository},
                   {"tag", r.tag},
                   {"index_digest", r.index_digest},
                   {"lock_sha256", r.lock_sha256},
                   {"bytes_sent", r.bytes_sent},
                   {"archives", items_json(r.items)}});
}

JsonDoc to_json(const model::MirrorPullReport& r) {
  return wrap(json{{"reference", r.reference}, {"index_digest", r.index_digest}, {"dir", r.dir}, {"archives", items_json(r.items)}});
}

}  // namespace format
