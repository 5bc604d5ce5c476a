// The GPU questions asked of the knowledge base: models to compute capabilities, and which
// architectures cuDNN, nvcc and torch's wheels carry code for.
#include <algorithm>
#include <cctype>

#include "knowledge/knowledge_base.hpp"

namespace knowledge {

using model::Version;

namespace {

// "NVIDIA  GeForce RTX 4090" -> "geforce rtx 4090": lower case, single spaces, no "nvidia " prefix.
std::string gpu_key(std::string_view s) {
  std::string out;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isspace(c) || c == '_') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += static_cast<char>(std::tolower(c));
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.rfind("nvidia ", 0) == 0) out.erase(0, 7);
  return out;
}

std::size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t prev = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}

bool within(const Version& v, const Version& from, const std::optional<Version>& until) {
  return compare_prefix(v, from, 3) >= 0 && (!until || compare_prefix(v, *until, 3) < 0);
}

}  // namespace

const model::GpuArch* KnowledgeBase::gpu_arch(const Version& cc) const {
  for (const auto& a : all().gpu_archs)
    if (a.cc == cc) return &a;
  return nullptr;
}

std::string KnowledgeBase::gpu_label(const Version& cc) const {
  const auto* a = gpu_arch(cc);
  return "compute capability " + cc.text() + (a && !a->name.empty() ? " (" + a->name + ")" : "");
}

const model::PtxIsaRelease* KnowledgeBase::ptx_isa(const Version& isa) const {
  for (const auto& x : all().ptx_isa)
    if (x.isa == isa) return &x;
  return nullptr;
}

const model::PtxIsaRelease* KnowledgeBase::newest_ptx_isa() const {
  const model::PtxIsaRelease* best = nullptr;
  for (const auto& x : all().ptx_isa)
    if (!best || best->isa < x.isa) best = &x;
  return best;
}

std::vector<const model::GpuModel*> KnowledgeBase::gpu_models(std::string_view name) const {
  const std::string key = gpu_key(name);
  std::vector<const model::GpuModel*> out;
  for (const auto& g : all().gpu_models) {
    bool hit = gpu_key(g.name) == key;
    for (const auto& a : g.aliases) hit = hit || gpu_key(a) == key;
    if (hit) out.push_back(&g);
  }
  return out;
}

std::vector<const model::GpuModel*> KnowledgeBase::gpu_models_within(std::string_view name) const {
  // words: '-' and '/' separate them as spaces do ("V100-SXM2-16GB")
  auto words = [](std::string k) {
    for (auto& ch : k)
      if (ch == '-' || ch == '/' || ch == '(' || ch == ')' || ch == ',') ch = ' ';
    return " " + gpu_key(k) + " ";
  };
  const std::string hay = words(std::string(name));
  std::vector<const model::GpuModel*> out;
  std::size_t longest = 0;
  for (const auto& g : all().gpu_models) {
    std::vector<std::string> keys{g.name};
    keys.insert(keys.end(), g.aliases.begin(), g.aliases.end());
    for (const auto& k : keys) {
      std::string needle = words(k);
      if (needle.size() <= 3 || hay.find(needle) == std::string::npos) continue;
      if (needle.size() > longest) {
        longest = needle.size();
        out.clear();
      }
      if (needle.size() == longest && std::find(out.begin(), out.end(), &g) == out.end()) out.push_back(&g);
    }
  }
  return out;
}

std::map<Version, model::Pos> KnowledgeBase::gpu_archs(const model::Manifest& m) const {
  std::map<Version, model::Pos> out;
  if (!m.gpus) return out;
  for (const auto& a : m.gpus->arch) out.emplace(a.value, a.pos);
  for (const auto& g : m.gpus->models) {
    auto rows = gpu_models(g.value);
    if (rows.empty()) rows = gpu_models_within(g.value);
    if (!rows.empty()) out.emplace(rows.front()->cc, g.pos);
  }
  return out;
}

