// The pieces of stackpin's registry mirror that need no registry: oci:// references, the URLs a
// mirror gives each archive, OCI manifests and indexes as written and as refused, the registry's
// other JSON (tokens, errors, Docker's config.json, credential helpers), Retry-After and base64.
#include <gtest/gtest.h>

#include "core/archives/fetch.hpp"
#include "core/archives/lock.hpp"
#include "core/archives/mirror.hpp"
#include "core/archives/registry.hpp"
#include "format/oci.hpp"
#include "format/pylock.hpp"
#include "net/download.hpp"
#include "test_support.hpp"
#include "util/url.hpp"

namespace registry_test {

namespace {
const std::string k_sha(64, 'a');
const std::string k_base = "https://developer.download.nvidia.com/compute/cudnn/redist/";
}  // namespace

TEST(OciReference, ParsesHostRepositoryTagAndDigest) {
  auto r = core::parse_oci_reference("oci://Registry.Example:5000/team/cuda-mirror:stack-1");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->host, "registry.example:5000");
  EXPECT_EQ(r->repository, "team/cuda-mirror");
  EXPECT_EQ(r->tag, "stack-1");
  EXPECT_FALSE(r->plain_http);
  EXPECT_EQ(r->text(), "oci://registry.example:5000/team/cuda-mirror:stack-1");
  auto d = core::parse_oci_reference("oci+http://127.0.0.1:5000/a/b@sha256:" + k_sha);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_TRUE(d->plain_http);
  EXPECT_EQ(d->digest, "sha256:" + k_sha);
  EXPECT_EQ(d->repository_url(), "oci+http://127.0.0.1:5000/a/b");
  EXPECT_EQ(core::oci_blob_url(*d, k_sha), "oci+http://127.0.0.1:5000/a/b@sha256:" + k_sha);
}

TEST(OciReference, RefusesWhatARegistryCannotName) {
  for (const std::string& bad :
       std::vector<std::string>{"oci://host", "oci:///repo", "oci://host/Upper", "oci://host/a//b", "oci://host/-a", "oci://host/a:b c",
                                "oci://host/a@sha256:abc", "oci://host/a@md5:" + std::string(32, '0'), "https://host/a", "oci://ho st/a",
                                "oci://host/a:" + std::string(129, 't')}) {
    auto r = core::parse_oci_reference(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.error().code, util::ErrorCode::usage) << bad;
    }
  }
  EXPECT_TRUE(core::parse_oci_reference("oci://host/a__b/c.d-e").ok());
}

TEST(OciReference, ATagMadeFromFreeTextIsATag) {
  EXPECT_EQ(core::oci_tag_from("my stack/v1"), "my-stack-v1");
  EXPECT_EQ(core::oci_tag_from(".hidden"), "stack-.hidden");
  EXPECT_EQ(core::oci_tag_from(std::string(300, 'x')).size(), 128u);
}

TEST(OciMirror, EveryArchiveIsPulledFromTheRegistryByItsDigest) {
  const std::string nvidia = k_base + "linux-x86_64/cudnn.tar.xz";
  const std::string blob = "oci://r.example/m@sha256:" + k_sha;
  EXPECT_EQ(core::candidate_urls(nvidia, k_sha, {"oci://r.example/m"}, k_base), std::vector<std::string>{blob});
  // an archive that is not NVIDIA's: the registry first, then its own URL
  EXPECT_EQ(core::candidate_urls("https://example.org/x.tar.xz", k_sha, {"oci://r.example/m:tag"}, k_base),
            (std::vector<std::string>{blob, "https://example.org/x.tar.xz"}));
  // with a copy of NVIDIA's tree too, in the order given
  EXPECT_EQ(core::candidate_urls(nvidia, k_sha, {"file:///srv/m", "oci://r.example/m"}, k_base),
            (std::vector<std::string>{"file:///srv/m/linux-x86_64/cudnn.tar.xz", blob}));
  EXPECT_TRUE(core::check_mirrors({"oci://r.example/m", "https://m.example/"}).ok());
  EXPECT_FALSE(core::check_mirrors({"oci://r.example/UPPER"}).ok());
}

