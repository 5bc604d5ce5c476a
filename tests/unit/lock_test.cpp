// Lock files: resolution from the knowledge base and NVIDIA's redistrib files, the TOML round
// trip, drift, and what --locked makes of a manifest.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/archives/lock.hpp"
#include "core/archives/verify.hpp"
#include "format/lock_file.hpp"
#include "format/manifest_reader.hpp"
#include "format/redistrib.hpp"
#include "test_support.hpp"
#include "util/fs.hpp"

namespace lock_test {

namespace {
namespace fs = std::filesystem;
using util::ErrorCode;

const knowledge::KnowledgeBase& kb() { return knowledge::KnowledgeBase::embedded(); }

const std::string k_version_only = R"(schema = 1
name = "version-only"

[cuda]
version = "12.4.1"

[cudnn]
version = "9.1.0.70"

[frameworks]
torch = "2.5.1"
torchaudio = "2.5.1"
onnxruntime-gpu = "1.20.1"
)";

model::Manifest parse(const std::string& text, const std::string& path = "m.toml") {
  auto m = format::parse_manifest(text, path);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return *m;
}

format::RedistribRelease redistrib(const std::string& name) {
  fs::path p = testing_support::source_dir() / "tests/data/redistrib" / name;
  auto text = util::read_file(p);
  EXPECT_TRUE(text.ok()) << p;
  auto r = format::parse_redistrib(*text, p.string());
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return *r;
}

model::Lock lock_of(const model::Manifest& m, std::vector<format::RedistribRelease> redistribs = {}) {
  core::LockOptions o;
  o.generated_by = "stackpin test";
  o.manifest_file = "m.toml";
  o.redistribs = std::move(redistribs);
  auto out = core::make_lock(m, kb(), o);
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
  return out->lock;
}

// A release the knowledge base lists with NVIDIA's hashes but without sizes (no copy of NVIDIA's
// manifest was found for it), and that manifest as the test makes it: the knowledge base's
// hashes, sizes of the test's own.
const std::string k_sizeless = "9.23.0.39";

format::RedistribRelease sized_redistrib() {
  auto v = model::Version::parse(k_sizeless).value();
  std::map<std::string, std::string> platforms;  // platform -> its "cudaNN" entries
  std::uint64_t size = 845000000;
  for (const auto* a : kb().cudnn_archives(v)) {
    std::string key = model::to_string(a->platform);
    std::string& entry = platforms[key];
    entry += std::string(entry.empty() ? "" : ",\n") + "      \"cuda" + std::to_string(a->cuda) + "\": {\"relative_path\": \"cudnn/" + key +
             "/" + a->file + "\", \"sha256\": \"" + a->sha256 + "\", \"md5\": \"" + std::string(32, '0') + "\", \"size\": \"" +
             std::to_string(size++) + "\"}";
  }
  std::string text = "{\n  \"release_date\": \"2026-01-20\",\n  \"release_label\": \"9.23.0\",\n  \"cudnn\": {\n    \"version\": \"" +
                     k_sizeless + "\",\n    \"cuda_variant\": [\"12\", \"13\"]";
  for (const auto& [key, entries] : platforms) text += ",\n    \"" + key + "\": {\n" + entries + "\n    }";
  text += "\n  }\n}\n";
  auto r = format::parse_redistrib(text, "redistrib_9.23.0.json");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message) << text;
  return *r;
}

TEST(Lock, DefaultPathIsBesideTheManifest) {
  EXPECT_EQ(core::default_lock_path("manifests/cu121.toml"), fs::path("manifests/cu121.lock"));
  EXPECT_EQ(core::default_lock_path("stack"), fs::path("stack.lock"));
}

