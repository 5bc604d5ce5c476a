// stackpin inspect PATH... [--gpu CC|NAME]... [--manifest M] [--driver VERSION] [--strict] [--json]
#include <algorithm>
#include <map>
#include <ostream>
#include <set>

#include "commands.hpp"
#include "core/inspect/inspect.hpp"
#include "core/verdict.hpp"
#include "format/json.hpp"
#include "format/manifest_reader.hpp"
#include "util/env.hpp"
#include "util/strings.hpp"

namespace cli {

namespace {

struct InspectCli {
  std::vector<std::string> paths, gpus;
  std::string manifest, driver, driver_os;
  bool strict = false;
};

// "8.6", "sm_86" / "compute_86" / "86", or a GPU name the knowledge base knows ("RTX 4090").
util::Result<model::Version> gpu_of(const std::string& text, const knowledge::KnowledgeBase& kb) {
  if (auto v = model::Version::parse(text); v && v->size() == 2 && v->minor() <= 9) return *v;
  if (auto t = model::parse_gpu_target(text)) return t->arch;
  if (auto t = model::parse_gpu_target("sm_" + text)) return t->arch;
  std::set<model::Version> ccs;
  for (const auto* g : kb.gpu_models(text)) ccs.insert(g->cc);
  if (ccs.size() == 1) return *ccs.begin();
  util::Error e(util::ErrorCode::usage, "--gpu " + text + ": " +
                                            (ccs.empty() ? std::string("not a compute capability (8.6, sm_86) nor a GPU stackpin knows")
                                                         : std::string("names GPUs of several compute capabilities")));
  for (const auto& n : kb.similar_gpu_names(text)) e.with_hint("did you mean \"" + n + "\"?");
  e.with_hint("give the compute capability, as nvidia-smi --query-gpu=compute_cap shows it: --gpu 8.6");
  return e;
}

void render_library(std::ostream& os, const model::InspectedLibrary& l, const Style& st) {
  const auto& k = l.kernels;
  os << st.bold(k.path) << "  " << k.format << ", " << util::short_size(k.file_size);
  if (!k.has_gpu_code()) {
    os << ", " << st.dim("no GPU code") << "\n";
    return;
  }
  os << ", " << k.containers << (k.containers == 1 ? " container" : " containers") << " in " << util::join(k.sections, ", ") << "\n";
  std::uint64_t images = 0, lz4 = 0, zstd = 0;
  std::map<model::CodeKind, std::vector<std::string>> by_kind;
  for (const auto& t : k.targets) {
    images += t.images;
    lz4 += t.lz4;
    zstd += t.zstd;
    std::string name = t.target.name();
    if (t.ptx_isa) name += " (ISA " + t.ptx_isa->text() + ")";
    by_kind[t.target.kind].push_back(name);
  }
  static const std::pair<model::CodeKind, const char*> k_rows[] = {
      {model::CodeKind::sass, "SASS"}, {model::CodeKind::ptx, "PTX "}, {model::CodeKind::lto, "LTO "}, {model::CodeKind::other, "other"}};
  for (const auto& [kind, label] : k_rows)
    if (by_kind.count(kind)) os << "  " << label << "  " << util::join(by_kind[kind], " ") << "\n";
  os << "  "
     << st.dim(std::to_string(images) + " images; compressed: " + std::to_string(zstd) + " zstd, " + std::to_string(lz4) + " lz4, " +
               std::to_string(images - zstd - lz4) + " none")
     << "\n";
  for (const auto& f : l.fits) {
    std::string verdict = model::to_string(f.fit);
    std::string shown = f.fit == model::Fit::none ? st.red(verdict) : f.fit == model::Fit::jit ? st.yellow(verdict) : st.green(verdict);
    os << "  on " << f.gpu.text() << ": " << shown << (f.via.empty() ? "" : " (" + f.via + ")") << "\n";
  }
}

void render_text(std::ostream& os, const model::InspectReport& r, bool strict, const Style& st) {
  for (const auto& a : r.archives)
    os << "archive " << st.bold(a.path) << "  sha256 " << a.sha256 << (a.pinned_by.empty() ? " (hashed here)" : " = " + a.pinned_by) << ", "
       << a.libraries << (a.libraries == 1 ? " library" : " libraries") << "\n";
  for (const auto& l : r.libraries) render_library(os, l, st);
  if (r.libraries.empty()) os << "no ELF or PE file among " << r.files_seen << " files\n";
  if (!r.findings.empty()) os << "\n";
  for (const auto& f : r.findings) render_finding(os, f, st);
  auto v = core::verdict(r.findings, strict);
  if (!r.gpus.empty()) os << "\n" << summary(v.counts) << (v.by_strict ? " (--strict: warnings fail)" : "") << "\n";
}

Outcome run_inspect(const InspectCli& c, Context& ctx) {
  const auto& kb = knowledge::KnowledgeBase::embedded();
  core::InspectOptions o;
  for (const auto& p : c.paths) o.paths.emplace_back(p);
  std::set<model::Version> gpus;
  for (const auto& g : c.gpus) {
    auto v = gpu_of(g, kb);
    if (!v) return v.error();
    gpus.insert(*v);
  }
  if (!c.manifest.empty()) {
    auto m = format::load_manifest(c.manifest);
    if (!m) return m.error();
    for (const auto& [cc, _] : kb.gpu_archs(*m)) gpus.insert(cc);
  }
  o.gpus.assign(gpus.begin(), gpus.end());
  if (!c.driver.empty()) {
    auto d = model::Version::parse(c.driver);
    if (!d)
      return util::Error(util::ErrorCode::usage, "--driver " + c.driver + ": not a driver version").with_hint("e.g. --driver 580.65.06");
    o.driver = *d;
  }
  o.driver_os = c.driver_os.empty() ? (util::host_is_windows() ? model::Os::windows : model::Os::linux)
                                    : (c.driver_os == "windows" ? model::Os::windows : model::Os::linux);
  auto r = core::inspect(o, kb);
  if (!r) return r.error();
  auto v = core::verdict(r->findings, c.strict);
  if (ctx.json) {
    ctx.io.out << format::envelope("inspect", !v.failed, r->findings, format::to_json(*r), nullptr);
  } else {
    render_text(ctx.io.out, *r, c.strict, ctx.out_style);
  }
  return v.failed ? k_exit_failed : k_exit_ok;
}

}  // namespace

void add_inspect(Command& app, Context& ctx) {
  auto c = std::make_shared<InspectCli>();
  auto* cmd = app.add_subcommand("inspect",
                                 "The GPU architectures, PTX and compression inside libraries, trees, wheels and archives, "
                                 "read from their fatbin containers, and what they mean for given GPUs");
  cmd->add_option("paths", c->paths, "Libraries (.so, .dll), directories, wheels, or NVIDIA's archives")->required();
  cmd->add_option("--gpu", c->gpus, "Judge for this GPU: a compute capability (8.6, sm_86) or a GPU name (\"RTX 4090\"); repeatable")
      ->type_name("CC|NAME");
  cmd->add_option("--manifest", c->manifest, "Judge for the GPUs of this manifest's [gpus]")->type_name("FILE");
  cmd->add_option("--driver", c->driver, "The driver that would compile PTX: too old for a library's PTX ISA is an error")
      ->type_name("VERSION");
  cmd->add_option("--driver-os", c->driver_os, "Whose driver table --driver and the PTX verdicts use (default: this machine's)")
      ->check_member({"linux", "windows"});
  cmd->add_flag("--strict", c->strict, "Warnings (kernels only through the driver's PTX compiler) fail too");
  add_json_flag(cmd, ctx);
  cmd->footer(
      "Examples:\n  stackpin inspect /usr/local/cuda/lib64/libcudnn_cnn.so.9 --gpu 8.6\n  stackpin inspect "
      ".venv/lib/python3.12/site-packages/nvidia "
      "--manifest stack.toml\n  stackpin inspect cudnn-linux-x86_64-9.19.0.56_cuda13-archive.tar.xz --json");
  cmd->callback([c, &ctx] { ctx.action = [c, &ctx] { return run_inspect(*c, ctx); }; });
}

}  // namespace cli
