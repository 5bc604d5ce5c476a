// Rules about the GPUs a stack must run on ([gpus]): each GPU named by model is resolved to its
// compute capability, then every distinct compute capability is judged against the cuDNN build's
// support matrix, nvcc's targets (for stacks that carry nvcc) and the kernels each framework
// build carries (torch, onnxruntime-gpu, tensorflow: SASS for that architecture, SASS it is binary
// compatible with, PTX the driver compiles at first use, or nothing).
#include <algorithm>
#include <map>
#include <tuple>

#include "check/check_rules.hpp"
#include "util/strings.hpp"

namespace core::rules {

using knowledge::KernelFit;
using model::Platform;
using model::Severity;
using model::Version;

namespace {

struct Gpu {
  Version cc;
  std::vector<std::string> names;  // what the manifest called it ("RTX 4090"), empty for an arch entry
  model::Pos pos;
};

std::string sm(const Version& cc) { return "sm_" + std::to_string(cc.major()) + std::to_string(cc.minor()); }

std::string subject_of(const Ctx& c, const Gpu& g) {
  const auto* a = c.kb.gpu_arch(g.cc);
  const std::string arch = a && !a->name.empty() ? a->name : "";
  if (g.names.empty()) return "GPU " + g.cc.text() + (arch.empty() ? "" : " (" + arch + ")");
  return util::join(g.names, ", ") + " (" + g.cc.text() + (arch.empty() ? "" : ", " + arch) + ")";
}

std::vector<Gpu> resolve(Ctx& c) {
  std::vector<Gpu> out;
  auto add = [&](const Version& cc, const std::string& name, model::Pos pos) {
    for (auto& g : out)
      if (g.cc == cc) {
        if (!name.empty()) g.names.push_back(name);
        return;
      }
    out.push_back({cc, name.empty() ? std::vector<std::string>{} : std::vector<std::string>{name}, pos});
  };
  c.examined("gpu.model");
  for (const auto& m : c.m.gpus->models) {
    auto rows = c.kb.gpu_models(m.value);
    const bool contained = rows.empty();
    if (contained) rows = c.kb.gpu_models_within(m.value);
    if (rows.empty()) {
      auto& f = c.add("gpu.model", Severity::error, "GPU \"" + util::printable(m.value, 60) + "\"", m.pos);
      f.seen = "not a GPU model the knowledge base knows (" + std::to_string(c.kb.facts().gpu_models.size()) + " models)";
      auto near = c.kb.similar_gpu_names(m.value);
      f.fix = (near.empty() ? std::string() : "did you mean " + util::join(near, ", ") + "? ") +
              "or give its compute capability in [gpus] arch (nvidia-smi --query-gpu=name,compute_cap --format=csv prints both)";
      f.source = "NVIDIA CUDA GPUs (developer.nvidia.com/cuda-gpus)";
      continue;
    }
    const Version cc = rows.front()->cc;
    bool same = std::all_of(rows.begin(), rows.end(), [&](const model::GpuModel* r) { return r->cc == cc; });
    if (!same) {
      std::vector<std::string> which;
      for (const auto* r : rows) which.push_back(r->name + " (" + r->cc.text() + ")");
      auto& f = c.add("gpu.model", Severity::error, "GPU \"" + util::printable(m.value, 60) + "\"", m.pos);
      f.seen = "the name fits GPUs of several compute capabilities: " + util::join(which, ", ");
      f.fix = "name the exact model as nvidia-smi reports it, or give its compute capability in [gpus] arch";
      continue;
    }
    auto& f = c.add("gpu.model", Severity::ok, "GPU \"" + util::printable(m.value, 60) + "\"", m.pos);
    f.seen = rows.front()->name + ": " + c.kb.gpu_label(cc) +
             (contained ? " (taken from the model name it contains; name it exactly to be sure)" : "");
    f.source = knowledge::first_source(rows.front()->source);
    add(cc, m.value, m.pos);
  }
  c.examined("gpu.arch");
  for (const auto& a : c.m.gpus->arch) {
    if (!c.kb.gpu_arch(a.value)) {
      auto& f = c.add("gpu.arch", Severity::warning, "GPU compute capability " + a.value.text(), a.pos);
      f.seen = "no NVIDIA architecture the knowledge base knows has compute capability " + a.value.text();
      f.fix = "check the value (nvidia-smi --query-gpu=compute_cap --format=csv)";
      f.source = "NVIDIA CUDA GPUs (developer.nvidia.com/cuda-gpus)";
    }
    add(a.value, "", a.pos);
  }
  return out;
}

// The newest cuDNN support-matrix row (same CUDA major) that supports `cc`, for the fix.
const model::CudnnArchSupport* cudnn_row_supporting(const Ctx& c, const Version& cc, int cuda_major) {
  const model::CudnnArchSupport* best = nullptr;
  for (const auto& r : c.kb.facts().cudnn_arch) {
    if (r.cuda_major != cuda_major || cc < r.min_cc) continue;
    bool listed = r.ccs.empty() ? (!r.max_cc || !(*r.max_cc < cc)) : std::find(r.ccs.begin(), r.ccs.end(), cc) != r.ccs.end();
    if (listed && (!best || best->from < r.from)) best = &r;
  }
  return best;
}

// The nearest cuDNN release that fits a GPU, by NVIDIA's support matrices: for the stack's CUDA
// major, else the one before it (CUDA 13 dropped the older architectures).
std::string nearest_cudnn(const Ctx& c, const Version& cc) {
  if (const auto* row = cudnn_row_supporting(c, cc, c.cudnn_cuda))
    return "pin cuDNN " + row->from.text() + " for CUDA " + std::to_string(c.cudnn_cuda) + " (its support matrix lists " + cc.text() +
           "), or run the stack on a GPU these libraries carry code for";
  if (const auto* row = c.cudnn_cuda > 1 ? cudnn_row_supporting(c, cc, c.cudnn_cuda - 1) : nullptr)
    return "pin CUDA " + std::to_string(c.cudnn_cuda - 1) + ".x with cuDNN " + row->from.text() + " for CUDA " +
           std::to_string(c.cudnn_cuda - 1) + " (its support matrix lists " + cc.text() + "), or run the stack on a newer GPU";
  return "no cuDNN release the knowledge base knows supports " + cc.text() + ": run the stack on a newer GPU";
}

// The newest CUDA release whose nvcc still compiles for `cc`, or null.
const model::NvccArchs* newest_nvcc_for(const Ctx& c, const Version& cc) {
  const model::NvccArchs* last = nullptr;
  for (const auto& r : c.kb.facts().nvcc_archs)
    if (std::find(r.sass.begin(), r.sass.end(), cc) != r.sass.end() && (!last || last->cuda < r.cuda)) last = &r;
  return last;
}

std::string jit_text(const LibraryFits::One& x, const Version& cc) {
  return library_targets(x) + " has no SASS for " + cc.text() + ": the driver compiles its PTX (" + x.fit.via +
         (x.fit.ptx_isa ? ", ISA " + x.fit.ptx_isa->text() : std::string()) + ") at first use";
}

const char* k_jit_fix =
    "a driver new enough for that PTX ISA compiles it, for seconds to minutes at the first run (kept in the driver's compute cache, "
    "CUDA_CACHE_PATH); `stackpin inspect --gpu` on the archive names the driver it needs";

// cuDNN judged by the GPU code of its libraries, read from the pinned archives when the stack was
// locked: what the loader will find, not what a support matrix lists.
// False when the libraries carry no GPU code at all: that is said, and NVIDIA's documents decide.
bool judge_cudnn_libraries(Ctx& c, const Gpu& g, const std::vector<const model::LockedArchive*>& read, model::GpuCheck& out) {
  const std::string who = "cuDNN " + c.cudnn.text() + " for CUDA " + std::to_string(c.cudnn_cuda);
  const auto fits = fits_of(read, g.cc);
  const std::string source = evidence_source(c, read);
  if (fits.with_code == 0) {
    auto& f = c.add("gpu.cudnn", Severity::warning, subject_of(c, g), g.pos);
    f.seen = who + ": the libraries read from its archives carry no GPU code at all, so NVIDIA's support matrix decides";
    f.fix = "check the archive with `stackpin inspect`; it is the pinned one, so this is how it was built";
    f.source = source;
    return false;
  }
  if (!fits.none.empty()) {
    const auto& x = fits.none.front();
    auto& f = c.add("gpu.cudnn", Severity::error, subject_of(c, g), g.pos);
    f.seen = who + ": " + library_targets(x) + " carries nothing that runs on " + g.cc.text() +
             (fits.none.size() > 1 ? " (nor do " + std::to_string(fits.none.size() - 1) + " more of its libraries)" : "") +
             "; cuDNN fails there with CUDNN_STATUS_ARCH_MISMATCH or \"no kernel image is available\"";
    f.expected = model::code_that_runs_on(g.cc);
    f.fix = nearest_cudnn(c, g.cc);
    f.source = source;
    out.cudnn = "unsupported";
    return true;
  }
  if (!fits.jit.empty()) {
    auto& f = c.add("gpu.cudnn", Severity::warning, subject_of(c, g), g.pos);
    f.seen = who + ": " + jit_text(fits.jit.front(), g.cc) +
             (fits.jit.size() > 1 ? " (and so for " + std::to_string(fits.jit.size() - 1) + " more of its libraries)" : "");
    f.fix = k_jit_fix;
    f.source = source;
    out.cudnn = "jit";
    return true;
  }
  auto& f = c.add("gpu.cudnn", Severity::ok, subject_of(c, g), g.pos);
  f.seen = who + ": all " + std::to_string(fits.with_code) + " of its libraries with GPU code carry SASS that runs on " + g.cc.text() +
           " (judged by the libraries themselves, not by NVIDIA's support matrix)";
  f.source = source;
  out.cudnn = "supported";
  return true;
}

// The CUDA components' libraries (cuBLAS, cuFFT, ...) judged the same way, where the lock read them.
void judge_cuda_libraries(Ctx& c, const Gpu& g) {
  const auto read = archives_read(c, true);
  if (read.empty()) return;
  c.examined("gpu.kernels");
  const auto fits = fits_of(read, g.cc);
  if (fits.with_code == 0) return;  // cudart, nvcc, headers: nothing that runs on a GPU
  const std::string who = "CUDA " + c.cuda.text();
  const std::string source = evidence_source(c, read);
  if (!fits.none.empty()) {
    const auto& x = fits.none.front();
    const model::NvccArchs* last = newest_nvcc_for(c, g.cc);
    auto& f = c.add("gpu.kernels", Severity::error, subject_of(c, g), g.pos);
    f.seen = who + ": " + library_targets(x) + " (" + x.archive->component + ") carries nothing that runs on " + g.cc.text() +
             (fits.none.size() > 1 ? " (nor do " + std::to_string(fits.none.size() - 1) + " more libraries of the toolkit)" : "");
    f.expected = model::code_that_runs_on(g.cc);
    f.fix = last ? "pin CUDA " + last->cuda.text() + " or older (the newest release whose compiler and libraries still target " +
                       g.cc.text() + "), or run the stack on a newer GPU"
                 : "no CUDA release the knowledge base knows targets " + g.cc.text();
    f.source = source;
    return;
  }
  if (!fits.jit.empty()) {
    auto& f = c.add("gpu.kernels", Severity::warning, subject_of(c, g), g.pos);
    f.seen = who + ": " + jit_text(fits.jit.front(), g.cc) + " (" + fits.jit.front().archive->component + ")" +
             (fits.jit.size() > 1 ? ", and so for " + std::to_string(fits.jit.size() - 1) + " more libraries" : "");
    f.fix = k_jit_fix;
    f.source = source;
    return;
  }
  auto& f = c.add("gpu.kernels", Severity::ok, subject_of(c, g), g.pos);
  f.seen = who + ": all " + std::to_string(fits.with_code) + " libraries with GPU code in its component archives carry SASS that runs on " +
           g.cc.text();
  f.source = source;
}

void judge_cudnn(Ctx& c, const Gpu& g, model::GpuCheck& out) {
  c.examined("gpu.cudnn");
  if (auto read = archives_read(c, false); !read.empty() && judge_cudnn_libraries(c, g, read, out)) return;
  bool nearest = false;
  const auto* row = c.kb.cudnn_arch_support(c.cudnn, c.cudnn_cuda, &nearest);
  const std::string who = "cuDNN " + c.cudnn.text() + " for CUDA " + std::to_string(c.cudnn_cuda);
  // CUDA 13.0 removed library and offline-compilation support for the older architectures
  // (nvcc's removed_since list): a CUDA 13 build carries no code for them, whatever its matrix says
  if (const auto* n = c.cudnn_cuda >= 13 ? c.kb.nvcc_archs(*Version::parse(std::to_string(c.cudnn_cuda) + ".0")) : nullptr;
      n && std::find(n->removed_since.begin(), n->removed_since.end(), g.cc) != n->removed_since.end()) {
    auto& f = c.add("gpu.cudnn", Severity::error, subject_of(c, g), g.pos);
    f.seen = who + ": CUDA " + n->cuda.text() + " removed library and offline-compilation support for " + g.cc.text() + " (no CUDA " +
             std::to_string(c.cudnn_cuda) + " library carries code for it)";
    f.expected = "a CUDA " + std::to_string(c.cudnn_cuda - 1) + " stack, or a GPU of compute capability " +
                 (n->sass.empty() ? std::string("newer") : n->sass.front().text() + " or newer");
    f.fix = "pin CUDA " + std::to_string(c.cudnn_cuda - 1) + ".x and cuDNN for CUDA " + std::to_string(c.cudnn_cuda - 1) +
            "; `stackpin inspect` shows the architectures a library carries";
    f.source = "CUDA " + n->cuda.text() + " release notes, deprecated architectures; " + knowledge::first_source(n->source);
    out.cudnn = "unsupported";
    return;
  }
  if (!row) {
    auto& f = c.add("gpu.cudnn", Severity::note, subject_of(c, g), g.pos);
    f.seen = "the knowledge base has no support matrix for " + who;
    f.fix = "check NVIDIA's cuDNN support matrix for this release by hand";
    out.cudnn = "unknown";
    return;
  }
  const std::string matrix =
      nearest ? " (support matrix of cuDNN " + row->from.text() + ", the nearest release the knowledge base has)" : "";
  if (g.cc < row->min_cc) {
    auto& f = c.add("gpu.cudnn", Severity::error, subject_of(c, g), g.pos);
    f.seen = who + " supports compute capability " + row->min_cc.text() + " and newer" + matrix;
    f.expected = "a cuDNN build that supports " + g.cc.text();
    const auto* older = cudnn_row_supporting(c, g.cc, c.cudnn_cuda);
    f.fix = older ? "pin cuDNN " + older->from.text() + " (its support matrix includes " + g.cc.text() +
                        "), or run the stack on newer GPUs; cuDNN fails here with CUDNN_STATUS_ARCH_MISMATCH or NOT_SUPPORTED"
                  : "no cuDNN for CUDA " + std::to_string(c.cudnn_cuda) + " in the knowledge base supports " + g.cc.text();
    f.source = knowledge::first_source(row->source);
    out.cudnn = "unsupported";
    return;
  }
  // the kernels the matrix says the build carries, as convtest judges them: its own, binary
  // compatible ones (same major, lower minor), or none (beyond the matrix)
  const auto k = knowledge::kernels_for(g.cc, row->ccs, {});
  const bool listed = row->ccs.empty() ? !(row->max_cc && *row->max_cc < g.cc) : k.fit == KernelFit::native;
  const bool compatible = !row->ccs.empty() && k.fit == KernelFit::compatible;
  if (!listed) {
    auto& f = c.add("gpu.cudnn", compatible ? Severity::note : Severity::warning, subject_of(c, g), g.pos);
    f.seen = g.cc.text() + " is not in the support matrix of " + who + matrix;
    const auto* newer = cudnn_row_supporting(c, g.cc, c.cudnn_cuda);
    f.fix = compatible ? "the matrix lists " + k.via.text() + " of the same major: binary compatible, expected to work"
                       : "it runs only if the driver can JIT-compile PTX the build carries; " +
                             (newer && c.cudnn < newer->from ? "pin cuDNN " + newer->from.text() + " or newer, which lists it"
                                                             : std::string("prove it with stackpin convtest on that GPU"));
    f.source = knowledge::first_source(row->source);
    out.cudnn = compatible ? "compatible" : "not listed";
    return;
  }
  auto& f = c.add("gpu.cudnn", Severity::ok, subject_of(c, g), g.pos);
  f.seen = who + " supports " + g.cc.text() + matrix;
  f.source = knowledge::first_source(row->source);
  out.cudnn = "supported";
}

void judge_nvcc(Ctx& c, const Gpu& g, model::GpuCheck& out) {
  c.examined("gpu.nvcc");
  const auto* n = c.kb.nvcc_archs(c.cuda);
  if (!n) {
    auto& f = c.add("gpu.nvcc", Severity::note, subject_of(c, g), g.pos);
    f.seen = "the knowledge base does not list nvcc's targets for CUDA " + c.cuda.prefix(2);
    out.nvcc = "unknown";
    return;
  }
  const bool has = std::find(n->sass.begin(), n->sass.end(), g.cc) != n->sass.end();
  const bool deprecated = std::find(n->deprecated.begin(), n->deprecated.end(), g.cc) != n->deprecated.end();
  if (!has) {
    const model::NvccArchs* last = newest_nvcc_for(c, g.cc);
    auto& f = c.add("gpu.nvcc", Severity::error, subject_of(c, g), g.pos);
    f.seen = "nvcc of CUDA " + c.cuda.prefix(2) + " cannot compile for " + sm(g.cc);
    f.expected = "an nvcc that targets " + sm(g.cc);
    f.fix = last ? "build CUDA code for this GPU with CUDA " + last->cuda.text() + " (the newest nvcc that targets it)"
                 : "no CUDA release in the knowledge base compiles for it";
    f.source = knowledge::first_source(n->source);
    out.nvcc = "unsupported";
    return;
  }
  auto& f = c.add("gpu.nvcc", deprecated ? Severity::warning : Severity::ok, subject_of(c, g), g.pos);
  f.seen = "nvcc of CUDA " + c.cuda.prefix(2) + " compiles for " + sm(g.cc) +
           (deprecated ? ", deprecated (it warns; a later release drops it)" : "");
  if (deprecated) f.fix = "plan the move off this GPU, or keep this CUDA release for it";
  f.source = knowledge::first_source(n->source);
  out.nvcc = deprecated ? "deprecated" : "supported";
}

std::vector<Platform> wheel_platforms(const Ctx& c) {
  std::vector<Platform> out;
  if (c.m.windows || c.m.archive_for(Platform::windows_x86_64) || c.m.archive_for(Platform::windows_arm64))
    out.push_back(c.m.windows_platform());
  if (c.m.linux || c.m.docker || c.m.conda || c.m.archive_for(Platform::linux_x86_64) || out.empty()) out.push_back(Platform::linux_x86_64);
  if (c.m.archive_for(Platform::linux_sbsa)) out.push_back(Platform::linux_sbsa);
  return out;
}

// SASS that runs on the GPU: what a suggested build must carry (PTX alone is no better than a
// JIT-compiled build).
bool runs_natively(const knowledge::KernelMatch& k) { return k.fit == KernelFit::native || k.fit == KernelFit::compatible; }

// The newest torch build (release, then variant) on a platform with SASS for `cc`.
const model::TorchArchs* torch_with_kernels(const Ctx& c, const Version& cc, Platform p) {
  const model::TorchArchs* best = nullptr;
  for (const auto& t : c.kb.facts().torch_archs) {
    if (t.platform != p || !runs_natively(knowledge::kernels_for(cc, t.sass, t.ptx))) continue;
    if (!best || best->release < t.release || (best->release == t.release && best->variant < t.variant)) best = &t;
  }
  return best;
}

// The newest onnxruntime-gpu or tensorflow build on a platform with SASS for `cc`: one for the
// stack's CUDA major when there is one, else the newest of any major.
const model::FrameworkArchs* framework_with_kernels(const Ctx& c, const std::string& framework, const Version& cc, Platform p) {
  const int major = static_cast<int>(c.cuda.major());
  auto key = [&](const model::FrameworkArchs& a) { return std::make_tuple(a.cuda_major == major, a.from, a.cuda_major); };
  const model::FrameworkArchs* best = nullptr;
  for (const auto& a : c.kb.facts().framework_archs) {
    if (a.framework != framework || a.platform != p || !runs_natively(knowledge::kernels_for(cc, a))) continue;
    if (!best || key(*best) < key(a)) best = &a;
  }
  return best;
}

// One framework build's kernels for one GPU, judged: what it carries for it, and where the fix
// points when it carries nothing native.
struct KernelJudgement {
  std::string build;  // "torch 2.7.1+cu128 (linux-x86_64)"
  knowledge::KernelMatch k;
  std::string list;        // the build's architectures, for the error
  std::string newer;       // the newest build with kernels for it, as a sentence
  std::string provenance;  // "" or why the list is less than certain
  const model::Sources* source = nullptr;
};

// "sm_86 kernels" / "compute_90 PTX": what a build that fits carries
std::string carries(const knowledge::KernelMatch& k) {
  const std::string digits = std::to_string(k.via.major()) + std::to_string(k.via.minor());
  return k.fit == KernelFit::ptx ? "compute_" + digits + " PTX" : "sm_" + digits + " kernels";
}

std::string arch_list(std::initializer_list<std::pair<const std::vector<Version>*, const char*>> lists) {
  std::vector<std::string> s;
  for (const auto& [list, suffix] : lists)
    for (const auto& v : *list) s.push_back(v.text() + suffix);
  return util::join(s, " ");
}

// Reports the judgement as a gpu.framework-kernels finding and returns the verdict recorded in
// check --json and the lock: native, compatible X.Y, ptx X.Y or none.
std::string report_kernels(Ctx& c, const Gpu& g, const KernelJudgement& j) {
  const auto& k = j.k;
  const std::string src = knowledge::first_source(*j.source);
  if (k.fit == KernelFit::native || k.fit == KernelFit::compatible) {
    auto& f = c.add("gpu.framework-kernels", Severity::ok, subject_of(c, g), g.pos);
    f.seen = j.build + " carries " +
             (k.fit == KernelFit::native ? sm(g.cc) + " kernels" : sm(k.via) + " kernels, binary compatible with " + g.cc.text()) +
             j.provenance;
    f.source = src;
    return k.fit == KernelFit::native ? "native" : "compatible " + k.via.text();
  }
  if (k.fit == KernelFit::ptx) {
    auto& f = c.add("gpu.framework-kernels", Severity::warning, subject_of(c, g), g.pos);
    f.seen = j.build + " has no " + sm(g.cc) + " kernels, only compute_" + std::to_string(k.via.major()) + std::to_string(k.via.minor()) +
             " PTX" + j.provenance;
    f.fix =
        "the driver JIT-compiles every kernel from PTX at first use: minutes on the first run (cached in ~/.nv/ComputeCache), "
        "and JIT-built kernels can run slower; " +
        j.newer;
    f.source = src;
    return "ptx " + k.via.text();
  }
  auto& f = c.add("gpu.framework-kernels", Severity::error, subject_of(c, g), g.pos);
  f.seen = j.build + " carries no kernels for " + sm(g.cc) + " (its list: " + j.list + ")" + j.provenance;
  f.expected = "a build whose CUDA architectures cover " + g.cc.text();
  f.fix = j.newer + "; without it the framework fails with \"no kernel image is available for execution on the device\"";
  f.source = src;
  return "none";
}

void judge_torch(Ctx& c, const Gpu& g, const model::WheelMatch& w, model::GpuCheck& out) {
  c.examined("gpu.framework-kernels");
  auto release = Version::parse(w.version);
  if (!release) return;
  std::vector<std::string> verdicts;
  for (Platform p : wheel_platforms(c)) {
    const std::string build = "torch " + w.version + "+" + w.variant + " (" + model::to_string(p) + ")";
    const auto* t = c.kb.torch_archs(*release, w.variant, p);
    if (!t) {
      auto& f = c.add("gpu.framework-kernels", Severity::note, subject_of(c, g), g.pos);
      f.seen = "the knowledge base has no TORCH_CUDA_ARCH_LIST for " + build;
      f.fix = "check with python -c \"import torch; print(torch.cuda.get_arch_list())\"";
      verdicts.push_back("unknown");
      continue;
    }
    KernelJudgement j;
    j.build = build;
    j.k = knowledge::kernels_for(g.cc, t->sass, t->ptx);
    j.list = arch_list({{&t->sass, ""}, {&t->ptx, "+PTX"}});
    const auto* newer = torch_with_kernels(c, g.cc, p);
    j.newer = newer ? "torch " + newer->release.text() + "+" + newer->variant + " has " +
                          carries(knowledge::kernels_for(g.cc, newer->sass, newer->ptx)) + " for it"
                    : "no torch build the knowledge base knows has SASS for it";
    j.source = &t->source;
    verdicts.push_back(report_kernels(c, g, j));
  }
  out.torch = util::join(verdicts, ", ");
}

// onnxruntime-gpu and tensorflow: the build for the stack's CUDA major on each platform.
void judge_framework(Ctx& c, const Gpu& g, const model::WheelMatch& w, model::GpuCheck& out) {
  c.examined("gpu.framework-kernels");
  auto release = Version::parse(w.version);
  if (!release) return;
  const bool tf = w.framework == "tensorflow";
  const int cuda_major = static_cast<int>(c.cuda.major());
  std::vector<std::string> verdicts;
  for (Platform p : wheel_platforms(c)) {
    if (tf && model::is_windows(p)) continue;  // no GPU TensorFlow on native Windows since 2.10 (framework.tensorflow-windows)
    const std::string build = w.framework + " " + w.version + " for CUDA " + std::to_string(cuda_major) + " (" + model::to_string(p) + ")";
    const auto* a = c.kb.framework_archs(w.framework, *release, cuda_major, p);
    if (!a) {
      auto& f = c.add("gpu.framework-kernels", Severity::note, subject_of(c, g), g.pos);
      f.seen = "the knowledge base has no list of CUDA architectures for " + build;
      f.fix = tf ? "check with python -c \"import tensorflow as tf; print(tf.sysconfig.get_build_info()['cuda_compute_capabilities'])\""
                 : "check with cuobjdump --list-elf on onnxruntime_providers_cuda (its sm_XX cubins), or run stackpin convtest on that GPU";
      verdicts.push_back("unknown");
      continue;
    }
    const auto* newer = framework_with_kernels(c, w.framework, g.cc, p);
    const auto kernels = knowledge::kernels_for(g.cc, *a);
    if (kernels.fit == knowledge::KernelFit::none && std::find(a->jit_fails.begin(), a->jit_fails.end(), g.cc) != a->jit_fails.end()) {
      auto& f = c.add("gpu.framework-kernels", Severity::error, subject_of(c, g), g.pos);
      f.seen = build + " carries no SASS for " + sm(g.cc) + ", and its PTX does not JIT there: " + a->jit_fails_note;
      f.expected = "kernels that run on " + sm(g.cc);
      f.fix = newer ? "use " + w.framework + " " + newer->from.text() + " for CUDA " + std::to_string(newer->cuda_major) +
                          ", which has kernels for it, or run on a GPU this build has kernels for"
                    : "run " + w.framework + " on a GPU it has kernels for, or build it yourself with " + sm(g.cc) +
                          " in its CUDA capabilities (no published build the knowledge base knows has them)";
      f.source = knowledge::first_source(a->jit_fails_source);
      verdicts.push_back("none");
      continue;
    }
    KernelJudgement j;
    j.build = build;
    j.k = kernels;
    j.list = arch_list({{&a->sass, ""}, {&a->sass_a, "a"}, {&a->ptx, "+PTX"}, {&a->ptx_a, "a+PTX"}});
    j.newer = newer ? w.framework + " " + newer->from.text() + " for CUDA " + std::to_string(newer->cuda_major) + " has " +
                          carries(knowledge::kernels_for(g.cc, *newer)) + " for it"
                    : "no " + w.framework + " build the knowledge base knows has SASS for it";
    if (a->inferred)
      j.provenance = " (the list is tied to " + w.framework + " " + a->from.text() +
                     " by its build pipeline's history, not by the release itself: prove it with stackpin convtest)";
    j.source = &a->source;
    verdicts.push_back(report_kernels(c, g, j));
  }
  (tf ? out.tensorflow : out.onnxruntime) = util::join(verdicts, ", ");
}

}  // namespace

void gpus(Ctx& c) {
  if (!c.m.gpus) return;
  const bool devel = std::any_of(c.report.cuda_components.begin(), c.report.cuda_components.end(),
                                 [](const model::CudaComponentPick& p) { return p.component == "cuda_nvcc"; });
  for (const auto& g : resolve(c)) {
    model::GpuCheck out;
    out.cc = std::to_string(g.cc.major()) + "." + std::to_string(g.cc.minor());  // "8.9", however the manifest wrote it
    out.names = g.names;
    if (const auto* a = c.kb.gpu_arch(g.cc)) out.arch = a->name;
    if (c.cudnn_cuda) judge_cudnn(c, g, out);
    judge_cuda_libraries(c, g);
    if (devel) judge_nvcc(c, g, out);
    for (const auto& w : c.report.wheels) {
      if (w.framework == "torch" && !w.variant.empty()) judge_torch(c, g, w, out);
      if (w.framework == "onnxruntime-gpu" || w.framework == "tensorflow") judge_framework(c, g, w, out);
    }
    c.report.gpus.push_back(std::move(out));
  }
}

}  // namespace core::rules
