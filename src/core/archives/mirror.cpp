// `stackpin mirror push` and `pull` (see core/archives/mirror.hpp).
#include "core/archives/mirror.hpp"

#include <algorithm>
#include <string_view>
#include <system_error>

#include "archives/fetch_transfer.hpp"
#include "core/archives/cache.hpp"
#include "core/archives/nvidia_manifests.hpp"
#include "core/archives/verify.hpp"
#include "crypto/sha256.hpp"
#include "format/oci.hpp"
#include "knowledge/cuda_catalog.hpp"
#include "model/oci.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

namespace {

namespace oci = model::oci;

// The layer's media type, from the file's kind (types that tools copying OCI content leave as they
// are: none of them is an image layer, which a copy might recompress).
std::string media_type_of(const std::string& file) {
  auto ends = [&](const std::string& suffix) {
    return file.size() >= suffix.size() && file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends(".tar.xz")) return "application/x-xz";
  if (ends(".tar.gz") || ends(".tgz")) return "application/gzip";
  if (ends(".whl") || ends(".zip")) return "application/zip";
  if (ends(".deb")) return "application/vnd.debian.binary-package";
  if (ends(".exe")) return "application/vnd.microsoft.portable-executable";
  return "application/octet-stream";
}

std::string sha256_hex(std::string_view bytes) { return crypto::to_hex(crypto::sha256_of(bytes)); }

// A file name a manifest may give: one plain component that every file system holds (no
// separators, control characters or characters Windows refuses, no trailing dot or blank, not a
// reserved device name such as NUL or COM1).
bool plain_file_name(const std::string& name) {
  if (name.empty() || name.size() > 255 || name == "." || name == ".." || name.back() == '.' || name.back() == ' ') return false;
  if (std::any_of(name.begin(), name.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || std::string_view("/\\:*?\"<>|").find(c) != std::string_view::npos;
      }))
    return false;
  std::string stem = util::to_lower(name.substr(0, name.find('.')));
  static const char* const k_devices[] = {"con",  "prn",  "aux",  "nul",  "com1", "com2", "com3", "com4", "com5", "com6", "com7",
                                          "com8", "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9"};
  return std::none_of(std::begin(k_devices), std::end(k_devices), [&](const char* d) { return stem == d; });
}

oci::ImageManifest manifest_for(const MirrorItem& it) {
  oci::ImageManifest m;
  m.artifact_type = oci::k_archive_artifact;
  m.config.media_type = oci::k_empty_type;
  m.config.digest = oci::k_empty_digest;
  m.config.size = 2;
  m.config.data = "e30=";
  oci::Descriptor layer;
  layer.media_type = media_type_of(it.file);
  layer.digest = "sha256:" + it.sha256;
  layer.size = it.size;
  layer.annotations[oci::k_title] = it.file;
  m.layers.push_back(std::move(layer));
  m.annotations[oci::k_url] = it.url;
  m.annotations[oci::k_product] = it.product;
  m.annotations[oci::k_component] = it.component;
  if (!it.version.empty()) m.annotations[oci::k_version] = it.version;
  if (!it.platform.empty()) m.annotations[oci::k_platform] = it.platform;
  if (!it.cuda.empty()) m.annotations[oci::k_cuda_variant] = it.cuda;
  m.annotations[oci::k_title] = it.file;
  return m;
}

// Where an archive goes in a plain copy of NVIDIA's tree: its URL's path under NVIDIA's compute
// tree, python/FILE for a wheel, other/FILE for anything else. nullopt for a path that could leave DIR.
std::optional<fs::path> tree_path(const MirrorItem& it) {
  if (it.product == "python") return fs::path("python") / it.file;
  const std::string base = k_nvidia_base;
  if (it.url.rfind(base, 0) != 0) return fs::path("other") / it.file;
  auto parts = util::split(it.url.substr(base.size()), '/');
  if (parts.empty() || parts.back() != it.file) return std::nullopt;
  fs::path rel;
  for (const auto& p : parts) {
    if (!plain_file_name(p)) return std::nullopt;
    rel /= p;
  }
  return rel;
}

}  // namespace