TEST(Lock, VersionOnlyManifestGetsNvidiasArchivesDriversAndExactBuilds) {
  auto lock = lock_of(parse(k_version_only));
  EXPECT_EQ(lock.cudnn, "9.1.0.70");
  EXPECT_EQ(lock.cudnn_cuda, 12);  // [cuda] 12.4.1 -> the cuda12 build
  ASSERT_EQ(lock.archives.size(), 4u);
  for (const auto& a : lock.archives) {
    const auto* fact = kb().cudnn_archive(model::Version::parse("9.1.0.70").value(), 12, a.platform);
    ASSERT_NE(fact, nullptr) << model::to_string(a.platform);
    EXPECT_EQ(a.sha256, fact->sha256);
    EXPECT_EQ(a.size, fact->size.value());
    EXPECT_EQ(a.url, fact->url);
    EXPECT_EQ(a.file, fact->file);
    EXPECT_EQ(a.origin, model::Origin::nvidia);
    EXPECT_EQ(a.source.rfind("knowledge base: ", 0), 0u) << a.source;
  }
  ASSERT_FALSE(lock.drivers.empty());
  EXPECT_EQ(lock.drivers.front().os, model::Os::linux);
  EXPECT_EQ(lock.drivers.front().floor, "525.60.13");
  ASSERT_EQ(lock.frameworks.size(), 3u);
  std::map<std::string, model::LockedFramework> by;
  for (const auto& f : lock.frameworks) by[f.name] = f;
  EXPECT_EQ(by["torch"].requirement, "torch==2.5.1+cu124");
  EXPECT_EQ(by["torch"].index_url, "https://download.pytorch.org/whl/cu124");
  EXPECT_EQ(by["torchaudio"].requirement, "torchaudio==2.5.1+cu124");
  EXPECT_EQ(by["torchaudio"].index_url, "https://download.pytorch.org/whl/cu124");
  EXPECT_EQ(by["onnxruntime-gpu"].requirement, "onnxruntime-gpu==1.20.1");
  EXPECT_EQ(lock.inputs.at("cudnn.version").value, "9.1.0.70");
  EXPECT_EQ(lock.inputs.at("cudnn.cuda").value, "12");
}

TEST(Lock, RendersAndParsesBackExactly) {
  auto lock = lock_of(parse(k_version_only +
                            "[targets.docker]\nbase_image = \"nvidia/cuda:12.4.1-runtime-ubuntu22.04\"\n"
                            "base_digest = \"sha256:" +
                            std::string(64, 'a') + "\"\n"));
  std::string text = format::render_lock(lock);
  auto back = format::parse_lock(text, "m.lock");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(format::render_lock(*back), text);
  EXPECT_EQ(back->base_digest, "sha256:" + std::string(64, 'a'));
  EXPECT_EQ(back->archives.size(), lock.archives.size());
  EXPECT_EQ(back->inputs.size(), lock.inputs.size());
  EXPECT_TRUE(core::lock_drift(parse(k_version_only +
                                     "[targets.docker]\nbase_image = \"nvidia/cuda:12.4.1-runtime-ubuntu22.04\"\n"
                                     "base_digest = \"sha256:" +
                                     std::string(64, 'a') + "\"\n"),
                               *back)
                  .empty());
}

TEST(Lock, TheGpuCodeReadFromAnArchiveRoundTrips) {
  auto lock = lock_of(parse(k_version_only));
  ASSERT_FALSE(lock.archives.empty());
  auto& a = lock.archives.front();
  a.kernels_read = true;
  model::LockedLibrary lib;
  lib.path = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive/lib/libcudnn_cnn.so.9.1.0";
  for (const char* name : {"sm_75", "sm_90a", "sm_100f", "compute_120"}) {
    model::TargetImages t;
    t.target = *model::parse_gpu_target(name);
    if (t.target.kind == model::CodeKind::ptx) t.ptx_isa = model::Version::parse("9.0");
    lib.targets.push_back(t);
  }
  a.libraries.push_back(lib);
  lock.archives.back().kernels_read = true;  // read, and carrying no GPU code (no libraries listed)
  std::string text = format::render_lock(lock);
  EXPECT_NE(text.find("sass = [\"sm_75\", \"sm_90a\", \"sm_100f\"]"), std::string::npos) << text;
  EXPECT_NE(text.find("ptx = [{ target = \"compute_120\", isa = \"9.0\" }]"), std::string::npos) << text;
  auto back = format::parse_lock(text, "m.lock");
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << text;
  EXPECT_EQ(format::render_lock(*back), text);
  ASSERT_EQ(back->archives.front().libraries.size(), 1u);
  const auto& got = back->archives.front().libraries.front();
  EXPECT_EQ(got.path, lib.path);
  ASSERT_EQ(got.targets.size(), 4u);
  EXPECT_EQ(got.targets[3].target.name(), "compute_120");
  ASSERT_TRUE(got.targets[3].ptx_isa);
  EXPECT_EQ(got.targets[3].ptx_isa->text(), "9.0");
  EXPECT_TRUE(back->archives.back().kernels_read);
  // what check judges by must say what a library carries: one it cannot read is refused, located
  const std::string head = text.substr(0, text.find("[[cudnn.archives.libraries]]"));
  auto bad = [&](const std::string& library) { return format::parse_lock(head + "[[cudnn.archives.libraries]]\n" + library, "m.lock"); };
  const int line = static_cast<int>(std::count(head.begin(), head.end(), '\n')) + 2;
  for (const auto& [library, words] : std::vector<std::pair<std::string, std::string>>{
           {"path = \"lib/x.so\"\nsass = [\"sm_9x\"]\n", "not a SASS target"},
           {"path = \"lib/x.so\"\nsass = [\"compute_90\"]\n", "not a SASS target"},
           {"path = \"lib/x.so\"\nptx = [\"compute_90\"]\n", "{ target = \"compute_121\""},
           {"path = \"lib/x.so\"\nptx = [{ target = \"sm_90\", isa = \"9.0\" }]\n", "not a PTX target"},
           {"path = \"lib/x.so\"\nptx = [{ target = \"compute_90\", isa = \"nine\" }]\n", "isa"},
           {"path = \"/etc/x.so\"\nsass = [\"sm_90\"]\n", "relative path"},
           {"sass = [\"sm_90\"]\n", "path"},
           {"path = \"lib/x.so\"\nsass = [\"sm_90\"]\nextra = 1\n", "extra"}}) {
    auto r = bad(library);
    ASSERT_FALSE(r.ok()) << library;
    EXPECT_EQ(r.error().code, ErrorCode::invalid) << library;
    EXPECT_NE(r.error().message.find(words), std::string::npos) << library << " -> " << r.error().message;
    ASSERT_TRUE(r.error().where) << library;
    EXPECT_GE(r.error().where->line, line - 1) << library;
  }
  // libraries without kernels_read are refused: nothing says the archive was read
  std::string unread = text;
  unread.erase(unread.find("kernels_read = true\n"), 20);
  auto r = format::parse_lock(unread, "m.lock");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("kernels_read"), std::string::npos) << r.error().message;
}

