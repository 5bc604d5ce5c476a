// generate dockerfile: every decision about the image is made here, from the manifest and the
// knowledge base, and handed to the pure renderer in gen/dockerfile.cpp.
#include "core/package/docker.hpp"

#include <algorithm>
#include <set>
#include <system_error>

#include "archive/extract.hpp"
#include "core/archives/lock.hpp"
#include "core/archives/registry.hpp"
#include "core/archives/verify.hpp"
#include "core/check/check.hpp"
#include "core/package/deb.hpp"
#include "core/package/sbom.hpp"
#include "core/python/python_env.hpp"
#include "crypto/sha256.hpp"
#include "gen/build_config.hpp"
#include "knowledge/cuda_catalog.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

namespace {

// A hermetic image's default base: Debian 12, the distribution stackpin itself is built and tested
// on. NVIDIA supports each CUDA release on its own list of distributions: base_image picks one.
constexpr const char* k_plain_base = "debian:bookworm-slim";

util::Status base_image(const model::Manifest& m, const knowledge::KnowledgeBase& kb, DockerPlan& plan) {
  auto& s = plan.spec;
  std::string digest = m.docker && m.docker->base_digest ? m.docker->base_digest->value : "";
  if (m.docker && m.docker->base_image) {
    s.base_image = m.docker->base_image->value;
    s.base_notes.push_back("BASE_IMAGE: [targets.docker] base_image of the manifest.");
  } else if (s.hermetic) {
    s.base_image = k_plain_base;
    s.base_notes.push_back(std::string("BASE_IMAGE: ") + k_plain_base +
                           ", a plain distribution (cuda = \"archive\" and no base_image in [targets.docker]); "
                           "the toolkit comes from the pinned archives.");
  } else {
    const auto& cuda = m.cuda->version.value;
    std::set<std::string> oses;
    for (const auto& t : kb.facts().docker_tags)
      if (t.cuda == cuda) oses.insert(t.os);
    if (oses.empty() || cuda.size() < 3)
      return Error(ErrorCode::invalid, "no NVIDIA CUDA image is known for CUDA " + cuda.text() + " (knowledge base: container tags)")
          .at(m.locate(m.cuda->version.pos))
          .with_hint("set base_image in [targets.docker] (e.g. the nvidia/cuda:<X.Y.Z>-runtime-<os> tag you use)");
    std::string os = oses.count("ubuntu22.04") ? "ubuntu22.04" : *oses.rbegin();
    s.base_image = "nvidia/cuda:" + cuda.text() + "-runtime-" + os;
    s.base_notes.push_back("BASE_IMAGE: NVIDIA's CUDA " + cuda.text() + " runtime image without cuDNN (" + os +
                           "); the tag follows the pattern {X.Y.Z}-{base|runtime|devel}-{os} of NVIDIA's published tags.");
  }
  if (!digest.empty()) {
    if (s.base_image.find('@') == std::string::npos) s.base_image += "@" + digest;
    s.base_notes.push_back("Pinned by digest ([targets.docker] base_digest): the same bytes on every build.");
  } else if (s.base_image.find('@') == std::string::npos) {
    s.base_notes.push_back(
        "Not pinned by digest: the image behind this tag can change. Pin it with [targets.docker] base_digest = \"sha256:...\".");
    plan.notes.push_back("the base image " + s.base_image + " is not pinned by digest ([targets.docker] base_digest)");
  }
  return {};
}

util::Status apt_packages(const model::Manifest& m, const knowledge::KnowledgeBase& kb, DockerPlan& plan) {
  auto& s = plan.spec;
  const auto& ver = m.cudnn->version.value;
  for (const auto* pin : kb.apt_pins(m.cuda->version.value)) {
    if (pin->cudnn != ver) continue;
    s.apt_package = pin->package;
    s.apt_package_dev = pin->package_dev;
    return {};
  }
  int major = static_cast<int>(ver.major());
  if (major >= 9) {
    s.apt_package = "libcudnn" + std::to_string(major) + "-cuda-" + std::to_string(s.cuda_major) + "=" + ver.text() + "-1";
    s.apt_package_dev = "libcudnn" + std::to_string(major) + "-dev-cuda-" + std::to_string(s.cuda_major) + "=" + ver.text() + "-1";
  } else if (major == 8) {
    std::string xy = m.cuda->version.value.prefix(2);
    s.apt_package = "libcudnn8=" + ver.text() + "-1+cuda" + xy;
    s.apt_package_dev = "libcudnn8-dev=" + ver.text() + "-1+cuda" + xy;
  } else {
    return Error(ErrorCode::invalid, "no apt package naming is known for cuDNN " + ver.text())
        .at(m.locate(m.docker->cudnn.pos))
        .with_hint("use cudnn = \"archive\" in [targets.docker]");
  }
  plan.notes.push_back("apt package " + s.apt_package +
                       " follows NVIDIA's naming (knowledge base) but was not seen in NVIDIA's images for CUDA " +
                       m.cuda->version.value.text());
  return {};
}

void frameworks(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const DockerOptions& o, DockerPlan& plan) {
  auto& s = plan.spec;
  // Where the image's own cuDNN is: the archive's copy, or NVIDIA's packages in the multiarch directory.
  const std::string where = s.apt ? "/usr/lib/" + multiarch_triplet(plan.platform) + " (NVIDIA's packages)" : s.prefix;
  std::string torch_index, torch_variant, torch_bundled;
  auto report = check_manifest(m, kb);
  if (report && o.lock) use_locked_builds(*report, *o.lock);
  if (report) {
    // the architectures check judged the stack against, for the image's label
    for (const auto& g : report->gpus) s.gpu_archs.push_back(g.cc);
    for (const auto& w : report->wheels)
      if (w.framework == "torch") {
        torch_index = w.index_url;
        torch_variant = w.variant;
        torch_bundled = w.bundled_cudnn;
      }
  }
  for (const auto& [name, v] : m.frameworks) {
    gen::DockerFramework f;
    f.name = name;
    f.version = v.value.text();
    f.pip_requirement = name + "==" + f.version;
    bool torch_family = name == "torch" || name == "torchvision" || name == "torchaudio";
    if (torch_family && !torch_index.empty()) f.index_url = torch_index;
    if (o.lock)  // --locked: the exact build and index the lock pins
      for (const auto& lf : o.lock->frameworks)
        if (lf.name == name) {
          f.pip_requirement = lf.requirement;
          f.index_url = lf.index_url == "https://pypi.org/simple" ? "" : lf.index_url;
        }
    if (name == "torch") {
      std::string pinned = m.cudnn->version.value.text();
      if (!torch_bundled.empty()) {
        f.cudnn_note = "torch " + f.version + "+" + torch_variant + " brings its own cuDNN " + torch_bundled +
                       " (an nvidia-cudnn wheel) and loads it before any other copy: torch.backends.cudnn.version() reports " +
                       (model::Version::parse(torch_bundled) ? model::Version::parse(torch_bundled)->prefix(3) : torch_bundled) + ". ";
        f.cudnn_note += torch_bundled == pinned
                            ? "It is the same build as the pinned cuDNN in " + where + ", which serves every other program."
                            : "The pinned cuDNN " + pinned + " in " + s.prefix +
                                  " serves every other program (`stackpin check` warns about the difference).";
        if (torch_bundled != pinned) plan.notes.push_back("torch loads its bundled cuDNN " + torch_bundled + ", not the pinned " + pinned);
      } else {
        f.cudnn_note = "torch " + f.version +
                       ": which cuDNN its wheel brings is not in the knowledge base; check torch.backends.cudnn.version() in the image.";
      }
    } else if (name == "tensorflow") {
      f.cudnn_note =
          "tensorflow " + f.version + " (without the [and-cuda] extra) loads cuDNN through the loader: the pinned copy in " + where + ".";
    } else if (name == "onnxruntime-gpu") {
      f.cudnn_note = "onnxruntime-gpu " + f.version + " loads cuDNN through the loader (the pinned copy in " + where +
                     "), unless torch was imported first in the same process.";
    }
    s.frameworks.push_back(std::move(f));
  }
}

// cuda = "archive": the pinned [cuda] components' archives for the image's platform, the toolkit's
// version.json, and what NVIDIA's container toolkit must check on the host (the CUDA release and
// the driver floor every command applies).
util::Status hermetic_cuda(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const DockerOptions& o, DockerPlan& plan) {
  auto& s = plan.spec;
  const model::Version& release = m.cuda->version.value;
  if (m.cuda->components.empty())
    return Error(ErrorCode::invalid,
                 "cuda = \"archive\" builds the toolkit from the pinned [cuda] components, and " + m.path + " lists none")
        .at(m.locate(m.docker->cuda.pos))
        .with_hint("add components = [\"runtime\"] to [cuda] (or \"torch\", \"devel\", NVIDIA's names such as \"cuda_cudart\")")
        .with_hint("or use cuda = \"base\" with an nvidia/cuda base_image");
  SP_TRY_ASSIGN(auto pins, pinned_cuda_archives(m, o.platform));
  if (pins.empty())
    return Error(ErrorCode::invalid,
                 "no CUDA component archive is pinned for " + std::string(model::to_string(o.platform)) + " (CUDA " + release.text() + ")")
        .at(m.locate(m.cuda->components_pos))
        .with_hint("stackpin knows NVIDIA's archives of the releases in its knowledge base; for another one, run `stackpin lock " + m.path +
                   " --redistrib redistrib_" + release.text() + ".json` with NVIDIA's file")
        .with_hint("or pin each one in [[cuda.archives]] (component, platform, sha256, size, url or file)");
  std::vector<gen::CudaComponentVersion> versions;
  for (const auto& p : pins) {
    gen::DockerCudaArchive a;
    a.component = p.pin->component->value;
    a.file = p.expect.file;
    a.sha256 = p.expect.sha256;
    a.size = *p.expect.size;
    if (o.from_url && !o.archive_registry.empty()) {
      SP_TRY_ASSIGN(a.url, oci_blob_http_url(o.archive_registry, a.sha256));
    } else if (o.from_url) {
      if (!p.pin->url || (p.pin->url->value.rfind("http://", 0) != 0 && p.pin->url->value.rfind("https://", 0) != 0))
        return Error(ErrorCode::invalid, "--from-url needs an http(s) URL for the " + a.component + " archive")
            .at(m.locate(p.pin->url ? p.pin->url->pos : p.pin->pos))
            .with_hint(
                "add url = \"https://...\" to its [[cuda.archives]] entry, or lay the archives out with --context DIR --archives DIR");
      a.url = p.pin->url->value;
    }
    versions.push_back({a.component, knowledge::CudaCatalog::embedded().component_name(release, a.component), p.pin->component_version});
    s.cuda_archives.push_back(std::move(a));
  }
  s.hermetic = true;
  s.cuda_prefix = "/usr/local/cuda-" + release.prefix(2);
  std::string json = gen::render_cuda_version_json(release.text(), std::move(versions));
  for (std::size_t i = 0; i < json.size();) {
    auto nl = json.find('\n', i);
    if (nl == std::string::npos) nl = json.size();
    s.version_json.push_back(json.substr(i, nl - i));
    i = nl + 1;
  }
  auto driver = kb.required_driver(m, model::Os::linux);
  s.require_cuda = "cuda>=" + release.prefix(2) + (driver.required ? ",driver>=" + driver.required->text() : "");
  return {};
}

}  // namespace

