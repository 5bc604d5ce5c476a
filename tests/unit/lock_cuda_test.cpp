// Locking CUDA toolkit components: every component's archive per platform from NVIDIA's manifest
// of the release, the manifest's own pins merged and checked, the TOML round trip, drift, --locked,
// and a release stackpin has no manifest for, pinned through NVIDIA's file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "core/archives/lock.hpp"
#include "format/lock_file.hpp"
#include "format/manifest_reader.hpp"
#include "format/redistrib.hpp"
#include "test_support.hpp"
#include "util/fs.hpp"

namespace lock_cuda_test {

namespace {

namespace fs = std::filesystem;
using util::ErrorCode;

const knowledge::KnowledgeBase& kb() { return knowledge::KnowledgeBase::embedded(); }

const std::string k_toolkit = R"(schema = 1
name = "toolkit"

[cuda]
version = "12.4.1"
components = ["runtime", "cufft"]

[targets.linux]
layout = "lib64"
prefix = "/opt/cuda"
)";

model::Manifest parse(const std::string& text) {
  auto m = format::parse_manifest(text, "m.toml");
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return *m;
}

util::Result<core::LockOutcome> lock(const model::Manifest& m, const core::LockOptions& o = {}) { return core::make_lock(m, kb(), o); }

format::CudaRedistribRelease nvidia_file(const std::string& release) {
  fs::path p = testing_support::source_dir() / "data" / "redist" / "cuda" / ("redistrib_" + release + ".json");
  auto text = util::read_file(p);
  EXPECT_TRUE(text.ok()) << p;
  auto r = format::parse_cuda_redistrib(*text, p.string());
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return *r;
}

// A catalog without the release, as a stackpin older than NVIDIA's release would have.
const knowledge::CudaCatalog& catalog_without_12_4_1() {
  static const auto c = [] {
    fs::path p = testing_support::source_dir() / "data" / "redist" / "cuda" / "redistrib_11.8.0.json";
    static const std::string text = *util::read_file(p);
    return std::move(knowledge::CudaCatalog::from_files({{"redistrib_11.8.0.json", text}})).value();
  }();
  return c;
}

}  // namespace

TEST(LockCuda, PinsEveryComponentsArchiveFromNvidiasManifest) {
  auto out = lock(parse(k_toolkit));
  ASSERT_TRUE(out.ok()) << out.error().message;
  const auto& l = out->lock;
  EXPECT_EQ(l.cuda, "12.4.1");
  EXPECT_TRUE(l.cudnn.empty()) << "a toolkit alone";
  ASSERT_EQ(l.cuda_archives.size(), 4u);  // runtime = cudart, cuBLAS, NVRTC; plus cuFFT
  const auto* cudart = l.cuda_archive_for("cuda_cudart", model::host_linux_platform());
  ASSERT_NE(cudart, nullptr);
  if (model::host_linux_platform() == model::Platform::linux_x86_64) {
    EXPECT_EQ(cudart->version, "12.4.127");
    EXPECT_EQ(cudart->sha256, "0483bff9a36e7a44465db3cd42874f6f70f019297dcf803fbefcbf58d7448c8f");
    EXPECT_EQ(cudart->size, 1099680u);
    EXPECT_EQ(cudart->file, "cuda_cudart-linux-x86_64-12.4.127-archive.tar.xz");
    EXPECT_EQ(cudart->url, "https://developer.download.nvidia.com/compute/cuda/redist/cuda_cudart/linux-x86_64/" + cudart->file);
    EXPECT_EQ(cudart->md5, "5c452d73cb03a42c1711f8655fa2fb8a");
  }
  EXPECT_NE(cudart->source.find("redistrib_12.4.1.json"), std::string::npos) << cudart->source;
  EXPECT_EQ(l.inputs.at("cuda.components").value, "runtime, cufft");
  EXPECT_NE(l.cuda_archive_for("libcufft", model::host_linux_platform()), nullptr);
}

// The releases users run today lock without any file of theirs: every pin is NVIDIA's own, byte
// for byte from the release's manifest (13.2.1: cuda_cccl; 13.4.2: cccl, no driver components).
TEST(LockCuda, TodaysReleasesLockFromTheEmbeddedManifests) {
  for (const std::string release : {"12.9.2", "13.2.1", "13.4.2"}) {
    SCOPED_TRACE(release);
    std::string text = k_toolkit;
    text.replace(text.find("12.4.1"), 6, release);
    const std::string sets = "\"runtime\", \"cufft\"";
    text.replace(text.find(sets), sets.size(), "\"devel\", \"cufft\"");
    auto out = lock(parse(text));
    ASSERT_TRUE(out.ok()) << out.error().message;
    const auto& l = out->lock;
    EXPECT_EQ(l.cuda, release);
    const auto nvidia = nvidia_file(release);
    std::size_t checked = 0;
    for (const auto& c : nvidia.components)
      for (const auto& a : c.archives) {
        if (a.platform != model::host_linux_platform()) continue;
        const auto* pin = l.cuda_archive_for(c.id, *a.platform);
        if (!pin) continue;  // a component the sets do not bring
        EXPECT_EQ(pin->sha256, a.sha256) << c.id;
        EXPECT_EQ(pin->size, a.size) << c.id;
        EXPECT_EQ(pin->md5, a.md5) << c.id;
        EXPECT_EQ(pin->url, "https://developer.download.nvidia.com/compute/cuda/redist/" + a.relative_path) << c.id;
        ++checked;
      }
    EXPECT_GE(checked, 6u);  // devel (cudart, cuBLAS, NVRTC, nvcc, CCCL, ...) and cuFFT
    bool cccl = l.cuda_archive_for("cccl", model::host_linux_platform()) || l.cuda_archive_for("cuda_cccl", model::host_linux_platform());
    EXPECT_TRUE(cccl) << "CCCL under either of NVIDIA's names";
  }
}

