// The readers of a registry's answers and of Docker's credentials on arbitrary bytes. The first
// byte picks one: an OCI image manifest or index that is accepted has only sha256 descriptors and
// no foreign layer, and writes to bytes that read back to the same bytes; a token is one header's
// worth of printable characters; an accepted config.json or credential helper answer and an error
// body never throw.
#include "format/oci.hpp"
#include "fuzz_support.hpp"
#include "model/oci.hpp"

namespace {

void check_descriptor(const model::oci::Descriptor& d) {
  FUZZ_CHECK(model::oci::is_sha256_digest(d.digest), "an accepted descriptor with another digest: " + d.digest);
  FUZZ_CHECK(!d.media_type.empty(), "an accepted descriptor without a media type");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(fuzz::as_text(data + 1, size - 1));
  switch (data[0] % 5) {
    case 0: {
      auto m = format::read_oci_manifest(text, "fuzz manifest");
      if (!m) return 0;
      check_descriptor(m->config);
      for (const auto& l : m->layers) check_descriptor(l);
      std::string out = format::write_oci_manifest(*m);
      auto back = format::read_oci_manifest(out, "again");
      if (!back) fuzz::fail("a written manifest does not read: " + back.error().message + "\n" + out);
      FUZZ_CHECK(format::write_oci_manifest(*back) == out, "write, read, write differs:\n" + out);
      break;
    }
    case 1: {
      auto i = format::read_oci_index(text, "fuzz index");
      if (!i) return 0;
      for (const auto& d : i->manifests) {
        check_descriptor(d);
        FUZZ_CHECK(d.media_type == model::oci::k_manifest_type, "an index entry that is not an image manifest: " + d.media_type);
      }
      std::string out = format::write_oci_index(*i);
      auto back = format::read_oci_index(out, "again");
      if (!back) fuzz::fail("a written index does not read: " + back.error().message + "\n" + out);
      FUZZ_CHECK(format::write_oci_index(*back) == out, "write, read, write differs:\n" + out);
      break;
    }
    case 2: {
      auto t = format::read_registry_token(text, "fuzz token");
      if (!t) return 0;
      FUZZ_CHECK(!t->token.empty() && t->expires_in >= 1 && t->expires_in <= 86400, "an accepted token out of bounds");
      for (char c : t->token)
        FUZZ_CHECK(static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f, "a token that would break a header line");
      break;
    }
    case 3: {
      (void)format::read_docker_config(text, "config.json");
      (void)format::read_credential_helper_answer(text, "docker-credential-fuzz");
      break;
    }
    default: FUZZ_CHECK(format::registry_error_text(text).size() < 1000, "an error text that is not bounded");
  }
  return 0;
}
