// `stackpin convtest` and apply's conv test step: expectations from a manifest or flags, the run,
// the judgement (convtest_judge.cpp).
#include "core/convtest/convtest.hpp"

namespace core {

model::ConvExpectations convtest_expectations(const ConvtestOptions& o, const knowledge::KnowledgeBase& kb) {
  model::ConvExpectations e;
  if (const auto* m = o.manifest) {
    if (m->cudnn) {
      e.cudnn = m->cudnn->version.value.text();
      if (m->cudnn->cuda) e.cuda_major = m->cudnn->cuda->value;
    }
    if (!e.cuda_major && m->cuda) e.cuda_major = static_cast<int>(m->cuda->version.value.major());
    if (auto need = kb.required_driver(*m, o.driver_os); need.required) e.min_driver = need.required->text();
  }
  if (o.expect_cudnn) e.cudnn = o.expect_cudnn;
  if (o.expect_cuda) e.cuda_major = o.expect_cuda;
  if (o.expect_driver) e.min_driver = o.expect_driver;
  return e;
}

ConvtestReport convtest(const ConvtestOptions& o, const knowledge::KnowledgeBase& kb) {
  ConvtestReport r;
  r.expected = convtest_expectations(o, kb);
  r.report = probe::run_convtest(o.run);
  if (!o.framework.empty()) r.report.framework = probe::run_framework(o.framework, o.python);
  r.findings = judge_convtest(r.report, r.expected);
  return r;
}

}  // namespace core