TEST(Lock, HostileStringsSurviveTheRoundTrip) {
  model::Lock l;
  l.generated_by = "stackpin \"quoted\" \\ $HOME `x`";
  l.manifest = "dir with space/ü.toml";
  l.name = "n";
  l.inputs["frameworks.torch"] = {"2.1.0\nname = \"injected\"", {}};
  std::string text = format::render_lock(l);
  auto back = format::parse_lock(text, "x.lock");
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << text;
  EXPECT_EQ(back->generated_by, l.generated_by);
  EXPECT_EQ(back->manifest, l.manifest);
  EXPECT_EQ(back->inputs.at("frameworks.torch").value, l.inputs["frameworks.torch"].value);
  EXPECT_EQ(back->name, "n");
}

TEST(Lock, ParseErrorsNameTheLine) {
  auto bad_key = format::parse_lock("schema = 1\nmanifest = \"m.toml\"\nname = \"n\"\nsurprise = 1\n", "x.lock");
  ASSERT_FALSE(bad_key.ok());
  EXPECT_EQ(bad_key.error().code, ErrorCode::invalid);
  ASSERT_TRUE(bad_key.error().where);
  EXPECT_EQ(bad_key.error().where->line, 4);
  auto bad_hash = format::parse_lock(
      "schema = 1\nmanifest = \"m.toml\"\nname = \"n\"\n[cudnn]\nversion = \"9.1.0.70\"\ncuda = 12\n[[cudnn.archives]]\n"
      "platform = \"linux-x86_64\"\norigin = \"nvidia\"\nfile = \"f.tar.xz\"\nsha256 = \"abc\"\nsize = 1\n",
      "x.lock");
  ASSERT_FALSE(bad_hash.ok());
  EXPECT_NE(bad_hash.error().message.find("sha256"), std::string::npos) << bad_hash.error().message;
  EXPECT_EQ(bad_hash.error().where->line, 11);
  auto future = format::parse_lock("schema = 2\nmanifest = \"m.toml\"\nname = \"n\"\n", "x.lock");
  ASSERT_FALSE(future.ok());
  EXPECT_NE(future.error().message.find("schema 2"), std::string::npos) << future.error().message;
}

