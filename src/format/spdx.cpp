#include "format/spdx.hpp"

#include <nlohmann/json.hpp>

namespace format {

using ojson = nlohmann::ordered_json;

std::string spdx_id_part(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) c = '-';
  return out.empty() ? "unnamed" : out;
}

namespace {
std::string file_id(std::size_t i) { return "SPDXRef-File-" + std::to_string(i + 1); }

// NVIDIA's only where the bytes are an archive NVIDIA publishes (its download location is known)
std::string supplier(const SpdxPackage& p) { return p.download_location.empty() ? "NOASSERTION" : "Organization: NVIDIA Corporation"; }
std::string download(const SpdxPackage& p) { return p.download_location.empty() ? "NOASSERTION" : p.download_location; }
std::string declared(const SpdxPackage& p) { return p.license_id.empty() ? "NOASSERTION" : p.license_id; }

// A JSON string, escaped as write_spdx's document escapes it.
std::string quoted(const std::string& s) { return ojson(s).dump(-1, ' ', false, ojson::error_handler_t::replace); }
}  // namespace

std::string write_spdx(const SpdxDocument& d) {
  ojson doc;
  doc["spdxVersion"] = "SPDX-2.3";
  doc["dataLicense"] = "CC0-1.0";
  doc["SPDXID"] = "SPDXRef-DOCUMENT";
  doc["name"] = d.name;
  doc["documentNamespace"] = d.namespace_uri;
  doc["creationInfo"] = ojson{{"created", d.created}, {"creators", ojson::array({"Tool: " + d.tool})}};
  if (!d.comment.empty()) doc["comment"] = d.comment;
  ojson describes = ojson::array();
  for (const auto& p : d.packages) describes.push_back(p.id);
  doc["documentDescribes"] = describes;

  ojson packages = ojson::array();
  ojson relationships = ojson::array();
  for (const auto& p : d.packages) {
    ojson j;
    j["SPDXID"] = p.id;
    j["name"] = p.name;
    if (!p.version.empty()) j["versionInfo"] = p.version;
    j["packageFileName"] = p.file_name;
    j["supplier"] = supplier(p);
    j["downloadLocation"] = download(p);
    j["filesAnalyzed"] = !p.files.empty();
    if (!p.files.empty()) j["packageVerificationCode"] = ojson{{"packageVerificationCodeValue", p.verification_code}};
    j["checksums"] = ojson::array({ojson{{"algorithm", "SHA256"}, {"checksumValue", p.sha256}}});
    j["licenseConcluded"] = "NOASSERTION";
    j["licenseDeclared"] = declared(p);
    j["copyrightText"] = "NOASSERTION";
    packages.push_back(std::move(j));
    relationships.push_back({{"spdxElementId", "SPDXRef-DOCUMENT"}, {"relationshipType", "DESCRIBES"}, {"relatedSpdxElement", p.id}});
    for (std::size_t f : p.files)
      relationships.push_back({{"spdxElementId", p.id}, {"relationshipType", "CONTAINS"}, {"relatedSpdxElement", file_id(f)}});
  }
  doc["packages"] = packages;
  ojson files = ojson::array();
  for (std::size_t i = 0; i < d.files.size(); ++i) {
    const auto& f = d.files[i];
    files.push_back({{"SPDXID", file_id(i)},
                     {"fileName", "./" + f.path},
                     {"checksums", ojson::array({ojson{{"algorithm", "SHA1"}, {"checksumValue", f.sha1}},
                                                 ojson{{"algorithm", "SHA256"}, {"checksumValue", f.sha256}}})},
                     {"licenseConcluded", "NOASSERTION"},
                     {"copyrightText", "NOASSERTION"}});
  }
  doc["files"] = files;
  if (!d.licenses.empty()) {
    ojson lic = ojson::array();
    for (const auto& l : d.licenses) lic.push_back({{"licenseId", l.id}, {"name", l.name}, {"extractedText", l.text}});
    doc["hasExtractedLicensingInfos"] = lic;
  }
  doc["relationships"] = relationships;
  // replace: a licence text or a path that is not UTF-8 must not abort the document
  return doc.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
}

util::Result<std::string> write_spdx_plan(const SpdxPlan& plan) {
  const SpdxDocument& d = plan.doc;
  auto plain = [](const std::string& what, const std::string& v) -> util::Status {
    if (v.find_first_of("\t\n\r") != std::string::npos)
      return util::Error(util::ErrorCode::invalid, "the SPDX plan cannot carry " + what + " with a tab or line break");
    return {};
  };
  if (plan.package_keys.size() != d.packages.size() || plan.license_paths.size() != d.licenses.size())
    return util::Error(util::ErrorCode::internal, "an SPDX plan without a key per package or paths per licence");
  std::string out = "stackpin-spdx-plan 1\n";
  out += "name\t" + quoted(d.name) + "\n";
  out += "created\t" + quoted(d.created) + "\n";
  out += "creator\t" + quoted("Tool: " + d.tool) + "\n";
  if (!d.comment.empty()) out += "comment\t" + quoted(d.comment) + "\n";
  SP_TRY(plain("the namespace", plan.namespace_prefix));
  out += "namespace\t" + plan.namespace_prefix + "\n";
  for (const auto& l : plan.identity) {
    SP_TRY(plain("the namespace's input", l));
    out += "identity\t" + l + "\n";
  }
  for (std::size_t i = 0; i < d.packages.size(); ++i) {
    const auto& p = d.packages[i];
    SP_TRY(plain("a package key", plan.package_keys[i]));
    SP_TRY(plain("a SHA-256", p.sha256));
    out += "package\t" + plan.package_keys[i] + "\t" + quoted(p.id) + "\t" + quoted(p.name) + "\t" +
           (p.version.empty() ? std::string() : quoted(p.version)) + "\t" + quoted(p.file_name) + "\t" + quoted(supplier(p)) + "\t" +
           quoted(download(p)) + "\t" + p.sha256 + "\t" + quoted(declared(p)) + "\n";
  }
  for (std::size_t i = 0; i < d.licenses.size(); ++i) {
    const auto& l = d.licenses[i];
    out += "license\t" + quoted(l.id) + "\t" + quoted(l.name) + "\t" + quoted(l.text);
    for (const auto& path : plan.license_paths[i]) {
      SP_TRY(plain("a licence's path", path));
      out += "\t" + path;
    }
    out += "\n";
  }
  for (const auto& [folder, key] : plan.owned_folders) {
    SP_TRY(plain("a folder", folder));
    SP_TRY(plain("a package key", key));
    out += "owner\t" + folder + "\t" + key + "\n";
  }
  return out;
}

}  // namespace format
