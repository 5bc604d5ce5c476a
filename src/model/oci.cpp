#include "model/oci.hpp"

namespace model::oci {

bool is_sha256_digest(const std::string& digest) {
  if (digest.size() != 71 || digest.rfind("sha256:", 0) != 0) return false;
  for (std::size_t i = 7; i < digest.size(); ++i) {
    char c = digest[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace model::oci
