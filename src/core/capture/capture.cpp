// capture: the loader's winner is the cuDNN this machine really uses, so that is what the
// manifest pins; everything else follows from it and is said in comments.
#include "core/capture/capture.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include "capture/capture_pins.hpp"
#include "crypto/sha256.hpp"
#include "format/receipt.hpp"
#include "knowledge/cuda_catalog.hpp"
#include "model/contracts.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

namespace {

const model::CudnnCopy* loader_cudnn(const model::MachineReport& m, std::string& via) {
  for (const std::string& soname : {model::cudnn_library_name(9, false), model::cudnn_library_name(8, false)}) {
    for (const auto& r : m.loader) {
      if (r.soname != soname || !r.winner) continue;
      std::string dir = fs::path(r.winner->real_path).parent_path().string();
      for (const auto& c : m.cudnn) {
        bool same = c.dir == dir || std::find(c.aliases.begin(), c.aliases.end(), dir) != c.aliases.end();
        if (same) {
          via = r.winner->path + " (" + r.winner->via + ")";
          return &c;
        }
      }
    }
  }
  return nullptr;
}

// The toolkit's components (its version.json) that NVIDIA's manifest of the release ships for this
// platform, so that `apply` stages the same toolkit from NVIDIA's archives; the rest is said in
// notes: components NVIDIA does not publish as archives (the driver, installers' extras), and
// versions that are not the release's (a library replaced by hand).
void add_toolkit_components(Capture& cap, const model::ToolkitInfo& t, model::Platform platform, const std::string& listed_by) {
  if (t.components.empty()) return;
  auto v = model::Version::parse(t.version);
  auto release =
      v && v->size() >= 3 ? knowledge::CudaCatalog::embedded().release(*v) : util::Result<const format::CudaRedistribRelease*>(nullptr);
  if (!release || !*release) {
    cap.notes.push_back("the toolkit at " + t.root + " lists " + std::to_string(t.components.size()) +
                        " components, but stackpin has no NVIDIA manifest of CUDA " + t.version +
                        ": [cuda] components left out (add them, and NVIDIA's redistrib_" + t.version +
                        ".json through `stackpin lock --redistrib`)");
    return;
  }
  std::vector<std::string> not_archived, driver, other_version;
  for (const auto& c : t.components) {
    const format::CudaComponent* known = knowledge::find_component(**release, c.id);
    if (!known || !knowledge::archive_for(*known, platform)) {
      not_archived.push_back(c.id);
      continue;
    }
    if (known->license == "NVIDIA Driver") {  // NVIDIA's manifest says it: installed with the driver, not into a toolkit
      driver.push_back(c.id);
      continue;
    }
    if (known->version_text != c.version)
      other_version.push_back(c.id + " " + c.version + " (CUDA " + t.version + ": " + known->version_text + ")");
    cap.spec.cuda_components.push_back(c.id);
  }
  if (cap.spec.cuda_components.empty()) return;
  cap.spec.cuda_components_comment = "the toolkit's components (" + listed_by +
                                     ") that NVIDIA publishes as archives: `stackpin apply` stages them; remove this line to keep "
                                     "using an installed toolkit";
  if (!not_archived.empty())
    cap.notes.push_back("not in NVIDIA's archives of CUDA " + t.version + " for " + model::to_string(platform) +
                        ", so left out of [cuda] components: " + util::join(not_archived, ", "));
  if (!driver.empty())
    cap.notes.push_back(
        "left out of [cuda] components, as NVIDIA's manifest licenses them with the driver (installed with it, not staged): " +
        util::join(driver, ", "));
  if (!other_version.empty())
    cap.notes.push_back("components whose version is not CUDA " + t.version +
                        "'s (the archives stage the release's): " + util::join(other_version, ", "));
}

// The component of NVIDIA's manifest that a pip wheel of the toolkit is: the wheel's name without
// "nvidia-" (and "cuda-"), looked up as a component name ("nvidia-cuda-nvcc" -> cuda_nvcc,
// "nvidia-cublas" -> libcublas, "nvidia-nvtx" -> cuda_nvtx, "nvidia-cuda-cccl" -> cuda_cccl or,
// from 13.3, cccl); the runtime wheel is cudart's. nullptr for the wheels that are not toolkit
// components (cuDNN, NCCL).
const format::CudaComponent* component_of_wheel(const format::CudaRedistribRelease& r, const std::string& distribution) {
  if (distribution.rfind("nvidia-", 0) != 0) return nullptr;
  std::string name = distribution.substr(7);
  std::replace(name.begin(), name.end(), '-', '_');
  if (name.rfind("cuda_", 0) == 0) name.erase(0, 5);
  return knowledge::find_component_named(r, name == "runtime" ? "cudart" : name);
}

// A toolkit assembled from NVIDIA's pip wheels tells only its major.minor: the runtime wheel's
// version is cudart's, not the release's. The release is the one of NVIDIA's manifests whose
// components carry every wheel's version (13.0.2 and 13.0.3 share cudart 13.0.96; cuBLAS tells
// them apart). Found, it is pinned with the wheels as [cuda] components, as version.json's are;
// otherwise major.minor stays, with a note naming what matched.
void refine_wheel_toolkit(Capture& cap, model::ToolkitInfo& t) {
  auto minor = model::Version::parse(t.version);
  if (!minor || minor->size() != 2 || t.wheels.empty()) return;
  const auto& catalog = knowledge::CudaCatalog::embedded();
  std::vector<std::pair<model::Version, const format::CudaRedistribRelease*>> same;
  for (const auto& v : catalog.releases()) {
    if (v.major() != minor->major() || v.minor() != minor->minor()) continue;
    auto r = catalog.release(v);
    if (r && *r) same.emplace_back(v, *r);
  }
  // the wheels that are toolkit components in some release of this major.minor: a release that
  // lacks one of them is not the one the wheels make up
  std::set<std::string> components_somewhere;
  for (const auto& [v, r] : same)
    for (const auto& w : t.wheels)
      if (component_of_wheel(*r, w.distribution)) components_somewhere.insert(w.distribution);
  std::vector<std::pair<model::Version, std::vector<model::ToolkitComponent>>> fits;
  for (const auto& [v, r] : same) {
    std::vector<model::ToolkitComponent> components;
    bool fit = true, runtime = false;
    for (const auto& w : t.wheels) {
      const format::CudaComponent* c = component_of_wheel(*r, w.distribution);
      if (!c) {
        if (components_somewhere.count(w.distribution)) fit = false;
        continue;
      }
      if (c->version_text != w.version) fit = false;
      if (c->id == "cuda_cudart") runtime = true;
      components.push_back({c->id, c->name, w.version});
    }
    if (fit && runtime) fits.emplace_back(v, std::move(components));
  }
  if (fits.size() == 1) {
    t.version = fits.front().first.text();
    t.components = std::move(fits.front().second);
    t.version_detail += "; every toolkit wheel's version is NVIDIA's CUDA " + t.version + "'s";
    return;
  }
  std::vector<std::string> names;
  for (const auto& [v, c] : fits) names.push_back(v.text());
  if (same.empty())
    cap.notes.push_back("no NVIDIA manifest of a CUDA " + t.version +
                        " release is known to stackpin: [cuda] version is the runtime wheel's " + t.version);
  else if (fits.empty())
    cap.notes.push_back("the toolkit's pip wheels at " + t.root + " match no single release of CUDA " + t.version +
                        " in NVIDIA's manifests (a wheel upgraded alone?): [cuda] version stays " + t.version);
  else
    cap.notes.push_back("the toolkit's pip wheels at " + t.root + " fit CUDA " + util::join(names, " and ") +
                        " alike: [cuda] version stays " + t.version + "; pin the release you mean");
}

}  // namespace