util::Result<std::vector<MirrorItem>> mirror_items(const model::Manifest& m, const model::PyLock* pylock,
                                                   const knowledge::KnowledgeBase& kb, const std::vector<model::Platform>& platforms) {
  // as fetch chooses: the archives the manifest writes, and of those its lock or the knowledge base
  // imply, its targets' platforms; or exactly the platforms asked for
  std::vector<model::Platform> wanted = platforms;
  if (wanted.empty()) {
    if (m.windows) wanted.push_back(m.windows_platform());
    if (m.linux || m.docker || !m.windows) wanted.push_back(model::host_linux_platform());
  }
  auto take = [&](const model::ArchivePin& pin) {
    bool listed = std::find(wanted.begin(), wanted.end(), pin.platform.value) != wanted.end();
    return platforms.empty() ? (!pin.implied || listed) : listed;
  };
  std::vector<MirrorItem> out;
  auto add = [&](MirrorItem it) {
    for (const auto& o : out)
      if (o.sha256 == it.sha256) return;  // one blob, one manifest
    out.push_back(std::move(it));
  };
  if (m.cudnn) {
    for (const auto& pin : m.cudnn->archives) {
      if (!take(pin)) continue;
      SP_TRY_ASSIGN(auto p, pinned_archive(m, pin.platform.value, kb));
      MirrorItem it;
      it.product = "cudnn";
      it.component = "cudnn";
      it.version = m.cudnn->version.value.text();
      it.platform = model::to_string(pin.platform.value);
      if (m.cudnn->cuda) it.cuda = std::to_string(m.cudnn->cuda->value);
      it.file = p.expect.file;
      it.sha256 = p.expect.sha256;
      it.size = *p.expect.size;
      it.url = pin.url ? pin.url->value
               : pin.origin.value == model::Origin::nvidia && m.cudnn->cuda
                   ? kb.cudnn_archive_url(m.cudnn->version.value, m.cudnn->cuda->value, pin.platform.value)
                   : std::string();
      add(std::move(it));
    }
  }
  if (m.cuda) {
    for (const auto& pin : m.cuda->archives) {
      if (!take(pin)) continue;
      SP_TRY_ASSIGN(auto p, pinned_cuda_archive(m, pin));
      MirrorItem it;
      it.product = "cuda";
      it.component = pin.component ? pin.component->value : "";
      it.version = pin.component_version;
      it.platform = model::to_string(pin.platform.value);
      it.file = p.expect.file;
      it.sha256 = p.expect.sha256;
      it.size = *p.expect.size;
      it.url = pin.url ? pin.url->value : "";
      add(std::move(it));
    }
  }
  if (pylock) {
    for (const auto& pkg : pylock->packages) {
      for (const auto& w : pkg.wheels) {
        MirrorItem it;
        it.product = "python";
        it.component = pkg.name;
        it.version = pkg.version;
        it.file = w.name;
        it.sha256 = w.sha256;
        it.size = w.size;
        it.url = w.url;
        add(std::move(it));
      }
    }
  }
  for (const auto& it : out)
    if (!plain_file_name(it.file))
      return Error(ErrorCode::invalid, "the archive file name '" + util::printable(it.file, 200) + "' (" + it.product + " " + it.component +
                                           ") is not a plain file name");
  if (out.empty())
    return Error(ErrorCode::invalid, m.path + " pins no archive to mirror" + (platforms.empty() ? "" : " for the platforms asked for"))
        .with_hint("pin [cudnn], [cuda] components or [frameworks] (with `stackpin lock` for the Python lock)");
  return out;
}

