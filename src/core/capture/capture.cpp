// capture: the loader's winner is the cuDNN this machine really uses, so that is what the
// manifest pins; everything else follows from it and is said in comments.
#include "core/capture/capture.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "capture/capture_pins.hpp"
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
void add_toolkit_components(Capture& cap, const model::ToolkitInfo& t, model::Platform platform) {
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
  cap.spec.cuda_components_comment =
      "the toolkit's components (" + t.root +
      "/version.json) that NVIDIA publishes as archives: `stackpin apply` stages them; remove this line to keep using an installed toolkit";
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

}  // namespace

namespace {
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

util::Result<Capture> capture(const model::MachineReport& m, const knowledge::KnowledgeBase& kb, const CaptureOptions& o) {
  Capture cap;
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
    SP_TRY_ASSIGN(cudnn, detail::only_build(kb, *t, platform, 0, copy->dir));
    cudnn_from = "the only build of cuDNN " + three + " NVIDIA published (knowledge base)";
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
    s.cuda = toolkit->version;
    s.cuda_comment = "the CUDA toolkit at " + toolkit->root + " (" + model::to_string(toolkit->version_source) + ")";
    add_toolkit_components(cap, *toolkit, platform);
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
  s.cudnn_comment = "the cuDNN the loader resolves: " + via + "; build from " + cudnn_from;

  // The archive that reproduces it.
  detail::add_archive_pin(cap, kb, receipt, *cudnn, cuda_major, platform, copy->package_source);

  // Frameworks from package metadata.
  static const std::vector<std::string> k_frameworks = {"torch", "torchvision", "torchaudio", "tensorflow", "onnxruntime-gpu"};
  for (const auto& p : m.python.frameworks) {
    if (std::find(k_frameworks.begin(), k_frameworks.end(), p.name) == k_frameworks.end()) continue;
    std::string v = p.version.substr(0, p.version.find('+'));  // "2.1.0+cu121" -> the release; the variant follows from [cuda]
    if (model::Version::parse(v)) s.frameworks.emplace_back(p.name, v);
  }
  if (!s.frameworks.empty()) s.frameworks_comment = "installed in " + util::join(m.python.site_packages, ", ") + " (package metadata)";

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
