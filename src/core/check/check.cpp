// `stackpin check`: runs every rule over a manifest and collects their findings (the rules live in check_rules_*.cpp).
#include "core/check/check.hpp"

#include "check/check_rules.hpp"

namespace core {

namespace rules {
model::Finding& Ctx::add(std::string rule, model::Severity sev, std::string subject, model::Pos where) {
  auto& f = model::add_finding(report.findings, std::move(rule), sev, std::move(subject));
  if (where.line > 0) f.where = m.locate(where);
  return f;
}
}  // namespace rules

namespace {
util::Error missing(const model::Manifest& m, model::Pos pos, const std::string& key, const std::string& example) {
  util::Error e(util::ErrorCode::invalid, "`stackpin check` needs `" + key + "`, which " + m.path + " does not set");
  e.where = m.locate(pos);
  e.hints.push_back("add it, for example: " + example);
  return e;
}
}  // namespace

util::Result<model::CheckReport> check_manifest(const model::Manifest& m, const knowledge::KnowledgeBase& kb,
                                                const knowledge::CudaCatalog& cuda, const model::Lock* lock) {
  if (!m.cuda) return missing(m, {1, 1}, "cuda.version", "[cuda] version = \"12.1.1\"");
  const bool toolkit_only = !m.cudnn && !m.cuda->components.empty();
  // the Python half alone: [cuda] is checked and the frameworks judged against it, the machine keeps its own CUDA and cuDNN
  const bool python_only = !m.cudnn && m.cuda->components.empty() && !m.frameworks.empty();
  if (!m.cudnn && !toolkit_only && !python_only) return missing(m, {1, 1}, "cudnn.version", "[cudnn] version = \"8.9.5.30\"");
  if (m.cudnn && !m.cudnn->cuda) return missing(m, m.cudnn->pos, "cudnn.cuda", "cuda = 12   (the _cudaNN suffix of the archive)");

  model::CheckReport report;
  report.manifest_path = m.path;
  report.name = m.name.value;
  report.cuda_version = m.cuda->version.value.text();
  if (m.cudnn) {
    report.cudnn_version = m.cudnn->version.value.text();
    report.cudnn_cuda_major = m.cudnn->cuda->value;
  }

  rules::Ctx c{
      m,    kb,  report, m.cuda->version.value, m.cudnn ? m.cudnn->version.value : model::Version(), m.cudnn ? m.cudnn->cuda->value : 0,
      cuda, lock};
  rules::cuda_components(c);
  if (python_only) {
    rules::driver(c);
    rules::frameworks(c);
    rules::gpus(c);
    return report;
  }
  if (toolkit_only) {
    // A toolkit alone: the cuDNN, framework and target rules judge a cuDNN it does not pin.
    rules::driver(c);
    rules::gpus(c);
    return report;
  }
  rules::cudnn_cuda_major(c);
  rules::cudnn_published(c);
  rules::archives(c);
  rules::driver(c);
  rules::frameworks(c);
  rules::gpus(c);
  rules::windows_target(c);
  rules::linux_target(c);
  rules::conda_target(c);
  rules::docker_target(c);
  return report;
}

}  // namespace core
