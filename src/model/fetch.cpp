// Names of fetch results.
#include "model/fetch.hpp"

namespace model {

const char* to_string(FetchStatus s) {
  switch (s) {
    case FetchStatus::cached: return "cached";
    case FetchStatus::downloaded: return "downloaded";
    case FetchStatus::resumed: return "resumed";
    case FetchStatus::missing: return "missing";
    case FetchStatus::failed: return "failed";
  }
  return "failed";
}

}  // namespace model
