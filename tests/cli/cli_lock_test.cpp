// `stackpin lock` and --locked through the real binary: the round trip manifest -> lock -> stage
// gives the receipt a plain stage gives, drift is refused before anything is written, and NVIDIA's
// redistrib files pin releases the knowledge base does not list.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "fixtures.hpp"
#include "http_server.hpp"
#include "test_support.hpp"
#include "util/fs.hpp"
#include "windows_tree.hpp"

namespace cli_lock_test {

using nlohmann::json;
using testing_support::ScratchDir;
using testing_support::stackpin;

namespace {
namespace fs = std::filesystem;

const std::string k_version_only =
    "schema = 1\nname = \"version-only\"\n[cuda]\nversion = \"12.4.1\"\n[cudnn]\nversion = \"9.1.0.70\"\n"
    "[frameworks]\ntorch = \"2.5.1\"\n";

std::string read(const fs::path& p) { return testing_support::read_text(p); }

void write(const fs::path& p, const std::string& text) { ASSERT_TRUE(util::write_file_atomic(p, text).ok()) << p; }

// A staged fixture stack: archive in `archives/`, manifest m.toml pinning it (origin = "local").
struct Stack {
  ScratchDir dir;
  fs::path archives = dir.path() / "archives";
  fs::path manifest = dir.path() / "m.toml";
  std::string text;
  Stack() {
    fs::create_directories(archives);
    auto info = fixtures::make_cudnn_linux(archives, "9.1.0.70", 12);
    text = fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"linux-x86_64", info}},
                                    "[targets.linux]\nlayout = \"lib64\"\nprefix = \"/opt/cudnn\"\n");
    write(manifest, text);
  }
};

json receipt_without_dest(const fs::path& dest) {
  json r = json::parse(read(dest / ".stackpin/receipt.json"));
  r.erase("dest");
  for (auto& f : r["files"]) f.erase("mtime_ns");  // when each file was written
  return r;
}

