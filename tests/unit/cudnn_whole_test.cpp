// One cuDNN, whole: a library's identity read from its bytes (soname, needs, the release it names)
// on libraries written here (ELF and PE), on the real cuDNN 9 under /usr/local/cuda where present,
// and on hostile files; then directories judged from those identities: whole, missing a
// sub-library, of two releases, renamed, dangling.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "core/inspect/cudnn_whole.hpp"
#include "fixtures.hpp"
#include "knowledge/knowledge_base.hpp"
#include "probe/cudnn_whole.hpp"
#include "probe/library_identity.hpp"
#include "test_support.hpp"

namespace cudnn_whole_test {

namespace {

namespace fs = std::filesystem;
using testing_support::contains;
using testing_support::ScratchDir;

const std::vector<model::CudnnMajorContents>& contents() { return knowledge::KnowledgeBase::embedded().facts().cudnn_majors; }

// A Linux cuDNN tree as NVIDIA's archive unpacks it: L.so.X.Y.Z, L.so.X -> it, L.so -> L.so.X.
// False where symbolic links cannot be made (Windows without the privilege).
bool linux_tree(const fs::path& dir, const std::string& version, const std::vector<std::string>& skip = {}) {
  fs::create_directories(dir);
  const int major = std::stoi(version.substr(0, version.find('.')));
  const std::string three = version.substr(0, version.rfind('.'));
  std::error_code ec;
  for (const auto& stem : fixtures::cudnn_linux_stems(major)) {
    if (std::find(skip.begin(), skip.end(), stem) != skip.end()) continue;
    const std::string soname = stem + ".so." + std::to_string(major);
    std::ofstream(dir / (stem + ".so." + three), std::ios::binary) << fixtures::elf_library(
        soname, fixtures::cudnn_library_needs(stem, major, false), fixtures::cudnn_library_rodata(stem, version), 1024);
    fs::create_symlink(stem + ".so." + three, dir / soname, ec);
    if (ec) return false;
    if (!fs::exists(fs::symlink_status(dir / (stem + ".so")))) fs::create_symlink(soname, dir / (stem + ".so"), ec);
    if (ec) return false;
  }
  return true;
}
#define LINUX_TREE(...)                                                              \
  if (!linux_tree(__VA_ARGS__)) {                                                    \
    GTEST_SKIP() << "symbolic links cannot be made here: the Linux trees need them"; \
  }                                                                                  \
  static_cast<void>(0)

void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes; }

std::string all(const model::CudnnWhole& w) { return w.text(); }

}  // namespace

// ---- identity ----------------------------------------------------------------------------------

TEST(LibraryIdentity, ReadsAnElfSharedObjectsSonameNeedsAndRelease) {
  ScratchDir d;
  auto p = d.write("libcudnn_graph.so.9.19.0", fixtures::elf_library("libcudnn_graph.so.9", {"libz.so.1"},
                                                                     fixtures::cudnn_library_rodata("libcudnn_graph", "9.19.0.56"), 8192));
  auto id = probe::read_library_identity(p);
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(id->format, "ELF");
  EXPECT_EQ(id->soname, "libcudnn_graph.so.9");
  EXPECT_EQ(id->needed, std::vector<std::string>{"libz.so.1"});
  ASSERT_TRUE(id->cudnn_version);
  EXPECT_EQ(id->cudnn_version->text(), "9.19.0.56");
  EXPECT_EQ(id->version_evidence, "the string cudnn_version_9_19_0_56_");
}

TEST(LibraryIdentity, AReleaseOfAnotherMajorThanTheSonameIsNotTaken) {
  ScratchDir d;
  auto p = d.write("libcudnn_graph.so.9", fixtures::elf_library("libcudnn_graph.so.9", {}, "cudnn_version_8_9_7_29_", 0));
  auto id = probe::read_library_identity(p);
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_FALSE(id->cudnn_version) << id->version_evidence;
}