TEST(Redistrib, PerVariantFileGivesTheSamePinsAsTheKnowledgeBase) {
  auto r = redistrib("redistrib_9.1.0.json");
  EXPECT_EQ(r.version.text(), "9.1.0.70");
  EXPECT_EQ(r.release_date, "2024-04-12");
  ASSERT_EQ(r.archives.size(), 7u);
  int compared = 0;
  for (const auto& a : r.archives) {
    const auto* fact = kb().cudnn_archive(r.version, a.cuda, a.platform);
    if (!fact) continue;
    ++compared;
    EXPECT_EQ(a.sha256, fact->sha256) << a.relative_path;
    EXPECT_EQ(a.md5, fact->md5) << a.relative_path;
    EXPECT_EQ(a.size, fact->size.value()) << a.relative_path;
    EXPECT_EQ(kb().facts().cudnn_base_url + a.relative_path, fact->url);
  }
  EXPECT_GE(compared, 6);
  // and the lock made with it is the lock made without it, the sources aside
  auto m = parse(k_version_only);
  auto with = lock_of(m, {r});
  auto without = lock_of(m);
  ASSERT_EQ(with.archives.size(), without.archives.size());
  for (std::size_t i = 0; i < with.archives.size(); ++i) {
    EXPECT_EQ(with.archives[i].sha256, without.archives[i].sha256);
    EXPECT_EQ(with.archives[i].size, without.archives[i].size);
    EXPECT_EQ(with.archives[i].url, without.archives[i].url);
    EXPECT_NE(with.archives[i].source.find("redistrib_9.1.0.json (released 2024-04-12)"), std::string::npos) << with.archives[i].source;
    EXPECT_NE(with.archives[i].source.find("knowledge base"), std::string::npos) << with.archives[i].source;
  }
}

TEST(Redistrib, OneVariantFileTakesTheCudaMajorFromTheFileName) {
  auto r = redistrib("redistrib_8.9.5.30.json");
  ASSERT_EQ(r.archives.size(), 3u);
  ASSERT_EQ(r.skipped, std::vector<std::string>{"linux-ppc64le"});
  for (const auto& a : r.archives) {
    EXPECT_EQ(a.cuda, 11);
    const auto* fact = kb().cudnn_archive(r.version, 11, a.platform);
    ASSERT_NE(fact, nullptr) << a.relative_path;
    EXPECT_EQ(a.sha256, fact->sha256);
    EXPECT_EQ(a.size, fact->size.value());
  }
}

TEST(Redistrib, CompletesAReleaseTheKnowledgeBaseListsWithoutSizes) {
  auto v = model::Version::parse(k_sizeless).value();
  ASSERT_EQ(kb().cudnn_archives(v).size(), 6u);
  for (const auto* a : kb().cudnn_archives(v)) ASSERT_FALSE(a->size.has_value()) << "the test needs a release without sizes: " << a->file;
  std::string text = k_version_only;
  text.replace(text.find("9.1.0.70"), 8, k_sizeless);
  auto m = parse(text);
  core::LockOptions o;
  o.manifest_file = "m.toml";
  auto none = core::make_lock(m, kb(), o);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::not_found);
  EXPECT_NE(none.error().hints.front().find("redistrib_9.23.0.json"), std::string::npos) << none.error().hints.front();
  auto redistrib = sized_redistrib();
  auto lock = lock_of(m, {redistrib});
  ASSERT_EQ(lock.archives.size(), 3u);  // NVIDIA builds 9.23.0 for linux-x86_64, linux-sbsa and windows-x86_64
  const auto* linux = lock.archive_for(model::Platform::linux_x86_64);
  ASSERT_NE(linux, nullptr);
  const auto* fact = kb().cudnn_archive(v, 12, model::Platform::linux_x86_64);
  ASSERT_NE(fact, nullptr);
  EXPECT_EQ(linux->sha256, "7d2c5dd94a0bd0692b7c3234084cbef0a026c7d8e0276ea38d157cb7d0507ede");
  std::uint64_t size = 0;
  for (const auto& a : redistrib.archives)
    if (a.cuda == 12 && a.platform == model::Platform::linux_x86_64) size = a.size;
  ASSERT_NE(size, 0u);
  EXPECT_EQ(linux->size, size);
  EXPECT_EQ(
      linux->url,
      "https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-9.23.0.39_cuda12-archive.tar.xz");
  // --locked then pins it for stage, fetch and the rest
  auto applied = core::apply_lock(m, lock);
  ASSERT_TRUE(applied.ok()) << applied.error().message;
  auto pinned = core::pinned_archive(*applied, model::Platform::linux_x86_64, kb());
  ASSERT_TRUE(pinned.ok()) << pinned.error().message;
  EXPECT_EQ(pinned->expect.sha256, linux->sha256);
  EXPECT_EQ(pinned->expect.size.value(), size);
}

