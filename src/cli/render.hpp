#pragma once
// One renderer for every error and finding, in text (with file:line:col and a caret under the
// offending column) and, for --json, through format's envelope.
#include <iosfwd>
#include <string>
#include <vector>

#include "model/finding.hpp"
#include "util/result.hpp"

namespace cli {

struct Style {
  bool color = false;
  std::string red(const std::string& s) const { return color ? "\033[31m" + s + "\033[0m" : s; }
  std::string yellow(const std::string& s) const { return color ? "\033[33m" + s + "\033[0m" : s; }
  std::string green(const std::string& s) const { return color ? "\033[32m" + s + "\033[0m" : s; }
  std::string cyan(const std::string& s) const { return color ? "\033[36m" + s + "\033[0m" : s; }
  std::string bold(const std::string& s) const { return color ? "\033[1m" + s + "\033[0m" : s; }
  std::string dim(const std::string& s) const { return color ? "\033[2m" + s + "\033[0m" : s; }
};

void render_error(std::ostream& os, const util::Error& e, const Style& style);
void render_finding(std::ostream& os, const model::Finding& f, const Style& style);
// "2 errors, 1 warning, 3 notes, 12 ok"
std::string summary(const model::FindingCounts& c);
int exit_code_for(const util::Error& e);

}  // namespace cli
