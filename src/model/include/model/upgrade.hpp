#pragma once
// What `stackpin lock --upgrade` reports (core/archives/upgrade.hpp decides it): newer releases
// and whether each still fits the manifest.
#include <string>
#include <vector>

namespace model {

struct UpgradeCandidate {
  std::string product;   // "cuda", "cudnn", "torch"
  std::string from, to;  // the manifest's release and the candidate ("12.4.1" -> "12.9.1")
  // The candidate fits when changing to it adds no error finding and no warning about the driver
  // (a release that needs a newer driver than the manifest pins) to what check says now.
  bool fits = false;
  std::vector<std::string> why_not;  // "[rule] subject: seen", one per finding the change adds
  std::vector<std::string> changes;  // what else the candidate changes ("cuDNN build 9.15.0.58 for CUDA 13")
  std::string source;                // where the release is known from
};

struct UpgradeReport {
  std::string manifest;                      // its path
  std::vector<UpgradeCandidate> candidates;  // CUDA, then cuDNN, then torch; oldest first in each
  std::vector<std::string> notes;            // what was not looked at, and why
};

}  // namespace model