// What a push sends: the archives fetch would take for the stack's targets (or the platforms asked
// for), and every wheel of its Python lock.
TEST(OciMirror, AStacksItemsAreItsTargetsArchivesAndItsWheels) {
  const auto dir = testing_support::source_dir() / "tests" / "data" / "check";
  auto loaded = core::load_manifest((dir / "python.cublas.pass.toml").string(), {}, knowledge::KnowledgeBase::embedded());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  auto pylock = format::load_pylock(dir / "python.cublas.pass.pylock");
  ASSERT_TRUE(pylock.ok()) << pylock.error().message;
  const auto& kb = knowledge::KnowledgeBase::embedded();
  auto items = core::mirror_items(loaded->manifest, &*pylock, kb, {});
  ASSERT_TRUE(items.ok()) << items.error().message;
  std::size_t cudnn = 0, wheels = 0;
  for (const auto& it : *items) {
    if (it.product == "cudnn") {
      ++cudnn;
      EXPECT_EQ(it.platform, model::to_string(model::host_linux_platform()));
      EXPECT_EQ(it.cuda, "13");
      EXPECT_EQ(it.url.rfind("https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/", 0), 0u) << it.url;
      EXPECT_EQ(it.sha256.size(), 64u);
    }
    if (it.product == "python") {
      ++wheels;
      EXPECT_EQ(it.url.rfind("https://pypi.example/", 0), 0u) << it.url;
      EXPECT_EQ(it.url.substr(it.url.rfind('/') + 1), it.file);
    }
  }
  EXPECT_EQ(cudnn, 1u);  // no target: this machine's Linux platform only
  EXPECT_EQ(wheels, pylock->packages.size());
  auto windows = core::mirror_items(loaded->manifest, nullptr, kb, {model::Platform::windows_x86_64});
  ASSERT_TRUE(windows.ok()) << windows.error().message;
  ASSERT_EQ(windows->size(), 1u);
  EXPECT_EQ(windows->front().platform, "windows-x86_64");
  EXPECT_EQ(windows->front().file.substr(windows->front().file.size() - 4), ".zip");
}

TEST(OciFormat, AManifestRoundTripsAndItsBytesAreCanonical) {
  model::oci::ImageManifest m;
  m.artifact_type = model::oci::k_archive_artifact;
  m.config = {model::oci::k_empty_type, model::oci::k_empty_digest, 2, "", {}, "e30=", "", ""};
  model::oci::Descriptor layer;
  layer.media_type = "application/x-xz";
  layer.digest = "sha256:" + k_sha;
  layer.size = 42;
  layer.annotations[model::oci::k_title] = "cudnn.tar.xz";
  m.layers.push_back(layer);
  m.annotations[model::oci::k_url] = "https://x/cudnn.tar.xz";
  std::string bytes = format::write_oci_manifest(m);
  EXPECT_EQ(bytes, format::write_oci_manifest(m));
  EXPECT_NE(bytes.find("\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\""), std::string::npos) << bytes;
  auto back = format::read_oci_manifest(bytes, "test");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->artifact_type, model::oci::k_archive_artifact);
  ASSERT_EQ(back->layers.size(), 1u);
  EXPECT_EQ(back->layers[0].annotation(model::oci::k_title), "cudnn.tar.xz");
  EXPECT_EQ(back->layers[0].size, 42u);
  EXPECT_EQ(*back->config.data, "e30=");
}

