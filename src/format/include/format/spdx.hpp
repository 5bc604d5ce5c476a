#pragma once
// SPDX 2.3 JSON documents (spdx.cpp): what a staged tree or an image redistributes. Pure: the same
// document always gives the same bytes.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "util/result.hpp"

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

// What an image build needs to write the document itself, with the files its runtime stage
// receives (src/gen/spdx-writer.sh reads it): the document without files, where each licence's
// text may be, which folder belongs to which package, and how the namespace is made. The writer
// gives the bytes write_spdx gives for the same document with those files in path order.
struct SpdxPlan {
  SpdxDocument doc;                                     // packages without files; licences with the text used when none is found
  std::vector<std::string> package_keys;                // per package: the name the build's records of files use ("cudnn", "cuda_cudart")
  std::vector<std::vector<std::string>> license_paths;  // per licence: where its text may be in the image, in order
  std::vector<std::pair<std::string, std::string>> owned_folders;  // a folder in the image -> the key of the package owning it
  // documentNamespace: namespace_prefix + the first 32 hex digits of the SHA-256 of the identity
  // lines, then "<path> <sha256>" per file, each line ending with '\n'
  std::string namespace_prefix;
  std::vector<std::string> identity;
};

// The plan as spdx-writer.sh reads it: a version line, then tab-separated records whose strings
// are JSON as write_spdx writes them. Errors: invalid (a key, path, prefix or identity line with
// a tab or line break, which the records cannot carry).
util::Result<std::string> write_spdx_plan(const SpdxPlan& plan);

// An SPDX identifier's tail from any name: letters, digits, '.' and '-' kept, everything else '-'.
std::string spdx_id_part(const std::string& name);

}  // namespace format
