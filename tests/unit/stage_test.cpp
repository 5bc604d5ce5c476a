// core::stage / unstage / status / verify_manifest / verify_file, in process, on cuDNN fixtures in
// NVIDIA's layouts (8.9.7.29 and 9.1.0.70 Linux, 8.8.0.121 and 9.19.0.56 Windows) pinned by
// origin = "local" manifests: the layouts, cuda-merge with backups and stale DLLs, the receipt,
// no-op restaging, replacing a staging, --dry-run, every refusal leaving DEST untouched, drift,
// and a read-only or full DEST (a read-only bind mount and a small tmpfs; tests run as root).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/archives/verify.hpp"
#include "core/provision/stage.hpp"
#include "fixtures.hpp"
#include "format/manifest_reader.hpp"
#include "format/receipt.hpp"
#include "gen/build_config.hpp"
#include "knowledge/knowledge_base.hpp"
#include "probe/files_in_use.hpp"
#include "test_support.hpp"
#include "tree.hpp"
#include "util/env.hpp"

namespace stage_test {

namespace {
namespace fs = std::filesystem;
using fixtures::Entry;
using fixtures::Kind;
using testing_support::ScratchDir;
using testing_support::Tree;
using util::ErrorCode;

const knowledge::KnowledgeBase& kb() { return knowledge::KnowledgeBase::embedded(); }

// stackpin.exe refuses the Linux layout (LinuxLayoutIsRefusedByTheWindowsBuild below): the tests
// of that layout run in the Linux build only.
#ifdef _WIN32
#define SKIP_LINUX_LAYOUT_ON_WINDOWS() GTEST_SKIP() << "the Linux layout is staged by the Linux build only"
#else
#define SKIP_LINUX_LAYOUT_ON_WINDOWS() static_cast<void>(0)
#endif

// ---- fixtures --------------------------------------------------------------------------------------

struct Spec {
  std::string version;
  int cuda;
  std::string cuda_version;
  bool windows;
};
const Spec k_v8_linux{"8.9.7.29", 12, "12.2.2", false};
const Spec k_v9_linux{"9.1.0.70", 12, "12.4.1", false};
const Spec k_v8_windows{"8.8.0.121", 11, "11.8.0", true};
const Spec k_v9_windows{"9.19.0.56", 13, "13.0.2", true};

std::string platform_of(const Spec& s) { return s.windows ? "windows-x86_64" : "linux-x86_64"; }
std::string top_of(const Spec& s) { return "cudnn-" + platform_of(s) + "-" + s.version + "_cuda" + std::to_string(s.cuda) + "-archive"; }
std::vector<Entry> entries_of(const Spec& s) {
  return s.windows ? fixtures::cudnn_windows_entries(s.version, s.cuda) : fixtures::cudnn_linux_entries(s.version, s.cuda);
}

// The archives are built once per test program, then copied into each test's own folder.
const fixtures::Info& cached(const Spec& s) {
  static ScratchDir dir;
  static std::map<std::string, fixtures::Info> made;
  auto key = platform_of(s) + s.version;
  auto it = made.find(key);
  if (it != made.end()) return it->second;
  auto info =
      s.windows ? fixtures::make_cudnn_windows(dir.path(), s.version, s.cuda) : fixtures::make_cudnn_linux(dir.path(), s.version, s.cuda);
  return made.emplace(key, info).first->second;
}

std::string targets_text(const Spec& s, const std::string& windows_layout = "isolated") {
  if (!s.windows) return "[targets.linux]\nlayout = \"lib64\"\nprefix = \"/usr/local/cudnn-" + s.version + "\"\n";
  if (windows_layout == "cuda-merge")
    return "[targets.windows]\nlayout = \"cuda-merge\"\ncuda_path = 'C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v" +
           s.cuda_version.substr(0, s.cuda_version.rfind('.')) + "'\n";
  return "[targets.windows]\nlayout = \"isolated\"\nprefix = 'C:\\tools\\cudnn\\v" + s.version + "'\n";
}

model::Manifest parse(const std::string& text) {
  auto m = format::parse_manifest(text, "fixture.toml");
  if (!m) throw std::runtime_error("fixture manifest does not parse: " + m.error().message + "\n" + text);
  return std::move(m).value();
}

// One test's world: archives/ (a copy of the cached archive), dest/ (not created), a manifest.
struct World {
  ScratchDir dir;
  Spec spec;
  fixtures::Info info;
  model::Manifest manifest;

  explicit World(const Spec& s, const std::string& windows_layout = "isolated") : spec(s) {
    fs::create_directories(archives());
    const auto& c = cached(s);
    fs::copy_file(c.path, archives() / c.path.filename());
    info = fixtures::info(archives() / c.path.filename());
    manifest =
        parse(fixtures::local_manifest(s.version, s.cuda, s.cuda_version, {{platform_of(s), info}}, targets_text(s, windows_layout)));
  }
  // An archive made of other entries, pinned under NVIDIA's name (replacing the copy).
  World(const Spec& s, const std::vector<Entry>& entries, const std::string& windows_layout = "isolated") : spec(s) {
    fs::create_directories(archives());
    fs::path p = archives() / fixtures::cudnn_archive_name(platform_of(s), s.version, s.cuda);
    fixtures::write_archive(p, s.windows ? fixtures::Format::zip : fixtures::Format::tar_xz, entries);
    info = fixtures::info(p);
    manifest =
        parse(fixtures::local_manifest(s.version, s.cuda, s.cuda_version, {{platform_of(s), info}}, targets_text(s, windows_layout)));
  }
  fs::path archives() const { return dir.path() / "archives"; }
  fs::path dest() const { return dir.path() / "dest"; }
  core::StageOptions options() const {
    core::StageOptions o;
    o.archives_dir = archives();
    o.target = spec.windows ? model::Target::windows : model::Target::linux;
    o.dest = dest();
    o.stackpin_version = "test";
    o.manifest_sha256 = std::string(64, '0');
    return o;
  }
  util::Result<model::StageReport> stage() const { return core::stage(manifest, kb(), options()); }
  util::Result<model::StageReport> stage(const core::StageOptions& o) const { return core::stage(manifest, kb(), o); }
  void repin(const std::string& sha256, std::uint64_t size) {
    fixtures::Info i = info;
    i.sha256 = sha256;
    i.size = size;
    manifest = parse(fixtures::local_manifest(spec.version, spec.cuda, spec.cuda_version, {{platform_of(spec), i}}, targets_text(spec)));
  }
};

std::string sha(const std::string& s) { return crypto::to_hex(crypto::sha256_of(s)); }

// Files and links of a tree without directories and permission bits: "path" -> "sha" / "-> target".
std::map<std::string, std::string> contents(const Tree& t) {
  std::map<std::string, std::string> out;
  for (const auto& [path, what] : t) {
    if (what.rfind("dir ", 0) == 0) continue;
    if (what.rfind("file ", 0) == 0)
      out[path] = what.substr(what.rfind(' ') + 1);
    else
      out[path] = what.substr(std::string("symlink ").size());
  }
  return out;
}

// What the archive's files become under a layout: `map` turns the path below the top directory
// into the DEST path ("" drops it).
template <class F>
std::map<std::string, std::string> expected(const Spec& s, F map) {
  std::map<std::string, std::string> out;
  std::string top = top_of(s) + "/";
  for (const auto& e : entries_of(s)) {
    if (e.kind == Kind::dir) continue;
    std::string to = map(e.path.substr(top.size()));
    if (to.empty()) continue;
    out[to] = e.kind == Kind::symlink ? "-> " + e.link : sha(e.data);
  }
  return out;
}

std::string show(const std::map<std::string, std::string>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += "  " + k + " " + v + "\n";
  return s;
}

// The CMake package configuration and pkg-config file stage writes into a tree of `s` ("path" ->
// sha), rendered here from what the fixture's layout is (not from the receipt, as stage does).
gen::BuildConfig build_config_of(const Spec& s) {
  gen::BuildConfig c;
  c.name = "fixture";
  c.version = s.version;
  c.cudnn_major = std::stoi(s.version.substr(0, s.version.find('.')));
  c.cuda_major = s.cuda;
  c.platform = s.windows ? model::Platform::windows_x86_64 : model::Platform::linux_x86_64;
  for (const auto& stem : fixtures::cudnn_linux_stems(c.cudnn_major)) {
    c.libraries.push_back(stem.substr(3));
    if (!s.windows && (c.cudnn_major >= 9 || stem != "libcudnn")) c.static_libraries.push_back(stem.substr(3));
  }
  if (s.windows) {
    c.cmake_dir = "cmake";
    c.lib_dir = "lib/x64";
    c.bin_dir = s.version == "9.19.0.56" || s.cuda >= 13 ? "bin/x64" : "bin";
  } else {
    c.cmake_dir = "share/cmake/CUDNN";
    c.lib_dir = "lib64";
    c.pkgconfig_dir = "lib64/pkgconfig";
  }
  return c;
}
std::map<std::string, std::string> build_files(const Spec& s) {
  auto c = build_config_of(s);
  std::map<std::string, std::string> out{{c.cmake_dir + "/CUDNNConfig.cmake", sha(gen::render_cmake_config(c))},
                                         {c.cmake_dir + "/CUDNNConfigVersion.cmake", sha(gen::render_cmake_config_version(c))}};
  if (!s.windows) out[c.pkgconfig_dir + "/cudnn.pc"] = sha(*gen::render_pkg_config(c));
  return out;
}
template <class M>
M with_build_files(M files, const Spec& s) {
  for (const auto& [path, hash] : build_files(s)) files[path] = hash;
  return files;
}

void expect_error(const util::Error& e, ErrorCode code, const std::vector<std::string>& words) {
  EXPECT_EQ(std::string(util::to_string(e.code)), util::to_string(code)) << e.message;
  for (const auto& w : words) EXPECT_NE(e.message.find(w), std::string::npos) << "\"" << w << "\" not in: " << e.message;
}

// A fake CUDA toolkit root on the Windows machine: toolkit files that cuDNN must not touch, files
// of an earlier cuDNN 8 that it overwrites, and a cuDNN 7 DLL (the leftover-DLL trap).
void make_fake_cuda_root(const fs::path& root, const std::string& dll_dir) {
  testing_support::write_file(root / dll_dir / "cudart64_110.dll", "MZ toolkit runtime");
  testing_support::write_file(root / dll_dir / "cudnn64_8.dll", "MZ an older cuDNN 8");
  testing_support::write_file(root / dll_dir / "cudnn64_7.dll", "MZ cuDNN 7 left behind");
  testing_support::write_file(root / "include" / "cuda.h", "/* toolkit */\n");
  testing_support::write_file(root / "include" / "cudnn.h", "/* an older cuDNN */\n");
  testing_support::write_file(root / "lib" / "x64" / "cudart.lib", "!<arch>\ntoolkit");
  testing_support::write_file(root / "lib" / "x64" / "cudnn.lib", "!<arch>\nolder cuDNN");
  testing_support::write_file(root / "LICENSE-cudnn.txt", "an older cuDNN's license\n");
}

// ---- Linux -----------------------------------------------------------------------------------------

void expect_linux_layout(const World& w) {
  auto got = contents(testing_support::snapshot(w.dest(), {".stackpin"}));
  auto want = with_build_files(
      expected(w.spec, [](const std::string& rel) { return rel.rfind("lib/", 0) == 0 ? "lib64/" + rel.substr(4) : rel; }), w.spec);
  EXPECT_EQ(got, want) << "got:\n" << show(got) << "want:\n" << show(want);
  // the so-name chain is intact and resolves to the real library
  auto maj = w.spec.version.substr(0, 1);
  auto full = w.spec.version.substr(0, w.spec.version.rfind('.'));
  auto lib = w.dest() / "lib64";
  EXPECT_EQ(fs::read_symlink(lib / "libcudnn.so").string(), "libcudnn.so." + maj);
  EXPECT_EQ(fs::read_symlink(lib / ("libcudnn.so." + maj)).string(), "libcudnn.so." + full);
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(lib / ("libcudnn.so." + full))));
  EXPECT_EQ(fs::canonical(lib / "libcudnn.so"), fs::canonical(lib / ("libcudnn.so." + full)));
  EXPECT_EQ(static_cast<unsigned>(fs::status(lib / ("libcudnn.so." + full)).permissions()), 0755u);
  EXPECT_EQ(static_cast<unsigned>(fs::status(w.dest() / "include" / "cudnn.h").permissions()), 0644u);
  EXPECT_FALSE(fs::exists(w.dest() / "lib"));
}

