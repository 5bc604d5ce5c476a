#include "core/package/sbom.hpp"
#include "model/pylock.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>

#include "core/provision/stage.hpp"
#include "crypto/sha1.hpp"
#include "crypto/sha256.hpp"
#include "format/receipt.hpp"
#include "format/spdx.hpp"
#include "knowledge/cuda_catalog.hpp"
#include "util/file_io.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

namespace {

// UTC, from the civil calendar (the same on every platform, no C library time zone state)
std::string iso8601(std::int64_t t) {
  using namespace std::chrono;
  const sys_seconds at{seconds{t}};
  const auto day = floor<days>(at);
  const year_month_day ymd{day};
  const hh_mm_ss hms{at - day};
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()), static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()));
  return buf;
}

// A component of the receipt's CUDA release in stackpin's copy of NVIDIA's manifest; nullptr when
// stackpin has none of the release or it lists no such component.
const format::CudaComponent* cuda_component(const model::Receipt& r, const std::string& id) {
  auto v = model::Version::parse(r.cuda_version);
  if (!v) return nullptr;
  auto release = knowledge::CudaCatalog::embedded().release(*v);
  return release && *release ? knowledge::find_component(**release, id) : nullptr;
}

// NVIDIA's URL of a CUDA component archive, found by its SHA-256 ("" when it is not NVIDIA's).
std::string cuda_url(const format::CudaComponent* c, const model::ReceiptArchive& a) {
  if (c)
    for (const auto& x : c->archives)
      if (x.sha256 == a.sha256) {
        auto url = format::redist_url(knowledge::CudaCatalog::k_base_url, x.relative_path);
        return url ? *url : std::string();
      }
  return {};
}

// Where a staged file is in the tree the document describes ("" = not in it).
using PathMap = std::function<std::string(const model::StagedFile&)>;

// A document's frame: its name, creator and time, and one package per archive of the receipt.
struct Frame {
  format::SpdxDocument doc;
  std::map<std::string, std::size_t> by_archive;  // "cudnn", a component's id -> its package
  std::map<std::string, std::string> license_of;  // the same -> NVIDIA's licence name
};

Frame frame_of(const model::Receipt& r, const knowledge::KnowledgeBase& kb, const SbomOptions& o, const std::string& name,
               const std::string& comment) {
  Frame f;
  auto& doc = f.doc;
  doc.tool = "stackpin-" + o.stackpin_version;
  doc.created = iso8601(o.created ? *o.created : static_cast<std::int64_t>(std::time(nullptr)));
  doc.name = name;
  doc.comment = comment;
  if (!r.archive_file.empty()) {
    format::SpdxPackage p;
    p.id = "SPDXRef-Package-cudnn";
    p.name = "cudnn";
    p.version = r.cudnn_version;
    p.file_name = r.archive_file;
    p.sha256 = r.archive_sha256;
    if (const auto* fact = kb.cudnn_archive_by_sha256(r.archive_sha256)) p.download_location = fact->url;
    f.license_of["cudnn"] = "cudnn";  // every cuDNN redistrib manifest of NVIDIA's names it so
    f.by_archive["cudnn"] = doc.packages.size();
    doc.packages.push_back(std::move(p));
  }
  for (const auto& a : r.cuda_archives) {
    format::SpdxPackage p;
    p.id = "SPDXRef-Package-" + format::spdx_id_part(a.component);
    p.name = a.component;
    p.version = a.version;
    p.file_name = a.file;
    p.sha256 = a.sha256;
    const format::CudaComponent* c = cuda_component(r, a.component);
    p.download_location = cuda_url(c, a);
    if (c && !c->license.empty()) f.license_of[a.component] = c->license;
    f.by_archive[a.component] = doc.packages.size();
    doc.packages.push_back(std::move(p));
  }
  return f;
}

// The wheels of the Python lock an image installs ("name @ URL --hash=sha256:HEX"), one package
// each: its version from the wheel's name, its URL and SHA-256; no files (the environment's files
// are pip's to list) and no licence asserted (a wheel's METADATA names it, unverified).
void add_wheels(Frame& f, const std::vector<std::string>& requirements) {
  for (const auto& req : requirements) {
    auto words = util::split(req, ' ');
    if (words.size() != 4 || words[3].rfind("--hash=sha256:", 0) != 0) continue;
    format::SpdxPackage p;
    p.name = words[0];
    p.id = "SPDXRef-Package-python-" + format::spdx_id_part(p.name);
    p.download_location = words[2];
    p.file_name = model::url_file_name(words[2]);
    if (auto w = model::parse_wheel_name(p.file_name)) p.version = w->version;
    p.sha256 = words[3].substr(std::string("--hash=sha256:").size());
    p.license_id = "NOASSERTION";
    f.doc.packages.push_back(std::move(p));
  }
}