TEST(LibraryIdentity, ReadsAPeDllsExportNameImportsAndRelease) {
  ScratchDir d;
  auto p = d.write("cudnn_graph64_9.dll", fixtures::pe_library("cudnn_graph64_9.dll", {"KERNEL32.dll", "zlibwapi.dll"},
                                                               fixtures::cudnn_library_rodata("libcudnn_graph", "9.10.2.21"), 4096));
  auto id = probe::read_library_identity(p);
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(id->format, "PE");
  EXPECT_EQ(id->soname, "cudnn_graph64_9.dll");
  EXPECT_EQ(id->needed, (std::vector<std::string>{"KERNEL32.dll", "zlibwapi.dll"}));
  ASSERT_TRUE(id->cudnn_version);
  EXPECT_EQ(id->cudnn_version->text(), "9.10.2.21");
}

TEST(LibraryIdentity, TheRealCudnnNamesItsReleaseInGraphOpsAndAdv) {
  const fs::path lib = "/usr/local/cuda/lib64", header = "/usr/local/cuda/include/cudnn_version.h";
  if (!fs::is_regular_file(lib / "libcudnn_graph.so.9") || !fs::is_regular_file(header))
    GTEST_SKIP() << "no real cuDNN 9 with its header under /usr/local/cuda";
  std::string h = testing_support::read_text(header), expected;
  for (const char* part : {"MAJOR", "MINOR", "PATCHLEVEL"}) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(h, m, std::regex(std::string("#define CUDNN_") + part + R"(\s+([0-9]+))"))) << header;
    expected += (expected.empty() ? "" : ".") + m[1].str();
  }
  for (const char* stem : {"libcudnn_graph", "libcudnn_ops", "libcudnn_adv"}) {
    auto id = probe::read_library_identity(lib / (std::string(stem) + ".so.9"));
    ASSERT_TRUE(id) << stem << ": " << id.error().message;
    EXPECT_EQ(id->soname, std::string(stem) + ".so.9");
    ASSERT_TRUE(id->cudnn_version) << stem << " names no release";
    EXPECT_EQ(id->cudnn_version->prefix(3), expected) << stem << ": " << id->version_evidence;
  }
  auto cnn = probe::read_library_identity(lib / "libcudnn_cnn.so.9");
  ASSERT_TRUE(cnn) << cnn.error().message;
  EXPECT_TRUE(std::find(cnn->needed.begin(), cnn->needed.end(), "libcudnn_ops.so.9") != cnn->needed.end())
      << testing::PrintToString(cnn->needed);
  auto wholes = probe::read_cudnn_whole(lib, lib.string(), contents());
  ASSERT_EQ(wholes.size(), 1u);
  EXPECT_TRUE(wholes[0].whole()) << all(wholes[0]);
  ASSERT_TRUE(wholes[0].release);
  EXPECT_EQ(wholes[0].release->prefix(3), expected);
}

