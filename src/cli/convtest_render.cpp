// Prints a convolution test report (text or --json) and picks its exit code.
#include "convtest_render.hpp"
#include "core/verdict.hpp"

#include <map>
#include <ostream>

#include "format/json.hpp"
#include "render.hpp"

namespace cli {

int finish_convtest(Io& io, const model::ConvReport& r, const std::vector<model::Finding>& findings, bool json, bool verbose) {
  auto v = core::verdict(findings, false);
  int code = v.failed ? k_exit_failed : !r.nothing_to_run.empty() ? k_exit_nothing : k_exit_ok;
  if (json) {
    io.out << format::envelope("convtest", code == k_exit_ok, findings, format::to_json(r), nullptr);
    return code;
  }
  Style st{io.out_is_tty && !io.env.get("NO_COLOR")};
  auto& os = io.out;
  auto lib = [&](const model::LoadedLibrary& l) {
    os << "  " << l.what << ": " << (l.path.empty() ? st.red("not loaded") : l.path);
    if (!l.requested.empty() && !l.path.empty()) os << "  (" << l.requested << ")";
    os << "\n";
  };
  os << st.bold("libraries") << "\n";
  lib(r.cudart);
  lib(r.cudnn);
  os << st.bold("versions") << "\n";
  if (!r.cudnn_version.empty())
    os << "  cuDNN " << r.cudnn_version << " (cudnnGetVersion " << r.cudnn_version_raw << "), built with CUDA "
       << (r.cudnn_built_with_cuda.empty() ? "?" : r.cudnn_built_with_cuda) << "\n";
  if (!r.runtime_version.empty()) os << "  CUDA runtime " << r.runtime_version << "\n";
  os << "  driver: " << (r.driver_version.empty() ? "none found" : "CUDA " + r.driver_version) << "\n";
  os << st.bold("GPUs") << "\n";
  if (r.gpus.empty()) os << "  none" << (r.nothing_to_run.empty() ? "" : ": " + r.nothing_to_run) << "\n";
  for (const auto& g : r.gpus)
    os << "  [" << g.index << "] " << g.name << ", compute capability " << g.cc_major << "." << g.cc_minor
       << (g.architecture.empty() ? "" : " (" + g.architecture + ")") << ", " << g.memory / (1024 * 1024) << " MiB"
       << (g.cudnn_kernels.empty() ? "" : ", cuDNN kernels: " + g.cudnn_kernels) << "\n";
  if (!r.cases.empty()) {
    os << st.bold("convolutions") << " (every algorithm cuDNN offers, against the CPU reference)\n";
    struct Agg {
      int runs = 0, ok = 0;
      double best_gflops = 0;
    };
    std::map<std::string, Agg> agg;
    for (const auto& c : r.cases) {
      auto& a = agg[c.op + " " + c.dtype];
      ++a.runs;
      a.ok += c.ok;
      a.best_gflops = std::max(a.best_gflops, c.gflops);
    }
    for (const auto& [k, a] : agg)
      os << "  " << k << ": " << a.ok << "/" << a.runs << " algorithm runs correct, best " << a.best_gflops << " GFLOP/s\n";
    if (verbose)
      for (const auto& c : r.cases)
        os << "    " << c.op << " " << c.dtype << " [" << c.shape << "] algo " << c.algo << ": " << (c.ok ? "ok" : "FAIL") << ", " << c.ms
           << " ms, max error " << c.max_abs_err << (c.detail.empty() ? "" : " - " + c.detail) << "\n";
  }
  if (r.framework) {
    const auto& fw = *r.framework;
    os << st.bold("framework") << " " << fw.framework << ": "
       << (!fw.installed ? "not installed in " + fw.python
                         : fw.version + ", " + (fw.gpu ? "sees a GPU" : "sees no GPU") +
                               (fw.cudnn_version.empty() ? "" : ", cuDNN " + fw.cudnn_version))
       << "\n";
    for (const auto& p : fw.loaded_cudnn) os << "  loaded " << p << "\n";
  }
  for (const auto& f : findings)
    if (f.severity != model::Severity::ok) render_finding(os, f, st);
  os << (code == k_exit_ok        ? st.green("convtest passed")
         : code == k_exit_nothing ? st.yellow("nothing to run on")
                                  : st.red("convtest failed"))
     << ": " << summary(v.counts) << "\n";
  return code;
}

}  // namespace cli
