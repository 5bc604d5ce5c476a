#include "crypto/sha1.hpp"

#include <memory>

#include "crypto/sha256.hpp"
#include "digest_backend.hpp"
#include "file_chunks.hpp"

namespace crypto {

namespace {

struct StateFree {
  void operator()(detail::State* s) const { detail::digest_free(s); }
};

class Sha1 {
 public:
  Sha1() : m_state(detail::digest_new(detail::Algorithm::sha1)) {}
  void update(const void* data, std::size_t n) { detail::digest_update(m_state.get(), data, n); }
  std::string finish_hex() {
    unsigned char d[20];
    std::size_t len = detail::digest_finish(m_state.get(), d);
    static const char* k_hex = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < len; ++i) {
      out += k_hex[d[i] >> 4];
      out += k_hex[d[i] & 15];
    }
    return out;
  }

 private:
  std::unique_ptr<detail::State, StateFree> m_state;
};

}  // namespace

std::string sha1_hex(std::string_view data) {
  Sha1 h;
  h.update(data.data(), data.size());
  return h.finish_hex();
}

util::Result<FileDigests> sha1_and_sha256_of_file(const std::filesystem::path& path) {
  Sha1 one;
  Sha256 two;
  FileDigests out;
  SP_TRY_ASSIGN(out.size, detail::read_in_chunks(path, [&](const char* data, std::size_t n) {
                  one.update(data, n);
                  two.update(data, n);
                }));
  out.sha1 = one.finish_hex();
  out.sha256 = to_hex(two.finish());
  return out;
}

}  // namespace crypto