namespace {
// What the captured cuDNN's libraries carry, as their fatbin containers list it: the SASS and PTX
// targets of all of them ("; its libraries carry SASS sm_75 ... and PTX compute_121"), "" when
// none was read.
std::string code_of(const model::CudnnCopy& copy) {
  std::set<model::GpuTarget> sass, ptx;
  for (const auto& k : copy.kernels)
    for (const auto& t : k.targets) {
      if (t.target.kind == model::CodeKind::sass) sass.insert(t.target);
      if (t.target.kind == model::CodeKind::ptx) ptx.insert(t.target);
    }
  if (sass.empty() && ptx.empty()) return "";
  auto names = [](const std::set<model::GpuTarget>& ts) {
    std::string out;
    for (const auto& t : ts) out += (out.empty() ? "" : " ") + t.name();
    return out;
  };
  std::string s = "; its libraries carry";
  if (!sass.empty()) s += " SASS " + names(sass);
  if (!ptx.empty()) s += std::string(sass.empty() ? "" : " and") + " PTX " + names(ptx);
  return s + " (read from their fatbin containers)";
}

// The GPUs the captured stack ran on, so that check judges the reproduced stack against them.
void capture_gpus(const model::MachineReport& m, Capture& cap) {
  std::vector<std::string> names;
  for (const auto& g : m.gpus) {
    if (std::find(cap.spec.gpu_arch.begin(), cap.spec.gpu_arch.end(), g.cc) == cap.spec.gpu_arch.end()) cap.spec.gpu_arch.push_back(g.cc);
    names.push_back(g.name);
  }
  if (!names.empty()) cap.spec.gpus_comment = "the GPUs of the captured machine (nvidia-smi): " + util::join(names, ", ");
}
}  // namespace