TEST(OciFormat, RefusesManifestsOfAnotherKindAndContentOutsideTheRegistry) {
  const std::string layer = R"({"mediaType":"application/x-xz","digest":"sha256:)" + k_sha + R"(","size":1)";
  auto manifest = [&](const std::string& extra_layer, const std::string& top = "") {
    return R"({"schemaVersion":2,)" + top + R"("config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":")" +
           model::oci::k_empty_digest + R"(","size":2},"layers":[)" + layer + extra_layer + "}]}";
  };
  EXPECT_TRUE(format::read_oci_manifest(manifest(""), "m").ok());
  auto foreign = format::read_oci_manifest(manifest(R"(,"urls":["https://elsewhere.example/blob"])"), "m");
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.error().message.find("outside the registry"), std::string::npos) << foreign.error().message;
  EXPECT_FALSE(format::read_oci_manifest(manifest("", R"("mediaType":"application/vnd.docker.distribution.manifest.v2+json",)"), "m").ok());
  EXPECT_FALSE(format::read_oci_manifest(R"({"schemaVersion":1})", "m").ok());
  EXPECT_FALSE(format::read_oci_manifest("not json", "m").ok());
  std::string sha512 = manifest("");
  sha512.replace(sha512.find("sha256:" + k_sha), 71, "sha512:" + k_sha);
  EXPECT_FALSE(format::read_oci_manifest(sha512, "m").ok());
  std::string negative = manifest("");
  negative.replace(negative.find("\"size\":1"), 8, "\"size\":-1");
  EXPECT_FALSE(format::read_oci_manifest(negative, "m").ok());
  // an index lists image manifests only
  EXPECT_FALSE(format::read_oci_index(
                   R"({"schemaVersion":2,"manifests":[{"mediaType":"application/x-xz","digest":"sha256:)" + k_sha + R"(","size":3}]})", "i")
                   .ok());
  EXPECT_FALSE(format::read_oci_index(manifest(""), "i").ok());  // no manifests list: a manifest is not an index
}

TEST(OciFormat, TokensErrorsAndCredentials) {
  auto t = format::read_registry_token(R"({"access_token":"abc.def","expires_in":300})", "t");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->token, "abc.def");
  EXPECT_EQ(t->expires_in, 300);
  EXPECT_FALSE(format::read_registry_token(R"({"token":"a b"})", "t").ok());  // would break the header line
  EXPECT_FALSE(format::read_registry_token(R"({"nothing":1})", "t").ok());
  EXPECT_EQ(format::registry_error_text(R"({"errors":[{"code":"DENIED","message":"no push"}]})"), "DENIED: no push");
  EXPECT_EQ(format::registry_error_text("<html>"), "");

  auto c = format::read_docker_config(
      R"({"auths":{"r.example:5000":{"auth":")" + util::base64_encode("me:s3cret:x") +
          R"("},"other":{"identitytoken":"tok"}},"credHelpers":{"ecr.example":"ecr-login"},"credsStore":"pass"})",
      "config.json");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->auths.at("r.example:5000").username, "me");
  EXPECT_EQ(c->auths.at("r.example:5000").password, "s3cret:x");
  EXPECT_EQ(c->auths.at("other").identity_token, "tok");
  EXPECT_EQ(c->cred_helpers.at("ecr.example"), "ecr-login");
  EXPECT_EQ(c->creds_store, "pass");
  auto bad = format::read_docker_config(R"({"auths":{"r":{"auth":"bm9jb2xvbg=="}}})", "config.json");  // "nocolon"
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("config.json"), std::string::npos);
  auto helper = format::read_credential_helper_answer(R"({"ServerURL":"r","Username":"<token>","Secret":"idt"})", "h");
  ASSERT_TRUE(helper.ok());
  EXPECT_EQ(helper->identity_token, "idt");
  EXPECT_FALSE(format::read_credential_helper_answer("credentials not found", "h").ok());
}

TEST(Http, RetryAfterInSecondsOrAsADate) {
  EXPECT_EQ(net::retry_after_seconds("7", 0), 7);
  EXPECT_EQ(net::retry_after_seconds(" 0 ", 0), 0);
  // 1994-11-06 08:49:37 UTC is 784111777
  EXPECT_EQ(net::retry_after_seconds("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 - 30), 30);
  EXPECT_EQ(net::retry_after_seconds("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 + 30), 0);
  EXPECT_FALSE(net::retry_after_seconds("soon", 0));
  EXPECT_FALSE(net::retry_after_seconds("-5", 0));
}

TEST(Http, Base64BothWays) {
  for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "user:pa ss\xff"})
    EXPECT_EQ(util::base64_decode(util::base64_encode(s)).value_or("<none>"), s);
  EXPECT_EQ(util::base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(util::base64_encode("fo"), "Zm8=");
  EXPECT_FALSE(util::base64_decode("Zm9v!"));
  EXPECT_EQ(util::percent_encode("repository:a/b:pull,push"), "repository%3Aa%2Fb%3Apull%2Cpush");
}

}  // namespace registry_test