// Every prefix of a library, and tables pointing out of the file, give an error, never a crash or
// an endless loop.
TEST(LibraryIdentity, HostileFilesAreRefusedNotRead) {
  ScratchDir d;
  const std::string elf = fixtures::elf_library("libcudnn_ops.so.9", {"libcudnn_graph.so.9"}, "cudnn_version_9_1_0_70_", 0);
  const std::string pe = fixtures::pe_library("cudnn_ops64_9.dll", {"cudnn_graph64_9.dll"}, "", 0);
  for (const auto* whole : {&elf, &pe}) {
    for (std::size_t n = 0; n < whole->size(); n += 7) {
      auto p = d.write("cut", whole->substr(0, n));
      auto id = probe::read_library_identity(p);
      if (id) {
        EXPECT_TRUE(id->soname.empty() || id->soname == "libcudnn_ops.so.9" || id->soname == "cudnn_ops64_9.dll") << n;
      }
    }
  }
  // the section table far outside the file
  std::string far = elf;
  for (int i = 0; i < 8; ++i) far[40 + i] = static_cast<char>(0x7f);
  auto id = probe::read_library_identity(d.write("far", far));
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().code, util::ErrorCode::invalid) << id.error().message;
  // an import directory whose terminating entry is overwritten: the next one points nowhere
  std::string endless = fixtures::pe_library("cudnn_ops64_9.dll", {"a.dll"}, "", 0);
  for (std::size_t i = 0x200 + 60; i < 0x200 + 80; ++i) endless[i] = 'x';
  auto e = probe::read_library_identity(d.write("endless.dll", endless));
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, util::ErrorCode::invalid) << e.error().message;
  // an optional header too small for the data directories it claims
  std::string small = fixtures::pe_library("cudnn_ops64_9.dll", {}, "", 0);
  small[0x54] = 100, small[0x55] = 0;
  auto so = probe::read_library_identity(d.write("small.dll", small));
  ASSERT_FALSE(so);
  EXPECT_EQ(so.error().code, util::ErrorCode::invalid) << so.error().message;
  // not a library at all
  auto text = probe::read_library_identity(d.write("libcudnn.so.9", std::string(200, 'x')));
  ASSERT_FALSE(text);
  EXPECT_TRUE(contains(text.error().message, "neither an ELF nor a PE")) << text.error().message;
}

// ---- one cuDNN, whole --------------------------------------------------------------------------

TEST(CudnnWhole, ATreeAsNvidiaShipsItIsWholeAndNamesItsRelease) {
  ScratchDir d;
  LINUX_TREE(d.path() / "lib", "9.19.0.56");
  auto w = probe::read_cudnn_whole(d.path() / "lib", "lib", contents());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(w[0].whole()) << all(w[0]);
  EXPECT_EQ(w[0].major, 9);
  EXPECT_EQ(w[0].present.size(), 8u);
  ASSERT_TRUE(w[0].release);
  EXPECT_EQ(w[0].release->text(), "9.19.0");
  EXPECT_TRUE(contains(w[0].release_source, "libcudnn_graph.so.9 9.19.0.56 (the string cudnn_version_9_19_0_56_)")) << w[0].release_source;
  EXPECT_EQ(w[0].text(), "cuDNN 9.19.0: all 8 sub-libraries of one release");
  std::vector<model::Finding> f;
  core::add_cudnn_whole_findings(w, f);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, model::Severity::ok);
  EXPECT_EQ(f[0].rule, "cudnn.whole");
}