// One LicenseRef- per licence NVIDIA names, in the order of the packages that name them, each
// package declaring its own; returns, per licence, the package whose archive's text it carries
// (the first to name it). The texts are left for the caller (the text used when the archive
// carries none is set).
std::vector<std::string> name_licenses(Frame& f) {
  std::vector<std::string> source;
  std::map<std::string, std::size_t> index;
  for (auto& p : f.doc.packages) {
    auto l = f.license_of.find(p.name);
    if (l == f.license_of.end()) continue;
    auto [it, fresh] = index.emplace(l->second, f.doc.licenses.size());
    if (fresh) {
      format::SpdxLicense lic;
      lic.id = "LicenseRef-NVIDIA-" + format::spdx_id_part(l->second);
      lic.name = l->second;
      lic.text = "NVIDIA's redistrib manifest names the licence \"" + l->second + "\"; its text is not in this tree.";
      f.doc.licenses.push_back(std::move(lic));
      source.push_back(p.name);
    }
    p.license_id = f.doc.licenses[it->second].id;
  }
  return source;
}

// Identifiers stay unique even where two names map to one (spdx_id_part turns '_' into '-').
void unique_ids(format::SpdxDocument& doc) {
  std::map<std::string, int> ids;
  for (auto& p : doc.packages)
    if (int n = ids[p.id]++; n > 0) p.id += "-" + std::to_string(n + 1);
}

// The namespace comes from what the document describes (not from where or when it was made), so
// that the same archives give the same document: the identity lines, then one per file.
std::vector<std::string> identity_of(const format::SpdxDocument& doc, const model::Receipt& r) {
  std::vector<std::string> lines = {doc.name, r.manifest_sha256, r.platform};
  for (const auto& p : doc.packages) lines.push_back(p.name + " " + p.sha256);
  return lines;
}
std::string namespace_prefix(const model::Receipt& r) {
  return "https://spdx.org/spdxdocs/stackpin/" + format::spdx_id_part(r.manifest_name) + "-";
}