namespace {

// The NVIDIA wheels of the Python environment, pinned exactly in [python] packages so that the Python
// lock of the capture resolves the same ones (the frameworks' exact builds follow from [cuda]), with
// where each came from (PEP 610's direct_url.json) and the SHA-256 of its RECORD (every installed
// file's hash: equal digests are equal installs) in the comments. [python] version is the
// environment's, from its site-packages path.
void python_environment(const model::MachineReport& m, gen::ManifestSpec& s) {
  for (const auto& p : m.python.frameworks) {
    const bool nvidia = p.name.rfind("nvidia-", 0) == 0 || p.name.rfind("cuda-", 0) == 0;
    std::string where = p.url.empty() ? "an index (no direct_url.json)" : p.url;
    if (!p.wheel_sha256.empty()) where += ", wheel sha256 " + p.wheel_sha256;
    if (!p.record_path.empty())
      if (auto h = crypto::hash_file(p.record_path)) where += ", RECORD sha256 " + crypto::to_hex(h->digest);
    if (nvidia) s.python_packages.push_back(p.name + "==" + p.version);
    s.python_comments.push_back(p.name + " " + p.version + ": " + where);
  }
  if (s.python_comments.empty()) return;
  s.python_comments.insert(s.python_comments.begin(), "the Python environment in " + util::join(m.python.site_packages, ", ") +
                                                          ": its NVIDIA wheels pinned exactly; where each package came from:");
  if (s.python.empty())
    for (const auto& site : m.python.site_packages) {
      static const std::regex k_site(R"(/python([0-9]+\.[0-9]+)/(site|dist)-packages/?$)");
      std::smatch match;
      if (std::regex_search(site, match, k_site)) {
        s.python = match[1].str();
        break;
      }
    }
}

}  // namespace

