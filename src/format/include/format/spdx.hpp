#pragma once
// SPDX 2.3 JSON documents (spdx.cpp): what a staged tree or an image redistributes. Pure: the same
// document always gives the same bytes.
#include <cstddef>
#include <string>
#include <vector>

namespace format {

struct SpdxFile {
  std::string path;          // relative to the tree's root, '/'-separated ("lib64/libcudart.so.12")
  std::string sha1, sha256;  // lowercase hex
};

struct SpdxLicense {
  std::string id;    // LicenseRef-NVIDIA-CUDA-Toolkit
  std::string name;  // NVIDIA's name for it, from the redistrib manifests ("CUDA Toolkit", "cudnn")
  std::string text;  // the licence's text, as the archive carries it
};

struct SpdxPackage {
  std::string id;                 // SPDXRef-Package-cuda-cudart
  std::string name, version;      // cuda_cudart, 12.4.127
  std::string download_location;  // NVIDIA's URL; "" when the bytes are not known to be NVIDIA's (download and supplier NOASSERTION)
  std::string file_name;          // the archive's file name
  std::string sha256;
  std::string license_id;          // a SpdxLicense id, or "NOASSERTION"
  std::string verification_code;   // SPDX's package verification code over its files' SHA-1s
  std::vector<std::size_t> files;  // indices into SpdxDocument::files
};

struct SpdxDocument {
  std::string name, namespace_uri;
  std::string created;  // 2026-12-02T06:30:00Z
  std::string tool;     // "stackpin-0.1.0"
  std::string comment;
  std::vector<SpdxPackage> packages;
  std::vector<SpdxFile> files;  // SPDXRef-File-<index+1>
  std::vector<SpdxLicense> licenses;
};

// The SPDX 2.3 JSON text: the document DESCRIBES every package, each package CONTAINS its files,
// files carry SHA1 and SHA256, packages their archive's SHA256 and download location, licences are
// LicenseRef- entries with NVIDIA's names and texts, and the tool is the creator.
std::string write_spdx(const SpdxDocument& d);

// An SPDX identifier's tail from any name: letters, digits, '.' and '-' kept, everything else '-'.
std::string spdx_id_part(const std::string& name);

}  // namespace format