// 9.27.0's windows-arm64 entry holds a cuda13 archive and, beside it, a flat build for CUDA 13.4
// only: the CUDA 13 archive is the one, the other is named; two archives of the same kind for
// one CUDA major cannot be told apart and are refused.
TEST(Redistrib, NvidiasMixedEntryKeepsTheMajorsArchiveAndNamesTheReleaseBuild) {
  auto r = redistrib("redistrib_9.27.0.json");
  EXPECT_EQ(r.archives.size(), 7u);
  EXPECT_TRUE(r.skipped.empty());
  const format::RedistribArchive* arm = nullptr;
  for (const auto& a : r.archives)
    if (a.platform == model::Platform::windows_arm64) arm = &a;
  ASSERT_NE(arm, nullptr);
  EXPECT_EQ(arm->cuda, 13);
  EXPECT_EQ(arm->relative_path, "cudnn/windows-arm64/cudnn-windows-arm64-9.27.0.42_cuda13-archive.zip");
  EXPECT_EQ(arm->sha256, "c34d906b19df16d370d31b78b1ee480a07e6f827fdabfea63acb914528a9b85c");
  ASSERT_EQ(r.release_builds.size(), 1u);
  EXPECT_EQ(r.release_builds[0], "windows-arm64: cudnn/windows-arm64/cudnn-windows-arm64-9.27.0.42_cuda13.4-archive.zip");
  // the same two of one kind: both archives for CUDA 13 is refused
  auto text = util::read_file(testing_support::source_dir() / "tests/data/redistrib/redistrib_9.27.0.json");
  ASSERT_TRUE(text.ok());
  auto doc = nlohmann::json::parse(*text);
  auto entry = doc["cudnn"]["windows-arm64"];
  entry["relative_path"] = "cudnn/windows-x86_64/cudnn-windows-x86_64-9.27.0.42_cuda13-archive.zip";
  entry["cuda13"]["relative_path"] = "cudnn/windows-x86_64/cudnn-windows-x86_64-9.27.0.42_cuda13-archive.zip";
  doc["cudnn"]["windows-x86_64"] = entry;
  auto refused = format::parse_redistrib(doc.dump(), "mixed.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("two archives for CUDA 13"), std::string::npos) << refused.error().message;
  EXPECT_NE(refused.error().message.find("cudnn.windows-x86_64"), std::string::npos) << refused.error().message;
}

// The listing of NVIDIA's redist folder gives the releases it names, once each and ascending;
// anything else in it (other files, names with four parts or too many digits, text) is no release.
TEST(Redistrib, AFolderListingNamesItsReleasesAndNothingElse) {
  auto texts = [](const std::vector<model::Version>& vs) {
    std::vector<std::string> out;
    for (const auto& v : vs) out.push_back(v.text());
    return out;
  };
  EXPECT_EQ(
      texts(format::listed_releases("<a href=\"redistrib_9.27.0.json\">redistrib_9.27.0.json</a> <a href=\"redistrib_9.3.0.json\">x</a>\n"
                                    "<a href=\"redistrib_9.27.0.json\">again</a> redistrib_10.0.0.json")),
      (std::vector<std::string>{"9.3.0", "9.27.0", "10.0.0"}));
  EXPECT_TRUE(format::listed_releases("").empty());
  EXPECT_TRUE(format::listed_releases("<html>Index of /compute/cudnn/redist/ cudnn/ redistrib_.json</html>").empty());
  EXPECT_TRUE(format::listed_releases("redistrib_9.27.json redistrib_1234.0.0.json redistrib_9.27.0.json.sig").size() == 1u);
  EXPECT_TRUE(format::listed_releases(std::string(1 << 20, 'r') + "redistrib_9").empty());  // long and unfinished
  EXPECT_TRUE(format::listed_releases(std::string("redistrib_9.2\0.0.json", 21)).empty());
}

// A build for one CUDA release alone (_cuda13.4, no _cuda13 beside it) is not taken for the CUDA 13
// archive; a file name that is not NVIDIA's for the entry (another release, platform or extension)
// is refused, naming the entry.
TEST(Redistrib, FileNamesMustBeNvidiasForTheEntry) {
  auto text = util::read_file(testing_support::source_dir() / "tests/data/redistrib/redistrib_9.27.0.json");
  ASSERT_TRUE(text.ok());
  const auto base = nlohmann::json::parse(*text);
  auto lone = base;
  lone["cudnn"]["windows-arm64"].erase("cuda13");
  auto r = format::parse_redistrib(lone.dump(), "lone.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (const auto& a : r->archives) EXPECT_NE(a.platform, model::Platform::windows_arm64) << a.relative_path;
  ASSERT_EQ(r->release_builds.size(), 1u);
  EXPECT_NE(r->release_builds[0].find("_cuda13.4-archive.zip"), std::string::npos) << r->release_builds[0];

  auto expect_refused = [&](const std::string& relative, const std::string& what) {
    auto doc = base;
    doc["cudnn"]["linux-x86_64"]["cuda12"]["relative_path"] = relative;
    auto refused = format::parse_redistrib(doc.dump(), "named.json");
    ASSERT_FALSE(refused.ok()) << what;
    EXPECT_EQ(refused.error().code, ErrorCode::invalid) << what;
    EXPECT_NE(refused.error().message.find("cudnn.linux-x86_64.cuda12.relative_path"), std::string::npos) << refused.error().message;
    EXPECT_NE(refused.error().message.find("is not NVIDIA's name for a linux-x86_64 archive of cuDNN 9.27.0"), std::string::npos)
        << refused.error().message;
  };
  expect_refused("cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz", "another release");
  expect_refused("cudnn/linux-x86_64/cudnn-linux-sbsa-9.27.0.42_cuda12-archive.tar.xz", "another platform");
  expect_refused("cudnn/linux-x86_64/cudnn-linux-x86_64-9.27.0.42_cuda12-archive.zip", "another extension");
  expect_refused("cudnn/linux-x86_64/libcudnn.so.9", "not an archive");
}

TEST(Redistrib, AHashTheKnowledgeBaseKnowsWithoutASizeMustStillAgree) {
  std::string text = k_version_only;
  text.replace(text.find("9.1.0.70"), 8, k_sizeless);
  auto r = sized_redistrib();
  for (auto& a : r.archives)
    if (a.platform == model::Platform::windows_x86_64 && a.cuda == 12) a.sha256 = std::string(64, 'e');
  core::LockOptions o;
  o.redistribs = {r};
  auto out = core::make_lock(parse(text), kb(), o);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::mismatch);
  EXPECT_NE(out.error().message.find("windows-x86_64 archive of cuDNN 9.23.0.39"), std::string::npos) << out.error().message;
  EXPECT_NE(out.error().message.find(std::string(64, 'e')), std::string::npos) << out.error().message;
}

TEST(Redistrib, DisagreeingWithTheKnowledgeBaseLocksNothing) {
  auto r = redistrib("redistrib_9.1.0.json");
  for (auto& a : r.archives)
    if (a.platform == model::Platform::linux_x86_64 && a.cuda == 12) a.sha256 = std::string(64, '0');
  core::LockOptions o;
  o.redistribs = {r};
  auto out = core::make_lock(parse(k_version_only), kb(), o);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::mismatch);
  EXPECT_NE(out.error().message.find("disagree"), std::string::npos) << out.error().message;
  EXPECT_NE(out.error().message.find("linux-x86_64"), std::string::npos) << out.error().message;
}