util::Result<Capture> capture(const model::MachineReport& m, const knowledge::KnowledgeBase& embedded, const CaptureOptions& o) {
  Capture cap;
  std::optional<knowledge::KnowledgeBase> own;  // the knowledge with NVIDIA's manifest of a release it lacks
  const knowledge::KnowledgeBase* known = &embedded;
  auto& s = cap.spec;
  std::string via;
  const model::CudnnCopy* copy = loader_cudnn(m, via);
  if (!copy)
    return Error(ErrorCode::not_found, "the dynamic loader finds no cuDNN on this machine (libcudnn.so.9 / libcudnn.so.8)")
        .with_hint("run `stackpin doctor` to see every copy and why none is found; set LD_LIBRARY_PATH to the one you use");
  model::Platform platform = m.arch == "aarch64" ? model::Platform::linux_sbsa : model::Platform::linux_x86_64;

  // The exact build: four parts from metadata, else the knowledge base when X.Y.Z has one build.
  std::string three = !copy->library_version.empty() ? copy->library_version : copy->header_version;
  std::optional<model::Version> cudnn;
  std::string cudnn_from;
  if (auto v = model::Version::parse(copy->package_version); v && v->size() == 4) {
    cudnn = v;
    cudnn_from = copy->package_source;
  } else if (auto t = model::Version::parse(three)) {
    known = &detail::knowledge_for(embedded, *t, platform, 0, o, own, cap);
    SP_TRY_ASSIGN(cudnn, detail::with_notes(detail::only_build(*known, *t, platform, 0, copy->dir), cap));
    cudnn_from = "the only build of cuDNN " + three + " NVIDIA published (" + detail::facts_from(*known, *t) + ")";
  } else {
    return Error(ErrorCode::invalid, "the version of the cuDNN in " + copy->dir + " cannot be told (no versioned file, header or metadata)")
        .with_hint("run `stackpin doctor` for what is there");
  }

  // The CUDA major it was built for: the receipt, the wheel's name (nvidia-cudnn-cu12), else the
  // default toolkit's major.
  const model::ToolkitInfo* toolkit = nullptr;
  for (const auto& t : m.toolkits)
    if (t.is_default) toolkit = &t;
  if (!toolkit && !m.toolkits.empty()) toolkit = &m.toolkits.front();
  int cuda_major = 0;
  std::optional<model::Receipt> receipt;
  if (copy->kind == model::CudnnKind::staged && !copy->package_source.empty()) {
    if (auto text = util::read_file(copy->package_source)) {
      if (auto r = format::parse_receipt(*text, copy->package_source)) receipt = *r;
    }
  }
  if (receipt) cuda_major = receipt->cudnn_cuda_major;
  std::string detail = copy->kind_detail + " " + copy->package_source;
  for (int c : {11, 12, 13})
    if (!cuda_major && detail.find("cu" + std::to_string(c)) != std::string::npos) cuda_major = c;
  if (!cuda_major && toolkit) {
    if (auto tv = model::Version::parse(toolkit->version)) cuda_major = static_cast<int>(tv->major());
  }

  s.name = o.name.empty() ? detail::safe_name("captured-" + (m.os.id.empty() ? std::string("linux") : m.os.id + m.os.version_id) +
                                              "-cudnn" + cudnn->prefix(3))
                          : o.name;
  s.description = "Captured by stackpin capture from " + (m.os.pretty_name.empty() ? std::string("a Linux machine") : m.os.pretty_name);
  s.header = {"Written by `stackpin capture`: this machine's GPU stack, for a teammate to reproduce with `stackpin stage`.",
              "Check it with `stackpin check`; compare two machines with `stackpin diff`."};
  if (toolkit && !toolkit->version.empty()) {
    model::ToolkitInfo t = *toolkit;
    std::string listed_by = t.root + "/version.json";
    if (t.version_source == model::ToolkitVersionSource::pip_wheel) {
      refine_wheel_toolkit(cap, t);
      listed_by = "its NVIDIA pip wheels' dist-info";
    }
    s.cuda = t.version;
    s.cuda_comment = "the CUDA toolkit at " + t.root + " (" + model::to_string(t.version_source) + ")";
    add_toolkit_components(cap, t, platform, listed_by);
  } else {
    cap.notes.push_back("no CUDA toolkit found: [cuda] left out (frameworks' wheels may bring their own runtime)");
  }
  if (!m.driver.version.empty()) {
    s.driver_linux = m.driver.version;
    s.driver_comment = "this machine's driver (" + std::string(model::to_string(m.driver.source)) + ") as the minimum";
  } else {
    cap.notes.push_back("no NVIDIA driver found: [driver] left out (check derives the minimum from [cuda])");
  }
  s.cudnn = cudnn->text();
  s.cudnn_cuda = cuda_major;
  if (!cuda_major)
    cap.notes.push_back("the CUDA major cuDNN " + cudnn->text() +
                        " was built for cannot be told (no receipt, wheel name or toolkit): add cuda = <major> to [cudnn]");
  s.cudnn_comment = "the cuDNN the loader resolves: " + via + "; build from " + cudnn_from + code_of(*copy);

  // The archive that reproduces it.
  detail::add_archive_pin(cap, *known, receipt, *cudnn, cuda_major, platform, copy->package_source);

  // Frameworks from package metadata.
  static const std::vector<std::string> k_frameworks = {"torch", "torchvision", "torchaudio", "tensorflow", "onnxruntime-gpu"};
  for (const auto& p : m.python.frameworks) {
    if (std::find(k_frameworks.begin(), k_frameworks.end(), p.name) == k_frameworks.end()) continue;
    std::string v = p.version.substr(0, p.version.find('+'));  // "2.1.0+cu121" -> the release; the variant follows from [cuda]
    if (model::Version::parse(v)) s.frameworks.emplace_back(p.name, v);
  }
  if (!s.frameworks.empty()) s.frameworks_comment = "installed in " + util::join(m.python.site_packages, ", ") + " (package metadata)";
  python_environment(m, s);

  if (copy->kind == model::CudnnKind::staged || copy->kind == model::CudnnKind::cudnn_path || copy->kind == model::CudnnKind::other) {
    fs::path dir = copy->dir;
    if (dir.filename() == "lib64") {
      s.linux_layout = "lib64";
      s.linux_prefix = dir.parent_path().string();
      s.linux_comment = "where this copy lives; `stackpin stage --target linux` recreates it there";
    } else {
      cap.notes.push_back("the cuDNN in use is in " + copy->dir +
                          ", not a <prefix>/lib64 tree: no [targets.linux] written; stage it with --dest");
    }
  } else {
    cap.notes.push_back("the cuDNN in use is a " + std::string(model::to_string(copy->kind)) + " copy (" + copy->dir +
                        "): no [targets.linux] written; stage it where you want it with --dest");
  }
  capture_gpus(m, cap);
  return cap;
}

}  // namespace core
