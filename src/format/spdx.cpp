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
    // NVIDIA's only where the bytes are an archive NVIDIA publishes (its download location is known)
    j["supplier"] = p.download_location.empty() ? "NOASSERTION" : "Organization: NVIDIA Corporation";
    j["downloadLocation"] = p.download_location.empty() ? "NOASSERTION" : p.download_location;
    j["filesAnalyzed"] = !p.files.empty();
    if (!p.files.empty()) j["packageVerificationCode"] = ojson{{"packageVerificationCodeValue", p.verification_code}};
    j["checksums"] = ojson::array({ojson{{"algorithm", "SHA256"}, {"checksumValue", p.sha256}}});
    j["licenseConcluded"] = "NOASSERTION";
    j["licenseDeclared"] = p.license_id.empty() ? "NOASSERTION" : p.license_id;
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

}  // namespace format
