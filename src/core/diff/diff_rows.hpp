#pragma once
// Shared by diff.cpp (the stack) and diff_targets.cpp (the [targets.*] sections): how a row and
// its finding are added, and how two versions are weighed.
#include <cstddef>
#include <optional>
#include <string>

#include "knowledge/knowledge_base.hpp"
#include "model/diff.hpp"
#include "model/manifest.hpp"

namespace core::diff_detail {

// One side's value of a component: the text shown (nullopt = not set) and its position.
struct Side {
  std::optional<std::string> value;
  model::Pos pos;
};

inline Side side_of(const std::optional<model::Located<std::string>>& v) { return v ? Side{v->value, v->pos} : Side{}; }
inline Side side_of(const std::optional<model::Located<model::Version>>& v) { return v ? Side{v->value.text(), v->pos} : Side{}; }

struct Differ {
  const model::Manifest& a;
  const model::Manifest& b;
  const knowledge::KnowledgeBase& kb;
  model::DiffReport& report;

  // Appends a row; when `weight` is not same, also a finding with `rule`, pointing at A's
  // position (B's when A has none).
  void add(const std::string& rule, const std::string& group, const std::string& component, const Side& sa, const Side& sb,
           model::DiffWeight weight, std::string reason);
  // A row for a value that differs by its text only (paths, modes, names): same when equal,
  // otherwise `differ` (with `why`); set on one side only: `one_side` (with `why_one_side`).
  void text(const std::string& rule, const std::string& group, const std::string& component, const Side& sa, const Side& sb,
            model::DiffWeight differ, const std::string& why, model::DiffWeight one_side, const std::string& why_one_side);
};

// The index of the first part in which two versions differ numerically (missing parts are 0);
// nullopt when they are equal ("12.1" == "12.1.0").
std::optional<std::size_t> first_difference(const model::Version& a, const model::Version& b);

// cuDNN's version weight (also used for the conda cuDNN): major breaking, minor likely-breaking,
// patch compatible, build compatible but reported as the ambiguity it is. `sa`/`sb` are the
// values as shown (with their positions).
void weigh_cudnn(Differ& d, const std::string& rule, const std::string& group, const std::string& component, const model::Version& va,
                 const Side& sa, const model::Version& vb, const Side& sb);

// [targets.windows], [targets.linux], [targets.docker], [targets.conda] (diff_targets.cpp).
void diff_targets(Differ& d);

}  // namespace core::diff_detail