util::Result<DockerPlan> plan_dockerfile(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const DockerOptions& o) {
  if (model::is_windows(o.platform))
    return Error(ErrorCode::unsupported, "images are Linux images: use --platform linux-x86_64 or linux-sbsa");
  if (!m.cuda)
    return Error(ErrorCode::invalid, m.path + " pins no [cuda]: the image needs its CUDA release")
        .with_hint("add [cuda] version = \"X.Y.Z\"");
  if (!m.cudnn || !m.cudnn->cuda)
    return Error(ErrorCode::invalid, m.path + " pins no [cudnn] version and cuda").with_hint("add [cudnn] version and cuda");
  DockerPlan plan;
  plan.platform = o.platform;
  auto& s = plan.spec;
  s.manifest_file = o.manifest_file;
  s.manifest_sha256 = o.manifest_sha256;
  s.manifest_name = m.name.value;
  if (m.description) s.manifest_description = m.description->value;
  s.cuda_version = m.cuda->version.value.text();
  s.cudnn_version = m.cudnn->version.value.text();
  s.cudnn_major = static_cast<int>(m.cudnn->version.value.major());
  s.cuda_major = m.cudnn->cuda->value;
  s.convtest_expect_cudnn = m.cudnn->version.value.prefix(3);
  s.prefix = "/opt/cudnn-" + s.cudnn_version;
  s.include_dev = o.include_dev;
  if (m.python) s.python = m.python->value.prefix(2);
  if (m.docker && m.docker->cuda.value == model::DockerCuda::archive) SP_TRY(hermetic_cuda(m, kb, o, plan));
  SP_TRY(base_image(m, kb, plan));

  s.apt = m.docker && m.docker->cudnn.value == model::DockerCudnn::apt;
  if (s.apt) {
    SP_TRY(apt_packages(m, kb, plan));
  } else {
    auto pinned = pinned_archive(m, o.platform, kb);
    if (!pinned) {
      auto e = std::move(pinned).error();
      if (e.message.rfind("no archive pinned", 0) == 0) e.hints.push_back("or use cudnn = \"apt\" in [targets.docker]");
      return e;
    }
    const auto* pin = pinned->pin;
    const ArchiveExpectation* expect = &pinned->expect;
    s.archive_file = expect->file;
    s.archive_sha256 = expect->sha256;
    s.archive_size = *expect->size;
    s.from_url = o.from_url;
    if (o.from_url && !o.archive_registry.empty()) {
      SP_TRY_ASSIGN(s.archive_url, oci_blob_http_url(o.archive_registry, s.archive_sha256));
    } else if (o.from_url) {
      if (pin->url && pin->url->value.rfind("http://", 0) != 0 && pin->url->value.rfind("https://", 0) != 0)
        return Error(ErrorCode::invalid, "--from-url needs an http(s) URL; Docker cannot download " + pin->url->value)
            .at(m.locate(pin->url->pos))
            .with_hint("lay the archive out with --context DIR --archives DIR instead");
      if (!pin->url)
        return Error(ErrorCode::invalid, "--from-url needs the archive's url in the manifest")
            .at(m.locate(pin->pos))
            .with_hint("add url = \"https://...\"");
      s.archive_url = pin->url->value;
    }
    if (const auto* rule = kb.linux_lib_dir(m.cudnn->version.value); rule && !rule->dirs.empty()) s.archive_lib_dir = rule->dirs.front();
  }
  frameworks(m, kb, o, plan);
  if (o.pylock) {
    SP_TRY_ASSIGN(auto wheels, pinned_wheels(*o.pylock, plan.platform));
    for (const auto& w : wheels) {
      if (w.wheel->url.rfind("file:", 0) == 0)
        return Error(ErrorCode::invalid, "the Python lock pins " + w.name + " " + w.version + " at " + w.wheel->url +
                                             ", a file of this machine that an image build cannot fetch")
            .at(o.pylock->locate(w.wheel->pos))
            .with_hint("lock from an http(s) index ([python] index = \"https://...\") to build images from the Python lock");
      plan.spec.python_requirements.push_back(w.requirement);
    }
  }
  return plan;
}