// The document of the files of a staging (receipt `r`, staged in `dest`) that `where` keeps, under
// the paths it gives them, in byte order of those paths.
util::Result<SbomResult> sbom_of(const model::Receipt& r, const fs::path& dest, const knowledge::KnowledgeBase& kb, const SbomOptions& o,
                                 const PathMap& where, const std::string& name, const std::string& comment,
                                 const std::vector<std::string>& wheels = {}) {
  SbomResult out;
  Frame frame = frame_of(r, kb, o, name, comment);
  add_wheels(frame, wheels);
  format::SpdxDocument& doc = frame.doc;

  std::vector<std::pair<std::string, const model::StagedFile*>> kept;
  for (const auto& f : r.files)
    if (f.type == "file")
      if (std::string shown = where(f); !shown.empty()) kept.emplace_back(std::move(shown), &f);
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

  // every kept file, proved to be the staged bytes
  std::map<std::string, std::string> license_file;  // archive -> the staged LICENSE it carries
  std::size_t unattributed = 0;
  for (const auto& [shown, file] : kept) {
    const model::StagedFile& f = *file;
    fs::path path = dest / f.path;
    SP_TRY_ASSIGN(auto dg, crypto::sha1_and_sha256_of_file(path));
    if (dg.sha256 != f.sha256)
      return Error(ErrorCode::mismatch, path.string() + " changed since it was staged (sha256 " + dg.sha256 + ", the receipt says " +
                                            f.sha256 + "): an SBOM of this tree would describe other bytes than NVIDIA's")
          .with_hint("see what changed with `stackpin status --dest " + dest.string() + "`, then restage");
    std::size_t index = doc.files.size();
    doc.files.push_back({shown, dg.sha1, dg.sha256});
    if (f.archive.empty()) {
      if (f.path != "version.json" || f.from != "version.json") ++unattributed;  // version.json: stackpin's own, from the manifest
      continue;
    }
    auto it = frame.by_archive.find(f.archive);
    if (it == frame.by_archive.end())
      return Error(ErrorCode::invalid, dest.string() + "/.stackpin/receipt.json attributes " + f.path + " to the archive \"" + f.archive +
                                           "\", which it does not list")
          .with_hint("the receipt was edited or damaged: restage the tree with `stackpin stage`");
    doc.packages[it->second].files.push_back(index);
    if (f.from == "LICENSE" || f.from == "LICENSE.txt") license_file.emplace(f.archive, f.path);
  }

  // each licence with the text the first archive under it carries
  auto source = name_licenses(frame);
  for (std::size_t i = 0; i < doc.licenses.size(); ++i)
    if (auto lf = license_file.find(source[i]); lf != license_file.end()) {
      SP_TRY_ASSIGN(auto text, util::read_file(dest / lf->second));
      doc.licenses[i].text = std::move(text);
    }
  // SPDX's verification code: the SHA-1 of the package's files' SHA-1s, sorted and concatenated
  for (auto& p : doc.packages) {
    std::vector<std::string> sums;
    for (std::size_t i : p.files) sums.push_back(doc.files[i].sha1);
    std::sort(sums.begin(), sums.end());
    std::string all;
    for (const auto& s : sums) all += s;
    p.verification_code = crypto::sha1_hex(all);
  }
  if (unattributed)
    out.notes.push_back(std::to_string(unattributed) +
                        " staged files are attributed to no archive (a receipt of an older stackpin): they are listed, in no package; "
                        "`stackpin unstage` then `stackpin stage` records where each comes from");
  unique_ids(doc);
  out.packages = doc.packages.size();
  out.files = doc.files.size();
  std::string identity;
  for (const auto& l : identity_of(doc, r)) identity += l + "\n";
  for (const auto& f : doc.files) identity += f.path + " " + f.sha256 + "\n";
  doc.namespace_uri = namespace_prefix(r) + crypto::to_hex(crypto::sha256_of(identity)).substr(0, 32);
  out.text = format::write_spdx(doc);
  return out;
}

// The runtime image's document: its name and comment, the same whoever writes it.
std::string image_name(const model::Manifest& m) { return m.name.value + " image (runtime)"; }
std::string image_comment(const model::Manifest& m, const gen::DockerfileSpec& spec) {
  return "The runtime image stackpin's Dockerfile builds for the manifest " + m.path + ": the run-time files of NVIDIA's archives" +
         (spec.hermetic ? " on " + spec.base_image : " on the base image " + spec.base_image + ", whose own files it does not list") + ".";
}

}  // namespace

util::Result<std::string> sbom_plan_for_image(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const gen::DockerfileSpec& spec,
                                              model::Platform platform, const SbomOptions& o) {
  // a receipt of the pins alone: the archives the image's stages unpack, none of their files
  model::Receipt r;
  r.manifest_name = m.name.value;
  r.manifest_sha256 = spec.manifest_sha256;
  r.platform = model::to_string(platform);
  const bool cudnn = !spec.apt && !spec.archive_sha256.empty();
  if (cudnn) {
    r.cudnn_version = spec.cudnn_version;
    r.archive_file = spec.archive_file;
    r.archive_sha256 = spec.archive_sha256;
    r.archive_size = spec.archive_size;
  }
  if (spec.hermetic) {
    r.cuda_version = spec.cuda_version;
    for (const auto& a : spec.cuda_archives) {
      model::ReceiptArchive ra;
      ra.component = a.component;
      ra.file = a.file;
      ra.sha256 = a.sha256;
      ra.size = a.size;
      if (const auto* c = cuda_component(r, a.component)) ra.version = c->version.text();
      r.cuda_archives.push_back(std::move(ra));
    }
  }
  Frame frame = frame_of(r, kb, o, image_name(m), image_comment(m, spec));
  add_wheels(frame, spec.python_requirements);
  format::SpdxPlan plan;
  for (const auto& p : frame.doc.packages) plan.package_keys.push_back(p.name);
  // where the image's stages put each archive's licence (sbom_for_image's paths)
  auto source = name_licenses(frame);
  const std::string cudnn_dir = spec.prefix.substr(1), cuda_dir = spec.cuda_prefix.empty() ? "" : spec.cuda_prefix.substr(1);
  for (const auto& from : source) {
    if (from == "cudnn")
      plan.license_paths.push_back({cudnn_dir + "/LICENSE"});
    else
      plan.license_paths.push_back({cuda_dir + "/share/doc/" + from + "/LICENSE", cuda_dir + "/share/doc/" + from + "/LICENSE.txt"});
  }
  if (cudnn) plan.owned_folders.emplace_back(cudnn_dir, "cudnn");
  unique_ids(frame.doc);
  plan.identity = identity_of(frame.doc, r);
  plan.namespace_prefix = namespace_prefix(r);
  plan.doc = std::move(frame.doc);
  return format::write_spdx_plan(plan);
}

