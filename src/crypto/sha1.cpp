#include "crypto/sha1.hpp"

#include <openssl/evp.h>

#include <memory>
#include <stdexcept>

#include "crypto/sha256.hpp"
#include "file_chunks.hpp"

namespace crypto {

namespace {

struct MdFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

class Sha1 {
 public:
  Sha1() : m_ctx(EVP_MD_CTX_new()) {
    if (!m_ctx || EVP_DigestInit_ex(m_ctx.get(), EVP_sha1(), nullptr) != 1) throw std::runtime_error("EVP_DigestInit_ex(sha1) failed");
  }
  void update(const void* data, std::size_t n) { EVP_DigestUpdate(m_ctx.get(), data, n); }
  std::string finish_hex() {
    unsigned char d[20];
    unsigned int len = 0;
    EVP_DigestFinal_ex(m_ctx.get(), d, &len);
    static const char* k_hex = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < len; ++i) {
      out += k_hex[d[i] >> 4];
      out += k_hex[d[i] & 15];
    }
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, MdFree> m_ctx;
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
