// A stack's archives in an OCI registry, through the real binary: `mirror push` to the reference
// registry (Debian's docker-registry) with htpasswd authentication and TLS from a CA made here,
// read back by an independent client (skopeo) whose copy holds blobs whose digests are the pinned
// SHA-256s; `fetch --mirror oci://` pulling by digest; `mirror pull` writing NVIDIA's tree; a push
// cut mid-upload that resumes, and one that fails and leaves no tag; several fetches at once; and
// a registry that speaks the token flow, redirects to blob storage, rate-limits, and serves
// tampered, truncated or overlong blobs (a test server that answers the registry API itself).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "crypto/sha256.hpp"
#include "fixtures.hpp"
#include "http_server.hpp"
#include "registry.hpp"
#include "test_support.hpp"
#include "util/fs.hpp"
#include "util/url.hpp"

namespace cli_mirror_test {

using nlohmann::json;
using testing_support::contains;
using testing_support::HttpServer;
using testing_support::RunResult;
using testing_support::ScratchDir;
using testing_support::show;
using testing_support::stackpin;

namespace {
namespace fs = std::filesystem;

const std::string k_base = "https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/";

// Two cuDNN archives (Linux and Windows) pinned with NVIDIA's URLs, in a folder as a user keeps them.
struct Stack {
  ScratchDir dir;
  fs::path made;
  fixtures::Info linux_archive, windows_archive;
  Stack() : made(dir.path() / "made") {
    fs::create_directories(made);
    linux_archive = fixtures::make_cudnn_linux(made, "9.13.0.50", 13);
    windows_archive = fixtures::make_cudnn_windows(made, "9.13.0.50", 13);
  }
  fs::path manifest() const {
    std::string text =
        fixtures::local_manifest("9.13.0.50", 13, "13.0.2", {{"linux-x86_64", linux_archive}, {"windows-x86_64", windows_archive}},
                                 "[targets.windows]\nlayout = \"isolated\"\nprefix = 'C:\\tools\\cudnn'\n");
    std::size_t at = 0;
    for (const auto* a : {&linux_archive, &windows_archive}) {
      at = text.find("origin = \"local\"\n", at);
      std::string url = k_base + (a == &linux_archive ? "linux-x86_64/" : "windows-x86_64/") + a->path.filename().string();
      std::string line = "origin = \"local\"\nurl = \"" + url + "\"\n";
      text.replace(at, 17, line);
      at += line.size();
    }
    return dir.write("stack.toml", text);
  }
  // A fresh cache per name, no settings file, no user's Docker config; `extra` first.
  std::vector<std::string> env(const std::string& cache, std::vector<std::string> extra = {}) const {
    for (std::string v : {"STACKPIN_CACHE_DIR=" + (dir.path() / cache).string(), "STACKPIN_CONFIG=" + (dir.path() / "none.toml").string(),
                          "HOME=" + dir.path().string(), std::string("no_proxy=127.0.0.1"), std::string("NO_PROXY=127.0.0.1")})
      extra.push_back(v);
    return extra;
  }
  fs::path cached(const std::string& cache, const fixtures::Info& a) const {
    return testing_support::cached_archive(dir.path() / cache, a.sha256, a.path.filename().string());
  }
};

json data_of(const RunResult& r) {
  auto j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << show(r);
  return j.is_discarded() ? json::object() : j["report"];
}

std::string sha256_hex(const std::string& bytes) { return crypto::to_hex(crypto::sha256_of(bytes)); }

// What went through a relay to team/cuda's uploads: how often the registry was asked what an
// upload holds (GET), how many uploads were started (POST), and every request line.
struct Uploads {
  std::size_t asked = 0, started = 0;
  std::string lines;
};

Uploads uploads_through(const testing_support::CuttingRelay& relay) {
  Uploads u;
  for (const auto& l : relay.request_lines()) {
    u.lines += l + "\n";
    u.asked += l.rfind("GET /v2/team/cuda/blobs/uploads/", 0) == 0 ? 1 : 0;
    u.started += l.rfind("POST /v2/team/cuda/blobs/uploads/", 0) == 0 ? 1 : 0;
  }
  return u;
}

}  // namespace

TEST(CliMirror, APushToAnAuthenticatedTlsRegistryIsReadBackBySkopeoAndPulledByDigest) {
  if (auto why = testing_support::registry_tools_missing(); !why.empty()) GTEST_SKIP() << why;
  Stack s;
  testing_support::Registry reg(s.dir.path() / "registry", {true, "fleet", "s3cret"});
  const std::string repo = "oci://" + reg.host() + "/team/cuda";
  const std::vector<std::string> creds = {"SSL_CERT_FILE=" + reg.ca_file().string(), "STACKPIN_REGISTRY_USERNAME=fleet",
                                          "STACKPIN_REGISTRY_PASSWORD=s3cret"};
  const fs::path m = s.manifest();

  // no credentials: refused, naming what to do
  auto anonymous = stackpin({"mirror", "push", m.string(), repo, "--archives", s.made.string()}, s.env("c0", {creds[0]}));
  EXPECT_EQ(anonymous.exit_code, 1) << show(anonymous);
  EXPECT_TRUE(contains(anonymous.err, "user name and password")) << show(anonymous);

  auto push =
      stackpin({"mirror", "push", m.string(), repo, "--archives", s.made.string(), "--chunk-size", "65536", "--json"}, s.env("c1", creds));
  ASSERT_EQ(push.exit_code, 0) << show(push);
  json d = data_of(push);
  const std::string tag = d["tag"];
  EXPECT_EQ(tag.rfind("fixture-", 0), 0u) << tag;
  ASSERT_EQ(d["archives"].size(), 2u);
  for (const auto& a : d["archives"]) EXPECT_EQ(a["status"], "sent") << a;
  EXPECT_EQ(d["bytes_sent"], s.linux_archive.size + s.windows_archive.size);

  // the same lock again: the same index, nothing sent
  auto again = stackpin({"mirror", "push", m.string(), repo, "--archives", s.made.string(), "--json"}, s.env("c1", creds));
  ASSERT_EQ(again.exit_code, 0) << show(again);
  const json second = data_of(again);
  EXPECT_EQ(second["bytes_sent"], 0);
  EXPECT_EQ(second["index_digest"], d["index_digest"]);
  for (const auto& a : second["archives"]) EXPECT_EQ(a["status"], "present") << a;

  // an independent client reads what was pushed: an OCI index of two artifacts, whose blobs are the archives
  const std::string ref = "docker://" + reg.host() + "/team/cuda:" + tag;
  auto raw = testing_support::run_process(
      {testing_support::skopeo(), "inspect", "--raw", "--creds", "fleet:s3cret", "--cert-dir", reg.cert_dir().string(), ref});
  ASSERT_EQ(raw.exit_code, 0) << show(raw);
  json index = json::parse(raw.out);
  EXPECT_EQ(index["mediaType"], "application/vnd.oci.image.index.v1+json");
  EXPECT_EQ(index["artifactType"], "application/vnd.stackpin.stack.v1");
  EXPECT_EQ(index["manifests"].size(), 2u);
  EXPECT_EQ("sha256:" + sha256_hex(raw.out), d["index_digest"]);
  const fs::path layout = s.dir.path() / "layout";
  auto copy = testing_support::run_process({testing_support::skopeo(), "copy", "--all", "--src-creds", "fleet:s3cret", "--src-cert-dir",
                                            reg.cert_dir().string(), ref, "oci:" + layout.string() + ":" + tag});
  ASSERT_EQ(copy.exit_code, 0) << show(copy);
  // skopeo 1.9 writes the index anew (its image-spec 1.0 types drop artifactType), the artifacts
  // and the archives as they are
  for (const auto& entry : index["manifests"])
    EXPECT_TRUE(fs::exists(layout / "blobs" / "sha256" / entry["digest"].get<std::string>().substr(7))) << entry;
  for (const auto* a : {&s.linux_archive, &s.windows_archive}) {
    fs::path blob = layout / "blobs" / "sha256" / a->sha256;
    ASSERT_TRUE(fs::exists(blob)) << blob;
    EXPECT_EQ(testing_support::read_text(blob), testing_support::read_text(a->path));
  }
  auto one = testing_support::run_process({testing_support::skopeo(), "inspect", "--raw", "--creds", "fleet:s3cret", "--cert-dir",
                                           reg.cert_dir().string(),
                                           "docker://" + reg.host() + "/team/cuda@" + index["manifests"][0]["digest"].get<std::string>()});
  ASSERT_EQ(one.exit_code, 0) << show(one);
  json art = json::parse(one.out);
  EXPECT_EQ(art["artifactType"], "application/vnd.stackpin.archive.v1");
  EXPECT_EQ(art["layers"][0]["annotations"]["org.opencontainers.image.title"], s.linux_archive.path.filename().string());
  EXPECT_EQ(art["annotations"]["dev.stackpin.archive.url"], k_base + "linux-x86_64/" + s.linux_archive.path.filename().string());
  EXPECT_EQ(art["annotations"]["dev.stackpin.archive.cuda"], "13");

  // fetch pulls each archive by its digest into an empty cache
  auto fetch = stackpin({"fetch", m.string(), "--mirror", repo, "--platform", "windows-x86_64"}, s.env("c2", creds));
  ASSERT_EQ(fetch.exit_code, 0) << show(fetch);
  EXPECT_EQ(testing_support::read_text(s.cached("c2", s.windows_archive)), testing_support::read_text(s.windows_archive.path));
  // without the CA: TLS refuses, nothing cached
  auto untrusted = stackpin({"fetch", m.string(), "--mirror", repo, "--platform", "windows-x86_64", "--retries", "0"},
                            s.env("c3", {creds[1], creds[2]}));
  EXPECT_EQ(untrusted.exit_code, 1) << show(untrusted);
  EXPECT_TRUE(contains(untrusted.err + untrusted.out, "TLS")) << show(untrusted);
  EXPECT_FALSE(fs::exists(s.cached("c3", s.windows_archive)));

  // pull writes a plain copy of NVIDIA's tree
  const fs::path tree = s.dir.path() / "tree";
  auto pull = stackpin({"mirror", "pull", repo + ":" + tag, tree.string()}, s.env("c4", creds));
  ASSERT_EQ(pull.exit_code, 0) << show(pull);
  fs::path written = tree / "cudnn/redist/cudnn/linux-x86_64" / s.linux_archive.path.filename();
  EXPECT_EQ(testing_support::read_text(written), testing_support::read_text(s.linux_archive.path));
  // ... which fetch reads as NVIDIA's tree
  auto from_tree =
      stackpin({"fetch", m.string(), "--platform", "linux-x86_64"}, s.env("c5", {"STACKPIN_NVIDIA_BASE=file://" + tree.string() + "/"}));
  EXPECT_EQ(from_tree.exit_code, 0) << show(from_tree);
}

TEST(CliMirror, ACutPushResumesAndAFailedOneLeavesNoTag) {
  if (auto why = testing_support::registry_tools_missing(); !why.empty()) GTEST_SKIP() << why;
  Stack s;
  testing_support::Registry reg(s.dir.path() / "registry");
  const fs::path m = s.manifest();
  const std::uint64_t cut = s.linux_archive.size / 2 + 4096;  // in the middle of the first archive's upload
  auto exists = [&](const std::string& tag) {
    return testing_support::run_process(
               {testing_support::skopeo(), "inspect", "--raw", "--tls-verify=false", "docker://" + reg.host() + "/team/cuda:" + tag})
               .exit_code == 0;
  };
  {  // no retries: the push fails and tags nothing
    testing_support::CuttingRelay relay(reg.port(), cut);
    auto r = stackpin({"mirror", "push", m.string(), "oci://127.0.0.1:" + std::to_string(relay.port()) + "/team/cuda", "--tag", "t1",
                       "--archives", s.made.string(), "--chunk-size", "32768", "--retries", "0"},
                      s.env("c1"));
    EXPECT_EQ(r.exit_code, 1) << show(r);
    EXPECT_TRUE(relay.cut());
    EXPECT_FALSE(exists("t1"));
  }
  {  // with retries: it asks the registry what it holds and goes on from there
    testing_support::CuttingRelay relay(reg.port(), cut);
    auto r = stackpin({"mirror", "push", m.string(), "oci://127.0.0.1:" + std::to_string(relay.port()) + "/team/cuda", "--tag", "t1",
                       "--archives", s.made.string(), "--chunk-size", "32768", "--retry-delay-ms", "10", "--json"},
                      s.env("c1"));
    ASSERT_EQ(r.exit_code, 0) << show(r);
    EXPECT_TRUE(relay.cut());
    EXPECT_TRUE(exists("t1"));
    // the registry was asked what it held (GET on the upload); distribution 2.8 cancels a session
    // whose chunk was cut midway ("upload resumed at wrong offset"), so that archive's upload is
    // started once more (CliMirror.ARegistryThatKeepsWhatItReceivedIsResumed shows the resume)
    auto u = uploads_through(relay);
    EXPECT_GE(u.asked, 1u) << u.lines;
    EXPECT_EQ(u.started, 3u) << u.lines;
  }
  // what the registry holds is the archives: a fleet of machines provisions from it at once (each
  // its own cache and tree), every archive verified
  std::vector<std::unique_ptr<testing_support::Process>> fleet;
  for (int i = 0; i < 4; ++i) {
    const std::string n = std::to_string(i);
    auto args = std::vector<std::string>{testing_support::binary().string(),
                                         "apply",
                                         m.string(),
                                         "--target",
                                         "windows",
                                         "--dest",
                                         (s.dir.path() / ("tree" + n)).string(),
                                         "--mirror",
                                         "oci://" + reg.host() + "/team/cuda"};
    fleet.push_back(std::make_unique<testing_support::Process>(args, s.env("fleet" + n)));
  }
  for (int i = 0; i < 4; ++i) {
    const std::string n = std::to_string(i);
    auto r = fleet[static_cast<std::size_t>(i)]->wait();
    EXPECT_EQ(r.exit_code, 0) << show(r);
    EXPECT_EQ(testing_support::read_text(s.cached("fleet" + n, s.windows_archive)), testing_support::read_text(s.windows_archive.path));
    EXPECT_TRUE(fs::exists(s.dir.path() / ("tree" + n) / "bin")) << show(r);
  }
}

// A registry that keeps the bytes of a cut chunk (as the distribution spec lets it) and says so
// in the upload's Range: the push asks, and goes on from the next byte, starting no upload twice.
TEST(CliMirror, ARegistryThatKeepsWhatItReceivedIsResumed) {
  Stack s;
  HttpServer api;
  std::mutex mutex;
  std::map<std::string, std::string> uploads, blobs;  // uploads by id, blobs by digest
  int next_id = 0;
  api.handle_with([&](const testing_support::RecordedRequest& r) -> std::optional<std::string> {
    std::lock_guard<std::mutex> l(mutex);
    const std::string repo = "/v2/team/cuda";
    auto range_of = [](const std::string& data) { return "0-" + std::to_string(data.empty() ? 0 : data.size() - 1); };
    std::string path = r.path.substr(0, r.path.find('?'));
    if (path == "/v2/") return HttpServer::response(200, {}, "{}");
    if (path.rfind(repo + "/blobs/sha256:", 0) == 0) {
      auto it = blobs.find(path.substr(repo.size() + 7));
      if (it == blobs.end()) return HttpServer::response(404, {}, "", r.method == "HEAD");
      return HttpServer::response(200, {}, it->second, r.method == "HEAD");
    }
    if (r.method == "POST" && path == repo + "/blobs/uploads/") {
      std::string id = std::to_string(++next_id);
      uploads[id] = "";
      return HttpServer::response(202, {{"Location", repo + "/blobs/uploads/" + id}, {"Range", "0-0"}}, "");
    }
    if (path.rfind(repo + "/blobs/uploads/", 0) == 0) {
      std::string id = path.substr(repo.size() + 15);
      auto it = uploads.find(id);
      if (it == uploads.end()) return HttpServer::response(404, {}, "");
      std::string& data = it->second;
      const std::vector<std::pair<std::string, std::string>> where = {{"Location", repo + "/blobs/uploads/" + id},
                                                                      {"Range", range_of(data)}};
      if (r.method == "GET") return HttpServer::response(204, where, "");
      if (r.method == "PATCH") {
        data += r.body;  // what arrived, also of a cut request
        return HttpServer::response(202, {{"Location", repo + "/blobs/uploads/" + id}, {"Range", range_of(data)}}, "");
      }
      if (r.method == "PUT") {
        std::string digest = r.path.substr(r.path.find("digest=") + 7);
        digest.replace(0, digest.find("%3A") + 3, "sha256:");
        data += r.body;
        if ("sha256:" + sha256_hex(data) != digest) return HttpServer::response(400, {}, R"({"errors":[{"code":"DIGEST_INVALID"}]})");
        blobs[digest] = data;
        uploads.erase(it);
        return HttpServer::response(201, {{"Docker-Content-Digest", digest}}, "");
      }
    }
    if (r.method == "PUT" && path.rfind(repo + "/manifests/", 0) == 0) return HttpServer::response(201, {}, "");
    return HttpServer::response(404, {}, "");
  });
  testing_support::CuttingRelay relay(api.port(), s.linux_archive.size / 2 + 4096);
  auto r = stackpin({"mirror", "push", s.manifest().string(), "oci+http://127.0.0.1:" + std::to_string(relay.port()) + "/team/cuda",
                     "--archives", s.made.string(), "--chunk-size", "32768", "--retry-delay-ms", "10", "--tag", "t1"},
                    s.env("c1"));
  ASSERT_EQ(r.exit_code, 0) << show(r);
  EXPECT_TRUE(relay.cut());
  auto u = uploads_through(relay);
  EXPECT_GE(u.asked, 1u) << u.lines;
  EXPECT_EQ(u.started, 3u) << u.lines;  // the config and the two archives, each once
  std::lock_guard<std::mutex> l(mutex);
  EXPECT_EQ(blobs["sha256:" + s.linux_archive.sha256], testing_support::read_text(s.linux_archive.path));
  EXPECT_EQ(blobs["sha256:" + s.windows_archive.sha256], testing_support::read_text(s.windows_archive.path));
}

TEST(CliMirror, TheTokenFlowRedirectsAndBadBlobsOfARegistry) {
  Stack s;
  testing_support::FakeRegistry reg(s.windows_archive.path, s.windows_archive.sha256);
  const fs::path m = s.manifest();
  const std::string repo = "oci+http://127.0.0.1:" + std::to_string(reg.api.port()) + "/team/cuda";
  // credentials from Docker's config.json, as `docker login` leaves them
  fs::create_directories(s.dir.path() / "docker");
  s.dir.write("docker/config.json", R"({"auths":{"127.0.0.1:)" + std::to_string(reg.api.port()) + R"(":{"auth":")" +
                                        util::base64_encode("fleet:s3cret") + R"("}}})");
  const std::string docker = "DOCKER_CONFIG=" + (s.dir.path() / "docker").string();
  std::vector<std::string> args = {"fetch", m.string(), "--mirror", repo, "--platform", "windows-x86_64", "--retry-delay-ms", "10"};

  auto r = stackpin(args, s.env("c1", {docker}));
  ASSERT_EQ(r.exit_code, 0) << show(r);
  EXPECT_EQ(testing_support::read_text(s.cached("c1", s.windows_archive)), testing_support::read_text(s.windows_archive.path));
  EXPECT_GE(reg.blob_requests, 2);  // the 429, then the redirect
  auto at_storage = reg.storage.requests_for(reg.blob_path);
  ASSERT_FALSE(at_storage.empty());
  for (const auto& q : at_storage) EXPECT_EQ(q.authorization, "") << "the registry's token went to the blob storage";

  // the same from a credential helper (credsStore), asked for this registry's host on its stdin
  fs::create_directories(s.dir.path() / "helper" / "bin");
  const fs::path helper = s.dir.path() / "helper" / "bin" / "docker-credential-stackpin-test";
  s.dir.write("helper/bin/docker-credential-stackpin-test",
              "#!/bin/sh\nread host\necho \"$1 $host\" >> \"$(dirname \"$0\")/asked\"\n"
              "printf '{\"ServerURL\":\"%s\",\"Username\":\"fleet\",\"Secret\":\"s3cret\"}' \"$host\"\n");
  fs::permissions(helper, fs::perms::owner_all);
  s.dir.write("helper/config.json", R"({"credsStore":"stackpin-test"})");
  const char* path = std::getenv("PATH");
  auto via_helper =
      stackpin(args, s.env("c5", {"DOCKER_CONFIG=" + (s.dir.path() / "helper").string(),
                                  "PATH=" + (s.dir.path() / "helper" / "bin").string() + ":" + (path ? path : "/usr/bin:/bin")}));
  ASSERT_EQ(via_helper.exit_code, 0) << show(via_helper);
  EXPECT_EQ(testing_support::read_text(s.dir.path() / "helper" / "bin" / "asked"),
            "get 127.0.0.1:" + std::to_string(reg.api.port()) + "\n");

  // wrong credentials: the token service refuses, and the message says whose
  s.dir.write("docker/config.json", R"({"auths":{"127.0.0.1:)" + std::to_string(reg.api.port()) + R"(":{"auth":")" +
                                        util::base64_encode("fleet:wrong") + R"("}}})");
  auto denied = stackpin(args, s.env("c2", {docker}));
  EXPECT_EQ(denied.exit_code, 1) << show(denied);
  EXPECT_TRUE(contains(denied.err + denied.out, "refused the credentials from")) << show(denied);
  s.dir.write("docker/config.json", R"({"auths":{"127.0.0.1:)" + std::to_string(reg.api.port()) + R"(":{"auth":")" +
                                        util::base64_encode("fleet:s3cret") + R"("}}})");

  // tampered, truncated and overlong blobs: refused, nothing in the cache
  using Kind = testing_support::Fault::Kind;
  for (auto [kind, what] :
       {std::pair{Kind::wrong_bytes, std::string("expected sha256")}, std::pair{Kind::cut_after, std::string("connection")}}) {
    testing_support::Fault f;
    f.kind = kind;
    f.bytes = s.windows_archive.size / 3;
    reg.storage.fault(reg.blob_path, f);
    auto bad = stackpin({"fetch", m.string(), "--mirror", repo, "--platform", "windows-x86_64", "--retries", "0"}, s.env("c3", {docker}));
    EXPECT_EQ(bad.exit_code, 1) << show(bad);
    EXPECT_TRUE(contains(bad.err + bad.out, what)) << what << "\n" << show(bad);
    EXPECT_FALSE(fs::exists(s.cached("c3", s.windows_archive)));
  }
  reg.storage.fault(reg.blob_path, {});
  reg.storage.serve(reg.blob_path, testing_support::read_text(s.windows_archive.path) + std::string(4096, 'x'));
  auto longer = stackpin({"fetch", m.string(), "--mirror", repo, "--platform", "windows-x86_64", "--retries", "0"}, s.env("c3", {docker}));
  EXPECT_EQ(longer.exit_code, 1) << show(longer);
  EXPECT_TRUE(contains(longer.err + longer.out, "more than the pinned")) << show(longer);
  EXPECT_FALSE(fs::exists(s.cached("c3", s.windows_archive)));

  // a tag that is not a stack's index: refused, nothing written
  const fs::path tree = s.dir.path() / "tree";
  auto pull = stackpin({"mirror", "pull", repo + ":nothing", tree.string(), "--retries", "0"}, s.env("c4", {docker}));
  EXPECT_EQ(pull.exit_code, 1) << show(pull);
  EXPECT_TRUE(contains(pull.err, "has no manifest nothing")) << show(pull);
  EXPECT_FALSE(fs::exists(tree));
}

}  // namespace cli_mirror_test
