// The matrix of a bake file: every manifest for every platform, planned as `generate dockerfile`
// plans one image, with the names and contexts bake needs. Nothing is written: the command writes
// the contexts only after every one of them has been prepared.
#include "core/package/bake.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <system_error>
#include <utility>

#include "gen/dockerfile.hpp"
#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;

namespace {

// The bake target's platform and tag suffix for a stackpin platform.
std::pair<std::string, std::string> oci_platform(model::Platform p) {
  return p == model::Platform::linux_sbsa ? std::pair<std::string, std::string>{"linux/arm64", "arm64"}
                                          : std::pair<std::string, std::string>{"linux/amd64", "amd64"};
}

// A bake target's name for a manifest's: bake takes letters, digits, '_' and '-' only.
std::string target_of(std::string name) {
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

// The manifest's name as an image's: Docker's grammar for a repository path component (the
// image's name is the lowercased one), and one manifest per image. Errors: invalid.
util::Status check_image_name(const model::Manifest& m, const std::string& path, std::map<std::string, std::string>& names) {
  static const std::regex k_component("^[a-z0-9]+((\\.|_|__|-+)[a-z0-9]+)*$");
  const std::string& name = m.name.value;
  const std::string lower = util::to_lower(name);
  if (!std::regex_match(lower, k_component))
    return util::Error(util::ErrorCode::invalid,
                       "the manifest's name \"" + util::printable(name, 80) + "\" cannot name an image or a bake target")
        .at(m.locate(m.name.pos))
        .with_hint(
            "use letters and digits separated by single '.', '_' or '-' (as Docker names images): it becomes the image's "
            "name and its targets'");
  if (auto [it, fresh] = names.emplace(lower, path); !fresh)
    return util::Error(util::ErrorCode::invalid,
                       path + " and " + it->second + " would both be the image " + lower + " (image names are lowercase)")
        .at(m.locate(m.name.pos))
        .with_hint("give the manifests different names (the `name` key)");
  return {};
}

}  // namespace

util::Result<BakeMatrix> plan_bake_matrix(const BakeMatrixOptions& o, const knowledge::KnowledgeBase& kb) {
  std::vector<model::Platform> platforms;
  for (const auto& p : o.platforms) {
    auto parsed = model::parse_platform(p);
    if (!parsed || (*parsed != model::Platform::linux_x86_64 && *parsed != model::Platform::linux_sbsa))
      return util::Error(util::ErrorCode::usage, "--platform " + p + ": images are linux-x86_64 or linux-sbsa");
    platforms.push_back(*parsed);
  }
  const bool all_platforms = platforms.empty();
  if (all_platforms) platforms = {model::Platform::linux_x86_64, model::Platform::linux_sbsa};
  fs::path bake_dir = o.output.parent_path();
  fs::path contexts = o.context_dir.empty() ? bake_dir / "contexts" : o.context_dir;
  std::error_code ec;
  fs::path rel_root = fs::relative(fs::absolute(contexts, ec), fs::absolute(bake_dir.empty() ? "." : bake_dir, ec), ec);
  if (ec || rel_root.empty() || *rel_root.begin() == "..")
    return util::Error(util::ErrorCode::usage, "--context-dir " + contexts.string() + " is not inside the bake file's folder")
        .with_hint("bake resolves each context from the folder it runs in: keep the contexts beside docker-bake.json");
  const bool have_convtest = !o.convtest.empty() && fs::is_regular_file(o.convtest, ec);

  BakeMatrix x;
  if (have_convtest) x.convtest = o.convtest;
  std::map<std::string, std::string> names;  // image name -> the manifest that takes it
  for (const auto& path : o.manifests) {
    SP_TRY_ASSIGN(auto loaded, o.load(path));
    const model::Manifest& m = loaded.manifest;
    SP_TRY(check_image_name(m, path, names));
    const std::string& name = m.name.value;
    for (auto platform : platforms) {
      DockerOptions d;
      if (loaded.lock) d.lock = &*loaded.lock;
      if (loaded.pylock) d.pylock = &*loaded.pylock;
      d.platform = platform;
      d.from_url = o.from_url;
      d.archive_registry = o.archive_registry;
      d.manifest_file = fs::path(path).filename().string();
      d.manifest_sha256 = m.sha256;
      auto plan = plan_dockerfile(m, kb, d);
      if (!plan && all_platforms && platform != model::Platform::linux_x86_64) {
        x.notes.push_back(path + ": no " + model::to_string(platform) + " image (" + plan.error().message + ")");
        continue;
      }
      if (!plan) return plan.error();
      plan->spec.sbom = gen::copies_archives(plan->spec);
      ContextFiles files = o.files;
      if (plan->spec.from_url)  // the SBOM made from local copies of the archives, or its plan
        if (auto note = url_image_sbom(*plan, m, kb, files); !note.empty())
          x.notes.push_back(path + " (" + model::to_string(platform) + "): " + note);
      auto text = gen::render_dockerfile(plan->spec);
      if (!text) {
        auto e = text.error();
        e.message = path + ": " + e.message;
        return e;
      }
      for (const auto& n : plan->notes)  // said once per manifest, not once per platform
        if (std::find(x.notes.begin(), x.notes.end(), path + ": " + n) == x.notes.end()) x.notes.push_back(path + ": " + n);
      auto [oci, arch] = oci_platform(platform);
      gen::BakeImage img;
      img.name = target_of(name) + "-" + arch;
      img.context = (rel_root / name / model::to_string(platform)).generic_string();
      img.platform = oci;
      img.base_image = plan->spec.base_image;
      img.image = (o.registry.empty() ? "" : o.registry + "/") + util::to_lower(name);
      img.tag = arch;
      if (!o.registry.empty()) img.cache_ref = o.registry + "/" + util::to_lower(name) + ":buildcache-" + arch;
      img.devel = plan->spec.hermetic;
      img.test = have_convtest && platform == model::host_linux_platform();
      x.images.push_back(img);
      x.planned.push_back(
          {m, loaded.lock, std::move(*plan), std::move(*text), contexts / name / model::to_string(platform), std::move(files)});
    }
  }
  if (o.registry.empty()) x.notes.push_back("no --registry: local image names, and no registry cache shared between builders");
  if (!have_convtest)
    x.notes.push_back("no stackpin-convtest at " + (o.convtest.empty() ? std::string("(none)") : o.convtest.string()) +
                      ": no -test targets");
  return x;
}

}  // namespace core