TEST(Redistrib, ForAnotherVersionIsRefusedAtTheManifestLine) {
  core::LockOptions o;
  o.redistribs = {redistrib("redistrib_9.12.0.json")};
  auto out = core::make_lock(parse(k_version_only), kb(), o);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::invalid);
  EXPECT_NE(out.error().message.find("9.12.0.46"), std::string::npos) << out.error().message;
  ASSERT_TRUE(out.error().where);
  EXPECT_EQ(out.error().where->line, 8);
}

TEST(Redistrib, MalformedFilesAreRefusedClearly) {
  auto not_json = format::parse_redistrib("{\n  \"cudnn\": <html>\n", "r.json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.error().code, ErrorCode::parse);
  EXPECT_NE(not_json.error().message.find("r.json:2:"), std::string::npos) << not_json.error().message;
  auto cuda_only = format::parse_redistrib(R"({"release_label": "12.4.1", "cuda_cudart": {"version": "12.4.127"}})", "r.json");
  ASSERT_FALSE(cuda_only.ok());
  EXPECT_NE(cuda_only.error().message.find("no \"cudnn\" component"), std::string::npos) << cuda_only.error().message;
  auto bad_sha = format::parse_redistrib(
      R"({"cudnn": {"version": "9.1.0.70", "linux-x86_64": {"cuda12": {"relative_path": "cudnn/x_cuda12-archive.tar.xz", "sha256": "12", "size": "5"}}}})",
      "r.json");
  ASSERT_FALSE(bad_sha.ok());
  EXPECT_NE(bad_sha.error().message.find("cudnn.linux-x86_64.cuda12.sha256"), std::string::npos) << bad_sha.error().message;
  auto no_variant = format::parse_redistrib(
      R"({"cudnn": {"version": "9.1.0.70", "linux-x86_64": {"relative_path": "cudnn/x-archive.tar.xz", "sha256": ")" +
          std::string(64, 'a') + R"(", "size": "5"}}})",
      "r.json");
  ASSERT_FALSE(no_variant.ok());
  EXPECT_NE(no_variant.error().message.find("is not NVIDIA's name for a linux-x86_64 archive"), std::string::npos)
      << no_variant.error().message;
  // ".." only leads a path (a pool beside the redist tree; where it ends is judged against the
  // manifest's URL): inside one it is refused here
  auto escape = format::parse_redistrib(
      R"({"cudnn": {"version": "9.1.0.70", "linux-x86_64": {"cuda12": {"relative_path": "cudnn/../../x_cuda12-archive.tar.xz", "sha256": ")" +
          std::string(64, 'a') + R"(", "size": "5"}}}})",
      "r.json");
  ASSERT_FALSE(escape.ok());
  EXPECT_NE(escape.error().message.find("relative_path"), std::string::npos) << escape.error().message;
}