TEST(LockCuda, RoundTripsThroughTheLockFile) {
  auto out = lock(parse(k_toolkit));
  ASSERT_TRUE(out.ok());
  std::string text = format::render_lock(out->lock);
  EXPECT_NE(text.find("[[cuda.archives]]\ncomponent = \"cuda_cudart\"\nversion = \"12.4.127\""), std::string::npos) << text;
  auto back = format::parse_lock(text, "m.lock");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(core::lock_differences(out->lock, *back).empty());
  ASSERT_EQ(back->cuda_archives.size(), out->lock.cuda_archives.size());
  EXPECT_EQ(back->cuda_archives[0].component, out->lock.cuda_archives[0].component);
  // a changed component archive is a difference, named by component and platform
  auto changed = *back;
  changed.cuda_archives[0].sha256 = std::string(64, 'f');
  auto d = core::lock_differences(out->lock, changed);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].find("cuda.archives." + out->lock.cuda_archives[0].component + "."), std::string::npos) << d[0];
  // a hostile lock entry is refused at its line
  std::string bad = text;
  bad.replace(bad.find("component = \"cuda_cudart\""), 25, "component = \"../../etc\"");
  auto refused = format::parse_lock(bad, "m.lock");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("is not a CUDA component name"), std::string::npos) << refused.error().message;
  ASSERT_TRUE(refused.error().where);
  std::string twice =
      text + text.substr(text.find("\n[[cuda.archives]]"),
                         text.find("\n[[cuda.archives]]", text.find("[[cuda.archives]]") + 1) - text.find("\n[[cuda.archives]]"));
  auto dup = format::parse_lock(twice, "m.lock");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.error().message.find("pins two archives of"), std::string::npos) << dup.error().message;
}

TEST(LockCuda, LockedManifestsGetEveryPinAndDriftIsRefused) {
  auto m = parse(k_toolkit);
  auto out = lock(m);
  ASSERT_TRUE(out.ok());
  auto applied = core::apply_lock(m, out->lock);
  ASSERT_TRUE(applied.ok()) << applied.error().message;
  ASSERT_EQ(applied->cuda->archives.size(), 4u);
  for (const auto& a : applied->cuda->archives) {
    EXPECT_TRUE(a.implied);
    ASSERT_TRUE(a.component && a.sha256 && a.size);
  }
  std::string edited = k_toolkit;
  edited.replace(edited.find("\"cufft\""), 7, "\"curand\"");
  auto drift = core::apply_lock(parse(edited), out->lock);
  ASSERT_FALSE(drift.ok());
  EXPECT_EQ(drift.error().code, ErrorCode::mismatch);
  ASSERT_TRUE(drift.error().where);
  EXPECT_EQ(drift.error().where->line, 6);
  // without a lock, the catalog fills the same pins in
  auto resolved = core::resolve_archives(m, kb());
  std::map<model::Platform, int> per_platform;
  for (const auto& a : resolved.cuda->archives) ++per_platform[a.platform.value];
  EXPECT_EQ(per_platform[model::host_linux_platform()], 4);
  EXPECT_EQ(per_platform[model::Platform::linux_sbsa], 4) << "every platform the components resolve on, so that --platform can stage it";
  EXPECT_EQ(per_platform[model::Platform::windows_x86_64], 4);
  const auto* x86 = out->lock.cuda_archive_for("cuda_cudart", model::host_linux_platform());
  auto same = std::find_if(resolved.cuda->archives.begin(), resolved.cuda->archives.end(), [&](const model::ArchivePin& a) {
    return a.component->value == "cuda_cudart" && a.platform.value == model::host_linux_platform();
  });
  ASSERT_NE(same, resolved.cuda->archives.end());
  EXPECT_EQ(same->sha256->value, x86->sha256);
}