TEST(CudnnWhole, AMissingSubLibraryIsNamedWithWhoNeedsIt) {
  ScratchDir d;
  LINUX_TREE(d.path(), "9.19.0.56", {"libcudnn_graph", "libcudnn_heuristic"});
  auto w = probe::read_cudnn_whole(d.path(), "tree", contents());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_FALSE(w[0].whole());
  const std::string t = all(w[0]);
  EXPECT_TRUE(contains(t, "libcudnn_heuristic.so.9")) << t;
  EXPECT_TRUE(contains(t, "libcudnn_graph.so.9 (needed by libcudnn_adv.so.9)")) << t;
  std::vector<model::Finding> f;
  core::add_cudnn_whole_findings(w, f);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, model::Severity::error);
  EXPECT_TRUE(contains(f[0].fix, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH")) << f[0].fix;
  EXPECT_EQ(f[0].subject, "cuDNN 9.19.0 in tree") << "the release from the file names, where no bytes name one";
}

TEST(CudnnWhole, SubLibrariesOfTwoReleasesAreFoundByTheirBytesNotTheirNames) {
  ScratchDir d;
  LINUX_TREE(d.path(), "9.19.0.56");
  // libcudnn_ops of 9.18.1 copied in under 9.19.0's name: only its bytes tell
  fs::remove(d.path() / "libcudnn_ops.so.9.19.0");
  write(d.path() / "libcudnn_ops.so.9.19.0",
        fixtures::elf_library("libcudnn_ops.so.9", {"libcudnn_graph.so.9"}, "cudnn_version_9_18_1_3_", 1024));
  auto w = probe::read_cudnn_whole(d.path(), "tree", contents());
  ASSERT_EQ(w.size(), 1u);
  const std::string t = all(w[0]);
  EXPECT_FALSE(w[0].whole()) << t;
  EXPECT_TRUE(contains(t, "of 2 releases")) << t;
  EXPECT_TRUE(contains(t, "libcudnn_ops.so.9.19.0 is named 9.19.0, its bytes say 9.18.1.3")) << t;
}

TEST(CudnnWhole, ARenamedCopyIsWhatItsSonameSays) {
  ScratchDir d;
  LINUX_TREE(d.path(), "9.19.0.56");
  fs::remove(d.path() / "libcudnn_cnn.so.9.19.0");
  fs::copy_file(d.path() / "libcudnn_ops.so.9.19.0", d.path() / "libcudnn_cnn.so.9.19.0");
  auto w = probe::read_cudnn_whole(d.path(), "tree", contents());
  ASSERT_EQ(w.size(), 1u);
  const std::string t = all(w[0]);
  EXPECT_TRUE(contains(t, "missing libcudnn_cnn.so.9")) << t;
  EXPECT_TRUE(contains(t, "libcudnn_cnn.so, libcudnn_cnn.so.9, libcudnn_cnn.so.9.19.0 are libcudnn_ops.so.9 by its own bytes")) << t;
}

TEST(CudnnWhole, AFileThatIsAnotherLibraryByItsSonameIsNotCudnn) {
  ScratchDir d;
  LINUX_TREE(d.path(), "9.19.0.56");
  fs::remove(d.path() / "libcudnn_ops.so.9.19.0");
  write(d.path() / "libcudnn_ops.so.9.19.0", fixtures::elf_library("libfoo.so.1", {}, "", 0));
  auto w = probe::read_cudnn_whole(d.path(), "tree", contents());
  ASSERT_EQ(w.size(), 1u);
  const std::string t = all(w[0]);
  EXPECT_TRUE(contains(t, "missing libcudnn_ops.so.9")) << t;
  EXPECT_TRUE(contains(t, "libcudnn_ops.so.9.19.0 is libfoo.so.1 by its own bytes (its soname): not a cuDNN library")) << t;
}

TEST(CudnnWhole, ADanglingLinkAndAnUnreadableFileAreProblems) {
  ScratchDir d;
  LINUX_TREE(d.path(), "9.19.0.56");
  fs::remove(d.path() / "libcudnn_adv.so.9.19.0");
  write(d.path() / "libcudnn_heuristic.so.9.19.0", "not a library\n");
  auto w = probe::read_cudnn_whole(d.path(), "tree", contents());
  ASSERT_EQ(w.size(), 1u);
  const std::string t = all(w[0]);
  EXPECT_TRUE(contains(t, "libcudnn_adv.so.9 -> libcudnn_adv.so.9.19.0 dangles")) << t;
  EXPECT_TRUE(contains(t, "libcudnn_heuristic.so.9.19.0 cannot be read as a library")) << t;
}

TEST(CudnnWhole, TwoMajorsInOneDirectoryAreJudgedApart) {
  ScratchDir d;
  LINUX_TREE(d.path(), "9.19.0.56");
  LINUX_TREE(d.path(), "8.9.7.29", {"libcudnn_cnn_train"});
  auto w = probe::read_cudnn_whole(d.path(), "tree", contents());
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].major, 8);
  EXPECT_FALSE(w[0].whole());
  EXPECT_TRUE(contains(all(w[0]), "libcudnn_cnn_train.so.8")) << all(w[0]);
  EXPECT_EQ(w[1].major, 9);
  EXPECT_TRUE(w[1].whole()) << all(w[1]);
}