std::vector<std::string> KnowledgeBase::similar_gpu_names(std::string_view name, std::size_t n) const {
  const std::string key = gpu_key(name);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& g : all().gpu_models) {
    std::size_t best = distance(key, gpu_key(g.name));
    for (const auto& a : g.aliases) best = std::min(best, distance(key, gpu_key(a)));
    // a name that contains what was written is as good as a close spelling
    if (gpu_key(g.name).find(key) != std::string::npos) best = std::min<std::size_t>(best, 1);
    scored.emplace_back(best, g.aliases.empty() ? g.name : g.aliases.back());
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [d, s] : scored) {
    if (out.size() >= n || d > std::max<std::size_t>(3, key.size() / 3)) break;
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

const model::CudnnArchSupport* KnowledgeBase::cudnn_arch_support(const Version& cudnn, int cuda_major, bool* nearest) const {
  const model::CudnnArchSupport* below = nullptr;
  for (const auto& r : all().cudnn_arch) {
    if (r.cuda_major != cuda_major) continue;
    if (within(cudnn, r.from, r.until)) {
      if (nearest) *nearest = false;
      return &r;
    }
    if (compare_prefix(r.from, cudnn, 3) < 0 && (!below || below->from < r.from)) below = &r;
  }
  if (nearest) *nearest = below != nullptr;
  return below;
}

const model::NvccArchs* KnowledgeBase::nvcc_archs(const Version& cuda) const {
  for (const auto& n : all().nvcc_archs)
    if (compare_prefix(n.cuda, cuda, 2) == 0) return &n;
  return nullptr;
}

const model::TorchArchs* KnowledgeBase::torch_archs(const Version& release, const std::string& variant, model::Platform p) const {
  for (const auto& t : all().torch_archs)
    if (compare_prefix(t.release, release, 2) == 0 && t.variant == variant && t.platform == p) return &t;
  return nullptr;
}

const model::FrameworkArchs* KnowledgeBase::framework_archs(const std::string& framework, const Version& release, int cuda_major,
                                                            model::Platform p) const {
  for (const auto& a : all().framework_archs) {
    if (a.framework == framework && a.cuda_major == cuda_major && a.platform == p && within(release, a.from, a.until)) return &a;
  }
  return nullptr;
}

const model::OnnxRuntimeRow* KnowledgeBase::onnxruntime_pypi_row(const Version& release) const {
  const model::OnnxRuntimeRow* out = nullptr;
  for (const auto* r : onnxruntime_rows(release))
    if (r->pypi == true) out = r;
  return out;
}

KernelMatch kernels_for(const Version& gpu, const model::FrameworkArchs& build) {
  auto has = [&](const std::vector<Version>& list) { return std::find(list.begin(), list.end(), gpu) != list.end(); };
  if (has(build.sass_a)) return {KernelFit::native, gpu};
  KernelMatch m = kernels_for(gpu, build.sass, build.ptx);
  if (m.fit == KernelFit::native || m.fit == KernelFit::compatible) return m;
  if (has(build.jit_fails)) return {};                 // its PTX is known not to JIT there: nothing runs
  if (has(build.ptx_a)) return {KernelFit::ptx, gpu};  // its own PTX: no older one is nearer
  return m;
}

KernelMatch kernels_for(const Version& gpu, const std::vector<Version>& sass, const std::vector<Version>& ptx) {
  KernelMatch m;
  for (const auto& s : sass) {
    if (s == gpu) return {KernelFit::native, s};
    // a cubin for X.y runs on X.z when z >= y
    if (s.major() == gpu.major() && s.minor() < gpu.minor() && (m.fit != KernelFit::compatible || m.via < s))
      m = {KernelFit::compatible, s};
  }
  if (m.fit == KernelFit::compatible) return m;
  for (const auto& p : ptx)
    if (!(gpu < p) && (m.fit != KernelFit::ptx || m.via < p)) m = {KernelFit::ptx, p};
  return m;
}

}  // namespace knowledge
