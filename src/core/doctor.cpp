#include "core/doctor.hpp"

#include "core/activation.hpp"

namespace core {

namespace {

// Stands in for the Linux checks of the running machine until they exist; the lead replaces it
// with their findings (core::doctor_linux), which join the same report.
model::Finding linux_checks_pending() {
  model::Finding f;
  f.rule = "doctor.linux";
  f.severity = model::Severity::note;
  f.subject = "this machine";
  f.seen = "the Linux checks (OS, driver, toolkits, cuDNN copies, the loader's view) are not in this build";
  f.fix = "judge a Windows tree with --windows-root DIR --path \"C:\\...;C:\\...\"";
  return f;
}

}  // namespace

model::DoctorExpectations doctor_expectations(const model::Manifest* m, const knowledge::KnowledgeBase& kb,
                                              std::vector<model::Finding>& findings) {
  model::DoctorExpectations e;
  if (!m) return e;
  e.manifest = m->path;
  if (m->cudnn) {
    e.cudnn_version = m->cudnn->version.value.text();
    e.cudnn_major = static_cast<int>(m->cudnn->version.value.major());
  }
  if (m->cuda) e.cuda_version = m->cuda->version.value.text();
  if (m->windows) {
    e.windows_layout = model::to_string(m->windows->layout.value);
    if (m->windows->cuda_path) e.windows_cuda_path = m->windows->cuda_path->value;
    if (m->cudnn) {
      auto w = windows_activation(*m, kb);
      if (w) {
        e.windows_cudnn_dir = w->dll_dir;
      } else {
        model::Finding f;
        f.rule = "doctor.manifest";
        f.severity = model::Severity::warning;
        f.subject = "[targets.windows] of " + m->path;
        f.seen = w.error().message + ": doctor cannot tell which directory this cuDNN's DLLs should load from";
        f.fix = w.error().hints.empty() ? "run `stackpin check " + m->path + "`" : w.error().hints.front();
        f.where = m->locate(m->windows->pos);
        findings.push_back(std::move(f));
      }
    }
  }
  return e;
}

util::Result<model::DoctorReport> doctor(const DoctorOptions& o, const knowledge::KnowledgeBase& kb) {
  model::DoctorReport report;
  report.expected = doctor_expectations(o.manifest, kb, report.findings);
  if (o.windows) {
    if (auto s = doctor_windows(*o.windows, kb, report); !s) return std::move(s).error();
  } else {
    report.findings.push_back(linux_checks_pending());
  }
  return report;
}

}  // namespace core