TEST(CudnnWhole, WindowsDllsAreJudgedByTheirExportNames) {
  ScratchDir d;
  for (const auto& stem : fixtures::cudnn_linux_stems(9)) {
    const std::string dll = stem.substr(3) + "64_9.dll";
    if (stem == "libcudnn_engines_runtime_compiled") continue;
    write(d.path() / dll,
          fixtures::pe_library(dll, fixtures::cudnn_library_needs(stem, 9, true), fixtures::cudnn_library_rodata(stem, "9.10.2.21"), 0));
  }
  auto w = probe::read_cudnn_whole(d.path(), "bin", contents());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].text(), "cuDNN 9.10.2: missing cudnn_engines_runtime_compiled64_9.dll");
  write(d.path() / "cudnn_engines_runtime_compiled64_9.dll", fixtures::pe_library("cudnn_engines_runtime_compiled64_9.dll", {}, "", 0));
  w = probe::read_cudnn_whole(d.path(), "bin", contents());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(w[0].whole()) << all(w[0]);
}

// What an unpacked archive's entries list, as archive_io::extract returns them for `root`.
std::vector<archive_io::Entry> entries_of(const fs::path& root) {
  std::vector<archive_io::Entry> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    archive_io::Entry x;
    x.path = e.path().lexically_relative(root).generic_string();
    if (e.is_symlink()) {
      x.type = archive_io::EntryType::symlink;
      x.link = fs::read_symlink(e.path()).generic_string();
    } else {
      x.type = e.is_directory() ? archive_io::EntryType::dir : archive_io::EntryType::file;
    }
    out.push_back(std::move(x));
  }
  return out;
}

TEST(CudnnWhole, AnArchiveMustBeWholeAndOfThePinnedRelease) {
  ScratchDir d;
  const auto& kb = knowledge::KnowledgeBase::embedded();
  const fs::path root = d.path() / "x";
  LINUX_TREE(root / "top" / "lib", "9.19.0.56");
  auto pin = [](const char* v) { return *model::Version::parse(v); };
  auto ok = core::require_cudnn_whole(root, entries_of(root), "a.tar.xz", pin("9.19.0.56"), kb);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(*ok, "cuDNN 9.19.0: all 8 sub-libraries of one release");
  auto other = core::require_cudnn_whole(root, entries_of(root), "a.tar.xz", pin("9.18.1.3"), kb);
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code, util::ErrorCode::mismatch);
  EXPECT_TRUE(contains(other.error().message, "a.tar.xz:lib are cuDNN 9.19.0")) << other.error().message;
  // a link the archive lists to a file it does not: dangles, whatever the disk holds
  auto listed = entries_of(root);
  std::erase_if(listed, [](const archive_io::Entry& e) { return e.path == "top/lib/libcudnn_cnn.so.9.19.0"; });
  auto dangling = core::require_cudnn_whole(root, listed, "a.tar.xz", pin("9.19.0.56"), kb);
  ASSERT_FALSE(dangling);
  EXPECT_TRUE(contains(dangling.error().message, "libcudnn_cnn.so.9 -> libcudnn_cnn.so.9.19.0 dangles")) << dangling.error().message;
  fs::remove(root / "top" / "lib" / "libcudnn_cnn.so.9.19.0");
  fs::remove(root / "top" / "lib" / "libcudnn_cnn.so.9");
  fs::remove(root / "top" / "lib" / "libcudnn_cnn.so");
  auto half = core::require_cudnn_whole(root, entries_of(root), "a.tar.xz", pin("9.19.0.56"), kb);
  ASSERT_FALSE(half);
  EXPECT_EQ(half.error().code, util::ErrorCode::invalid);
  EXPECT_TRUE(contains(half.error().message, "is not whole: cuDNN 9.19.0: missing libcudnn_cnn.so.9")) << half.error().message;
  fs::remove_all(root / "top" / "lib");
  auto none = core::require_cudnn_whole(root, entries_of(root), "a.tar.xz", pin("9.19.0.56"), kb);
  ASSERT_FALSE(none);
  EXPECT_TRUE(contains(none.error().message, "holds no cuDNN library")) << none.error().message;
}

}  // namespace cudnn_whole_test