TEST(StageLinux, Lib64LayoutKeepsTheSoNameChain) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  for (const auto& spec : {k_v8_linux, k_v9_linux}) {
    SCOPED_TRACE(spec.version);
    World w(spec);
    auto r = w.stage();
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_FALSE(r->no_op);
    EXPECT_EQ(r->target, "linux");
    EXPECT_EQ(r->layout, "lib64");
    EXPECT_EQ(r->platform, "linux-x86_64");
    EXPECT_EQ(r->prefix, "/usr/local/cudnn-" + spec.version);
    EXPECT_EQ(r->dest, w.dest().string());
    EXPECT_EQ(r->archive_sha256, w.info.sha256);
    EXPECT_EQ(r->archive_size, w.info.size);
    EXPECT_EQ(r->archive_path, (w.archives() / w.info.path.filename()).string());
    auto want = expected(spec, [](const std::string& rel) { return rel; });
    EXPECT_EQ(r->files, want.size());
    EXPECT_TRUE(r->stale.empty());
    expect_linux_layout(w);
    // .stackpin holds the receipt, the lock, the activation script and the record of the build
    // files, nothing else
    auto state = testing_support::snapshot(w.dest() / ".stackpin");
    EXPECT_EQ(state.size(), 4u) << testing_support::diff({}, state);
    EXPECT_TRUE(state.count("receipt.json"));
    EXPECT_TRUE(state.count("lock"));
    ASSERT_TRUE(state.count("activate.sh"));
    // each file with the SHA-256 of what was written: unstage removes it only while it is that
    auto recorded = [&](const std::string& rel) { return "file\t" + rel + "\t" + testing_support::sha256_file(w.dest() / rel) + "\n"; };
    EXPECT_EQ(testing_support::read_text(w.dest() / ".stackpin" / "build-files"),
              "dir\tshare\ndir\tshare/cmake\ndir\tshare/cmake/CUDNN\ndir\tlib64/pkgconfig\n" +
                  recorded("share/cmake/CUDNN/CUDNNConfig.cmake") + recorded("share/cmake/CUDNN/CUDNNConfigVersion.cmake") +
                  recorded("lib64/pkgconfig/cudnn.pc"));
    std::vector<std::string> build;
    for (const auto& [path, hash] : build_files(spec)) build.push_back((w.dest() / path).string());
    std::sort(build.begin(), build.end());
    auto reported = r->build_files;
    std::sort(reported.begin(), reported.end());
    EXPECT_EQ(reported, build);
    EXPECT_EQ(r->build_files_note, "");
    // written for where the tree lives on the target machine, the manifest's prefix
    EXPECT_NE(testing_support::read_text(w.dest() / ".stackpin" / "activate.sh")
                  .find("stackpin_cudnn_root='/usr/local/cudnn-" + spec.version + "'"),
              std::string::npos)
        << testing_support::read_text(w.dest() / ".stackpin" / "activate.sh");
    ASSERT_EQ(r->activation.size(), 1u);
  }
}

TEST(StageLinux, DestDefaultsToTheManifestPrefix) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  w.manifest.linux->prefix->value = (w.dir.path() / "prefix").string();
  auto o = w.options();
  o.dest.reset();
  auto r = w.stage(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->dest, (w.dir.path() / "prefix").string());
  EXPECT_TRUE(fs::is_symlink(w.dir.path() / "prefix" / "lib64" / "libcudnn.so"));
}

// ---- Windows ---------------------------------------------------------------------------------------

TEST(StageWindows, IsolatedLayoutKeepsNvidiasDirectories) {
  for (const auto& spec : {k_v8_windows, k_v9_windows}) {
    SCOPED_TRACE(spec.version);
    World w(spec);
    auto r = w.stage();
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->target, "windows");
    EXPECT_EQ(r->layout, "isolated");
    EXPECT_EQ(r->platform, "windows-x86_64");
    EXPECT_EQ(r->prefix, "C:\\tools\\cudnn\\v" + spec.version);
    auto got = contents(testing_support::snapshot(w.dest(), {".stackpin"}));
    auto want = with_build_files(expected(spec, [](const std::string& rel) { return rel; }), spec);
    EXPECT_EQ(got, want) << "got:\n" << show(got);
    EXPECT_EQ(r->build_files.size(), 2u);  // the CMake files only: no pkg-config file for Windows
    std::string maj = spec.version.substr(0, 1);
    std::string dlls = spec.version == "9.19.0.56" ? "bin/x64/" : "bin/";
    EXPECT_TRUE(fs::is_regular_file(w.dest() / dlls / ("cudnn64_" + maj + ".dll")));
    EXPECT_TRUE(fs::is_regular_file(w.dest() / "lib" / "x64" / "cudnn.lib"));
    EXPECT_TRUE(fs::is_regular_file(w.dest() / "lib" / "x64" / ("cudnn64_" + maj + ".lib")));
    EXPECT_TRUE(fs::is_regular_file(w.dest() / "include" / "cudnn_version.h"));
    EXPECT_TRUE(fs::is_regular_file(w.dest() / "LICENSE"));
  }
}

// A staged file another program holds open (here this test, through the C runtime, which opens
// without sharing delete): on Windows, unstage and a stage of another build are refused before
// anything changes, naming the file; on Linux an open file never stops a rename or unlink.
TEST(StageWindows, AFileHeldOpenStopsUnstageOnWindowsOnly) {
  World w(k_v8_windows);
  ASSERT_TRUE(w.stage().ok());
  World v9(k_v9_windows);
  auto o = v9.options();
  o.dest = w.dest();
  auto before = testing_support::snapshot(w.dest(), {});
  const fs::path held = w.dest() / "include" / "cudnn_version.h";
  {
    std::ifstream hold(held, std::ios::binary);
    ASSERT_TRUE(hold.good());
    auto held_files = probe::files_in_use({held, w.dest() / "LICENSE", w.dest() / "no-such-file.dll"});
    model::UnstageReport ur;
    auto u = core::unstage({w.dest(), false, {}, {}}, ur);
#ifdef _WIN32
    ASSERT_EQ(held_files.size(), 1u);
    EXPECT_EQ(held_files[0].path, held);
    ASSERT_FALSE(u.ok());
    expect_error(u.error(), ErrorCode::conflict, {"in use", "include\\cudnn_version.h", "nothing was changed"});
    EXPECT_FALSE(u.error().hints.empty());
    auto r = v9.stage(o);
    ASSERT_FALSE(r.ok());
    expect_error(r.error(), ErrorCode::conflict, {"cannot stage into", "include\\cudnn_version.h"});
    EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(w.dest(), {})), "");
#else
    EXPECT_TRUE(held_files.empty());
    EXPECT_TRUE(u.ok()) << u.error().message;
#endif
  }
  EXPECT_TRUE(probe::files_in_use({held}).empty());
}

TEST(StageWindows, WindowsTargetNeedsDest) {
  World w(k_v8_windows);
  auto o = w.options();
  o.dest.reset();
  auto r = w.stage(o);
  ASSERT_FALSE(r.ok());
  expect_error(r.error(), ErrorCode::usage, {"--dest is required for --target windows"});
  o = w.options();
  o.platform = model::Platform::linux_x86_64;
  auto p = w.stage(o);
  ASSERT_FALSE(p.ok());
  expect_error(p.error(), ErrorCode::usage, {"--target windows stages a Windows archive (windows-x86_64 or windows-arm64)"});
}

TEST(StageCudaMerge, ReplacesKeepsBackupsAndReportsStaleDlls) {
  World w(k_v8_windows, "cuda-merge");
  make_fake_cuda_root(w.dest(), "bin");
  auto original = testing_support::snapshot(w.dest());
  auto r = w.stage();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->layout, "cuda-merge");
  EXPECT_EQ(r->prefix, "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8");
  EXPECT_EQ(r->stale, std::vector<std::string>{"bin/cudnn64_7.dll"});
  EXPECT_TRUE(r->removed_stale.empty());
  std::set<std::string> replaced;
  for (const auto& f : r->plan)
    if (f.replaces) replaced.insert(f.to);
  EXPECT_EQ(replaced, (std::set<std::string>{"bin/cudnn64_8.dll", "include/cudnn.h", "lib/x64/cudnn.lib", "LICENSE-cudnn.txt"}));

  // the files land in the toolkit's directories; the toolkit's own files are untouched
  auto got = contents(testing_support::snapshot(w.dest(), {".stackpin"}));
  auto want = expected(w.spec, [](const std::string& rel) {
    if (rel == "LICENSE") return std::string("LICENSE-cudnn.txt");
    return rel;  // bin/ -> bin/, lib/x64/ -> lib/x64/, include/ -> include/ (CUDA 11.8)
  });
  for (const auto& keep : {"bin/cudart64_110.dll", "bin/cudnn64_7.dll", "include/cuda.h", "lib/x64/cudart.lib"}) {
    auto o = contents(original).at(keep);
    want[keep] = o;
  }
  want = with_build_files(want, w.spec);  // cmake/ in the CUDA root
  EXPECT_EQ(got, want) << "got:\n" << show(got) << "want:\n" << show(want);

  // what was overwritten is kept, byte for byte, in .stackpin/backup/
  for (const auto& rel : replaced) EXPECT_EQ(testing_support::snapshot(w.dest() / ".stackpin" / "backup").at(rel), original.at(rel)) << rel;
  EXPECT_TRUE(fs::exists(w.dest() / "bin" / "cudnn64_7.dll"));  // reported, not removed

  // --remove-stale on the same staging moves the stale DLL aside (not an "already staged" no-op)
  auto o = w.options();
  o.remove_stale = true;
  auto again = w.stage(o);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_FALSE(again->no_op);
  EXPECT_EQ(again->removed_stale, std::vector<std::string>{"bin/cudnn64_7.dll"});
  EXPECT_FALSE(fs::exists(w.dest() / "bin" / "cudnn64_7.dll"));
  EXPECT_EQ(testing_support::snapshot(w.dest() / ".stackpin" / "backup").at("bin/cudnn64_7.dll"), original.at("bin/cudnn64_7.dll"));
  for (const auto& rel : replaced) EXPECT_EQ(testing_support::snapshot(w.dest() / ".stackpin" / "backup").at(rel), original.at(rel)) << rel;

  // unstage restores the original tree exactly, stale DLL included, and leaves no .stackpin
  model::UnstageReport ur;
  auto u = core::unstage({w.dest(), false, {}, {}}, ur);
  ASSERT_TRUE(u.ok()) << u.error().message;
  EXPECT_EQ(ur.restored, replaced.size() + 1);
  EXPECT_EQ(testing_support::diff(original, testing_support::snapshot(w.dest())), "");
}