util::Result<SbomResult> sbom_for_dest(const fs::path& dest_in, const knowledge::KnowledgeBase& kb, const SbomOptions& o) {
  fs::path dest = util::io::absolute_path(dest_in);
  SP_TRY_ASSIGN(auto r, staged_receipt(dest));
  return sbom_of(
      r, dest, kb, o, [](const model::StagedFile& f) { return f.path; }, r.manifest_name + " staged in " + r.dest,
      "The files stackpin staged from NVIDIA's archives for the manifest " + r.manifest_path + " (sha256 " + r.manifest_sha256 + "), " +
          r.target + " layout " + r.layout + ", " + r.platform + ".");
}

util::Result<SbomResult> sbom_for_image(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const gen::DockerfileSpec& spec,
                                        model::Platform platform, const fs::path& archives_dir, const fs::path& cache_dir,
                                        const SbomOptions& o) {
  // the archives staged as `stackpin stage` lays them out for Linux, the layout the image's own
  // stages reproduce, into a folder removed afterwards
  std::error_code ec;
  fs::path parent = fs::temp_directory_path(ec);
  if (ec) return util::Error(util::ErrorCode::io, "no folder for temporary files (TMPDIR): " + ec.message());
  util::TempDir::remove_abandoned(parent, "stackpin-image-sbom-");  // what a killed run left
  SP_TRY_ASSIGN(auto tmp, util::TempDir::create_owned(parent, "stackpin-image-sbom-"));
  StageOptions so;
  so.archives_dir = archives_dir;
  so.cache_dir = cache_dir;
  so.target = model::Target::linux;
  so.platform = platform;
  so.dest = tmp.path() / "tree";
  so.stackpin_version = o.stackpin_version;
  so.manifest_sha256 = spec.manifest_sha256;  // part of the document's namespace
  model::Manifest staged = m;
  if (!spec.hermetic && staged.cuda) staged.cuda->components.clear();  // the base image brings the toolkit
  SP_TRY(stage(staged, kb, so));
  SP_TRY_ASSIGN(auto r, staged_receipt(*so.dest));
  auto base = [](const std::string& p) { return p.substr(p.rfind('/') + 1); };
  auto runtime_library = [&](const model::StagedFile& f) {
    const std::string b = base(f.path);
    return b.rfind("lib", 0) == 0 && ("/" + f.path).find("/stubs/") == std::string::npos &&
           (b.find(".so.") != std::string::npos || (b.size() > 3 && b.compare(b.size() - 3, 3, ".so") == 0));
  };
  PathMap where = [&](const model::StagedFile& f) -> std::string {
    if (f.archive == "cudnn") {
      // the image keeps cuDNN's versioned libraries and its licence (everything with --dev)
      // (what the cudnn stage's `cp -P unpacked/<lib>/lib*.so.*` takes: direct children of lib64/)
      bool kept = spec.include_dev || f.path == "LICENSE" ||
                  (f.path.rfind("lib64/", 0) == 0 && f.path.find('/', 6) == std::string::npos && base(f.path).rfind("lib", 0) == 0 &&
                   base(f.path).find(".so.") != std::string::npos);
      return kept ? spec.prefix.substr(1) + "/" + f.path : std::string();
    }
    if (f.archive.empty() && f.path == "version.json") return spec.hermetic ? spec.cuda_prefix.substr(1) + "/version.json" : "";
    if (!spec.hermetic || f.archive.empty()) return {};
    bool kept = runtime_library(f) || f.path.rfind("share/doc/", 0) == 0;
    return kept ? spec.cuda_prefix.substr(1) + "/" + f.path : std::string();
  };
  return sbom_of(r, *so.dest, kb, o, where, image_name(m), image_comment(m, spec), spec.python_requirements);
}

}  // namespace core
