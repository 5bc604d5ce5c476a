#pragma once
// What `stackpin diff A B` compares: every component two manifests (or captures) pin, each with
// both values and a weight saying how much the difference matters to software that runs on the
// stack. The weights and the reasoning behind them are in docs/check-and-diff.md ("stackpin diff").
#include <optional>
#include <string>
#include <vector>

#include "model/finding.hpp"

namespace model {

// Ordered from harmless to fatal, so that max() of two weights is the heavier one.
enum class DiffWeight { same, compatible, likely_breaking, breaking };
// "same", "compatible", "likely-breaking", "breaking"
const char* to_string(DiffWeight w);
// The finding severity a difference of this weight gets: breaking = error, likely-breaking =
// warning, compatible = note, same = ok.
Severity severity_of(DiffWeight w);

struct DiffRow {
  std::string group;             // what a person calls the component: "CUDA", "cuDNN", "archive windows-x86_64"
  std::string component;         // the manifest key it compares: "cudnn.version", "cudnn.archives[linux-x86_64].sha256"
  std::optional<std::string> a;  // A's value as text; nullopt when A does not set it
  std::optional<std::string> b;  // B's value
  DiffWeight weight = DiffWeight::same;
  std::string reason;  // why this weight ("" for same)
};

struct DiffCounts {
  int breaking = 0, likely_breaking = 0, compatible = 0, same = 0;
  int differences() const { return breaking + likely_breaking + compatible; }
};

struct DiffSide {
  std::string path;
  std::string name;
};

struct DiffReport {
  DiffSide a, b;
  std::vector<DiffRow> rows;      // every component compared, `same` rows included, in manifest order
  std::vector<Finding> findings;  // one per row that differs (rule diff.*, seen = A, expected = B)
  DiffCounts counts() const;
};

}  // namespace model