TEST(StageCudaMerge, RemoveStaleOnTheFirstRunAndCuda13KeepsDllsInBinX64) {
  World w(k_v9_windows, "cuda-merge");
  make_fake_cuda_root(w.dest(), "bin/x64");
  testing_support::write_file(w.dest() / "bin" / "x64" / "cudnn64_9.dll", "MZ an older cuDNN 9");
  testing_support::write_file(w.dest() / "bin" / "x64" / "cudnn_ops64_9.dll", "MZ an older cuDNN 9");
  auto original = testing_support::snapshot(w.dest());
  auto o = w.options();
  o.remove_stale = true;
  auto r = w.stage(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stale, (std::vector<std::string>{"bin/x64/cudnn64_7.dll", "bin/x64/cudnn64_8.dll"}));
  EXPECT_EQ(r->removed_stale, r->stale);
  for (const auto& dll : fixtures::cudnn_dlls(9)) EXPECT_TRUE(fs::is_regular_file(w.dest() / "bin" / "x64" / dll)) << dll;
  EXPECT_FALSE(fs::exists(w.dest() / "bin" / "x64" / "cudnn64_8.dll"));
  EXPECT_TRUE(fs::is_regular_file(w.dest() / "lib" / "x64" / "cudnn_graph64_9.lib"));
  model::UnstageReport ur;
  ASSERT_TRUE(core::unstage({w.dest(), false, {}, {}}, ur).ok());
  EXPECT_EQ(testing_support::diff(original, testing_support::snapshot(w.dest())), "");
}

// ---- the build-system files ---------------------------------------------------------------------------

TEST(StageBuildFiles, RestageRewritesMissingOrStaleOnesAndNothingElse) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  ASSERT_TRUE(w.stage().ok());
  auto before = testing_support::snapshot(w.dest());
  fs::remove(w.dest() / "lib64" / "pkgconfig" / "cudnn.pc");
  // edited, but still carrying stackpin's marker: stackpin's own file, rewritten
  testing_support::write_file(w.dest() / "share" / "cmake" / "CUDNN" / "CUDNNConfig.cmake",
                              std::string(gen::k_generated_marker) + ": edited\n");
  fs::remove(w.archives() / w.info.path.filename());  // a no-op restage needs no archive
  auto r = w.stage();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->no_op);
  EXPECT_EQ(r->build_files.size(), 3u);
  EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(w.dest())), "");
  // rewritten without the marker: nothing proves stackpin wrote it any more, so it is kept
  testing_support::write_file(w.dest() / "share" / "cmake" / "CUDNN" / "CUDNNConfig.cmake", "# mine now\n");
  auto kept = w.stage();
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  EXPECT_EQ(testing_support::read_text(w.dest() / "share" / "cmake" / "CUDNN" / "CUDNNConfig.cmake"), "# mine now\n");
  EXPECT_NE(kept->build_files_note.find("CUDNNConfig.cmake"), std::string::npos) << kept->build_files_note;
}

TEST(StageBuildFiles, AnotherProgramsConfigInTheCudaRootIsKeptAndUnstageRestoresAll) {
  World w(k_v8_windows, "cuda-merge");
  make_fake_cuda_root(w.dest(), "bin");
  testing_support::write_file(w.dest() / "cmake" / "CUDNNConfig.cmake", "# someone else's\n");
  auto original = testing_support::snapshot(w.dest());
  auto r = w.stage();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->build_files.empty());
  EXPECT_NE(r->build_files_note.find("another program's file"), std::string::npos) << r->build_files_note;
  EXPECT_NE(r->build_files_note.find((w.dest() / "cmake" / "CUDNNConfig.cmake").string()), std::string::npos) << r->build_files_note;
  EXPECT_EQ(testing_support::read_text(w.dest() / "cmake" / "CUDNNConfig.cmake"), "# someone else's\n");
  EXPECT_FALSE(fs::exists(w.dest() / "cmake" / "CUDNNConfigVersion.cmake"));  // not beside another program's config
  auto again = w.stage();
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->no_op);
  EXPECT_EQ(again->build_files_note, r->build_files_note);
  model::UnstageReport ur;
  ASSERT_TRUE(core::unstage({w.dest(), false, {}, {}}, ur).ok());
  EXPECT_EQ(testing_support::diff(original, testing_support::snapshot(w.dest())), "");
}

TEST(StageBuildFiles, ASymlinkedFolderIsNotWrittenThrough) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  ScratchDir outside;
  fs::create_directories(w.dest());
  fs::create_directory_symlink(outside.path(), w.dest() / "share");
  auto r = w.stage();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(testing_support::snapshot(outside.path()), Tree{});
  EXPECT_EQ(r->build_files, std::vector<std::string>{(w.dest() / "lib64" / "pkgconfig" / "cudnn.pc").string()});
  EXPECT_NE(r->build_files_note.find("symlinked folder"), std::string::npos) << r->build_files_note;
  model::UnstageReport ur;
  ASSERT_TRUE(core::unstage({w.dest(), false, {}, {}}, ur).ok());
  EXPECT_TRUE(fs::is_symlink(w.dest() / "share"));
  EXPECT_EQ(testing_support::snapshot(w.dest()).size(), 1u);
}

TEST(StageBuildFiles, UnstageKeepsFoldersThatWereThereBefore) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  testing_support::write_file(w.dest() / "share" / "doc" / "notes.txt", "mine\n");
  fs::create_directories(w.dest() / "share" / "cmake");  // empty, but not stackpin's
  auto original = testing_support::snapshot(w.dest());
  ASSERT_TRUE(w.stage().ok());
  EXPECT_TRUE(fs::is_regular_file(w.dest() / "share" / "cmake" / "CUDNN" / "CUDNNConfig.cmake"));
  model::UnstageReport ur;
  ASSERT_TRUE(core::unstage({w.dest(), false, {}, {}}, ur).ok());
  EXPECT_EQ(testing_support::diff(original, testing_support::snapshot(w.dest())), "");
}

TEST(StageBuildFiles, ReplacingAStagingOfAnotherMajorRewritesThem) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World v9(k_v9_linux);
  ASSERT_TRUE(v9.stage().ok());
  World v8(k_v8_linux);
  auto o = v8.options();
  o.dest = v9.dest();
  auto r = v8.stage(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto config = testing_support::read_text(v9.dest() / "share" / "cmake" / "CUDNN" / "CUDNNConfig.cmake");
  EXPECT_NE(config.find("IMPORTED_LOCATION \"${_cudnn_lib_dir}/libcudnn_ops_infer.so.8\""), std::string::npos) << config;
  EXPECT_EQ(config.find(".so.9"), std::string::npos) << config;
}

// ---- the receipt -------------------------------------------------------------------------------------

TEST(StageReceipt, RecordsTheArchiveAndEveryFile) {
  World w(k_v8_windows, "cuda-merge");
  make_fake_cuda_root(w.dest(), "bin");
  auto r = w.stage();
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto text = testing_support::read_text(w.dest() / ".stackpin" / "receipt.json");
  auto rc = format::parse_receipt(text, "receipt.json");
  ASSERT_TRUE(rc.ok()) << rc.error().message;
  EXPECT_EQ(rc->schema, 1);
  EXPECT_EQ(rc->stackpin_version, "test");
  EXPECT_EQ(rc->manifest_name, "fixture");
  EXPECT_EQ(rc->manifest_path, "fixture.toml");
  EXPECT_EQ(rc->manifest_sha256, std::string(64, '0'));
  EXPECT_EQ(rc->cudnn_version, "8.8.0.121");
  EXPECT_EQ(rc->cudnn_cuda_major, 11);
  EXPECT_EQ(rc->platform, "windows-x86_64");
  EXPECT_EQ(rc->target, "windows");
  EXPECT_EQ(rc->layout, "cuda-merge");
  EXPECT_EQ(rc->dest, w.dest().string());
  EXPECT_EQ(rc->prefix, r->prefix);
  EXPECT_EQ(rc->archive_file, w.info.path.filename().string());
  EXPECT_EQ(rc->archive_sha256, w.info.sha256);
  EXPECT_EQ(rc->archive_size, w.info.size);
  auto want = expected(w.spec, [](const std::string& rel) { return rel == "LICENSE" ? std::string("LICENSE-cudnn.txt") : rel; });
  ASSERT_EQ(rc->files.size(), want.size());
  for (const auto& f : rc->files) {
    SCOPED_TRACE(f.path);
    EXPECT_EQ(f.type, "file");
    EXPECT_EQ(f.sha256, want.at(f.path));
    EXPECT_EQ(f.sha256, testing_support::sha256_file(w.dest() / f.path));
    EXPECT_EQ(f.size, fs::file_size(w.dest() / f.path));
    EXPECT_EQ(f.from, f.path == "LICENSE-cudnn.txt" ? "LICENSE" : f.path);
    bool replaced =
        f.path == "bin/cudnn64_8.dll" || f.path == "include/cudnn.h" || f.path == "lib/x64/cudnn.lib" || f.path == "LICENSE-cudnn.txt";
    EXPECT_EQ(f.backup, replaced ? "backup/" + f.path : "") << f.backup;
    EXPECT_NE(f.mtime_ns, 0);
  }
  EXPECT_TRUE(rc->created_dirs.empty());  // the CUDA root had bin, include and lib/x64 already

  // Linux: symlinks with their targets, modes, created directories
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World l(k_v9_linux);
  ASSERT_TRUE(l.stage().ok());
  auto lr = format::parse_receipt(testing_support::read_text(l.dest() / ".stackpin" / "receipt.json"), "receipt.json");
  ASSERT_TRUE(lr.ok()) << lr.error().message;
  EXPECT_EQ(lr->created_dirs, (std::vector<std::string>{"include", "lib64"}));
  std::map<std::string, model::StagedFile> by;
  for (const auto& f : lr->files) by[f.path] = f;
  EXPECT_EQ(by.at("lib64/libcudnn.so").type, "symlink");
  EXPECT_EQ(by.at("lib64/libcudnn.so").link, "libcudnn.so.9");
  EXPECT_EQ(by.at("lib64/libcudnn.so.9").link, "libcudnn.so.9.1.0");
  EXPECT_EQ(by.at("lib64/libcudnn.so.9.1.0").type, "file");
  EXPECT_EQ(by.at("lib64/libcudnn.so.9.1.0").mode, 0755u);
  EXPECT_EQ(by.at("lib64/libcudnn.so.9.1.0").from, "lib/libcudnn.so.9.1.0");
  EXPECT_EQ(by.at("include/cudnn.h").mode, 0644u);
}

// ---- no-op, restage, replace ---------------------------------------------------------------------