namespace {
SbomOptions sbom_options(const ContextFiles& files) {
  SbomOptions so;
  so.stackpin_version = files.stackpin_version;
  so.created = files.sbom_created;
  return so;
}
}  // namespace

util::Result<ContextInputs> prepare_context(const DockerPlan& plan, const model::Manifest& m, const knowledge::KnowledgeBase& kb,
                                            const ContextFiles& files) {
  std::error_code ec;
  const auto& s = plan.spec;
  ContextInputs in;
  // Found (by name or content), then proved to be the pinned file by size and SHA-256, then read
  // through once: the image unpacks it with GNU tar, so an archive whose entries another tar reader
  // would name differently (archive_io's header scan) or that stage would refuse never reaches a
  // build context. With an SBOM made here the staging that makes it reads every archive already.
  auto verified = [&](const PinnedArchive& pinned) -> util::Result<fs::path> {
    const ArchiveExpectation& expect = pinned.expect;
    bool by_content = false;
    SP_TRY_ASSIGN(auto located, find_pinned_archive(pinned, files.archives_dir, by_content, files.cache_dir));
    auto proven = open_pinned(located, expect);
    if (!proven) {
      auto e = std::move(proven).error();
      if (e.code == ErrorCode::mismatch) e.hints = {"the file is not the pinned archive; the build context was not written"};
      return e;
    }
    if (!(s.sbom && !files.sbom_text)) {
      archive_io::ExtractOptions xo;
      xo.max_total_bytes = std::max<std::uint64_t>(16 * proven->size(), 256ull << 20);
      if (auto listed = archive_io::list(*proven, xo); !listed) {
        auto e = std::move(listed).error();
        e.hints.push_back("the build context was not written");
        return e;
      }
    }
    return located;
  };
  if (!s.apt && !s.from_url) {
    SP_TRY_ASSIGN(auto pinned, pinned_archive(m, plan.platform, kb));
    SP_TRY_ASSIGN(in.archive, verified(pinned));
  }
  if (s.hermetic && !s.from_url) {
    SP_TRY_ASSIGN(auto pins, pinned_cuda_archives(m, plan.platform));
    for (const auto& p : pins) {
      SP_TRY_ASSIGN(auto located, verified(p));
      in.cuda_archives.emplace_back(located, p.expect.file);
    }
  }
  in.convtest = !files.convtest_binary.empty() || !files.convtest_optional;
  if (in.convtest && !fs::is_regular_file(files.convtest_binary, ec))
    return Error(ErrorCode::not_found, "stackpin-convtest not found at " + files.convtest_binary.string())
        .with_hint("build it (cmake --build ... --target stackpin-convtest); it is installed next to stackpin, or pass --convtest PATH");
  if (s.sbom && files.sbom_text) {
    in.sbom = *files.sbom_text;
  } else if (s.sbom) {
    SP_TRY_ASSIGN(auto doc, sbom_for_image(m, kb, s, plan.platform, files.archives_dir, files.cache_dir, sbom_options(files)));
    in.sbom = std::move(doc.text);
  }
  if (s.sbom_in_build && files.sbom_plan) {
    in.sbom_plan = *files.sbom_plan;
  } else if (s.sbom_in_build) {
    SP_TRY_ASSIGN(in.sbom_plan, sbom_plan_for_image(m, kb, s, plan.platform, sbom_options(files)));
  }
  return in;
}