TEST(Lock, DriftNamesEveryDifferenceAndItsLine) {
  auto lock = lock_of(parse(k_version_only));
  std::string edited = k_version_only;
  edited.replace(edited.find("torch = \"2.5.1\""), 15, "torch = \"2.5.0\"");
  edited.replace(edited.find("onnxruntime-gpu = \"1.20.1\"\n"), 27, "");
  auto m = parse(edited);
  auto drift = core::lock_drift(m, lock);
  ASSERT_EQ(drift.size(), 2u);
  EXPECT_EQ(drift[0].key, "frameworks.onnxruntime-gpu");
  EXPECT_FALSE(drift[0].manifest);
  EXPECT_EQ(drift[0].lock.value(), "1.20.1");
  EXPECT_EQ(drift[1].key, "frameworks.torch");
  EXPECT_EQ(drift[1].manifest.value(), "2.5.0");
  auto applied = core::apply_lock(m, lock);
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.error().code, ErrorCode::mismatch);
  EXPECT_NE(applied.error().message.find("disagree on 2 value(s)"), std::string::npos) << applied.error().message;
  ASSERT_TRUE(applied.error().where);
  EXPECT_EQ(applied.error().where->line, 11);  // torch = "2.5.0"
  bool named = false;
  for (const auto& h : applied.error().hints)
    named |= h.find("frameworks.torch: the manifest says \"2.5.0\", the lock \"2.5.1\"") != std::string::npos;
  EXPECT_TRUE(named);
  EXPECT_NE(applied.error().hints.back().find("stackpin lock"), std::string::npos) << applied.error().hints.back();
}

TEST(Lock, CommentsAndKeyOrderAreNotDrift) {
  auto lock = lock_of(parse(k_version_only));
  std::string reordered = "# a comment\n" + k_version_only;
  const std::string from = "[cudnn]\nversion = \"9.1.0.70\"\n";
  reordered.replace(reordered.find(from), from.size(), "[cudnn]\ncuda = 12\nversion = \"9.1.0.70\"  # pinned\n");
  EXPECT_TRUE(core::lock_drift(parse(reordered), lock).empty());
}

TEST(Lock, ManifestPinsThatContradictNvidiaAreNotLocked) {
  std::string text = k_version_only +
                     "\n[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"nvidia\"\n"
                     "file = \"cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz\"\nsha256 = \"" +
                     std::string(64, 'b') + "\"\n";
  auto m = parse(text);
  core::LockOptions o;
  auto out = core::make_lock(m, kb(), o);
  ASSERT_FALSE(out.ok());  // `check` already refuses a hash that is not NVIDIA's
  ASSERT_TRUE(out.error().where);
}

TEST(Lock, AppliedLockAddsImpliedArchivesThatVerifyOnlyWhenPresent) {
  auto m = parse(k_version_only);
  auto applied = core::apply_lock(m, lock_of(m));
  ASSERT_TRUE(applied.ok());
  ASSERT_EQ(applied->cudnn->archives.size(), 4u);
  for (const auto& a : applied->cudnn->archives) EXPECT_TRUE(a.implied);
  testing_support::ScratchDir empty;
  std::vector<model::Finding> findings;
  auto v = core::verify_manifest(*applied, empty.path(), std::nullopt, kb());
  findings = testing_support::findings_of(v);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, ErrorCode::not_found);
  EXPECT_NE(v.error().hints.front().find("stackpin fetch"), std::string::npos) << v.error().hints.front();
}

TEST(Lock, ResolveFillsOnlyWhatTheManifestLeavesOut) {
  auto m = parse(k_version_only);
  auto r = core::resolve_archives(m, kb());
  EXPECT_EQ(r.cudnn->archives.size(), 4u);
  auto pinned = core::pinned_archive(r, model::Platform::windows_x86_64, kb());
  ASSERT_TRUE(pinned.ok());
  EXPECT_EQ(pinned->expect.file, "cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip");
  // a release the knowledge base lists without sizes stays as it is
  std::string text = k_version_only;
  text.replace(text.find("9.1.0.70"), 8, k_sizeless);
  EXPECT_TRUE(core::resolve_archives(parse(text), kb()).cudnn->archives.empty());
}