util::Result<MirrorPushReport> mirror_push(const model::Manifest& m, const model::Lock* lock, const model::PyLock* pylock,
                                           const knowledge::KnowledgeBase& kb, const OciReference& repository, const MirrorPushOptions& o) {
  if (!repository.digest.empty())
    return Error(ErrorCode::usage, "push to a repository (and tag), not to a digest: " + repository.text())
        .with_hint("write oci://HOST/REPOSITORY or oci://HOST/REPOSITORY:TAG");
  if (o.fetch.cache_dir.empty()) return Error(ErrorCode::usage, "no cache directory given").with_hint("give one with --cache-dir DIR");
  SP_TRY(check_mirrors(o.fetch.mirrors));
  SP_TRY_ASSIGN(auto items, mirror_items(m, pylock, kb, o.platforms));

  MirrorPushReport report;
  report.repository = repository.repository_url();
  // the tag: the stack's name and the lock it mirrors (the manifest, without one)
  {
    std::string source = lock ? lock->path : m.path;
    SP_TRY_ASSIGN(std::string bytes, util::read_file(source));
    report.lock_sha256 = sha256_hex(bytes);
    std::string name = m.name.value.empty() ? "stack" : m.name.value;
    report.tag =
        repository.tag.empty() ? (o.tag.empty() ? oci_tag_from(name + "-" + report.lock_sha256.substr(0, 16)) : o.tag) : repository.tag;
    if (!o.tag.empty() && !repository.tag.empty() && o.tag != repository.tag)
      return Error(ErrorCode::usage, "two tags given: " + repository.tag + " in the reference and " + o.tag + " with --tag");
    if (auto ref = parse_oci_reference(repository.repository_url() + ":" + report.tag); !ref)
      return Error(ErrorCode::usage, "'" + util::printable(report.tag, 200) + "' is not a tag ([A-Za-z0-9_][A-Za-z0-9._-]{0,127})");
  }

  // Every archive found (or downloaded, verified) before the registry is touched: a push never
  // tags a stack it could not complete.
  std::vector<std::string> missing;
  detail::RegistryClients fetch_registries;
  for (auto& it : items) {
    ArchiveExpectation e{model::Platform::linux_x86_64, it.file, it.sha256, it.size};
    bool by_content = false;
    SP_TRY_ASSIGN(auto found, find_expected_archive(e, o.archives_dir, o.fetch.cache_dir, by_content));
    if (found) {
      it.path = found->string();
      continue;
    }
    if (o.fetch.offline || it.url.empty()) {
      missing.push_back(it.file + " (sha256 " + it.sha256 + ")");
      continue;
    }
    detail::TransferJob job;
    job.file = it.file;
    job.sha256 = it.sha256;
    job.size = it.size;
    const std::string base = it.product == "cudnn"  ? kb.cudnn_base_url()
                             : it.product == "cuda" ? std::string(knowledge::CudaCatalog::k_base_url)
                                                    : std::string();
    job.urls = candidate_urls(it.url, it.sha256, o.fetch.mirrors, base);
    model::FetchedArchive got;
    SP_TRY(detail::transfer_archive(job, o.fetch, got, fetch_registries));
    it.path = got.path;
  }
  if (!missing.empty())
    return Error(ErrorCode::not_found, std::to_string(missing.size()) + " of the stack's archives are in neither the cache " +
                                           o.fetch.cache_dir.string() + (o.archives_dir.empty() ? "" : " nor " + o.archives_dir.string()) +
                                           ": " + util::join(missing, ", ") + "; nothing was pushed")
        .with_hint("run without --offline to download them (verified) first, or give the folder that holds them with --archives DIR");

  SP_TRY_ASSIGN(auto client, RegistryClient::connect(repository, detail::registry_options(o.fetch), true));
  // the empty config every artifact manifest points at
  SP_TRY_ASSIGN(auto config, client->blob_size(oci::k_empty_digest));
  if (!config) SP_TRY(client->upload_small_blob(oci::k_empty_digest, oci::k_empty_data));

  oci::ImageIndex index;
  index.artifact_type = oci::k_stack_artifact;
  index.annotations[oci::k_stack] = m.name.value;
  index.annotations[oci::k_lock_sha256] = report.lock_sha256;
  for (auto& it : items) {
    const std::string digest = "sha256:" + it.sha256;
    SP_TRY_ASSIGN(auto held, client->blob_size(digest));
    if (held && *held != it.size)
      return Error(ErrorCode::mismatch, "the registry " + repository.host + " holds " + digest + " (" + it.file + ") with " +
                                            std::to_string(*held) + " bytes, not the pinned " + std::to_string(it.size))
          .with_hint("the registry's storage is corrupt: delete the blob there and push again");
    if (held) {
      it.status = "present";
    } else {
      auto progress = [&](std::uint64_t done) {
        if (o.progress) o.progress(it.file, done, it.size);
      };
      SP_TRY(client->upload_blob(digest, it.size, it.path, o.chunk_size, progress));
      it.status = "sent";
      report.bytes_sent += it.size;
    }
    std::string bytes = format::write_oci_manifest(manifest_for(it));
    it.manifest_digest = "sha256:" + sha256_hex(bytes);
    SP_TRY(client->put_manifest(it.manifest_digest, oci::k_manifest_type, bytes));
    oci::Descriptor d;
    d.media_type = oci::k_manifest_type;
    d.digest = it.manifest_digest;
    d.size = bytes.size();
    d.artifact_type = oci::k_archive_artifact;
    d.annotations[oci::k_title] = it.file;
    d.annotations[oci::k_product] = it.product;
    if (!it.platform.empty()) d.annotations[oci::k_platform] = it.platform;
    index.manifests.push_back(std::move(d));
  }
  // last: the tag, once everything it names is in the registry
  std::string bytes = format::write_oci_index(index);
  report.index_digest = "sha256:" + sha256_hex(bytes);
  SP_TRY(client->put_manifest(report.tag, oci::k_index_type, bytes));
  report.items = std::move(items);
  return report;
}