TEST(StageRestage, IntactStagingIsANoOpEvenWithoutTheArchive) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  ASSERT_TRUE(w.stage().ok());
  auto before = testing_support::snapshot(w.dest());
  auto again = w.stage();
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->no_op);
  EXPECT_EQ(again->files, expected(w.spec, [](const std::string& r) { return r; }).size());
  fs::remove(w.archives() / w.info.path.filename());
  auto gone = w.stage();
  ASSERT_TRUE(gone.ok()) << gone.error().message;
  EXPECT_TRUE(gone->no_op);
  EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(w.dest())), "");
}

TEST(StageRestage, ModifiedStagingNeedsForce) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v8_linux);
  ASSERT_TRUE(w.stage().ok());
  auto staged = testing_support::snapshot(w.dest(), {".stackpin"});
  testing_support::write_file(w.dest() / "include" / "cudnn.h", "/* edited */\n");
  auto edited = testing_support::snapshot(w.dest());
  auto r = w.stage();
  ASSERT_FALSE(r.ok());
  expect_error(r.error(), ErrorCode::conflict, {"cannot replace the cuDNN 8.9.7.29", "include/cudnn.h", "changed since staging"});
  EXPECT_EQ(testing_support::diff(edited, testing_support::snapshot(w.dest())), "");
  auto o = w.options();
  o.force = true;
  auto f = w.stage(o);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_FALSE(f->no_op);
  EXPECT_EQ(testing_support::diff(staged, testing_support::snapshot(w.dest(), {".stackpin"})), "");
}

TEST(StageRestage, AnotherVersionReplacesThePreviousOne) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World v9(k_v9_linux);
  ASSERT_TRUE(v9.stage().ok());
  World v8(k_v8_linux);
  auto fresh = v8.stage();
  ASSERT_TRUE(fresh.ok());
  auto want = testing_support::snapshot(v8.dest(), {".stackpin"});
  // stage 8.9.7 into the DEST that holds 9.1.0
  auto o = v8.options();
  o.dest = v9.dest();
  auto r = v8.stage(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->replaced_previous);
  EXPECT_FALSE(r->no_op);
  EXPECT_EQ(testing_support::diff(want, testing_support::snapshot(v9.dest(), {".stackpin"})), "");
  auto rc = format::parse_receipt(testing_support::read_text(v9.dest() / ".stackpin" / "receipt.json"), "r");
  ASSERT_TRUE(rc.ok());
  EXPECT_EQ(rc->cudnn_version, "8.9.7.29");
}

TEST(StageRestage, AnotherVersionInACudaRootRestoresWhatTheFirstReplaced) {
  World v8(k_v8_windows, "cuda-merge");
  make_fake_cuda_root(v8.dest(), "bin");
  auto original = testing_support::snapshot(v8.dest());
  ASSERT_TRUE(v8.stage().ok());
  // a 9.19 archive pinned for CUDA 11.8's tree is odd, but the mechanics are what matter here
  Spec s9 = k_v9_windows;
  s9.cuda_version = "11.8.0";
  World v9(s9, "cuda-merge");
  auto o = v9.options();
  o.dest = v8.dest();
  auto r = v9.stage(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->replaced_previous);
  EXPECT_FALSE(fs::exists(v8.dest() / "bin" / "cudnn_adv_infer64_8.dll"));                                    // 8.8's own files are gone
  EXPECT_EQ(testing_support::snapshot(v8.dest()).at("bin/cudnn64_8.dll"), original.at("bin/cudnn64_8.dll"));  // restored
  model::UnstageReport ur;
  ASSERT_TRUE(core::unstage({v8.dest(), false, {}, {}}, ur).ok());
  EXPECT_EQ(testing_support::diff(original, testing_support::snapshot(v8.dest())), "");
}

TEST(StageDryRun, ChangesNothing) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  auto o = w.options();
  o.dry_run = true;
  auto r = w.stage(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->dry_run);
  EXPECT_FALSE(fs::exists(w.dest()));  // not even created
  auto want = expected(w.spec, [](const std::string& rel) { return rel.rfind("lib/", 0) == 0 ? "lib64/" + rel.substr(4) : rel; });
  EXPECT_EQ(r->files, want.size());
  ASSERT_EQ(r->plan.size(), want.size());
  for (const auto& f : r->plan) {
    EXPECT_TRUE(want.count(f.to)) << f.to;
    EXPECT_FALSE(f.replaces) << f.to;
  }

  World m(k_v8_windows, "cuda-merge");
  make_fake_cuda_root(m.dest(), "bin");
  auto before = testing_support::snapshot(m.dest());
  auto mo = m.options();
  mo.dry_run = true;
  mo.remove_stale = true;
  auto mr = m.stage(mo);
  ASSERT_TRUE(mr.ok()) << mr.error().message;
  EXPECT_EQ(mr->stale, std::vector<std::string>{"bin/cudnn64_7.dll"});
  std::size_t replaces = 0;
  for (const auto& f : mr->plan) replaces += f.replaces;
  EXPECT_EQ(replaces, 4u);
  EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(m.dest())), "");
}

// ---- refusals leave DEST untouched ------------------------------------------------------------------

// Runs `stage` on a DEST that does not exist and on one with content; both must be as before.
void expect_refused_untouched(World& w, ErrorCode code, const std::vector<std::string>& words) {
  {
    SCOPED_TRACE("DEST absent");
    auto r = w.stage();
    ASSERT_FALSE(r.ok()) << "staged";
    expect_error(r.error(), code, words);
    EXPECT_FALSE(fs::exists(w.dest())) << testing_support::diff({}, testing_support::snapshot(w.dest()));
  }
  {
    SCOPED_TRACE("DEST with content");
    testing_support::write_file(w.dest() / "include" / "cudnn.h", "mine\n");
    testing_support::write_file(w.dest() / "bin" / "cudnn64_8.dll", "mine\n");
    auto before = testing_support::snapshot(w.dest());
    auto r = w.stage();
    ASSERT_FALSE(r.ok()) << "staged";
    expect_error(r.error(), code, words);
    EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(w.dest())), "");
    fs::remove_all(w.dest());
  }
}

TEST(StageRefused, HashMismatch) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  std::string wrong = w.info.sha256;
  wrong[0] = wrong[0] == '0' ? '1' : '0';
  w.repin(wrong, w.info.size);
  expect_refused_untouched(w, ErrorCode::mismatch, {"SHA-256 mismatch", "expected " + wrong, "got " + w.info.sha256});
}

TEST(StageRefused, WrongSize) {
  World w(k_v8_windows);
  w.repin(w.info.sha256, w.info.size + 10);
  expect_refused_untouched(
      w, ErrorCode::mismatch,
      {"size mismatch", "expected " + std::to_string(w.info.size + 10), "the file has " + std::to_string(w.info.size)});
}

TEST(StageRefused, ArchiveNotFound) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  fs::remove(w.archives() / w.info.path.filename());
  expect_refused_untouched(w, ErrorCode::not_found, {"archive " + w.info.path.filename().string() + " not found in"});
}

TEST(StageRefused, LayoutMatchingNoneIsUnsupported) {
  // a 9.x Windows zip whose DLLs are in bin64/
  auto es = fixtures::cudnn_windows_entries("9.1.0.70", 12);
  for (auto& e : es) {
    auto pos = e.path.find("/bin/");
    if (pos != std::string::npos)
      e.path.replace(pos, 5, "/bin64/");
    else if (e.path.size() > 4 && e.path.substr(e.path.size() - 4) == "/bin")
      e.path += "64";
  }
  World w(Spec{"9.1.0.70", 12, "12.4.1", true}, es);
  expect_refused_untouched(w, ErrorCode::unsupported, {"matches no known cuDNN 9.1.0 windows-x86_64 layout", "bin/"});
}

TEST(StageRefused, UnexpectedDirectoryIsUnsupported) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  auto es = fixtures::cudnn_linux_entries("9.1.0.70", 12);
  es.push_back(Entry{top_of(k_v9_linux) + "/share/evil.sh", Kind::file, "#!/bin/sh\n", {}, 0755});
  World w(k_v9_linux, es);
  expect_refused_untouched(w, ErrorCode::unsupported, {"unexpected \"share/evil.sh\""});
}

TEST(StageRefused, IncompleteArchive) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  auto es = fixtures::cudnn_linux_entries("8.9.7.29", 12);
  es.erase(std::remove_if(es.begin(), es.end(), [](const Entry& e) { return e.path.find("cudnn_version.h") != std::string::npos; }),
           es.end());
  World w(k_v8_linux, es);
  expect_refused_untouched(w, ErrorCode::invalid, {"incomplete cuDNN archive", "include/cudnn_version.h"});
}

TEST(StageRefused, HeaderVersionDiffersFromThePin) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  auto es = fixtures::cudnn_linux_entries("9.1.0.70", 12);
  for (auto& e : es)
    if (e.path.find("cudnn_version.h") != std::string::npos) e.data = fixtures::cudnn_version_header("9.2.1.18");
  World w(k_v9_linux, es);
  expect_refused_untouched(w, ErrorCode::mismatch, {"the archive holds cuDNN 9.2.1 (cudnn_version.h)", "the manifest pins 9.1.0.70"});
}

TEST(StageRefused, HostileArchive) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  auto es = fixtures::cudnn_linux_entries("9.1.0.70", 12);
  es.push_back(Entry{top_of(k_v9_linux) + "/lib/libcudnn.so.x", Kind::symlink, {}, "../../../../etc/passwd", 0777});
  World w(k_v9_linux, es);
  expect_refused_untouched(w, ErrorCode::unsafe, {"points outside the archive"});
  auto ws = fixtures::cudnn_windows_entries("8.8.0.121", 11);
  ws.push_back(Entry{top_of(k_v8_windows) + "/bin/CUDNN64_8.DLL", Kind::file, "MZ", {}, 0644});
  World ww(k_v8_windows, ws);
  expect_refused_untouched(ww, ErrorCode::unsafe, {"same name on Windows"});
}

TEST(StageRefused, LinksAreJudgedWhereTheyWillLiveInDest) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  // Each stays inside the archive (its top directory is the root the archive's own checks use),
  // but staging strips that directory and renames lib/ to lib64/: as staged, each would point at
  // DEST's parent, beside DEST, or at DEST itself.
  const std::string top = top_of(k_v9_linux);
  struct Case {
    std::string path, target, words;
  };
  for (const auto& c : std::vector<Case>{{"/include/x", "../..", "climbs above DEST"},
                                         {"/lib/libcudnn_evil.so.9", "../../outside/libcudnn.so.9", "climbs above DEST"},
                                         {"/LICENSE", "..", "climbs above DEST"},
                                         {"/lib/pkgconfig", "../..", "climbs above DEST"},
                                         {"/include/y", "..", "names DEST itself"},
                                         {"/include/z", "../lib64", "lib64 is a directory"},
                                         {"/include/w", "../lib/libcudnn.so.9", "nothing is staged at lib/libcudnn.so.9"}}) {
    SCOPED_TRACE(c.path + " -> " + c.target);
    auto es = fixtures::cudnn_linux_entries("9.1.0.70", 12);
    es.erase(std::remove_if(es.begin(), es.end(), [&](const Entry& e) { return e.path == top + c.path; }), es.end());
    es.push_back(Entry{top + c.path, Kind::symlink, {}, c.target, 0777});
    World w(k_v9_linux, es);
    expect_refused_untouched(w, ErrorCode::unsafe, {"\"" + top + c.path + "\"", "points at no file DEST holds", c.words});
    auto dry = w.options();
    dry.dry_run = true;
    auto r = w.stage(dry);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::unsafe);
  }
  // the links NVIDIA's archives have, and a chain through a link in another directory, stage
  auto es = fixtures::cudnn_linux_entries("9.1.0.70", 12);
  es.push_back(Entry{top + "/include/cudnn_alias.h", Kind::symlink, {}, "../include/./cudnn.h", 0777});
  World ok(k_v9_linux, es);
  auto r = ok.stage();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(testing_support::read_text(ok.dest() / "include" / "cudnn_alias.h"),
            testing_support::read_text(ok.dest() / "include" / "cudnn.h"));
}