std::string url_image_sbom(DockerPlan& plan, const model::Manifest& m, const knowledge::KnowledgeBase& kb, ContextFiles& files) {
  auto& spec = plan.spec;
  spec.sbom = spec.sbom_in_build = false;
  if (spec.apt) return "no SBOM in the image: cuDNN comes from NVIDIA's apt repository";
  const SbomOptions so = sbom_options(files);
  // without local copies, the build lists the files it unpacks, following a plan made here
  auto in_build = [&](const std::string& reason) -> std::string {
    auto text = sbom_plan_for_image(m, kb, spec, plan.platform, so);
    if (!text) return "no SBOM in the image: " + text.error().message;
    files.sbom_plan = std::move(*text);
    spec.sbom_in_build = true;
    return "the image's build lists its files for the SBOM (stage sbom), " + reason;
  };
  if (files.archives_dir.empty() && files.cache_dir.empty())
    return in_build("with no --archives folder or download cache to read them here");
  auto doc = sbom_for_image(m, kb, spec, plan.platform, files.archives_dir, files.cache_dir, so);
  if (!doc && doc.error().code == util::ErrorCode::not_found)
    return in_build("not every archive being in --archives or the cache (`stackpin fetch` puts them there)");
  if (!doc) return in_build("a local copy not being usable (" + doc.error().message + ")");
  files.sbom_text = std::move(doc->text);
  spec.sbom = true;
  return {};
}