TEST(Lock, DifferencesIgnoreWhoMadeItAndTheSources) {
  auto a = lock_of(parse(k_version_only));
  auto b = a;
  b.generated_by = "stackpin 9.9.9";
  for (auto& x : b.archives) x.source = "somewhere else";
  EXPECT_TRUE(core::lock_differences(a, b).empty());
  b.archives.front().size += 1;
  for (auto& f : b.frameworks)
    if (f.name == "torch") f.requirement = "torch==2.5.1+cu121";
  auto d = core::lock_differences(a, b);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_NE(d[0].find("cudnn.archives.linux-x86_64.size"), std::string::npos) << d[0];
  EXPECT_NE(d[1].find("frameworks.torch.requirement: the lock has \"torch==2.5.1+cu124\", locking now gives \"torch==2.5.1+cu121\""),
            std::string::npos)
      << d[1];
}

TEST(Lock, RelockingKeepsPinsNoOtherSourceKnows) {
  std::string text = k_version_only;
  text.replace(text.find("9.1.0.70"), 8, k_sizeless);
  auto m = parse(text);
  auto first = lock_of(m, {sized_redistrib()});
  core::LockOptions o;
  o.previous = &first;
  auto again = core::make_lock(m, kb(), o);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(core::lock_differences(first, again->lock).empty());
  EXPECT_EQ(again->lock.archives.front().source, first.archives.front().source);
}

}  // namespace

namespace {

TEST(Lock, RecordsEachFrameworksKernelsPerGpu) {
  const std::string m = R"(schema = 1
name = "ort"
[cuda]
version = "12.8.1"
[cudnn]
version = "9.10.2.21"
[frameworks]
onnxruntime-gpu = "1.24.4"
[targets.linux]
layout = "lib64"
[gpus]
arch = ["8.9", "12.0"]
)";
  auto lock = lock_of(parse(m));
  ASSERT_EQ(lock.gpus.size(), 2u);
  EXPECT_EQ(lock.gpus[0].onnxruntime, "compatible 8.6");  // sm_86 cubins on Ada
  EXPECT_EQ(lock.gpus[1].onnxruntime, "ptx 9.0");         // Blackwell: compute_90 PTX only
  EXPECT_TRUE(lock.gpus[0].tensorflow.empty());
  std::string text = format::render_lock(lock);
  EXPECT_NE(text.find("onnxruntime = \"ptx 9.0\""), std::string::npos) << text;
  auto back = format::parse_lock(text, "m.lock");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->gpus[1].onnxruntime, "ptx 9.0");
}

TEST(Lock, RecordsTheGpuArchitecturesTheStackWasCheckedAgainst) {
  auto lock = lock_of(parse(k_version_only + "[gpus]\narch = [\"9.0\"]\nmodels = [\"RTX 4090\", \"GeForce RTX 4090\"]\n"));
  ASSERT_EQ(lock.gpus.size(), 2u);  // one per compute capability: both names are the same GPU
  EXPECT_EQ(lock.gpus[0].cc, "8.9");
  EXPECT_EQ(lock.gpus[0].models, (std::vector<std::string>{"RTX 4090", "GeForce RTX 4090"}));
  EXPECT_EQ(lock.gpus[0].cudnn, "supported");
  EXPECT_FALSE(lock.gpus[0].torch.empty());
  EXPECT_EQ(lock.gpus[0].onnxruntime, "unknown");  // no architecture list for 1.20
  EXPECT_EQ(lock.gpus[1].cc, "9.0");
  EXPECT_EQ(lock.inputs.at("gpus.arch").value, "9.0");
  std::string text = format::render_lock(lock);
  auto back = format::parse_lock(text, "m.lock");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(format::render_lock(*back), text);
  // another GPU in the manifest is drift
  EXPECT_FALSE(core::lock_drift(parse(k_version_only + "[gpus]\narch = [\"8.0\"]\n"), *back).empty());
  // a lock naming something that is not a compute capability is refused where it says so
  std::string hostile = text;
  hostile.replace(hostile.find("compute_capability = \"8.9\""), 26, "compute_capability = \"sm_89\"");
  auto bad = format::parse_lock(hostile, "x.lock");
  ASSERT_FALSE(bad.ok());
  ASSERT_TRUE(bad.error().where.has_value());
  EXPECT_NE(bad.error().where->excerpt.find("sm_89"), std::string::npos) << bad.error().message;
}

}  // namespace

}  // namespace lock_test
