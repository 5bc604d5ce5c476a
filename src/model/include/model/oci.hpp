#pragma once
// OCI content as stackpin pushes and pulls it (the image-spec 1.1 image manifest and index, with
// the ORAS conventions for artifacts): each archive one manifest whose one layer is the archive's
// bytes, described by its SHA-256 (NVIDIA's published digest), and one index per lock listing them.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace model::oci {

inline constexpr const char* k_manifest_type = "application/vnd.oci.image.manifest.v1+json";
inline constexpr const char* k_index_type = "application/vnd.oci.image.index.v1+json";
// The empty config of an artifact (image-spec 1.1): "{}", two bytes.
inline constexpr const char* k_empty_type = "application/vnd.oci.empty.v1+json";
inline constexpr const char* k_empty_digest = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
inline constexpr const char* k_empty_data = "{}";
// What stackpin's artifacts are: one archive (NVIDIA's, or a wheel of the Python lock), and the
// index of a stack's lock.
inline constexpr const char* k_archive_artifact = "application/vnd.stackpin.archive.v1";
inline constexpr const char* k_stack_artifact = "application/vnd.stackpin.stack.v1";

// Annotations: image-spec's own, and stackpin's (reverse-DNS, as the spec asks).
inline constexpr const char* k_title = "org.opencontainers.image.title";
inline constexpr const char* k_source = "org.opencontainers.image.source";
inline constexpr const char* k_version = "org.opencontainers.image.version";
inline constexpr const char* k_created = "org.opencontainers.image.created";
inline constexpr const char* k_url = "dev.stackpin.archive.url";              // where the archive came from
inline constexpr const char* k_product = "dev.stackpin.archive.product";      // cudnn, cuda, python
inline constexpr const char* k_component = "dev.stackpin.archive.component";  // cuda_nvcc, libcublas, torch...
inline constexpr const char* k_platform = "dev.stackpin.archive.platform";    // linux-x86_64, windows-x86_64, ...
inline constexpr const char* k_cuda_variant = "dev.stackpin.archive.cuda";    // the CUDA major a cuDNN archive is built for
inline constexpr const char* k_stack = "dev.stackpin.stack";                  // the stack's name (index)
inline constexpr const char* k_lock_sha256 = "dev.stackpin.lock.sha256";      // the lock it mirrors (index)

struct Descriptor {
  std::string media_type;
  std::string digest;  // "sha256:<64 hex>"
  std::uint64_t size = 0;
  std::string artifact_type;
  std::map<std::string, std::string> annotations;
  std::optional<std::string> data;  // base64, for the empty config
  std::string os, architecture;     // the platform of an index entry ("" when none)

  std::string annotation(const std::string& key) const {
    auto it = annotations.find(key);
    return it == annotations.end() ? std::string() : it->second;
  }
};

struct ImageManifest {
  std::string artifact_type;
  Descriptor config;
  std::vector<Descriptor> layers;
  std::map<std::string, std::string> annotations;
};

struct ImageIndex {
  std::string artifact_type;
  std::vector<Descriptor> manifests;
  std::map<std::string, std::string> annotations;
};

// "sha256:<64 lowercase hex>"
bool is_sha256_digest(const std::string& digest);

}  // namespace model::oci

namespace model {

// One archive of a stack, as a registry mirror holds it (`stackpin mirror`).
struct MirrorItem {
  std::string product;    // cudnn, cuda, python
  std::string component;  // cudnn, cuda_nvcc, ..., the wheel's package
  std::string version;    // cuDNN's, the component's or the package's
  std::string platform;   // linux-x86_64, ... ("" for a wheel: its file name says)
  std::string cuda;       // the CUDA major a cuDNN archive is built for ("" otherwise)
  std::string file;       // the file name
  std::string url;        // where it comes from
  std::string sha256;     // 64 hex
  std::uint64_t size = 0;
  // push: "sent" (uploaded now), "present" (the registry had it); pull: "written", "present"
  std::string status;
  std::string manifest_digest;  // of its image manifest
  std::string path;             // push: the file it was read from; pull: the file written
};

struct MirrorPushReport {
  std::string repository;  // oci://HOST/REPO
  std::string tag;
  std::string index_digest;
  std::string lock_sha256;  // of the lock (or the manifest, when it has none) the tag is made from
  std::vector<MirrorItem> items;
  std::uint64_t bytes_sent = 0;
};

struct MirrorPullReport {
  std::string reference;  // what was pulled
  std::string index_digest;
  std::string dir;
  std::vector<MirrorItem> items;
};

}  // namespace model
