// The machine's GPUs (nvidia-smi) against what is installed: each GPU's architecture, whether the
// manifest's [gpus] names it, and whether each cuDNN copy's support matrix includes it.
#include <algorithm>
#include <map>
#include <regex>

#include "doctor/linux/doctor_linux_rules.hpp"
#include "util/strings.hpp"

namespace core::doctor {

using model::Severity;
using model::Version;

namespace {

// The CUDA major a cuDNN copy was built for: the manifest's pin, a wheel's name (nvidia-cudnn-cu12),
// else the default toolkit's major; 0 when nothing says.
int cuda_major_of(const Ctx& c, const model::CudnnCopy& copy) {
  if (c.m && c.m->cudnn && c.m->cudnn->cuda) return c.m->cudnn->cuda->value;
  static const std::regex k_wheel(R"(cudnn-cu([0-9]{2}))");
  std::smatch m;
  if (std::regex_search(copy.kind_detail, m, k_wheel)) return std::stoi(m[1].str());
  for (const auto& t : c.r.toolkits)
    if (t.is_default)
      if (auto v = Version::parse(t.version)) return static_cast<int>(v->major());
  return 0;
}

}  // namespace

void gpus(Ctx& c) {
  const auto named = c.m ? c.kb.gpu_archs(*c.m) : std::map<Version, model::Pos>{};
  for (const auto& g : c.r.gpus) {
    auto cc = Version::parse(g.cc);
    if (!cc) continue;
    const auto* arch = c.kb.gpu_arch(*cc);
    const std::string subject = "GPU " + std::to_string(g.index) + " " + g.name;
    auto& f = c.add("linux.gpu", arch ? Severity::ok : Severity::warning, subject);
    f.seen = "compute capability " + cc->text() + (arch && !arch->name.empty() ? " (" + arch->name + ")" : "") + ", from nvidia-smi";
    if (!arch) f.fix = "an architecture the knowledge base does not know: check what this stack supports by hand";
    if (c.m && c.m->gpus && !named.count(*cc)) {
      auto& w = c.add("linux.gpu-pinned", Severity::warning, subject);
      w.seen = "compute capability " + cc->text() + " is not among the GPUs the manifest's [gpus] names";
      w.fix = "add \"" + cc->text() + "\" to [gpus] arch and run stackpin check, which judges cuDNN, nvcc and the frameworks for it";
      c.point_at(w, c.m->gpus->pos);
    }

    for (const auto& copy : c.r.cudnn) {
      auto version = Version::parse(copy_version(copy));
      const int major = cuda_major_of(c, copy);
      if (!version || major == 0) continue;
      bool nearest = false;
      const auto* row = c.kb.cudnn_arch_support(*version, major, &nearest);
      if (!row) continue;
      const std::string who = "cuDNN " + version->text() + " in " + copy.dir + " (for CUDA " + std::to_string(major) + ")";
      const std::string matrix = nearest ? " (support matrix of " + row->from.text() + ", the nearest the knowledge base has)" : "";
      if (*cc < row->min_cc) {
        auto& e = c.add("linux.gpu-cudnn", Severity::error, subject);
        e.seen = who + " supports compute capability " + row->min_cc.text() + " and newer" + matrix;
        e.expected = "a cuDNN whose support matrix includes " + cc->text();
        e.fix =
            "cuDNN fails on this GPU (CUDNN_STATUS_ARCH_MISMATCH, or NOT_SUPPORTED for every engine); stackpin check with [gpus] arch = "
            "[\"" +
            cc->text() + "\"] names a cuDNN that supports it";
        e.source = knowledge::first_source(row->source);
      } else {
        auto& ok = c.add("linux.gpu-cudnn", Severity::ok, subject);
        ok.seen = who + ": its support matrix starts at " + row->min_cc.text() + matrix;
        ok.source = knowledge::first_source(row->source);
      }
    }
  }
}

}  // namespace core::doctor
