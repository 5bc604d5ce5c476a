// JsonDoc's private part: the nlohmann::json value (only format/ sees it).
#pragma once
#include <nlohmann/json.hpp>

#include "format/json.hpp"

namespace format {
struct JsonDoc::Impl {
  nlohmann::json value;
};
}  // namespace format
