// `stackpin fetch` through the real binary, against the loopback HTTP server: exit codes, --json,
// the settings file's mirrors, --offline, and the archive-taking commands finding what fetch put
// into the cache (STACKPIN_CACHE_DIR).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "http_server.hpp"
#include "test_support.hpp"

namespace cli_fetch_test {

using nlohmann::json;
using testing_support::HttpServer;
using testing_support::RunResult;
using testing_support::ScratchDir;
using testing_support::stackpin;

namespace {
namespace fs = std::filesystem;

const std::string k_nvidia = "https://developer.download.nvidia.com/compute/cudnn/redist/";

using testing_support::show;

struct World {
  ScratchDir dir;
  HttpServer server;
  fixtures::Info info;
  std::string rel;  // cudnn/linux-x86_64/<file>

  World() {
    fs::create_directories(dir.path() / "made");
    info = fixtures::make_cudnn_linux(dir.path() / "made", "8.9.7.29", 12);
    rel = "cudnn/linux-x86_64/" + info.path.filename().string();
    server.serve("/redist/" + rel, testing_support::read_text(info.path));
    fs::create_directories(dir.path() / "empty");
  }
  fs::path cache() const { return dir.path() / "cache"; }
  // A manifest whose archive has `url` (origin = "local": the fixture's own hash and size).
  fs::path manifest(const std::string& url) const {
    std::string text = fixtures::local_manifest("8.9.7.29", 12, "12.2.2", {{"linux-x86_64", info}},
                                                "[targets.linux]\nlayout = \"lib64\"\nprefix = \"/usr/local/cudnn\"\n");
    text.replace(text.find("origin = \"local\"\n"), 17, "origin = \"local\"\nurl = \"" + url + "\"\n");
    return dir.write("stack.toml", text);
  }
  // The test's cache and no settings file; `extra` comes first (the first of a name wins).
  std::vector<std::string> env(std::vector<std::string> extra = {}) const {
    std::vector<std::string> e = extra;
    for (std::string v : {"STACKPIN_CACHE_DIR=" + cache().string(), "STACKPIN_CONFIG=" + (dir.path() / "none.toml").string(),
                          std::string("no_proxy=127.0.0.1"), std::string("NO_PROXY=127.0.0.1")})
      e.push_back(v);
    return e;
  }
};

// A copy of NVIDIA's whole tree, named once (the settings file's [nvidia] base, or
// STACKPIN_NVIDIA_BASE, which wins), serves NVIDIA's archives in NVIDIA's place.
TEST(CliFetch, ACopyOfNvidiasTreeNamedOnceServesItsArchives) {
  World w;
  const std::string bytes = testing_support::read_text(w.info.path);
  w.server.serve("/copy/cudnn/redist/" + w.rel, bytes);
  w.server.serve("/env-copy/cudnn/redist/" + w.rel, bytes);
  fs::path m = w.manifest(k_nvidia + w.rel);
  fs::path config = w.dir.write("config.toml", "[nvidia]\nbase = \"" + w.server.url("/copy") + "\"\n");
  auto r = stackpin({"fetch", m.string(), "--retries", "0"}, w.env({"STACKPIN_CONFIG=" + config.string()}));
  ASSERT_EQ(r.exit_code, 0) << show(r);
  EXPECT_EQ(w.server.requests_for("/copy/cudnn/redist/" + w.rel).size(), 1u);
  fs::remove_all(w.cache());
  auto env = stackpin({"fetch", m.string(), "--retries", "0"},
                      w.env({"STACKPIN_CONFIG=" + config.string(), "STACKPIN_NVIDIA_BASE=" + w.server.url("/env-copy/")}));
  ASSERT_EQ(env.exit_code, 0) << show(env);
  EXPECT_EQ(w.server.requests_for("/env-copy/cudnn/redist/" + w.rel).size(), 1u);
  EXPECT_EQ(w.server.requests_for("/copy/cudnn/redist/" + w.rel).size(), 1u);
  // a base that is no URL is the settings file's error, with its line
  w.dir.write("config.toml", "# site\n[nvidia]\nbase = \"/srv/nvidia\"\n");
  auto bad = stackpin({"fetch", m.string()}, w.env({"STACKPIN_CONFIG=" + config.string()}));
  EXPECT_EQ(bad.exit_code, 1) << show(bad);
  EXPECT_NE(bad.err.find("config.toml:3"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("`nvidia.base` must be a URL"), std::string::npos) << bad.err;
}

TEST(CliFetch, FetchThenStageFromTheCache) {
  World w;
  auto m = w.manifest(w.server.url("/redist/" + w.rel)).string();
  auto r = stackpin({"fetch", m, "--retry-delay-ms", "1"}, w.env());
  ASSERT_EQ(r.exit_code, 0) << show(r);
  EXPECT_NE(r.out.find("downloaded"), std::string::npos) << show(r);
  fs::path cached = testing_support::cached_archive(w.cache(), w.info.sha256, w.info.path.filename().string());
  EXPECT_TRUE(fs::is_regular_file(cached)) << show(r);

  auto s = stackpin(
      {"stage", m, "--archives", (w.dir.path() / "empty").string(), "--target", "linux", "--dest", (w.dir.path() / "dest").string()},
      w.env());
  ASSERT_EQ(s.exit_code, 0) << show(s);
  EXPECT_NE(s.out.find(cached.string()), std::string::npos) << show(s);
  auto v = stackpin({"verify", m}, w.env());  // no --archives: the cache alone
  EXPECT_EQ(v.exit_code, 0) << show(v);
}

TEST(CliFetch, StageWithoutTheArchiveNamesBothPlacesAndSuggestsFetch) {
  World w;
  auto m = w.manifest(w.server.url("/redist/" + w.rel)).string();
  auto s = stackpin(
      {"stage", m, "--archives", (w.dir.path() / "empty").string(), "--target", "linux", "--dest", (w.dir.path() / "dest").string()},
      w.env());
  EXPECT_EQ(s.exit_code, 1) << show(s);
  EXPECT_NE(s.err.find((w.dir.path() / "empty").string()), std::string::npos) << show(s);
  EXPECT_NE(s.err.find("download cache " + w.cache().string()), std::string::npos) << show(s);
  EXPECT_NE(s.err.find("stackpin fetch MANIFEST"), std::string::npos) << show(s);
}

TEST(CliFetch, JsonEnvelopeAndASecondRunFromTheCache) {
  World w;
  auto m = w.manifest(w.server.url("/redist/" + w.rel)).string();
  auto r = stackpin({"fetch", m, "--json"}, w.env());
  ASSERT_EQ(r.exit_code, 0) << show(r);
  auto j = json::parse(r.out);
  EXPECT_EQ(j["command"], "fetch");
  EXPECT_EQ(j["ok"], true);
  EXPECT_TRUE(j["error"].is_null());
  auto a = j["report"]["archives"][0];
  EXPECT_EQ(a["status"], "downloaded");
  EXPECT_EQ(a["sha256"], w.info.sha256);
  EXPECT_EQ(a["size"], w.info.size);
  EXPECT_EQ(a["attempts"], 1);
  EXPECT_TRUE(r.err.empty()) << r.err;  // no progress without a terminal

  auto again = json::parse(stackpin({"fetch", m, "--json"}, w.env()).out);
  EXPECT_EQ(again["report"]["archives"][0]["status"], "cached");
}

TEST(CliFetch, NotFoundExitsOneWithoutRetrying) {
  World w;
  auto m = w.manifest(w.server.url("/nothing/" + w.rel)).string();
  auto r = stackpin({"fetch", m, "--json"}, w.env());
  EXPECT_EQ(r.exit_code, 1) << show(r);
  auto j = json::parse(r.out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["error"]["code"], "not_found");
  EXPECT_NE(j["error"]["message"].get<std::string>().find("HTTP 404"), std::string::npos) << j["error"]["message"].get<std::string>();
  EXPECT_EQ(j["findings"][0]["rule"], "fetch.not_found");
  EXPECT_EQ(w.server.requests().size(), 1u);
}

TEST(CliFetch, MismatchExitsOne) {
  World w;
  testing_support::Fault f;
  f.kind = testing_support::Fault::Kind::wrong_bytes;
  w.server.fault("/redist/" + w.rel, f);
  auto m = w.manifest(w.server.url("/redist/" + w.rel)).string();
  auto r = stackpin({"fetch", m}, w.env());
  EXPECT_EQ(r.exit_code, 1) << show(r);
  EXPECT_NE(r.err.find("is not the pinned " + w.info.path.filename().string()), std::string::npos) << show(r);
  EXPECT_NE(r.err.find("expected sha256 " + w.info.sha256), std::string::npos) << show(r);
  auto j = json::parse(stackpin({"fetch", m, "--json"}, w.env()).out);
  EXPECT_EQ(j["error"]["code"], "mismatch");
  EXPECT_EQ(j["report"]["archives"][0]["status"], "failed");
  EXPECT_FALSE(fs::exists(testing_support::cached_archive(w.cache(), w.info.sha256, w.info.path.filename().string())));
}

TEST(CliFetch, OfflineListsWhatIsMissing) {
  World w;
  auto r = stackpin({"fetch", w.manifest(k_nvidia + w.rel).string(), "--offline"}, w.env());
  EXPECT_EQ(r.exit_code, 1) << show(r);
  for (const std::string& s : {w.info.path.filename().string(), w.info.sha256, std::to_string(w.info.size) + " bytes", k_nvidia + w.rel})
    EXPECT_NE(r.err.find(s), std::string::npos) << s << "\n" << show(r);
  EXPECT_NE(r.out.find("missing"), std::string::npos) << show(r);
  EXPECT_TRUE(w.server.requests().empty());
}

TEST(CliFetch, MirrorFromTheCommandLineAndFromTheSettingsFile) {
  World w;
  auto m = w.manifest(k_nvidia + w.rel).string();  // NVIDIA's URL: only the mirror is contacted
  auto r = stackpin({"fetch", m, "--mirror", w.server.url("/redist/")}, w.env());
  ASSERT_EQ(r.exit_code, 0) << show(r);
  ASSERT_EQ(w.server.requests().size(), 1u);
  EXPECT_EQ(w.server.requests()[0].path, "/redist/" + w.rel);

  World w2;
  auto m2 = w2.manifest(k_nvidia + w2.rel).string();
  auto cfg = w2.dir.write("config.toml", "[fetch]\nmirrors = [\"" + w2.server.url("/redist") + "\"]\n");
  auto r2 = stackpin({"fetch", m2}, w2.env({"STACKPIN_CONFIG=" + cfg.string()}));
  ASSERT_EQ(r2.exit_code, 0) << show(r2);
  ASSERT_EQ(w2.server.requests().size(), 1u);
  EXPECT_EQ(w2.server.requests()[0].path, "/redist/" + w2.rel);

  // the command line wins over the file
  World w3;
  auto cfg3 = w3.dir.write("config.toml", "[fetch]\nmirrors = [\"http://127.0.0.1:1/unused/\"]\n");
  auto r3 = stackpin({"fetch", w3.manifest(k_nvidia + w3.rel).string(), "--mirror", w3.server.url("/redist/")},
                     w3.env({"STACKPIN_CONFIG=" + cfg3.string()}));
  EXPECT_EQ(r3.exit_code, 0) << show(r3);
}

TEST(CliFetch, ABadSettingsFileIsReportedWithItsLocation) {
  World w;
  auto cfg = w.dir.write("config.toml", "[fetch]\nmirrors = \"http://one/\"\n");
  auto r = stackpin({"fetch", w.manifest(k_nvidia + w.rel).string()}, w.env({"STACKPIN_CONFIG=" + cfg.string()}));
  EXPECT_EQ(r.exit_code, 1) << show(r);
  EXPECT_NE(r.err.find(cfg.string() + ":2"), std::string::npos) << show(r);
}

TEST(CliFetch, UsageErrors) {
  World w;
  auto m = w.manifest(k_nvidia + w.rel).string();
  EXPECT_EQ(stackpin({"fetch", m, "--platform", "amiga"}, w.env()).exit_code, 2);
  EXPECT_EQ(stackpin({"fetch", m, "--retries", "-1"}, w.env()).exit_code, 2);
  EXPECT_EQ(stackpin({"fetch"}, w.env()).exit_code, 2);
  auto window = stackpin({"fetch", m, "--rate-window", "0"}, w.env());
  EXPECT_EQ(window.exit_code, 2) << show(window);
  EXPECT_NE(window.err.find("--rate-window must be at least 1 second"), std::string::npos) << show(window);
  EXPECT_TRUE(w.server.requests().empty());  // refused before anything was downloaded
  auto help = stackpin({"fetch", "--help"});
  EXPECT_NE(help.out.find("NVIDIA's server is not contacted"), std::string::npos) << help.out;
  for (const char* option : {"--min-rate BYTES", "--rate-window SECONDS", "--deadline SECONDS"})
    EXPECT_NE(help.out.find(option), std::string::npos) << option << " in:\n" << help.out;
}

}  // namespace

// The toolkit's archives go through the same cache: fetched from a mirror of NVIDIA's redist tree,
// resumable and verified like cuDNN's, then staged and verified from the cache alone.
TEST(CliFetch, FetchesEveryToolkitComponentThenStagesAndVerifiesFromTheCache) {
  World w;
  std::vector<std::pair<std::string, fixtures::Info>> archives;
  for (const auto& [c, v] : std::vector<std::pair<std::string, std::string>>{{"cuda_cudart", "12.4.127"}, {"libcufft", "11.2.1.3"}}) {
    auto info = fixtures::make_cuda_component(w.dir.path() / "made", c, v);
    w.server.serve("/mirror/" + c + "/linux-x86_64/" + info.path.filename().string(), testing_support::read_text(info.path));
    archives.push_back({c, info});
  }
  std::string text = fixtures::local_toolkit_manifest("12.4.1", {"cudart", "cufft"}, archives,
                                                      "[targets.linux]\nlayout = \"lib64\"\nprefix = \"/opt/cuda\"\n");
  // NVIDIA's URLs in the pins, the mirror on the command line
  for (const auto& [c, info] : archives) {
    std::string file = "file = \"" + info.path.filename().string() + "\"\n";
    text.replace(text.find(file), file.size(),
                 file + "url = \"https://developer.download.nvidia.com/compute/cuda/redist/" + c + "/linux-x86_64/" +
                     info.path.filename().string() + "\"\n");
  }
  auto m = w.dir.write("toolkit.toml", text).string();
  auto offline = stackpin({"fetch", m, "--offline"}, w.env());
  EXPECT_EQ(offline.exit_code, 1) << show(offline);
  EXPECT_NE(offline.out.find("cuda_cudart-linux-x86_64-12.4.127-archive.tar.xz"), std::string::npos) << show(offline);
  auto r = stackpin({"fetch", m, "--mirror", w.server.url("/mirror/"), "--retry-delay-ms", "1"}, w.env());
  ASSERT_EQ(r.exit_code, 0) << show(r);
  for (const auto& [c, info] : archives)
    EXPECT_TRUE(fs::is_regular_file(testing_support::cached_archive(w.cache(), info.sha256, info.path.filename().string()))) << c << "\n"
                                                                                                                             << show(r);
  auto again = stackpin({"fetch", m, "--offline"}, w.env());
  EXPECT_EQ(again.exit_code, 0) << show(again);
  auto v = stackpin({"verify", m}, w.env());
  EXPECT_EQ(v.exit_code, 0) << show(v);
  auto dest = w.dir.path() / "dest";
  auto s = stackpin({"stage", m, "--target", "linux", "--dest", dest.string()}, w.env());
  ASSERT_EQ(s.exit_code, 0) << show(s);
  EXPECT_TRUE(fs::is_regular_file(dest / "lib64" / "libcufft.so.11.2.1.3"));
  // a corrupt copy in the cache is found by verify, naming the component
  auto cached = testing_support::cached_archive(w.cache(), archives[1].second.sha256, archives[1].second.path.filename().string());
  fixtures::corrupt_copy(cached, w.dir.path() / "bad", 100);
  fs::remove(cached);
  fs::rename(w.dir.path() / "bad", cached);
  auto bad = stackpin({"verify", m}, w.env());
  EXPECT_EQ(bad.exit_code, 1) << show(bad);
}

}  // namespace cli_fetch_test
