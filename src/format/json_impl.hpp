// JsonDoc's private part: the nlohmann::json value (only format/ sees it).
#pragma once
#include <nlohmann/json.hpp>
#include <utility>

#include "format/json.hpp"

namespace format {
struct JsonDoc::Impl {
  nlohmann::json value;
};

// A document holding `v`.
inline JsonDoc wrap(nlohmann::json v) {
  JsonDoc d;
  d.impl().value = std::move(v);
  return d;
}
}  // namespace format