TEST(StageRefused, CorruptTarGzNeverStages) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  // A flipped byte anywhere in the archive is caught by the pinned SHA-256 before a decoder sees
  // it (mismatch): never "corrupt gzip data", never a partial extraction. DEST stays as it was.
  auto entries = fixtures::cudnn_linux_entries("9.1.0.70", 12);
  ScratchDir src;
  auto good = src.path() / "c.tar.gz";
  fixtures::write_archive(good, fixtures::Format::tar_gz, entries);
  auto good_info = fixtures::info(good);
  for (double at : {0.3, 0.5, 0.7}) {
    SCOPED_TRACE(at);
    World w(k_v9_linux);
    fs::remove(w.archives() / w.info.path.filename());
    auto name = w.archives() / "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.gz";
    fixtures::corrupt_copy(good, name, static_cast<std::uint64_t>(static_cast<double>(good_info.size) * at));
    auto info = good_info;
    info.path = name;
    w.manifest = parse(fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"linux-x86_64", info}}, targets_text(k_v9_linux)));
    testing_support::write_file(w.dest() / "keep.txt", "mine\n");
    auto before = testing_support::snapshot(w.dest());
    auto r = w.stage();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::mismatch) << r.error().message;
    EXPECT_NE(r.error().message.find("SHA-256 mismatch"), std::string::npos) << r.error().message;
    EXPECT_FALSE(fs::exists(w.dest() / ".stackpin")) << "no extraction directory was even made";
    EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(w.dest())), "");
  }
}

TEST(StageRefused, DirectoryWhereAFileGoes) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  fs::create_directories(w.dest() / "include" / "cudnn.h");
  auto before = testing_support::snapshot(w.dest());
  auto r = w.stage();
  ASSERT_FALSE(r.ok());
  expect_error(r.error(), ErrorCode::conflict, {"is a directory where cuDNN's include/cudnn.h goes"});
  EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(w.dest())), "");
}

TEST(StageRefused, FailureWhilePlacingRollsBackEverything) {
  if (!util::host_is_windows()) {  // the Linux layout (stackpin.exe refuses it)
    SCOPED_TRACE("fresh files");
    World w(k_v9_linux);
    testing_support::write_file(w.dest() / "include", "a file where a directory must be\n");
    auto before = testing_support::snapshot(w.dest());
    auto r = w.stage();
    ASSERT_FALSE(r.ok());
    expect_error(r.error(), ErrorCode::io, {"cannot move include/cudnn.h into " + w.dest().string()});
    EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(w.dest())), "");  // LICENSE taken away, no .stackpin
  }
  {
    SCOPED_TRACE("cuda-merge");  // headers and DLLs replaced (backed up) before lib/x64/ fails
    World w(k_v8_windows, "cuda-merge");
    make_fake_cuda_root(w.dest(), "bin");
    fs::remove_all(w.dest() / "lib" / "x64");
    testing_support::write_file(w.dest() / "lib" / "x64", "a file where a directory must be\n");
    auto before = testing_support::snapshot(w.dest());
    auto o = w.options();
    o.remove_stale = true;
    auto r = w.stage(o);
    ASSERT_FALSE(r.ok());
    expect_error(r.error(), ErrorCode::io, {"cannot move lib/x64/"});
    EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(w.dest())), "");
  }
}

// ---- what killed runs leave ----------------------------------------------------------------------

TEST(StageRecovery, StrayExtractionDirectoryOfAKilledRunIsRemoved) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World ref(k_v9_linux);
  ASSERT_TRUE(ref.stage().ok());
  auto reference = testing_support::snapshot(ref.dest(), {".stackpin/receipt.json"});
  // a run killed while extracting (before its journal existed): the lock and a partial tmp-*
  World w(k_v9_linux);
  auto killed = [](const fs::path& dest) {
    testing_support::write_file(dest / ".stackpin" / "lock", "");
    testing_support::write_file(dest / ".stackpin" / "tmp-killed01" / top_of(k_v9_linux) / "LICENSE", "partial");
    testing_support::write_file(dest / ".stackpin" / ".receipt.json.new.tmp-killed02", "{");
  };
  killed(w.dest());
  auto r = w.stage();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(testing_support::diff(reference, testing_support::snapshot(w.dest(), {".stackpin/receipt.json"})), "");
  // unstage where nothing was staged: not_found, and the leftovers are gone too
  ScratchDir d;
  killed(d.path());
  model::UnstageReport ur;
  auto u = core::unstage({d.path(), false, {}, {}}, ur);
  ASSERT_FALSE(u.ok());
  expect_error(u.error(), ErrorCode::not_found, {"nothing staged"});
  EXPECT_EQ(testing_support::snapshot(d.path()), Tree{});
}

// ---- read-only and full DEST ---------------------------------------------------------------------

TEST(StageFilesystem, ReadOnlyDestIsAnIoError) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  testing_support::write_file(w.dir.path() / "ro-src" / "keep.txt", "mine\n");
  auto mount = testing_support::Mount::read_only_bind(w.dir.path() / "ro-src", w.dest());
  if (!mount.ok()) GTEST_SKIP() << mount.error();
  auto before = testing_support::snapshot(w.dest());
  auto r = w.stage();
  ASSERT_FALSE(r.ok());
  expect_error(r.error(), ErrorCode::io, {"Read-only file system", w.dest().string()});
  EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(w.dest())), "");
  // a DEST below the read-only mount, which stage would have to create
  auto o = w.options();
  o.dest = w.dest() / "sub";
  auto s = w.stage(o);
  ASSERT_FALSE(s.ok());
  expect_error(s.error(), ErrorCode::io, {"Read-only file system"});
  EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(w.dest())), "");
}

TEST(StageFilesystem, ReadOnlyStagedDestCannotBeUnstaged) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  auto src = w.dir.path() / "staged";
  auto o = w.options();
  o.dest = src;
  ASSERT_TRUE(w.stage(o).ok());
  auto mount = testing_support::Mount::read_only_bind(src, w.dest());
  if (!mount.ok()) GTEST_SKIP() << mount.error();
  auto before = testing_support::snapshot(w.dest());
  // restaging the same thing is a no-op that writes nothing
  auto again = w.stage();
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->no_op);
  model::UnstageReport ur;
  auto u = core::unstage({w.dest(), false, {}, {}}, ur);
  ASSERT_FALSE(u.ok());
  expect_error(u.error(), ErrorCode::io, {"Read-only file system"});
  EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(w.dest())), "");
}

TEST(StageFilesystem, OutOfSpaceIsAnIoErrorAndLeavesNothing) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  ScratchDir big_src;
  fixtures::CudnnOptions big;
  big.library_bytes = 128 * 1024;  // 2 MiB of libraries: more than the 1 MiB tmpfs holds
  big.xz_threads = 2;              // fast (level 0)
  auto info = fixtures::make_cudnn_linux(big_src.path(), "9.1.0.70", 12, big);
  World w(k_v9_linux);
  fs::copy_file(info.path, w.archives() / info.path.filename(), fs::copy_options::overwrite_existing);
  w.manifest = parse(fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"linux-x86_64", info}}, targets_text(k_v9_linux)));
  auto small = w.dir.path() / "small";
  auto mount = testing_support::Mount::tmpfs(small, "1m");
  if (!mount.ok()) GTEST_SKIP() << mount.error();
  for (const auto& dest : {small, small / "dest"}) {
    SCOPED_TRACE(dest.string());
    auto o = w.options();
    o.dest = dest;
    auto r = w.stage(o);
    ASSERT_FALSE(r.ok()) << "staged 2 MiB into a 1 MiB tmpfs";
    expect_error(r.error(), ErrorCode::io, {"No space left on device"});
    EXPECT_NE(std::find_if(r.error().hints.begin(), r.error().hints.end(),
                           [](const std::string& h) { return h.find("free space") != std::string::npos; }),
              r.error().hints.end());
    EXPECT_EQ(testing_support::diff({}, testing_support::snapshot(small)), "");  // nothing left behind
  }
  // the small archive fits
  World fits(k_v9_linux);
  auto fo = fits.options();
  fo.dest = small / "fits";
  auto ok = fits.stage(fo);
  EXPECT_TRUE(ok.ok()) << ok.error().message;
}

// ---- unstage -------------------------------------------------------------------------------------

TEST(Unstage, RemovesExactlyWhatWasStaged) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  testing_support::write_file(w.dest() / "include" / "mine.h", "mine\n");
  testing_support::write_file(w.dest() / "notes.txt", "mine\n");
  auto original = testing_support::snapshot(w.dest());
  ASSERT_TRUE(w.stage().ok());
  testing_support::write_file(w.dest() / "lib64" / "added-later.so", "x");  // not staged: stays, and so does lib64/
  model::UnstageReport ur;
  auto u = core::unstage({w.dest(), false, {}, {}}, ur);
  ASSERT_TRUE(u.ok()) << u.error().message;
  EXPECT_EQ(ur.removed, expected(w.spec, [](const std::string& r) { return r; }).size());
  EXPECT_EQ(ur.restored, 0u);
  auto after = testing_support::snapshot(w.dest());
  EXPECT_EQ(after.erase("lib64/added-later.so"), 1u);
  EXPECT_EQ(after.erase("lib64"), 1u);
  EXPECT_EQ(testing_support::diff(original, after), "");
}

TEST(Unstage, RefusesModifiedFilesWithoutForce) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  ASSERT_TRUE(w.stage().ok());
  testing_support::write_file(w.dest() / "include" / "cudnn.h", "edited\n");
  fs::remove(w.dest() / "lib64" / "libcudnn.so");
  fs::create_symlink("libcudnn.so.9.1.0", w.dest() / "lib64" / "libcudnn.so");  // retargeted link
  fs::remove(w.dest() / "lib64" / "libcudnn_ops.so.9");
  testing_support::write_file(w.dest() / "lib64" / "libcudnn_ops.so.9", "a file now");  // another type
  auto before = testing_support::snapshot(w.dest());
  model::UnstageReport ur;
  auto u = core::unstage({w.dest(), false, {}, {}}, ur);
  ASSERT_FALSE(u.ok());
  expect_error(u.error(), ErrorCode::conflict, {"3 staged file(s)", "changed since staging"});
  std::sort(ur.modified.begin(), ur.modified.end());
  EXPECT_EQ(ur.modified, (std::vector<std::string>{"include/cudnn.h", "lib64/libcudnn.so", "lib64/libcudnn_ops.so.9"}));
  EXPECT_EQ(ur.removed, 0u);
  EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(w.dest())), "");  // nothing removed
  model::UnstageReport fr;
  auto f = core::unstage({w.dest(), true, {}, {}}, fr);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(testing_support::snapshot(w.dest()), Tree{});
}