util::Status write_context(const DockerPlan& plan, const std::string& dockerfile, const model::Manifest& m,
                           const knowledge::KnowledgeBase& kb, const ContextFiles& files, const fs::path& dir) {
  // Everything is checked before the context is touched.
  SP_TRY_ASSIGN(auto in, prepare_context(plan, m, kb, files));
  return write_prepared_context(plan, dockerfile, in, files, dir);
}

util::Status write_prepared_context(const DockerPlan& plan, const std::string& dockerfile, const ContextInputs& in,
                                    const ContextFiles& files, const fs::path& dir) {
  std::error_code ec;
  const auto& s = plan.spec;
  const auto& archive = in.archive;
  const auto& cuda_archives = in.cuda_archives;
  const bool with_convtest = in.convtest;

  // Each file is replaced atomically: hard-linked (or copied) to a temporary name, then renamed.
  auto place = [&](const fs::path& from, const fs::path& to, bool executable) -> util::Status {
    // Already the same file (a hard link from an earlier run): renaming a link over another link to
    // the same inode does nothing, so there is nothing to replace.
    if (fs::exists(to, ec) && fs::equivalent(from, to, ec)) return {};
    fs::path tmp = to;
    tmp += ".stackpin-tmp";
    fs::remove(tmp, ec);
    fs::create_hard_link(from, tmp, ec);
    bool copied = static_cast<bool>(ec);
    if (copied) {
      ec.clear();
      fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
      if (ec) return Error(ErrorCode::io, "cannot copy " + from.string() + " to " + to.string() + ": " + ec.message());
    }
    if (copied && executable)  // a copy: make it runnable (a hard link keeps, and must not change, the source's mode)
      fs::permissions(
          tmp, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec, ec);
    fs::rename(tmp, to, ec);
    if (ec) {
      fs::remove(tmp, ec);
      return Error(ErrorCode::io, "cannot write " + to.string() + ": " + ec.message());
    }
    return {};
  };
  fs::create_directories(dir, ec);
  if (ec) return Error(ErrorCode::io, "cannot create " + dir.string() + ": " + ec.message());
  for (const char* sub : {"stackpin", "archives"}) {
    if (std::string(sub) == "archives" && !archive && cuda_archives.empty()) continue;
    if (std::string(sub) == "stackpin" && !with_convtest && !s.sbom_in_build) continue;
    fs::create_directories(dir / sub, ec);
    if (ec) return Error(ErrorCode::io, "cannot create " + (dir / sub).string() + ": " + ec.message());
  }
  if (archive) SP_TRY(place(*archive, dir / "archives" / s.archive_file, false));
  for (const auto& [from, name] : cuda_archives) SP_TRY(place(from, dir / "archives" / name, false));
  if (with_convtest) SP_TRY(place(files.convtest_binary, dir / "stackpin" / "stackpin-convtest", true));
  if (s.sbom) SP_TRY(util::write_file_atomic(dir / "sbom.spdx.json", in.sbom));
  if (s.sbom_in_build) {
    SP_TRY(util::write_file_atomic(dir / "stackpin" / "spdx-plan.tsv", in.sbom_plan));
    SP_TRY(util::write_file_atomic(dir / "stackpin" / "spdx-writer.sh", std::string(gen::spdx_writer_script())));
  }
  SP_TRY(util::write_file_atomic(dir / ".dockerignore", gen::render_dockerignore(s)));
  return util::write_file_atomic(dir / "Dockerfile", dockerfile);
}

}  // namespace core