TEST(LockCuda, TheManifestsPinsWinAndMustAgreeWithNvidia) {
  std::string text = k_toolkit + R"(
[[cuda.archives]]
component = "cuda_cudart"
platform = "linux-x86_64"
sha256 = "0483bff9a36e7a44465db3cd42874f6f70f019297dcf803fbefcbf58d7448c8f"
size = 1099680
)";
  auto ok = lock(parse(text));
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->lock.cuda_archive_for("cuda_cudart", model::Platform::linux_x86_64)->source, "manifest");
  EXPECT_EQ(ok->lock.inputs.at("cuda.archives.cuda_cudart.linux-x86_64.size").value, "1099680");

  std::string wrong = text;
  wrong.replace(wrong.find("size = 1099680"), 14, "size = 1099681");
  auto refused = lock(parse(wrong));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("does not pass `stackpin check`"), std::string::npos) << refused.error().message;
  ASSERT_TRUE(refused.error().where);

  std::string local = k_toolkit + R"(
[[cuda.archives]]
component = "libcufft"
platform = "linux-x86_64"
origin = "local"
file = "cufft-repack.tar.xz"
sha256 = "1111111111111111111111111111111111111111111111111111111111111111"
size = 42
)";
  auto mine = lock(parse(local));
  ASSERT_TRUE(mine.ok()) << mine.error().message;
  const auto* cufft = mine->lock.cuda_archive_for("libcufft", model::Platform::linux_x86_64);
  ASSERT_NE(cufft, nullptr);
  EXPECT_EQ(cufft->origin, model::Origin::local);
  EXPECT_EQ(cufft->file, "cufft-repack.tar.xz");
  EXPECT_EQ(cufft->size, 42u);
}

TEST(LockCuda, AReleaseWithoutAManifestIsPinnedFromNvidiasFile) {
  auto m = parse(k_toolkit);
  core::LockOptions o;
  o.cuda_catalog = &catalog_without_12_4_1();
  auto none = lock(m, o);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::not_found);
  EXPECT_NE(none.error().hints.front().find("redistrib_12.4.1.json"), std::string::npos) << none.error().hints.front();
  ASSERT_TRUE(none.error().where);
  EXPECT_EQ(none.error().where->line, 5);

  o.cuda_redistribs = {nvidia_file("12.4.1")};
  auto with = lock(m, o);
  ASSERT_TRUE(with.ok()) << with.error().message;
  ASSERT_EQ(with->lock.cuda_archives.size(), 4u);
  EXPECT_NE(with->lock.cuda_archives[0].source.find("NVIDIA redistrib_12.4.1.json (released"), std::string::npos)
      << with->lock.cuda_archives[0].source;
  auto mine = lock(m);
  ASSERT_TRUE(mine.ok());
  EXPECT_TRUE(core::lock_differences(mine->lock, with->lock).empty()) << "NVIDIA's file and stackpin's copy give the same pins";

  // re-locking without the file keeps the pins it gave
  core::LockOptions again;
  again.cuda_catalog = &catalog_without_12_4_1();
  again.previous = &with->lock;
  auto kept = lock(m, again);
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  EXPECT_TRUE(core::lock_differences(with->lock, kept->lock).empty());

  // a file of another release is refused at [cuda] version
  core::LockOptions other;
  other.cuda_catalog = &catalog_without_12_4_1();
  other.cuda_redistribs = {nvidia_file("12.4.0")};
  auto refused = lock(m, other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::invalid);
  EXPECT_NE(refused.error().message.find("for CUDA 12.4.0, but the manifest pins 12.4.1"), std::string::npos) << refused.error().message;

  // and a file that disagrees with stackpin's copy locks nothing
  core::LockOptions tampered;
  tampered.cuda_redistribs = {nvidia_file("12.4.1")};
  tampered.cuda_redistribs[0].components[0].archives[0].sha256 = std::string(64, '0');
  auto mismatch = lock(m, tampered);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().code, ErrorCode::mismatch);
  EXPECT_NE(mismatch.error().message.find("disagree"), std::string::npos) << mismatch.error().message;
}

TEST(LockCuda, ComponentsNvidiaDoesNotShipForATargetAreRefused) {
  std::string text = k_toolkit;
  text.replace(text.find("\"cufft\""), 7, "\"cuda_gdb\"");
  text += "\n[targets.windows]\nlayout = \"isolated\"\nprefix = 'C:\\tools\\cuda'\n";
  auto out = lock(parse(text));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("cuda_gdb is not shipped for windows-x86_64"), std::string::npos) << out.error().message;
  ASSERT_TRUE(out.error().where);
  EXPECT_EQ(out.error().where->line, 6);
}

TEST(LockCuda, TellsACudaRedistribFromACudnnOne) {
  auto cuda = util::read_file(testing_support::source_dir() / "data/redist/cuda/redistrib_12.4.1.json");
  auto cudnn = util::read_file(testing_support::source_dir() / "data/redist/cudnn/redistrib_9.1.0.json");
  ASSERT_TRUE(cuda.ok() && cudnn.ok());
  EXPECT_EQ(format::redistrib_product(*cuda), format::RedistribProduct::cuda);
  EXPECT_EQ(format::redistrib_product(*cudnn), format::RedistribProduct::cudnn);
  EXPECT_EQ(format::redistrib_product("<html>"), format::RedistribProduct::unknown);
  EXPECT_EQ(format::redistrib_product("{\"release_date\": \"2024-01-01\"}"), format::RedistribProduct::unknown);
}

}  // namespace lock_cuda_test