TEST(Unstage, NothingStagedIsNotFound) {
  ScratchDir d;
  model::UnstageReport ur;
  auto u = core::unstage({d.path(), false, {}, {}}, ur);
  ASSERT_FALSE(u.ok());
  expect_error(u.error(), ErrorCode::not_found, {"nothing staged in", "no .stackpin/receipt.json"});
  EXPECT_TRUE(fs::is_empty(d.path()));
}

// ---- state files from somewhere else --------------------------------------------------------------
// A tree copied from another machine (or edited) carries whatever its .stackpin/ says: every path
// in a receipt or journal is validated against DEST before anything is removed, moved or created,
// by every command that reads it.

// A staged DEST beside a sentinel tree "outside/" that the hostile paths aim at.
struct HostileState {
  World w{util::host_is_windows() ? k_v9_windows : k_v9_linux};  // each build's own layout
  fs::path outside() const { return w.dir.path() / "outside"; }
  HostileState() {
    EXPECT_TRUE(w.stage().ok());
    testing_support::write_file(outside() / "victim.txt", "must stay\n");
    testing_support::write_file(outside() / "planted.txt", "must not move into DEST\n");
  }
  model::Receipt receipt() const {
    auto r = format::parse_receipt(testing_support::read_text(w.dest() / ".stackpin" / "receipt.json"), "receipt");
    EXPECT_TRUE(r.ok());
    return *r;
  }
  void write(const model::Receipt& r) const {
    testing_support::write_file(w.dest() / ".stackpin" / "receipt.json", format::write_receipt(r));
  }
  // every command that reads DEST's state refuses, naming the file, and changes nothing anywhere
  void expect_every_command_refuses(const std::vector<std::string>& words) const {
    auto before = testing_support::snapshot(w.dir.path(), {"archives"});
    model::UnstageReport ur;
    auto u = core::unstage({w.dest(), true, {}, {}}, ur);
    ASSERT_FALSE(u.ok()) << "unstage --force followed it";
    expect_error(u.error(), ErrorCode::unsafe, words);
    auto restage_opts = w.options();
    restage_opts.force = true;
    auto st = w.stage(restage_opts);
    ASSERT_FALSE(st.ok()) << "stage followed it";
    expect_error(st.error(), ErrorCode::unsafe, words);
    std::vector<model::Finding> findings;
    auto status = core::status(w.dest(), kb());
    findings = testing_support::findings_of(status);
    if (!fs::exists(w.dest() / ".stackpin" / "journal")) {
      ASSERT_FALSE(status.ok()) << "status read through it";
      EXPECT_EQ(status.error().code, ErrorCode::unsafe) << status.error().message;
    }
    EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(w.dir.path(), {"archives"})), "");
  }
};

TEST(StageHostileState, ReceiptPathsOutsideDestAreNeverFollowed) {
  for (std::string path :
       {std::string("../outside/victim.txt"), std::string("/etc/hostname"), std::string("lib64/../../outside/victim.txt"),
        std::string(".stackpin/lock"), std::string("lib64\\..\\..\\x"), std::string("")}) {
    SCOPED_TRACE(path);
    HostileState h;
    if (path == "/etc/hostname") path = (h.outside() / "victim.txt").string();
    auto r = h.receipt();
    r.files.back().path = path;
    h.write(r);
    h.expect_every_command_refuses({"receipt.json: files[" + std::to_string(r.files.size() - 1) + "]: the path \"" + path + "\""});
    EXPECT_EQ(testing_support::read_text(h.outside() / "victim.txt"), "must stay\n");
  }
}

TEST(StageHostileState, ReceiptBackupsAndCreatedDirsAreValidatedToo) {
  {
    HostileState h;  // a "backup" that unstage would move into DEST: planting another machine's file
    auto r = h.receipt();
    r.files.front().backup = "../../outside/planted.txt";
    h.write(r);
    h.expect_every_command_refuses({"files[0].backup", "not a path under DEST/.stackpin/backup/"});
    EXPECT_TRUE(fs::exists(h.outside() / "planted.txt"));
  }
  {
    HostileState h;
    auto r = h.receipt();
    r.created_dirs.push_back("../outside");
    h.write(r);
    h.expect_every_command_refuses({"created_dirs[", "the path \"../outside\" is not a path inside DEST"});
    EXPECT_TRUE(fs::exists(h.outside() / "victim.txt"));
  }
  {
    HostileState h;
    auto r = h.receipt();
    r.files.front().type = "directory";
    h.write(r);
    h.expect_every_command_refuses({"which stackpin never writes"});
  }
}

TEST(StageHostileState, ASymlinkOnTheWayOutOfDestIsNotFollowed) {
  STACKPIN_SKIP_ON_WINDOWS("symlinks made under Wine are not read back as symlinks");
  HostileState h;
  // lib64/ replaced by a link to the sentinel tree: lib64/victim.txt now names a file outside
  auto lib64 = h.w.dest() / "lib64";
  fs::rename(lib64, h.w.dir.path() / "lib64-moved");
  fs::create_directory_symlink(h.outside(), lib64);
  auto r = h.receipt();
  r.files.back().path = "lib64/victim.txt";
  h.write(r);
  h.expect_every_command_refuses({"goes through the link", "lib64", "leads out of DEST"});
  EXPECT_EQ(testing_support::read_text(h.outside() / "victim.txt"), "must stay\n");
}

TEST(StageHostileState, AHostileJournalIsRefusedBeforeAnyRecordIsActedOn) {
  const std::string head = "stackpin-journal\t2\nop\tstage\n";
  const std::string proof = "\tsha256:" + std::string(64, '0');
  struct Case {
    std::string body, words;
  };
  for (const auto& c : std::vector<Case>{{"place\tinclude/cudnn.h" + proof + "\nplace\t../outside/victim.txt" + proof + "\n",
                                          "journal:4: the path \"../outside/victim.txt\""},
                                         {"backup\tinclude/cudnn.h\t../../outside/planted.txt\n", "is not kept where stackpin keeps it"},
                                         {"tmp\t../../outside\n", "is not one stackpin makes"},
                                         {"mkdir\t/tmp\n", "journal:3: the path \"/tmp\""},
                                         {"rm -rf\t/\n", "is not one stackpin writes"},
                                         {"place\tinclude/cudnn.h\tand more\tfields\n", "more fields than stackpin writes"},
                                         {"place\tinclude/cudnn.h\n", "does not say which file it placed"}}) {
    SCOPED_TRACE(c.body);
    HostileState h;
    testing_support::write_file(h.w.dest() / ".stackpin" / "journal", head + c.body);
    h.expect_every_command_refuses({c.words});
    EXPECT_EQ(testing_support::read_text(h.outside() / "victim.txt"), "must stay\n");
    EXPECT_TRUE(fs::exists(h.w.dest() / "include" / "cudnn.h")) << "the valid record before the hostile one was not acted on";
  }
  {
    HostileState h;  // not a journal at all
    testing_support::write_file(h.w.dest() / ".stackpin" / "journal", "place\tinclude/cudnn.h\n");
    h.expect_every_command_refuses({"journal:1: not a stackpin journal"});
  }
}

TEST(StageHostileState, AJournalCutShortByACrashIsStillRecovered) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  // the record being written when the machine died was never acted on: the rest is replayed
  World w(k_v9_linux);
  testing_support::write_file(w.dest() / "keep.txt", "mine\n");
  auto before = testing_support::snapshot(w.dest());
  testing_support::write_file(w.dest() / ".stackpin" / "journal", "stackpin-journal\t2\nop\tstage\nmkdir\tlib64\npla");
  fs::create_directories(w.dest() / "lib64");
  auto r = w.stage();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->recovered.find("rolled back"), std::string::npos) << r->recovered;
}

TEST(StageHostileState, AnOlderStackpinsJournalIsFinishedOnlyWhereNoProofIsNeeded) {
  {
    // a stage cut short: its place records do not say which files they placed, so no rollback
    HostileState h;
    testing_support::write_file(h.w.dest() / ".stackpin" / "journal", "stackpin-journal\t1\nop\tstage\nplace\tinclude/cudnn.h\n");
    h.expect_every_command_refuses({"journal:1:", "journal version 1", "cut short"});
    EXPECT_TRUE(fs::exists(h.w.dest() / "include" / "cudnn.h"));
  }
  {
    // a stage that reached its commit is rolled forward, which removes nothing
    HostileState h;
    fs::copy_file(h.w.dest() / ".stackpin" / "receipt.json", h.w.dest() / ".stackpin" / "receipt.json.new");
    testing_support::write_file(h.w.dest() / ".stackpin" / "journal", "stackpin-journal\t1\nop\tstage\nplace\tinclude/cudnn.h\ncommit\n");
    auto st = h.w.stage();
    ASSERT_TRUE(st.ok()) << st.error().message;
    EXPECT_NE(st->recovered.find("finished an interrupted stage"), std::string::npos) << st->recovered;
    EXPECT_TRUE(fs::exists(h.w.dest() / "include" / "cudnn.h"));
  }
}

TEST(StageHostileState, AWindowsTreeStagedWithoutAWindowsPrefixCanBeRestagedAndUndone) {
  // staged on Linux for Windows with no [targets.windows]: the receipt's prefix is DEST as it is here
  World w(k_v9_windows);
  w.manifest = parse(fixtures::local_manifest(w.spec.version, w.spec.cuda, w.spec.cuda_version, {{platform_of(w.spec), w.info}}));
  auto first = w.stage();
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto again = w.stage();
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->no_op);
  ASSERT_TRUE(core::status(w.dest(), kb()).ok());
  model::UnstageReport ur;
  auto u = core::unstage({w.dest(), false, {}, {}}, ur);
  ASSERT_TRUE(u.ok()) << u.error().message;
}

TEST(StageHostileState, AStateFolderThatIsALinkIsNeverUsed) {
  STACKPIN_SKIP_ON_WINDOWS("symlinks made under Wine are not read back as symlinks");
  {
    // a staged tree whose .stackpin was replaced by a link out of DEST, holding the state and a
    // tmp-* folder the stray clean-up would remove
    HostileState h;
    fs::path state = h.outside() / "state";
    fs::rename(h.w.dest() / ".stackpin", state);
    fs::create_directory_symlink(state, h.w.dest() / ".stackpin");
    testing_support::write_file(state / "tmp-user" / "data.txt", "must stay\n");
    h.expect_every_command_refuses({".stackpin is a link", "real folder inside DEST"});
    EXPECT_TRUE(fs::exists(state / "tmp-user" / "data.txt"));
    EXPECT_TRUE(fs::exists(state / "receipt.json"));
  }
  {
    // a fresh DEST: nothing is created, locked or written through the link
    World w(util::host_is_windows() ? k_v9_windows : k_v9_linux);
    ScratchDir elsewhere;
    fs::create_directories(w.dest());
    fs::create_directory_symlink(elsewhere.path(), w.dest() / ".stackpin");
    auto r = w.stage();
    ASSERT_FALSE(r.ok());
    expect_error(r.error(), ErrorCode::unsafe, {".stackpin is a link"});
    EXPECT_TRUE(fs::is_empty(elsewhere.path())) << "no lock, extraction folder or receipt out there";
  }
}