TEST(CliLock, StageWithTheLockGivesTheSameReceiptAsWithout) {
  Stack s;
  auto lock = stackpin({"lock", s.manifest.string()});
  ASSERT_EQ(lock.exit_code, 0) << lock.err;
  EXPECT_NE(lock.out.find("locked"), std::string::npos) << lock.out;
  ASSERT_TRUE(fs::exists(s.dir.path() / "m.lock"));
  EXPECT_NE(read(s.dir.path() / "m.lock").find("manifest = \"m.toml\""), std::string::npos) << read(s.dir.path() / "m.lock");
  auto again = stackpin({"lock", s.manifest.string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("unchanged"), std::string::npos) << again.out;

  fs::path plain = s.dir.path() / "plain", locked = s.dir.path() / "locked";
  auto a = stackpin({"stage", s.manifest.string(), "--archives", s.archives.string(), "--target", "linux", "--dest", plain.string()});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto b = stackpin(
      {"stage", s.manifest.string(), "--archives", s.archives.string(), "--target", "linux", "--dest", locked.string(), "--locked"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(receipt_without_dest(plain), receipt_without_dest(locked));
}

TEST(CliLock, DriftIsRefusedBeforeAnythingIsWritten) {
  Stack s;
  ASSERT_EQ(stackpin({"lock", s.manifest.string()}).exit_code, 0);
  ASSERT_EQ(stackpin({"lock", "--check", s.manifest.string()}).exit_code, 0);
  std::string edited = s.text;
  edited.replace(edited.find("12.4.1"), 6, "12.4.0");
  write(s.manifest, edited);

  fs::path dest = s.dir.path() / "dest";
  auto r =
      stackpin({"stage", s.manifest.string(), "--archives", s.archives.string(), "--target", "linux", "--dest", dest.string(), "--locked"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("disagree on 1 value(s)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cuda.version: the manifest says \"12.4.0\", the lock \"12.4.1\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("m.toml:5:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dest));

  auto check = stackpin({"lock", "--check", s.manifest.string()});
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_NE(check.err.find("out of date"), std::string::npos) << check.err;
  EXPECT_NE(check.err.find("inputs.cuda.version: the lock has \"12.4.1\", locking now gives \"12.4.0\""), std::string::npos) << check.err;
  EXPECT_EQ(stackpin({"lock", "--check", "--json", "-o", "-", s.manifest.string()}).exit_code, 2);

  auto gen = stackpin({"generate", "dockerfile", s.manifest.string(), "--locked"});
  EXPECT_EQ(gen.exit_code, 1) << gen.err;
  EXPECT_NE(gen.err.find("disagree"), std::string::npos) << gen.err;
  EXPECT_TRUE(gen.out.empty());

  auto deb =
      stackpin({"deb", s.manifest.string(), "--archives", s.archives.string(), "--out-dir", (s.dir.path() / "debs").string(), "--locked"});
  EXPECT_EQ(deb.exit_code, 1) << deb.err;
  EXPECT_FALSE(fs::exists(s.dir.path() / "debs") && !fs::is_empty(s.dir.path() / "debs"));
}

TEST(CliLock, AMissingLockSaysHowToMakeOne) {
  Stack s;
  auto r = stackpin({"stage", s.manifest.string(), "--archives", s.archives.string(), "--target", "linux", "--dest",
                     (s.dir.path() / "d").string(), "--lock", (s.dir.path() / "none.lock").string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("none.lock"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stackpin lock MANIFEST"), std::string::npos) << r.err;
}

TEST(CliLock, VersionOnlyManifestLocksNvidiasArchives) {
  ScratchDir dir;
  fs::path m = dir.path() / "stack.toml";
  write(m, k_version_only);
  auto r = stackpin({"lock", m.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json doc = json::parse(r.out);
  EXPECT_TRUE(doc["ok"].get<bool>());
  EXPECT_EQ(doc["command"], "lock");
  const json& rep = doc["report"];
  EXPECT_EQ(rep["lock"], (dir.path() / "stack.lock").string());
  ASSERT_EQ(rep["archives"].size(), 4u);
  EXPECT_EQ(rep["archives"][0]["platform"], "linux-x86_64");
  EXPECT_EQ(rep["archives"][0]["sha256"], "fdc6d6f28217b82c400adfdae8f0364fa36c5fb6cb683933e8900a748e70b263");
  EXPECT_EQ(rep["frameworks"][0]["requirement"], "torch==2.5.1+cu124");
  auto stdout_lock = stackpin({"lock", m.string(), "-o", "-"});
  ASSERT_EQ(stdout_lock.exit_code, 0);
  EXPECT_EQ(stdout_lock.out, read(dir.path() / "stack.lock"));
  // verify looks for NVIDIA's archives of the version, as the lock does
  fs::path empty = dir.path() / "empty";
  fs::create_directories(empty);
  auto v = stackpin({"verify", m.string(), "--archives", empty.string()});
  EXPECT_EQ(v.exit_code, 1) << v.err;
  EXPECT_NE(v.err.find("stackpin fetch"), std::string::npos) << v.err;
}

// NVIDIA's cuDNN manifest of a release no knowledge base can know (9.98.0.12), as the test makes
// it: three platforms, CUDA 12 and 13 each; the hashes end in a to f, the sizes are 900000000 plus
// the CUDA major.
// NVIDIA's 13.4.2 manifest, as the manifest of a release stackpin does not carry (13.9.0); ""
// when the copy does not say its release where it should.
std::string newer_cuda_manifest() {
  std::string body = read(testing_support::source_dir() / "data/redist/cuda/redistrib_13.4.2.json");
  const std::string label = "\"release_label\": \"13.4.2\"";
  const auto at = body.find(label);
  if (at == std::string::npos) return {};
  return body.replace(at, label.size(), "\"release_label\": \"13.9.0\"");
}

// The environment of a run that reads NVIDIA's tree from `server`'s /mirror and keeps what it reads
// in DIR/cache.
std::vector<std::string> mirror_env(const testing_support::HttpServer& server, const ScratchDir& dir) {
  return {"STACKPIN_NVIDIA_BASE=" + server.url("/mirror"), "STACKPIN_CACHE_DIR=" + (dir.path() / "cache").string(), "no_proxy=127.0.0.1",
          "NO_PROXY=127.0.0.1"};
}

// The first finding of `rule` in a --json document; null when there is none.
json finding(const json& doc, const std::string& rule) {
  for (const auto& f : doc["findings"])
    if (f["rule"] == rule) return f;
  return json();
}

std::string made_cudnn_manifest() {
  json doc = {{"release_date", "2027-03-02"}, {"release_label", "9.98.0"}, {"release_product", "cudnn"}};
  doc["cudnn"] = {{"name", "NVIDIA CUDA Deep Neural Network library"}, {"version", "9.98.0.12"}, {"cuda_variant", {"12", "13"}}};
  char digit = 'a';
  for (const std::string platform : {"linux-x86_64", "linux-sbsa", "windows-x86_64"})
    for (const int cuda : {12, 13}) {
      std::string ext = platform.rfind("windows", 0) == 0 ? "zip" : "tar.xz";
      doc["cudnn"][platform]["cuda" + std::to_string(cuda)] = {
          {"relative_path", "cudnn/" + platform + "/cudnn-" + platform + "-9.98.0.12_cuda" + std::to_string(cuda) + "-archive." + ext},
          {"sha256", std::string(63, '1') + digit++},
          {"md5", std::string(32, '2')},
          {"size", std::to_string(900000000 + cuda)}};
    }
  return doc.dump(2);
}

TEST(CliLock, RedistribPinsAReleaseNewerThanTheKnowledgeBase) {
  ScratchDir dir;
  fs::path m = dir.path() / "stack.toml";
  std::string text = k_version_only;
  text.replace(text.find("9.1.0.70"), 8, "9.98.0.12");
  write(m, text);
  auto without = stackpin({"lock", m.string(), "--offline"});
  EXPECT_EQ(without.exit_code, 1);
  EXPECT_NE(without.err.find("--redistrib"), std::string::npos) << without.err;
  EXPECT_FALSE(fs::exists(dir.path() / "stack.lock"));
  fs::path file = dir.path() / "redistrib_9.98.0.json";
  write(file, made_cudnn_manifest());
  auto with = stackpin({"lock", m.string(), "--redistrib", file.string()});
  ASSERT_EQ(with.exit_code, 0) << with.err;
  std::string lock = read(dir.path() / "stack.lock");
  // [cuda] 12.4.1: the cuda12 builds (a, c, e)
  EXPECT_NE(lock.find("sha256 = \"" + std::string(63, '1') + "a\""), std::string::npos) << lock;
  EXPECT_NE(lock.find("size = 900000012"), std::string::npos) << lock;
  EXPECT_EQ(lock.find(std::string(63, '1') + "b"), std::string::npos) << lock;
  EXPECT_NE(lock.find("NVIDIA redistrib_9.98.0.json (released 2027-03-02)"), std::string::npos) << lock;
  // the redistrib file is needed once: re-locking and --check keep the pins it gave
  auto relock = stackpin({"lock", m.string()});
  ASSERT_EQ(relock.exit_code, 0) << relock.err;
  EXPECT_NE(relock.out.find("unchanged"), std::string::npos) << relock.out;
  EXPECT_EQ(stackpin({"lock", "--check", m.string()}).exit_code, 0);
  auto wrong =
      stackpin({"lock", m.string(), "--redistrib", (testing_support::source_dir() / "tests/data/redistrib/redistrib_9.1.0.json").string()});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("stack.toml:6:"), std::string::npos) << wrong.err;
}

TEST(CliLock, TheExampleLockIsUpToDate) {
  fs::path m = testing_support::source_dir() / "manifests" / "cu124-cudnn91-minimal.toml";
  auto r = stackpin({"lock", "--check", m.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << "\nrun: stackpin lock manifests/cu124-cudnn91-minimal.toml";
  EXPECT_NE(r.out.find("up to date"), std::string::npos) << r.out;
}

TEST(CliLock, GeneratorsUseTheLockedFrameworkBuilds) {
  // a lock made when the knowledge base chose another torch build: --locked keeps that build
  ScratchDir dir;
  fs::path m = dir.path() / "stack.toml";
  write(m, k_version_only);
  ASSERT_EQ(stackpin({"lock", m.string()}).exit_code, 0);
  std::string lock = read(dir.path() / "stack.lock");
  for (auto [from, to] : {std::pair<std::string, std::string>{"+cu124", "+cu121"}, {"whl/cu124", "whl/cu121"}}) {
    auto at = lock.find(from);
    ASSERT_NE(at, std::string::npos) << lock;
    lock.replace(at, from.size(), to);
  }
  write(dir.path() / "stack.lock", lock);
  auto locked = stackpin({"generate", "dockerfile", m.string(), "--locked"});
  ASSERT_EQ(locked.exit_code, 0) << locked.err;
  EXPECT_NE(
      locked.out.find("ARG PYTORCH_INDEX_URL=https://download.pytorch.org/whl/cu121\n"
                      "RUN /opt/stackpin-venv/bin/pip install --no-cache-dir torch==2.5.1+cu121 --index-url \"${PYTORCH_INDEX_URL}\""),
      std::string::npos)
      << locked.out;
  auto derived = stackpin({"generate", "dockerfile", m.string()});
  ASSERT_EQ(derived.exit_code, 0) << derived.err;
  EXPECT_NE(derived.out.find("ARG PYTORCH_INDEX_URL=https://download.pytorch.org/whl/cu124\n"
                             "RUN /opt/stackpin-venv/bin/pip install --no-cache-dir torch==2.5.1 --index-url \"${PYTORCH_INDEX_URL}\""),
            std::string::npos)
      << derived.out;
}

}  // namespace

TEST(CliLock, PinsToolkitComponentsAndTakesNvidiasCudaFile) {
  ScratchDir dir;
  fs::path m = dir.path() / "toolkit.toml";
  write(m,
        "schema = 1\nname = \"toolkit\"\n\n[cuda]\nversion = \"12.4.1\"\ncomponents = [\"runtime\"]\n\n[targets.windows]\nlayout = "
        "\"isolated\"\nprefix = 'C:\\tools\\cuda'\n");
  fs::path file = testing_support::source_dir() / "data/redist/cuda/redistrib_12.4.1.json";
  auto r = stackpin({"lock", m.string(), "--redistrib", file.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("toolkit   3 component archives for windows-x86_64"), std::string::npos) << r.out;
  std::string lock = read(dir.path() / "toolkit.lock");
  EXPECT_NE(lock.find("component = \"cuda_cudart\"\nversion = \"12.4.127\"\nplatform = \"windows-x86_64\""), std::string::npos) << lock;
  // a CUDA file of another release is refused, naming both releases, and the lock is left as it was
  fs::path other = testing_support::source_dir() / "data/redist/cuda/redistrib_12.4.0.json";
  auto refused = stackpin({"lock", m.string(), "--redistrib", other.string()});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("for CUDA 12.4.0, but the manifest pins 12.4.1"), std::string::npos) << refused.err;
  EXPECT_EQ(read(dir.path() / "toolkit.lock"), lock);
  auto json = stackpin({"lock", "--check", m.string(), "--json"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"cuda_archives\""), std::string::npos) << json.out;
}

// A CUDA release newer than stackpin's own manifests: `lock` reads NVIDIA's manifest of it from
// STACKPIN_NVIDIA_BASE (a loopback mirror here), validates it, keeps it in the cache and names the
// URL and SHA-256 it pinned from; offline it uses only that cache.
TEST(CliLock, ReadsNvidiasManifestOfANewerReleaseAndKeepsItInTheCache) {
  ScratchDir dir;
  testing_support::HttpServer server;
  const std::string body = newer_cuda_manifest();
  ASSERT_FALSE(body.empty());
  write(dir.path() / "served.json", body);
  const std::string sha = fixtures::info(dir.path() / "served.json").sha256;
  const std::string path = "/mirror/cuda/redist/redistrib_13.9.0.json";
  server.serve(path, body);
  fs::path m = dir.path() / "new.toml";
  write(m, "schema = 1\nname = \"new\"\n\n[cuda]\nversion = \"13.9.0\"\ncomponents = [\"runtime\"]\n");
  const fs::path cache = dir.path() / "cache";
  const std::vector<std::string> env = {"STACKPIN_NVIDIA_BASE=" + server.url("/mirror"), "STACKPIN_CACHE_DIR=" + cache.string()};

  // offline, with nothing cached: nothing read, nothing written, and the way out said
  auto offline = stackpin({"lock", m.string(), "--offline"}, env);
  EXPECT_EQ(offline.exit_code, 1) << offline.err;
  EXPECT_NE(offline.err.find("no NVIDIA manifest for CUDA 13.9.0"), std::string::npos) << offline.err;
  EXPECT_TRUE(server.requests_for(path).empty());
  EXPECT_FALSE(fs::exists(dir.path() / "new.lock"));

  auto r = stackpin({"lock", m.string()}, env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string lock = read(dir.path() / "new.lock");
  EXPECT_NE(lock.find("component = \"cuda_cudart\"\nversion = \"13.4.92\"\nplatform = \"linux-x86_64\""), std::string::npos) << lock;
  EXPECT_NE(lock.find("read from " + server.url(path) + " (sha256 " + sha + ")"), std::string::npos) << lock;
  EXPECT_EQ(read(cache / "nvidia/cuda/redistrib_13.9.0.json"), body);
  EXPECT_EQ(server.requests_for(path).size(), 1u);

  // from the cache: no request, the same lock, offline too
  server.fault(path, {testing_support::Fault::Kind::not_found});
  auto again = stackpin({"lock", m.string()}, env);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("unchanged"), std::string::npos) << again.out;
  auto cached_offline = stackpin({"lock", m.string(), "--offline", "--check"}, env);
  EXPECT_EQ(cached_offline.exit_code, 0) << cached_offline.err;
  EXPECT_EQ(server.requests_for(path).size(), 1u);
  EXPECT_EQ(read(dir.path() / "new.lock"), lock);
}

// check judges the [cuda] components of a release stackpin carries no manifest of by NVIDIA's:
// from the download cache, where lock keeps it, or with --online from NVIDIA; with neither it
// says how to get it, and reads nothing.
TEST(CliLock, CheckReadsNvidiasManifestOnlineOrFromTheCache) {
  ScratchDir dir;
  testing_support::HttpServer server;
  const std::string body = newer_cuda_manifest();
  ASSERT_FALSE(body.empty());
  const std::string path = "/mirror/cuda/redist/redistrib_13.9.0.json";
  server.serve(path, body);
  fs::path m = dir.path() / "new.toml";
  write(m, "schema = 1\nname = \"new\"\n\n[cuda]\nversion = \"13.9.0\"\ncomponents = [\"runtime\"]\n");
  const auto env = mirror_env(server, dir);

  auto plain = stackpin({"check", m.string(), "--json"}, env);
  const json p = json::parse(plain.out);
  EXPECT_NE(finding(p, "cuda.release").dump().find("--online"), std::string::npos) << plain.out;
  EXPECT_TRUE(finding(p, "cuda.components").is_null()) << plain.out;
  EXPECT_TRUE(server.requests_for(path).empty());

  auto online = stackpin({"check", m.string(), "--online", "--json"}, env);
  const json o = json::parse(online.out);
  const json components = finding(o, "cuda.components");
  ASSERT_FALSE(components.is_null()) << online.out;
  EXPECT_EQ(components["severity"], "ok") << components.dump(2);
  EXPECT_NE(components["seen"].get<std::string>().find("archives of CUDA 13.9.0"), std::string::npos) << components.dump(2);
  EXPECT_NE(components["source"].get<std::string>().find("read from " + server.url(path)), std::string::npos) << components.dump(2);
  EXPECT_EQ(server.requests_for(path).size(), 1u);

  // kept in the cache: the next check reads it there, without --online and without the network
  server.fault(path, {testing_support::Fault::Kind::not_found});
  const json cached = json::parse(stackpin({"check", m.string(), "--json"}, env).out);
  EXPECT_EQ(finding(cached, "cuda.components")["severity"], "ok") << cached.dump(2);
  EXPECT_EQ(server.requests_for(path).size(), 1u);
}

// check judges a cuDNN release the knowledge base cannot know by NVIDIA's manifest of it: with
// --online read from the copy of NVIDIA's tree (and kept in the cache), later from the cache; with
// neither it says how, and reads nothing. A manifest whose pool path leaves the host is not used.
TEST(CliLock, CheckReadsNvidiasCudnnManifestOnlineOrFromTheCache) {
  ScratchDir dir;
  testing_support::HttpServer server;
  const std::string body = made_cudnn_manifest(), path = "/mirror/cudnn/redist/redistrib_9.98.0.json";
  server.serve(path, body);
  fs::path m = dir.path() / "stack.toml";
  write(m, "schema = 1\nname = \"new-cudnn\"\n[cuda]\nversion = \"13.0.2\"\n[cudnn]\nversion = \"9.98.0.12\"\ncuda = 13\n");
  const auto env = mirror_env(server, dir);

  auto plain = stackpin({"check", m.string(), "--json"}, env);
  const json p = json::parse(plain.out);
  EXPECT_NE(finding(p, "cudnn.release").dump().find("--online"), std::string::npos) << plain.out;
  EXPECT_EQ(finding(p, "archive.none")["severity"], "note") << plain.out;
  EXPECT_TRUE(server.requests_for(path).empty());

  auto online = stackpin({"check", m.string(), "--online", "--json"}, env);
  const json o = json::parse(online.out);
  EXPECT_TRUE(finding(o, "cudnn.release").is_null()) << online.out;
  const json none = finding(o, "archive.none");
  EXPECT_EQ(none["severity"], "ok") << none.dump(2);
  EXPECT_NE(none["seen"].get<std::string>().find("linux-sbsa, linux-x86_64, windows-x86_64 come from NVIDIA's manifest"), std::string::npos)
      << none.dump(2);
  EXPECT_NE(none["source"].get<std::string>().find("read from " + server.url(path)), std::string::npos) << none.dump(2);
  EXPECT_EQ(server.requests_for(path).size(), 1u);

  // kept in the cache: the next check reads it there, without --online and without the network
  server.fault(path, {testing_support::Fault::Kind::not_found});
  const json cached = json::parse(stackpin({"check", m.string(), "--json"}, env).out);
  EXPECT_EQ(finding(cached, "archive.none")["severity"], "ok") << cached.dump(2);
  EXPECT_EQ(server.requests_for(path).size(), 1u);

  // a manifest whose archive climbs above the host's root is not used: said, and not cached
  std::string renamed = body;
  for (auto at = renamed.find("9.98.0"); at != std::string::npos; at = renamed.find("9.98.0", at)) renamed.replace(at, 6, "9.97.0");
  json hostile = json::parse(renamed);
  hostile["cudnn"]["linux-x86_64"]["cuda13"]["relative_path"] = "../../../../../../etc/cudnn-linux-x86_64-9.97.0.12_cuda13-archive.tar.xz";
  const std::string hostile_path = "/mirror/cudnn/redist/redistrib_9.97.0.json";
  server.serve(hostile_path, hostile.dump());
  std::string text = read(m);
  text.replace(text.find("9.98.0.12"), 9, "9.97.0.12");
  write(m, text);
  auto refused = stackpin({"check", m.string(), "--online", "--json"}, env);
  const json r = json::parse(refused.out);
  EXPECT_NE(finding(r, "cudnn.release").dump().find("climbs above the root"), std::string::npos) << refused.out;
  EXPECT_EQ(finding(r, "archive.none")["severity"], "note") << refused.out;
  EXPECT_FALSE(fs::exists(dir.path() / "cache/nvidia/cudnn/redistrib_9.97.0.json"));
}

// capture pins a cuDNN whose release the knowledge base cannot know at its build, with NVIDIA's
// archive, from NVIDIA's manifest of the release: with --online read from the copy of NVIDIA's
// tree, without it from the cache only (and said when there is none).
TEST(CliLock, CaptureReadsNvidiasCudnnManifestOfAReleaseTheKnowledgeBaseLacks) {
  ScratchDir dir;
  testing_support::HttpServer server;
  const std::string body = made_cudnn_manifest(), path = "/mirror/cudnn/redist/redistrib_9.98.0.json";
  server.serve(path, body);
  const auto env = mirror_env(server, dir);
  testing_support::WindowsTree w(dir.path() / "c");
  w.windows();
  const std::string cuda = w.cuda("13.0", true);
  w.file("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v13.0\\version.json", "{\"cuda\": {\"version\": \"13.0.2\"}}");
  const std::string bin = w.cudnn("C:\\tools\\cudnn\\v9.98", "9.98.0", {"cudnn64_9.dll"}, "bin\\x64");
  const std::vector<std::string> args = {"capture", "--windows-root", w.root().string(), "--path", bin + ";" + cuda};

  auto cached_only = stackpin(args, env);
  EXPECT_EQ(cached_only.exit_code, 1) << cached_only.out << cached_only.err;
  EXPECT_NE(cached_only.err.find("not in the knowledge base"), std::string::npos) << cached_only.err;
  EXPECT_NE(cached_only.err.find("capture --online"), std::string::npos) << cached_only.err;
  EXPECT_TRUE(server.requests_for(path).empty());

  auto args_online = args;
  args_online.push_back("--online");
  auto online = stackpin(args_online, env);
  ASSERT_EQ(online.exit_code, 0) << online.err;
  EXPECT_NE(online.out.find("[cudnn]\nversion = \"9.98.0.12\"\ncuda = 13\n"), std::string::npos) << online.out;
  EXPECT_NE(online.out.find("sha256 = \"" + std::string(63, '1') + "f\""), std::string::npos) << online.out;  // windows-x86_64, cuda13
  EXPECT_NE(online.out.find("NVIDIA's manifest of the release: " + server.url(path)), std::string::npos) << online.out;
  EXPECT_EQ(server.requests_for(path).size(), 1u);
  // now in the cache: without --online, and without the network
  server.fault(path, {testing_support::Fault::Kind::not_found});
  auto again = stackpin(args, env);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, online.out);
}

// generate dockerfile for a cuDNN release the knowledge base cannot know: the archive from NVIDIA's
// manifest of it, read from NVIDIA with --from-url (the image downloads from there anyway) and
// from the cache after that; with neither, the error says how to get it.
TEST(CliLock, GenerateTakesTheArchiveOfAReleaseTheKnowledgeBaseLacksFromNvidiasManifest) {
  ScratchDir dir;
  testing_support::HttpServer server;
  const std::string body = made_cudnn_manifest(), path = "/mirror/cudnn/redist/redistrib_9.98.0.json";
  server.serve(path, body);
  const auto env = mirror_env(server, dir);
  fs::path m = dir.path() / "image.toml";
  write(m,
        "schema = 1\nname = \"image\"\n[cuda]\nversion = \"13.0.2\"\n[cudnn]\nversion = \"9.98.0.12\"\ncuda = 13\n"
        "[targets.docker]\nbase_image = \"nvidia/cuda:13.0.2-runtime-ubuntu24.04\"\n");
  auto none = stackpin({"generate", "dockerfile", m.string()}, env);
  EXPECT_EQ(none.exit_code, 1) << none.out << none.err;
  EXPECT_NE(none.err.find("the download cache has no NVIDIA manifest of it"), std::string::npos) << none.err;
  EXPECT_TRUE(server.requests_for(path).empty());

  auto online = stackpin({"generate", "dockerfile", m.string(), "--from-url"}, env);
  ASSERT_EQ(online.exit_code, 0) << online.err;
  EXPECT_NE(online.out.find("cudnn/linux-x86_64/cudnn-linux-x86_64-9.98.0.12_cuda13-archive.tar.xz"), std::string::npos) << online.out;
  EXPECT_NE(online.out.find(std::string(63, '1') + "b"), std::string::npos) << online.out;
  EXPECT_EQ(server.requests_for(path).size(), 1u);
  auto cached = stackpin({"generate", "dockerfile", m.string(), "--from-url"}, env);
  EXPECT_EQ(cached.out, online.out);
  EXPECT_EQ(server.requests_for(path).size(), 1u);
}

// lock --upgrade lists newer releases and whether each still fits (here the pinned driver floor
// rules out CUDA 13.1 and later), writes nothing, and online reads NVIDIA's lists for releases
// newer than stackpin's own, judging them by their manifests.
TEST(CliLock, UpgradeTellsWhichNewerReleasesStillFitTheManifest) {
  ScratchDir dir;
  testing_support::HttpServer server;
  const std::string cuda_body = newer_cuda_manifest();
  ASSERT_FALSE(cuda_body.empty());
  server.serve("/mirror/cuda/redist/",
               "<html><a href=\"redistrib_13.4.2.json\">redistrib_13.4.2.json</a>\n"
               "<a href=\"redistrib_13.9.0.json\">redistrib_13.9.0.json</a></html>\n");
  server.serve("/mirror/cuda/redist/redistrib_13.9.0.json", cuda_body);
  server.serve("/mirror/cudnn/redist/", "<a href=\"redistrib_9.27.0.json\">x</a> <a href=\"redistrib_9.98.0.json\">y</a>\n");
  server.serve("/mirror/cudnn/redist/redistrib_9.98.0.json", made_cudnn_manifest());
  const auto env = mirror_env(server, dir);
  fs::path m = dir.path() / "up.toml";
  const std::string text =
      "schema = 1\nname = \"up\"\n[cuda]\nversion = \"13.0.2\"\n[driver]\nlinux = \"580.95.05\"\n[cudnn]\nversion = \"9.13.0.50\"\n"
      "cuda = 13\n[frameworks]\ntorch = \"2.9.0\"\n[gpus]\narch = [\"8.6\"]\n[targets.linux]\nprefix = \"/opt/cudnn\"\n";
  write(m, text);
  auto candidate = [](const json& report, const std::string& product, const std::string& to) {
    for (const auto& c : report["candidates"])
      if (c["product"] == product && c["to"] == to) return c;
    return json();
  };

  auto offline = stackpin({"lock", m.string(), "--upgrade", "--offline", "--json"}, env);
  ASSERT_EQ(offline.exit_code, 0) << offline.out << offline.err;
  const json o = json::parse(offline.out)["report"];
  EXPECT_TRUE(candidate(o, "cuda", "13.0.3")["fits"].get<bool>()) << o.dump(2);
  const json too_new = candidate(o, "cuda", "13.4.2");
  ASSERT_FALSE(too_new.is_null()) << o.dump(2);
  EXPECT_FALSE(too_new["fits"].get<bool>());
  EXPECT_NE(too_new["why_not"].dump().find("expected >= 615 (NVIDIA's minimum for CUDA 13.4.2)"), std::string::npos) << too_new.dump(2);
  EXPECT_TRUE(candidate(o, "cudnn", "9.27.0.42")["fits"].get<bool>()) << o.dump(2);
  EXPECT_FALSE(candidate(o, "torch", "2.14.0").is_null()) << o.dump(2);
  EXPECT_TRUE(candidate(o, "cuda", "13.9.0").is_null()) << o.dump(2);  // not without NVIDIA's lists
  EXPECT_TRUE(server.requests_for("/mirror/cuda/redist/").empty());
  EXPECT_FALSE(fs::exists(dir.path() / "up.lock"));
  EXPECT_EQ(read(m), text);

  auto online = stackpin({"lock", m.string(), "--upgrade", "--json"}, env);
  ASSERT_EQ(online.exit_code, 0) << online.out << online.err;
  const json n = json::parse(online.out)["report"];
  const json cuda139 = candidate(n, "cuda", "13.9.0");
  ASSERT_FALSE(cuda139.is_null()) << n.dump(2);
  EXPECT_NE(cuda139["source"].get<std::string>().find("read from " + server.url("/mirror/cuda/redist/redistrib_13.9.0.json")),
            std::string::npos)
      << cuda139.dump(2);
  // a release NVIDIA's driver table (as stackpin has it) does not know cannot be said to fit the floor
  EXPECT_FALSE(cuda139["fits"].get<bool>()) << cuda139.dump(2);
  EXPECT_NE(cuda139["why_not"].dump().find("no row of NVIDIA's driver table for CUDA 13.9"), std::string::npos) << cuda139.dump(2);
  const json cudnn998 = candidate(n, "cudnn", "9.98.0.12");
  ASSERT_FALSE(cudnn998.is_null()) << n.dump(2);
  EXPECT_TRUE(cudnn998["fits"].get<bool>()) << cudnn998.dump(2);
  EXPECT_TRUE(server.requests_for("/mirror/cuda/redist/redistrib_13.4.2.json").empty());  // stackpin's own: not read
  // a listing that names no release is said in a note, and the rest is still judged
  server.serve("/mirror/cudnn/redist/", "<html>Moved: see the new host</html>\n");
  auto unlisted = stackpin({"lock", m.string(), "--upgrade", "--json"}, env);
  ASSERT_EQ(unlisted.exit_code, 0) << unlisted.out << unlisted.err;
  EXPECT_NE(unlisted.out.find("NVIDIA's list of cuDNN releases was not read"), std::string::npos) << unlisted.out;
  EXPECT_NE(unlisted.out.find("names no redistrib_<release>.json"), std::string::npos) << unlisted.out;
  EXPECT_TRUE(candidate(json::parse(unlisted.out)["report"], "cudnn", "9.98.0.12").is_null()) << unlisted.out;
  EXPECT_FALSE(fs::exists(dir.path() / "up.lock"));

  // a platform the manifest pins decides too: Jetson's linux-aarch64 builds end with cuDNN 9.21
  fs::path jetson = dir.path() / "jetson.toml";
  write(jetson,
        "schema = 1\nname = \"jetson\"\n[cuda]\nversion = \"12.8.1\"\n[cudnn]\nversion = \"9.13.0.50\"\ncuda = 12\n"
        "[[cudnn.archives]]\nplatform = \"linux-aarch64\"\nurl = \"https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/"
        "linux-aarch64/cudnn-linux-aarch64-9.13.0.50_cuda12-archive.tar.xz\"\n"
        "sha256 = \"c4b47fe8b1f936aa5cbc312f2d0707990fe5f55693fb5640c7141d301aa7db4c\"\nsize = 940699120\n");
  auto j = stackpin({"lock", jetson.string(), "--upgrade", "--offline", "--json"}, env);
  ASSERT_EQ(j.exit_code, 0) << j.out << j.err;
  const json jr = json::parse(j.out)["report"];
  EXPECT_TRUE(candidate(jr, "cudnn", "9.20.0.48")["fits"].get<bool>()) << jr.dump(2);
  const json gone = candidate(jr, "cudnn", "9.27.0.42");
  ASSERT_FALSE(gone.is_null()) << jr.dump(2);
  EXPECT_FALSE(gone["fits"].get<bool>()) << gone.dump(2);
  EXPECT_NE(gone["why_not"].dump().find("no build for CUDA 12 on linux-aarch64"), std::string::npos) << gone.dump(2);

  // the text form, and what --upgrade does not take
  auto plain = stackpin({"lock", m.string(), "--upgrade", "--offline"}, env);
  EXPECT_NE(plain.out.find("13.0.2 -> 13.4.2"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("does not fit"), std::string::npos) << plain.out;
  auto usage = stackpin({"lock", m.string(), "--upgrade", "--check"}, env);
  EXPECT_EQ(usage.exit_code, 2) << usage.err;
}

// A cuDNN release the knowledge base cannot know is locked from NVIDIA's manifest of it, read from
// the copy of NVIDIA's tree the settings file names ([nvidia] base), kept in the cache and named
// in the lock with its URL and SHA-256; re-locking and --offline read nothing more.
TEST(CliLock, ReadsNvidiasCudnnManifestFromTheCopyTheSettingsFileNames) {
  ScratchDir dir;
  testing_support::HttpServer server;
  const std::string body = made_cudnn_manifest(), path = "/copy/cudnn/redist/redistrib_9.98.0.json";
  server.serve(path, body);
  write(dir.path() / "served.json", body);
  const std::string sha = fixtures::info(dir.path() / "served.json").sha256;
  fs::path config = dir.path() / "config.toml";
  write(config, "[nvidia]\nbase = \"" + server.url("/copy") + "\"\n");
  const fs::path cache = dir.path() / "cache";
  const std::vector<std::string> env = {"STACKPIN_CONFIG=" + config.string(), "STACKPIN_CACHE_DIR=" + cache.string(), "no_proxy=127.0.0.1",
                                        "NO_PROXY=127.0.0.1"};
  fs::path m = dir.path() / "stack.toml";
  std::string text = k_version_only;
  text.replace(text.find("9.1.0.70"), 8, "9.98.0.12");
  write(m, text);

  // offline with nothing cached: nothing read or written, and the file it needs named
  auto offline = stackpin({"lock", m.string(), "--offline"}, env);
  EXPECT_EQ(offline.exit_code, 1) << offline.err;
  EXPECT_NE(offline.err.find("redistrib_9.98.0.json"), std::string::npos) << offline.err;
  EXPECT_TRUE(server.requests_for(path).empty());
  EXPECT_FALSE(fs::exists(dir.path() / "stack.lock"));

  auto r = stackpin({"lock", m.string()}, env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string lock = read(dir.path() / "stack.lock");
  EXPECT_NE(lock.find("sha256 = \"" + std::string(63, '1') + "a\""), std::string::npos) << lock;
  EXPECT_NE(lock.find("NVIDIA redistrib_9.98.0.json (released 2027-03-02), read from " + server.url(path) + " (sha256 " + sha + ")"),
            std::string::npos)
      << lock;
  EXPECT_EQ(read(cache / "nvidia/cudnn/redistrib_9.98.0.json"), body);
  EXPECT_EQ(server.requests_for(path).size(), 1u);

  auto again = stackpin({"lock", m.string()}, env);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("unchanged"), std::string::npos) << again.out;
  fs::remove(dir.path() / "stack.lock");
  auto cached = stackpin({"lock", m.string(), "--offline"}, env);
  EXPECT_EQ(cached.exit_code, 0) << cached.err;
  EXPECT_EQ(read(dir.path() / "stack.lock"), lock);
  EXPECT_EQ(server.requests_for(path).size(), 1u);

  // another release's file at that name is refused, and nothing is cached
  server.serve("/copy/cudnn/redist/redistrib_9.99.0.json", body);
  std::string other = text;
  other.replace(other.find("9.98.0.12"), 9, "9.99.0.1");
  write(dir.path() / "other.toml", other);
  auto refused = stackpin({"lock", (dir.path() / "other.toml").string()}, env);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("is not NVIDIA's manifest of cuDNN 9.99.0: it lists cuDNN 9.98.0.12"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(cache / "nvidia/cudnn/redistrib_9.99.0.json"));
  EXPECT_FALSE(fs::exists(dir.path() / "other.lock"));
}

// NVIDIA's second host keeps archives in a pool beside the redist tree: a manifest read from it pins
// each archive where its relative path leads from the manifest's own URL; one whose path would
// leave the host is refused, and neither cached nor locked.
TEST(CliLock, PoolPathsResolveAgainstTheManifestsOwnUrl) {
  ScratchDir dir;
  testing_support::HttpServer server;
  auto pooled = [](const std::string& climb) {
    json doc = json::parse(made_cudnn_manifest());
    for (auto& [platform, value] : doc["cudnn"].items())
      if (value.is_object())
        for (auto& [variant, archive] : value.items()) {
          std::string path = archive["relative_path"];
          archive["relative_path"] = climb + "pool/" + platform + "/0a1b/" + path.substr(path.rfind('/') + 1);
        }
    return doc.dump(2);
  };
  server.serve("/second/cudnn/redist/redistrib_9.98.0.json", pooled("../../../"));
  fs::path config = dir.path() / "config.toml";
  write(config, "[nvidia]\nbase = \"" + server.url("/second") + "\"\n");
  const fs::path cache = dir.path() / "cache";
  const std::vector<std::string> env = {"STACKPIN_CONFIG=" + config.string(), "STACKPIN_CACHE_DIR=" + cache.string()};
  fs::path m = dir.path() / "stack.toml";
  std::string text = k_version_only;
  text.replace(text.find("9.1.0.70"), 8, "9.98.0.12");
  write(m, text);
  auto r = stackpin({"lock", m.string()}, env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string lock = read(dir.path() / "stack.lock");
  EXPECT_NE(lock.find("url = \"" + server.url("/pool/linux-x86_64/0a1b/cudnn-linux-x86_64-9.98.0.12_cuda12-archive.tar.xz") + "\""),
            std::string::npos)
      << lock;

  // one more "../" leaves the host: refused, nothing kept
  server.serve("/second/cudnn/redist/redistrib_9.97.0.json", [&] {
    std::string body = pooled("../../../../");
    for (std::size_t at; (at = body.find("9.98.0")) != std::string::npos;) body.replace(at, 6, "9.97.0");
    return body;
  }());
  std::string other = text;
  other.replace(other.find("9.98.0.12"), 9, "9.97.0.12");
  write(dir.path() / "other.toml", other);
  auto refused = stackpin({"lock", (dir.path() / "other.toml").string()}, env);
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_NE(refused.err.find("climbs above the root of " + server.url("/")), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(cache / "nvidia/cudnn/redistrib_9.97.0.json"));
  EXPECT_FALSE(fs::exists(dir.path() / "other.lock"));
}

// What the mirror answers is untrusted: another release's manifest, bytes that are no manifest, a
// body larger than any manifest and a 404 are refused, naming the URL, and nothing is cached or
// written.
TEST(CliLock, ANvidiaManifestThatIsNotTheReleasesIsRefused) {
  ScratchDir dir;
  testing_support::HttpServer server;
  const fs::path cache = dir.path() / "cache";
  const std::vector<std::string> env = {"STACKPIN_NVIDIA_BASE=" + server.url("/"), "STACKPIN_CACHE_DIR=" + cache.string()};
  auto lock_of = [&](const std::string& release) {
    fs::path m = dir.path() / ("m-" + release + ".toml");
    write(m, "schema = 1\nname = \"m\"\n\n[cuda]\nversion = \"" + release + "\"\ncomponents = [\"runtime\"]\n");
    return stackpin({"lock", m.string()}, env);
  };
  // NVIDIA's 13.4.2 manifest, served as 13.9.1's
  server.serve("/cuda/redist/redistrib_13.9.1.json", read(testing_support::source_dir() / "data/redist/cuda/redistrib_13.4.2.json"));
  auto other = lock_of("13.9.1");
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.err.find("is not NVIDIA's manifest of CUDA 13.9.1: it says release_label \"13.4.2\""), std::string::npos) << other.err;
  server.serve("/cuda/redist/redistrib_13.9.2.json", "<html>a captive portal</html>");
  auto garbage = lock_of("13.9.2");
  EXPECT_EQ(garbage.exit_code, 1);
  EXPECT_NE(garbage.err.find(server.url("/cuda/redist/redistrib_13.9.2.json")), std::string::npos) << garbage.err;
  // more than a manifest can be: cut at 16 MiB, not read to the end
  server.serve("/cuda/redist/redistrib_13.9.4.json", std::string((16u << 20) + 1, ' '));
  auto huge = lock_of("13.9.4");
  EXPECT_EQ(huge.exit_code, 1);
  EXPECT_NE(huge.err.find("is larger than 16 MiB"), std::string::npos) << huge.err;
  auto missing = lock_of("13.9.3");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("--redistrib"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(cache / "nvidia/cuda"));
  for (const char* release : {"13.9.1", "13.9.2", "13.9.3", "13.9.4"})
    EXPECT_FALSE(fs::exists(dir.path() / (std::string("m-") + release + ".lock")));
}

}  // namespace cli_lock_test
