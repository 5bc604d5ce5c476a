#pragma once
// Rendering and exit code of a conv test, shared by `stackpin convtest` and the standalone
// `stackpin-convtest` that goes into container images.
#include <vector>

#include "cli/run.hpp"
#include "model/convtest.hpp"
#include "model/finding.hpp"

namespace cli {

// Prints the report (text, or the --json envelope) and returns the exit code: 1 when a finding
// is an error, else 3 when nothing could run (no driver / no GPU), else 0.
int finish_convtest(Io& io, const model::ConvReport& r, const std::vector<model::Finding>& findings, bool json, bool verbose);

}  // namespace cli