TEST(StageHostileState, AFolderOfTheLayoutThatLeadsOutOfDestIsRefusedBeforeAnyChange) {
  STACKPIN_SKIP_ON_WINDOWS("symlinks made under Wine are not read back as symlinks");
  World w(k_v9_linux);
  ScratchDir elsewhere;
  testing_support::write_file(elsewhere.path() / "keep.h", "mine\n");
  fs::create_directories(w.dest());
  fs::create_directory_symlink(elsewhere.path(), w.dest() / "include");
  auto before = testing_support::snapshot(elsewhere.path());
  for (bool dry : {true, false}) {
    auto o = w.options();
    o.dry_run = dry;
    auto r = w.stage(o);
    ASSERT_FALSE(r.ok()) << (dry ? "--dry-run" : "stage");
    expect_error(r.error(), ErrorCode::unsafe, {"cannot stage into", "DEST/include/", "leads out of DEST"});
  }
  EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(elsewhere.path())), "") << "nothing was written out there";
  EXPECT_FALSE(fs::exists(w.dest() / "lib64")) << "nothing was staged";
  EXPECT_FALSE(fs::exists(w.dest() / ".stackpin" / "receipt.json"));
}

TEST(StageHostileState, AFolderLinkThatStaysInsideDestIsStagedThroughAndUndone) {
  STACKPIN_SKIP_ON_WINDOWS("symlinks made under Wine are not read back as symlinks");
  // NVIDIA's runfile toolkit: lib64 -> targets/x86_64-linux/lib, include -> targets/x86_64-linux/include
  World w(k_v9_linux);
  fs::create_directories(w.dest() / "targets" / "x86_64-linux" / "lib");
  fs::create_directories(w.dest() / "targets" / "x86_64-linux" / "include");
  fs::create_directory_symlink("targets/x86_64-linux/lib", w.dest() / "lib64");
  fs::create_directory_symlink("targets/x86_64-linux/include", w.dest() / "include");
  testing_support::write_file(w.dest() / "targets" / "x86_64-linux" / "lib" / "libcudart.so.12", "the toolkit's\n");
  auto r = w.stage();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(fs::is_regular_file(w.dest() / "targets" / "x86_64-linux" / "include" / "cudnn.h"));
  auto st = core::status(w.dest(), kb());
  ASSERT_TRUE(st.ok()) << st.error().message;
  model::UnstageReport ur;
  auto u = core::unstage({w.dest(), false, {}, {}}, ur);
  ASSERT_TRUE(u.ok()) << u.error().message;
  EXPECT_FALSE(fs::exists(w.dest() / "targets" / "x86_64-linux" / "include" / "cudnn.h"));
  EXPECT_EQ(testing_support::read_text(w.dest() / "targets" / "x86_64-linux" / "lib" / "libcudart.so.12"), "the toolkit's\n");
  EXPECT_TRUE(fs::is_symlink(w.dest() / "lib64"));
  // a link into DEST/.stackpin is refused like one out of DEST
  World w2(k_v9_linux);
  fs::create_directories(w2.dest() / ".stackpin" / "x");
  fs::create_directory_symlink(".stackpin/x", w2.dest() / "include");
  auto r2 = w2.stage();
  ASSERT_FALSE(r2.ok());
  expect_error(r2.error(), ErrorCode::unsafe, {"leads into DEST/.stackpin"});
}

TEST(StageHostileState, ABackupFolderThatIsALinkIsNeverRestoredFrom) {
  STACKPIN_SKIP_ON_WINDOWS("symlinks made under Wine are not read back as symlinks");
  HostileState h;
  testing_support::write_file(h.outside() / "include" / "planted.h", "from outside\n");
  fs::create_directory_symlink(h.outside(), h.w.dest() / ".stackpin" / "backup");
  testing_support::write_file(h.w.dest() / ".stackpin" / "journal",
                              "stackpin-journal\t2\nop\tstage\nbackup\tinclude/planted.h\tbackup/include/planted.h\n");
  h.expect_every_command_refuses({"goes through the link", "backup"});
  EXPECT_TRUE(fs::exists(h.outside() / "include" / "planted.h"));
  EXPECT_FALSE(fs::exists(h.w.dest() / "include" / "planted.h"));
}

TEST(StageHostileState, NothingIsRemovedOrReplacedThatStackpinCannotProveItPutThere) {
  {
    // a journal record for a file the stage never placed: the user's file stays
    HostileState h;
    testing_support::write_file(h.w.dest() / "notes.txt", "mine\n");
    testing_support::write_file(h.w.dest() / ".stackpin" / "journal",
                                "stackpin-journal\t2\nop\tstage\nplace\tnotes.txt\tsha256:" + sha("staged\n") + "\n");
    h.expect_every_command_refuses(
        {"the place record of notes.txt", "holds a file other than the one the record placed", "nothing was rolled back"});
    EXPECT_EQ(testing_support::read_text(h.w.dest() / "notes.txt"), "mine\n");
  }
  {
    // a mkdir record, a created folder or a build-files folder naming a file: only empty folders go
    HostileState h;
    testing_support::write_file(h.w.dest() / "notes.txt", "mine\n");
    testing_support::write_file(h.w.dest() / ".stackpin" / "journal", "stackpin-journal\t2\nop\tstage\nmkdir\tnotes.txt\n");
    auto st = h.w.stage();
    ASSERT_TRUE(st.ok()) << st.error().message;
    EXPECT_EQ(testing_support::read_text(h.w.dest() / "notes.txt"), "mine\n");
    auto r = h.receipt();
    r.created_dirs.push_back("notes.txt");
    h.write(r);
    std::string record = testing_support::read_text(h.w.dest() / ".stackpin" / "build-files");
    testing_support::write_file(h.w.dest() / ".stackpin" / "build-files", "dir\tnotes.txt\n" + record);
    model::UnstageReport ur;
    auto u = core::unstage({h.w.dest(), false, {}, {}}, ur);
    ASSERT_TRUE(u.ok()) << u.error().message;
    EXPECT_EQ(testing_support::read_text(h.w.dest() / "notes.txt"), "mine\n");
  }
  {
    // a build-files record naming the user's file: unstage refuses without --force, and with it
    // keeps the file (it is not one stackpin generated)
    HostileState h;
    testing_support::write_file(h.w.dest() / "notes.txt", "mine\n");
    std::string record = testing_support::read_text(h.w.dest() / ".stackpin" / "build-files");
    testing_support::write_file(
        h.w.dest() / ".stackpin" / "build-files",
        record + "file\tnotes.txt\t" + sha("theirs\n") + "\nfile\tnotes2.txt\nfile\tnotes3.txt\t" + sha("mine three\n") + "\n");
    testing_support::write_file(h.w.dest() / "notes2.txt", "mine too\n");
    // a record can name a user's file by that file's own hash, but not make it stackpin's
    testing_support::write_file(h.w.dest() / "notes3.txt", "mine three\n");
    model::UnstageReport ur;
    auto u = core::unstage({h.w.dest(), false, {}, {}}, ur);
    ASSERT_FALSE(u.ok());
    expect_error(u.error(), ErrorCode::conflict, {"notes.txt", "changed since staging"});
    EXPECT_TRUE(fs::exists(h.w.dest() / "include" / "cudnn.h")) << "refused before anything was removed";
    model::UnstageReport forced;
    auto f = core::unstage({h.w.dest(), true, {}, {}}, forced);
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_EQ(testing_support::read_text(h.w.dest() / "notes.txt"), "mine\n");
    EXPECT_EQ(testing_support::read_text(h.w.dest() / "notes2.txt"), "mine too\n");
    EXPECT_EQ(testing_support::read_text(h.w.dest() / "notes3.txt"), "mine three\n");
    EXPECT_FALSE(fs::exists(h.w.dest() / "include" / "cudnn.h"));
  }
  {
    // a receipt's "removed" entry whose backup is another file: never moved over the user's
    HostileState h;
    testing_support::write_file(h.w.dest() / "notes.txt", "mine\n");
    testing_support::write_file(h.w.dest() / ".stackpin" / "backup" / "notes.txt", "theirs\n");
    auto r = h.receipt();
    model::StagedFile removed;
    removed.path = "notes.txt";
    removed.type = "removed";
    removed.backup = "backup/notes.txt";
    r.files.push_back(removed);
    h.write(r);
    for (bool force : {false, true}) {
      model::UnstageReport ur;
      auto u = core::unstage({h.w.dest(), force, {}, {}}, ur);
      ASSERT_FALSE(u.ok());
      expect_error(u.error(), ErrorCode::conflict, {"notes.txt", "now hold other files"});
      EXPECT_EQ(testing_support::read_text(h.w.dest() / "notes.txt"), "mine\n");
      EXPECT_TRUE(fs::exists(h.w.dest() / "include" / "cudnn.h")) << "refused before anything was removed";
      EXPECT_FALSE(fs::exists(h.w.dest() / ".stackpin" / "journal")) << "nothing to roll forward";
    }
  }
}

TEST(StageHostileState, ReceiptValuesAreCheckedBeforeAnyCommandUsesThem) {
  struct Case {
    std::function<void(model::Receipt&)> edit;
    std::string words;
  };
  for (const auto& c : std::vector<Case>{
           {[](model::Receipt& r) { r.cudnn_version += "\n/tmp/evil"; }, "cudnn.version"},
           {[](model::Receipt& r) { r.cuda_version = "12.4.1; rm -rf /"; }, "cuda.version"},
           {[](model::Receipt& r) { r.prefix = "/usr/local/cudnn\n/tmp"; }, "prefix"},
           {[](model::Receipt& r) { r.prefix = "relative/path"; }, "is not an absolute path"},
           {[](model::Receipt& r) { r.manifest_name = "a b"; }, "manifest.name"},
           {[](model::Receipt& r) { r.platform = "linux-mips"; }, "platform"},
           {[](model::Receipt& r) { r.layout = "anything"; }, "layout"},
           {[](model::Receipt& r) { r.archive_file = "../x.tar.xz"; }, "archive.file"},
           {[](model::Receipt& r) { r.files.front().from = "a\tb"; }, "files[0].from"},
       }) {
    SCOPED_TRACE(c.words);
    HostileState h;
    auto r = h.receipt();
    if (util::host_is_windows() && c.words == "is not an absolute path") continue;
    c.edit(r);
    h.write(r);
    h.expect_every_command_refuses({"receipt.json", c.words});
  }
}

// ---- status --------------------------------------------------------------------------------------

std::map<std::string, std::string> rules_by_subject(const std::vector<model::Finding>& fs) {
  std::map<std::string, std::string> out;
  for (const auto& f : fs)
    if (f.rule != "status.intact") out[f.subject] = f.rule;
  return out;
}

TEST(Status, IntactStaging) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v8_linux);
  ASSERT_TRUE(w.stage().ok());
  std::vector<model::Finding> findings;
  auto s = core::status(w.dest(), kb());
  findings = testing_support::findings_of(s);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->cudnn_version, "8.9.7.29");
  EXPECT_EQ(s->archive_file, w.info.path.filename().string());
  EXPECT_EQ(s->target, "linux");
  EXPECT_EQ(s->layout, "lib64");
  EXPECT_EQ(s->files, expected(w.spec, [](const std::string& r) { return r; }).size());
  EXPECT_TRUE(s->pending.empty());
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].rule, "status.intact");
  EXPECT_EQ(findings[0].severity, model::Severity::ok);
  EXPECT_NE(findings[0].seen.find(std::to_string(s->files) + " of " + std::to_string(s->files) + " staged files match"), std::string::npos)
      << findings[0].seen;
  // the staged cuDNN read for what its files are
  EXPECT_EQ(findings[1].rule, "cudnn.whole");
  EXPECT_EQ(findings[1].severity, model::Severity::ok) << findings[1].seen;
  EXPECT_EQ(findings[1].subject, "cuDNN 8.9.7 in " + (w.dest() / "lib64").string());
}