util::Result<MirrorPullReport> mirror_pull(const OciReference& reference, const fs::path& dir, const FetchOptions& o) {
  if (reference.tag.empty() && reference.digest.empty())
    return Error(ErrorCode::usage, "pull needs the stack's tag or digest: " + reference.text())
        .with_hint("write oci://HOST/REPOSITORY:TAG (`stackpin mirror push` printed it)");
  if (o.cache_dir.empty()) return Error(ErrorCode::usage, "no cache directory given").with_hint("give one with --cache-dir DIR");
  if (dir.empty()) return Error(ErrorCode::usage, "no folder to write the archives to");
  SP_TRY_ASSIGN(auto client, RegistryClient::connect(reference, detail::registry_options(o), false));
  const std::string ref = reference.digest.empty() ? reference.tag : reference.digest;
  SP_TRY_ASSIGN(auto top, client->get_manifest(ref));
  const std::string what = reference.text();
  if (!top.media_type.empty() && top.media_type != oci::k_index_type)
    return Error(ErrorCode::invalid, what + " is a " + util::printable(top.media_type, 120) + ", not a stack's OCI index; nothing written")
        .with_hint("`stackpin mirror push` tags an index of the stack's archives: pull that tag");
  SP_TRY_ASSIGN(auto index, format::read_oci_index(top.bytes, what));
  // (a copy by a tool of image-spec 1.0, skopeo 1.9, drops the index's artifactType: absent is accepted,
  // another is not; each manifest is judged below)
  if ((!index.artifact_type.empty() && index.artifact_type != oci::k_stack_artifact) || index.manifests.empty())
    return Error(ErrorCode::invalid,
                 what + " is not a stack's index (artifactType " + oci::k_stack_artifact + ", at least one archive); nothing written")
        .with_hint("`stackpin mirror push` tags such an index: pull the tag it printed");

  MirrorPullReport report;
  report.reference = what;
  report.index_digest = top.digest;
  report.dir = dir.string();
  // Every manifest read and judged before the first blob moves.
  std::vector<std::pair<MirrorItem, fs::path>> plan;
  for (const auto& entry : index.manifests) {
    SP_TRY_ASSIGN(auto got, client->get_manifest(entry.digest));
    const std::string mwhat = "manifest " + entry.digest + " of " + what;
    if (got.bytes.size() != entry.size)
      return Error(ErrorCode::mismatch, mwhat + " has " + std::to_string(got.bytes.size()) + " bytes, the index says " +
                                            std::to_string(entry.size) + "; nothing written");
    SP_TRY_ASSIGN(auto man, format::read_oci_manifest(got.bytes, mwhat));
    if (man.artifact_type != oci::k_archive_artifact || man.layers.size() != 1)
      return Error(ErrorCode::invalid,
                   mwhat + " is not one of stackpin's archives (artifactType " + oci::k_archive_artifact + ", one layer); nothing written");
    const auto& layer = man.layers.front();
    MirrorItem it;
    it.file = layer.annotation(oci::k_title);
    it.url = man.annotations.count(oci::k_url) ? man.annotations.at(oci::k_url) : "";
    it.product = man.annotations.count(oci::k_product) ? man.annotations.at(oci::k_product) : "";
    it.component = man.annotations.count(oci::k_component) ? man.annotations.at(oci::k_component) : "";
    it.version = man.annotations.count(oci::k_version) ? man.annotations.at(oci::k_version) : "";
    it.platform = man.annotations.count(oci::k_platform) ? man.annotations.at(oci::k_platform) : "";
    it.cuda = man.annotations.count(oci::k_cuda_variant) ? man.annotations.at(oci::k_cuda_variant) : "";
    it.sha256 = layer.digest.substr(7);
    it.size = layer.size;
    it.manifest_digest = entry.digest;
    if (!plain_file_name(it.file))
      return Error(ErrorCode::unsafe,
                   mwhat + " names its file '" + util::printable(it.file, 200) + "', which is not a plain file name; nothing written");
    auto rel = tree_path(it);
    if (!rel)
      return Error(ErrorCode::unsafe, mwhat + " gives the URL " + util::printable(it.url, 200) + ", whose path is not a plain copy of " +
                                          k_nvidia_base + "; nothing written");
    // two archives for one file (also by case: Windows and macOS fold it): refused
    for (const auto& [other, other_rel] : plan)
      if (util::to_lower(other_rel.generic_string()) == util::to_lower(rel->generic_string()) && other.sha256 != it.sha256)
        return Error(ErrorCode::invalid, what + " lists two archives for " + rel->generic_string() + "; nothing written");
    plan.emplace_back(std::move(it), *rel);
  }

  detail::RegistryClients registries{{reference.repository_url(), client}};
  for (auto& [it, rel] : plan) {
    detail::TransferJob job;
    job.file = it.file;
    job.sha256 = it.sha256;
    job.size = it.size;
    job.urls = {oci_blob_url(reference, it.sha256)};
    model::FetchedArchive got;
    SP_TRY(detail::transfer_archive(job, o, got, registries));
    const fs::path target = dir / rel;
    std::error_code ec;
    if (fs::is_regular_file(target, ec) && fs::file_size(target, ec) == it.size) {
      auto h = crypto::hash_file(target);
      if (h && crypto::to_hex(h->digest) == it.sha256) {
        it.status = "present";
        it.path = target.string();
        report.items.push_back(it);
        continue;
      }
    }
    fs::create_directories(target.parent_path(), ec);
    if (ec) return Error(ErrorCode::io, "cannot create " + target.parent_path().string() + ": " + ec.message());
    // a copy of the verified file from the cache, renamed into place: never half a file in DIR
    fs::path tmp = target;
    tmp += ".stackpin-part";
    fs::remove(tmp, ec);
    fs::copy_file(got.path, tmp, fs::copy_options::overwrite_existing, ec);
    if (!ec) fs::rename(tmp, target, ec);
    if (ec) {
      std::error_code ignore;
      fs::remove(tmp, ignore);
      return Error(ErrorCode::io, "cannot write " + target.string() + ": " + ec.message());
    }
    it.status = "written";
    it.path = target.string();
    report.items.push_back(it);
  }
  return report;
}

}  // namespace core
