// What doctor expects of a machine, taken from an optional manifest: versions, driver minimum, layout.
#include "core/doctor/doctor.hpp"
#include "gen/quote.hpp"

#include "core/doctor/doctor_linux.hpp"
#include "core/layout/activation.hpp"

namespace core {

void doctor_expectations(const model::Manifest* m, const knowledge::KnowledgeBase& kb, model::DoctorReport& report) {
  auto& findings = report.findings;
  auto& e = report.expected;
  if (!m) return;
  e.manifest = m->path;
  if (m->cudnn) {
    e.cudnn_version = m->cudnn->version.value.text();
    e.cudnn_major = static_cast<int>(m->cudnn->version.value.major());
  }
  if (m->cuda) e.cuda_version = m->cuda->version.value.text();
  if (m->windows) {
    e.windows_layout = model::to_string(m->windows->layout.value);
    e.windows_arch = model::windows_arch_dir(m->windows->platform.value);
    if (m->windows->cuda_path) e.windows_cuda_path = m->windows->cuda_path->value;
    if (m->cudnn) {
      auto w = windows_activation(*m, kb);
      if (w) {
        e.windows_cudnn_dir = w->dll_dir;
      } else {
        auto& f = model::add_finding(findings, "doctor.manifest", model::Severity::warning, "[targets.windows] of " + m->path);
        f.seen = w.error().message + ": doctor cannot tell which directory this cuDNN's DLLs should load from";
        f.fix = w.error().hints.empty() ? "run `stackpin check " + gen::sh_quote(m->path) + "`" : w.error().hints.front();
        f.where = m->locate(m->windows->pos);
      }
    }
  }
}

util::Result<model::DoctorReport> doctor(const DoctorOptions& o, const knowledge::KnowledgeBase& kb) {
  model::DoctorReport report;
  doctor_expectations(o.manifest, kb, report);
  if (o.windows) {
    SP_TRY(doctor_windows(*o.windows, kb, report, o.manifest));
  } else {
    util::SystemEnv system_env;
    const util::Env& env = o.env ? *o.env : system_env;
    auto options = linux_machine_options(env, kb, o.manifest);
    if (!o.site_packages.empty()) options.site_packages = o.site_packages;
    auto machine = probe::inspect_machine(options);
    for (auto& f : doctor_linux(machine, o.manifest, kb)) report.findings.push_back(std::move(f));
    report.machine = std::move(machine);
  }
  return report;
}

}  // namespace core