TEST(Status, ReportsModifiedMissingAndTypeChangedFiles) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  ASSERT_TRUE(w.stage().ok());
  auto lib = w.dest() / "lib64";
  testing_support::write_file(w.dest() / "include" / "cudnn.h", "edited\n");  // modified
  fs::remove(w.dest() / "include" / "cudnn_ops.h");                           // missing
  fs::remove(lib / "libcudnn_adv.so");                                        // symlink -> file
  testing_support::write_file(lib / "libcudnn_adv.so", "not a link");
  fs::remove(lib / "libcudnn_cnn.so.9.1.0");  // file -> symlink
  fs::create_symlink("libcudnn_ops.so.9.1.0", lib / "libcudnn_cnn.so.9.1.0");
  fs::remove(lib / "libcudnn_graph.so");  // retargeted
  fs::create_symlink("libcudnn_graph.so.9.1.0", lib / "libcudnn_graph.so");
  std::vector<model::Finding> findings;
  auto s = core::status(w.dest(), kb());
  findings = testing_support::findings_of(s);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(rules_by_subject(findings), (std::map<std::string, std::string>{
                                            {"include/cudnn.h", "status.modified"},
                                            {"include/cudnn_ops.h", "status.missing"},
                                            {"lib64/libcudnn_adv.so", "status.type"},
                                            {"lib64/libcudnn_cnn.so.9.1.0", "status.type"},
                                            {"lib64/libcudnn_graph.so", "status.modified"},
                                            {"cuDNN 9.1.0 in " + lib.string(), "cudnn.whole"},
                                        }));
  for (const auto& f : findings) {
    if (f.subject == "include/cudnn.h") {
      EXPECT_EQ(f.severity, model::Severity::error);
      EXPECT_NE(f.seen.find(sha("edited\n")), std::string::npos) << f.seen;
      EXPECT_EQ(f.expected.rfind("sha256 ", 0), 0u) << f.expected;
    }
    if (f.subject == "lib64/libcudnn_graph.so") {
      EXPECT_EQ(f.seen, "symlink to libcudnn_graph.so.9.1.0");
      EXPECT_EQ(f.expected, "symlink to libcudnn_graph.so.9");
    }
    if (f.rule == "status.intact") {
      EXPECT_EQ(f.severity, model::Severity::note);
    }
    if (f.rule == "cudnn.whole") {  // libcudnn_cnn.so.9.1.0 now leads to libcudnn_ops's file
      EXPECT_EQ(f.severity, model::Severity::error);
      EXPECT_NE(f.seen.find("missing libcudnn_cnn.so.9"), std::string::npos) << f.seen;
    }
  }
}

TEST(Status, NothingStagedIsNotFound) {
  ScratchDir d;
  std::vector<model::Finding> findings;
  auto s = core::status(d.path(), kb());
  findings = testing_support::findings_of(s);
  ASSERT_FALSE(s.ok());
  expect_error(s.error(), ErrorCode::not_found, {"nothing staged in"});
}

// ---- verify --------------------------------------------------------------------------------------

TEST(VerifyManifest, FindsTheArchiveByName) {
  World w(k_v8_windows);
  std::vector<model::Finding> findings;
  auto r = core::verify_manifest(w.manifest, w.archives(), std::nullopt, kb());
  findings = testing_support::findings_of(r);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->archives.size(), 1u);
  const auto& a = r->archives[0];
  EXPECT_TRUE(a.ok);
  EXPECT_FALSE(a.found_by_content);
  EXPECT_EQ(a.path, (w.archives() / w.info.path.filename()).string());
  EXPECT_EQ(a.actual_sha256, w.info.sha256);
  EXPECT_EQ(a.actual_size, w.info.size);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule, "verify.ok");
  EXPECT_EQ(findings[0].severity, model::Severity::ok);
}

TEST(VerifyManifest, FindsARenamedArchiveByContent) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  testing_support::write_file(w.archives() / "other-same-size.bin", std::string(w.info.size, 'x'));  // same size, other hash
  auto renamed = w.archives() / "cudnn (1).tar.xz";
  fs::rename(w.archives() / w.info.path.filename(), renamed);
  std::vector<model::Finding> findings;
  auto r = core::verify_manifest(w.manifest, w.archives(), model::Platform::linux_x86_64, kb());
  findings = testing_support::findings_of(r);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->archives.size(), 1u);
  EXPECT_TRUE(r->archives[0].ok);
  EXPECT_TRUE(r->archives[0].found_by_content);
  EXPECT_EQ(r->archives[0].path, renamed.string());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].seen.find("found under another name than " + w.info.path.filename().string()), std::string::npos)
      << findings[0].seen;
  // and stage finds it the same way
  auto s = w.stage();
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->archive_path, renamed.string());
}

TEST(VerifyManifest, MismatchReportsExpectedAndActual) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  std::string wrong(64, 'a');
  w.repin(wrong, w.info.size - 1);
  auto before = testing_support::snapshot(w.archives());
  std::vector<model::Finding> findings;
  auto r = core::verify_manifest(w.manifest, w.archives(), std::nullopt, kb());
  findings = testing_support::findings_of(r);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->archives.size(), 1u);
  const auto& a = r->archives[0];
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.expected_sha256, wrong);
  EXPECT_EQ(a.actual_sha256, w.info.sha256);
  EXPECT_EQ(a.expected_size, w.info.size - 1);
  EXPECT_EQ(a.actual_size, w.info.size);
  std::map<std::string, model::Finding> by;
  for (const auto& f : findings) by[f.rule] = f;
  ASSERT_TRUE(by.count("verify.sha256"));
  ASSERT_TRUE(by.count("verify.size"));
  EXPECT_FALSE(by.count("verify.ok"));
  EXPECT_EQ(by["verify.sha256"].severity, model::Severity::error);
  EXPECT_EQ(by["verify.sha256"].seen, w.info.sha256);
  EXPECT_EQ(by["verify.sha256"].expected, wrong);
  EXPECT_EQ(by["verify.size"].seen, std::to_string(w.info.size) + " bytes");
  EXPECT_EQ(by["verify.size"].expected, std::to_string(w.info.size - 1) + " bytes");
  EXPECT_EQ(testing_support::diff(before, testing_support::snapshot(w.archives())), "");  // nothing touched
}

TEST(VerifyManifest, NotFound) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  fs::remove(w.archives() / w.info.path.filename());
  std::vector<model::Finding> findings;
  auto r = core::verify_manifest(w.manifest, w.archives(), std::nullopt, kb());
  findings = testing_support::findings_of(r);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->archives.size(), 1u);
  EXPECT_FALSE(r->archives[0].ok);
  EXPECT_EQ(r->archives[0].path, "");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule, "verify.found");
  EXPECT_EQ(findings[0].severity, model::Severity::error);
  EXPECT_NE(findings[0].seen.find("no " + w.info.path.filename().string() + " in " + w.archives().string()), std::string::npos)
      << findings[0].seen;
  // a platform the manifest does not pin, and a folder that does not exist, are errors
  auto p = core::verify_manifest(w.manifest, w.archives(), model::Platform::windows_x86_64, kb());
  findings = testing_support::findings_of(p);
  ASSERT_FALSE(p.ok());
  expect_error(p.error(), ErrorCode::invalid, {"no archive pinned for windows-x86_64"});
  auto d = core::verify_manifest(w.manifest, w.dir.path() / "nope", std::nullopt, kb());
  findings = testing_support::findings_of(d);
  ASSERT_FALSE(d.ok());
  expect_error(d.error(), ErrorCode::not_found, {"does not exist"});
}

TEST(VerifyFile, ChecksOneFile) {
  SKIP_LINUX_LAYOUT_ON_WINDOWS();
  World w(k_v9_linux);
  auto file = w.archives() / w.info.path.filename();
  std::vector<model::Finding> findings;
  auto ok = core::verify_file(file, w.info.sha256, w.info.size);
  findings = testing_support::findings_of(ok);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->archives.at(0).ok);
  std::string upper = w.info.sha256;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  findings.clear();
  EXPECT_TRUE(core::verify_file(file, upper, std::nullopt)->archives.at(0).ok);
  findings.clear();
  auto bad = core::verify_file(file, std::string(64, 'b'), std::nullopt);
  findings = testing_support::findings_of(bad);
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(bad->archives.at(0).ok);
  EXPECT_EQ(bad->archives.at(0).expected_sha256, std::string(64, 'b'));
  EXPECT_EQ(bad->archives.at(0).actual_sha256, w.info.sha256);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule, "verify.sha256");
  auto missing = core::verify_file(w.archives() / "nope", w.info.sha256, std::nullopt);
  findings = testing_support::findings_of(missing);
  ASSERT_FALSE(missing.ok());
  expect_error(missing.error(), ErrorCode::not_found, {"no such file"});
  auto malformed = core::verify_file(file, "abc", std::nullopt);
  findings = testing_support::findings_of(malformed);
  ASSERT_FALSE(malformed.ok());
  expect_error(malformed.error(), ErrorCode::usage, {"64 hexadecimal digits"});
}

// On Windows the Linux layout is refused before anything is looked at or written: its symlink
// chains would not survive in a Windows folder, and WSL2 runs the Linux stackpin.
TEST(StageOnWindows, LinuxLayoutIsRefusedByTheWindowsBuild) {
  if (!util::host_is_windows()) GTEST_SKIP() << "stackpin.exe only (the Linux build stages the Linux layout)";
  World w(k_v9_linux);
  auto r = w.stage();
  ASSERT_FALSE(r.ok());
  expect_error(r.error(), ErrorCode::usage, {"stackpin.exe stages the Windows layout only", "symlink"});
  EXPECT_NE(r.error().hints.at(0).find("--target linux"), std::string::npos) << r.error().hints.at(0);
  EXPECT_FALSE(fs::exists(w.dest()));
}

// A DEST that cannot be written for lack of rights (a cuda-merge into C:\Program Files without an
// elevated prompt, /usr/local without root) says how to get them, or where to stage instead.
TEST(StageRefused, WithoutWriteAccessTheHintSaysHowToGetIt) {
  auto pf = core::write_access_hint("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4", true);
  EXPECT_NE(pf.find("Program Files are writable by administrators only"), std::string::npos) << pf;
  EXPECT_NE(pf.find("\"Run as administrator\""), std::string::npos) << pf;
  EXPECT_NE(pf.find("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4"), std::string::npos) << pf;
  auto own = core::write_access_hint("D:\\tools\\cudnn", true);
  EXPECT_EQ(own.find("Program Files"), std::string::npos) << own;
  EXPECT_NE(own.find("Run as administrator"), std::string::npos) << own;
  auto lin = core::write_access_hint("/usr/local/cudnn", false);
  EXPECT_NE(lin.find("sudo"), std::string::npos) << lin;
  EXPECT_NE(lin.find("--dest"), std::string::npos) << lin;
}

}  // namespace

}  // namespace stage_test
