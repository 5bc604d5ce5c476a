// Every error path of the manifest reader, with the exact location and the key words of the
// message; and a full manifest read back value by value.
#include <gtest/gtest.h>

#include "format/manifest_reader.hpp"

namespace manifest_reader_test {

namespace {

const char* k_full = R"(schema = 1
name = "cu121-cudnn895-torch21"
description = "PyTorch 2.1 on CUDA 12.1 with cuDNN 8.9.5"

[cuda]
version = "12.1.1"

[driver]
linux = "530.30.02"
windows = "531.14"

[cudnn]
version = "8.9.5.30"
cuda = 12

[[cudnn.archives]]
platform = "windows-x86_64"
origin = "nvidia"
url = "https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/windows-x86_64/cudnn-windows-x86_64-8.9.5.30_cuda12-archive.zip"
sha256 = "BE76D407CE0E609F94688AA45BFD5648FD21A4D9F84A588FAD10AA4802CA1301"
size = 705347747

[[cudnn.archives]]
platform = "linux-x86_64"
origin = "local"
file = "my-repack.tar.xz"
sha256 = "2a2eb89a2ab51071151c6082f1e816c702167a711a9372f9f73a7b5c4b06e01a"
size = 42

[frameworks]
torch = "2.1.0"

[python]
version = "3.10"

[targets.windows]
layout = "isolated"
prefix = 'C:\tools\cudnn\v8.9.5'
cuda_path = 'C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.1'

[targets.linux]
layout = "lib64"
prefix = "/usr/local/cudnn-8.9.5"

[targets.docker]
base_image = "nvidia/cuda:12.1.1-runtime-ubuntu22.04"
base_digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
cudnn = "archive"

[targets.conda]
channels = ["conda-forge"]
cudnn = "8.9.7.29"
)";

util::Error parse_error(const std::string& text) {
  auto r = format::parse_manifest(text, "m.toml");
  EXPECT_FALSE(r.ok()) << "expected an error for:\n" << text;
  if (r.ok()) return util::Error();
  return r.error();
}

void expect_at(const util::Error& e, int line, int column) {
  ASSERT_TRUE(e.where.has_value()) << e.message;
  EXPECT_EQ(e.where->file, "m.toml");
  EXPECT_EQ(e.where->line, line) << e.message;
  EXPECT_EQ(e.where->column, column) << e.message;
  EXPECT_FALSE(e.where->excerpt.empty());
}

std::string base() { return "schema = 1\nname = \"x\"\n"; }

}  // namespace

TEST(ManifestReader, ReadsEveryKeyOfTheSchema) {
  auto r = format::parse_manifest(k_full, "full.toml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& m = *r;
  EXPECT_EQ(m.name.value, "cu121-cudnn895-torch21");
  EXPECT_EQ(m.cuda->version.value.text(), "12.1.1");
  EXPECT_EQ(m.driver->linux->value.text(), "530.30.02");
  EXPECT_EQ(m.driver->windows->value.text(), "531.14");
  EXPECT_EQ(m.cudnn->version.value.text(), "8.9.5.30");
  EXPECT_EQ(m.cudnn->cuda->value, 12);
  ASSERT_EQ(m.cudnn->archives.size(), 2u);
  const auto& w = m.cudnn->archives[0];
  EXPECT_EQ(w.platform.value, model::Platform::windows_x86_64);
  EXPECT_EQ(w.origin.value, model::Origin::nvidia);
  EXPECT_EQ(w.file_name(), "cudnn-windows-x86_64-8.9.5.30_cuda12-archive.zip");
  EXPECT_EQ(w.sha256->value, "be76d407ce0e609f94688aa45bfd5648fd21a4d9f84a588fad10aa4802ca1301");  // normalised
  EXPECT_EQ(w.size->value, 705347747u);
  EXPECT_EQ(w.sha256->pos.line, 20);
  const auto& l = m.cudnn->archives[1];
  EXPECT_EQ(l.origin.value, model::Origin::local);
  EXPECT_EQ(l.file_name(), "my-repack.tar.xz");
  EXPECT_EQ(m.frameworks.at("torch").value.text(), "2.1.0");
  EXPECT_EQ(m.python->value.text(), "3.10");
  EXPECT_EQ(m.windows->layout.value, model::WindowsLayout::isolated);
  EXPECT_EQ(m.windows->prefix->value, "C:\\tools\\cudnn\\v8.9.5");
  EXPECT_EQ(m.linux->prefix->value, "/usr/local/cudnn-8.9.5");
  EXPECT_EQ(m.docker->cudnn.value, model::DockerCudnn::archive);
  EXPECT_EQ(m.conda->channels.at(0).value, "conda-forge");
  EXPECT_EQ(m.conda->cudnn->value.text(), "8.9.7.29");
  EXPECT_EQ(m.locate({6, 11}).excerpt, "version = \"12.1.1\"");
}

// [targets.windows] arch: x64 by default, "arm64" for Windows on Arm; anything else is refused at its line.
TEST(ManifestReader, WindowsArchChoosesTheWindowsPlatform) {
  auto x64 = format::parse_manifest(base() + "[targets.windows]\nprefix = 'C:\\cudnn'\n", "m.toml");
  ASSERT_TRUE(x64.ok()) << x64.error().message;
  EXPECT_EQ(x64->windows_platform(), model::Platform::windows_x86_64);
  auto arm = format::parse_manifest(base() + "[targets.windows]\narch = \"arm64\"\nprefix = 'C:\\cudnn'\n", "m.toml");
  ASSERT_TRUE(arm.ok()) << arm.error().message;
  EXPECT_EQ(arm->windows->platform.value, model::Platform::windows_arm64);
  EXPECT_EQ(arm->windows_platform(), model::Platform::windows_arm64);
  EXPECT_EQ(arm->windows->platform.pos.line, 4);
  auto e = parse_error(base() + "[targets.windows]\narch = \"aarch64\"\n");
  EXPECT_NE(e.message.find("arm64"), std::string::npos) << e.message;
  ASSERT_TRUE(e.where);
  EXPECT_EQ(e.where->line, 4);
  EXPECT_EQ(model::parse_platform("windows-arm64"), model::Platform::windows_arm64);
  EXPECT_TRUE(model::is_windows(model::Platform::windows_arm64));
  EXPECT_STREQ(model::windows_arch_dir(model::Platform::windows_arm64), "arm64");
  EXPECT_STREQ(model::windows_arch_dir(model::Platform::windows_x86_64), "x64");
  EXPECT_STREQ(model::archive_extension(model::Platform::windows_arm64), "zip");
}

TEST(ManifestReader, PythonIndexVenvAndExactPackagePins) {
  auto m = format::parse_manifest(base() +
                                      "[python]\nversion = \"3.12\"\nindex = \"https://mirror.example/simple\"\nvenv = \".venv\"\n"
                                      "packages = [\"Nvidia_CUDNN.cu13==9.13.0.50\", \"filelock==3.20.0\"]\n",
                                  "m.toml");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->python_index->value, "https://mirror.example/simple");
  EXPECT_EQ(m->python_venv->value, ".venv");
  ASSERT_EQ(m->python_packages.size(), 2u);
  EXPECT_EQ(m->python_packages[0].value, "nvidia-cudnn-cu13==9.13.0.50");  // the PEP 503 name
  EXPECT_EQ(m->python_packages[1].pos.line, 7);
  for (const std::string bad : {"torch>=2.9", "torch", "torch==2.9 ; sys_platform == 'linux'", "a==b==c", "-e==1"}) {
    auto e = parse_error(base() + "[python]\nversion = \"3.12\"\npackages = [\"" + bad + "\"]\n");
    EXPECT_NE(e.message.find("not an exact pin NAME==VERSION"), std::string::npos) << bad << ": " << e.message;
    ASSERT_TRUE(e.where);
    EXPECT_EQ(e.where->line, 5);
  }
  auto twice = parse_error(base() + "[python]\nversion = \"3.12\"\npackages = [\"filelock==1.0\", \"FileLock==2.0\"]\n");
  EXPECT_NE(twice.message.find("pins filelock twice"), std::string::npos) << twice.message;
}

TEST(ManifestReader, SyntaxErrorHasLocationAndQuotingHint) {
  auto e = parse_error(base() + "[targets.windows]\nprefix = \"C:\\tools\\cudnn\"\n");
  EXPECT_EQ(e.code, util::ErrorCode::invalid);
  EXPECT_NE(e.message.find("TOML syntax error"), std::string::npos) << e.message;
  ASSERT_TRUE(e.where);
  EXPECT_EQ(e.where->line, 4);
  ASSERT_FALSE(e.hints.empty());
  EXPECT_NE(e.hints[0].find("single quotes"), std::string::npos) << e.hints[0];
}

TEST(ManifestReader, UnknownKeySuggestsTheClosestValidOne) {
  auto e = parse_error(base() + "[cudnn]\nversion = \"8.9.5.30\"\ncuda = 12\nplatfrom = \"x\"\n");
  expect_at(e, 6, 1);
  EXPECT_NE(e.message.find("unknown key `cudnn.platfrom`"), std::string::npos) << e.message;
  ASSERT_FALSE(e.hints.empty());
  EXPECT_NE(e.hints[0].find("valid keys here: archives, cuda, version"), std::string::npos) << e.hints[0];
}

TEST(ManifestReader, UnknownTopLevelTableSuggestsTargets) {
  auto e = parse_error(base() + "[target.linux]\nlayout = \"lib64\"\n");
  EXPECT_NE(e.message.find("unknown key `target`"), std::string::npos) << e.message;
  EXPECT_NE(e.hints.at(0).find("did you mean `targets`"), std::string::npos) << e.hints.at(0);
}

TEST(ManifestReader, WrongTypeSaysWhatIsExpected) {
  auto e = parse_error(base() + "[cudnn]\nversion = \"8.9.5.30\"\ncuda = \"12\"\n");
  expect_at(e, 5, 8);
  EXPECT_NE(e.message.find("`cudnn.cuda` must be an integer"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("not a string"), std::string::npos) << e.message;
}

TEST(ManifestReader, MalformedCudaVersion) {
  auto e = parse_error(base() + "[cuda]\nversion = \"12.x\"\n");
  expect_at(e, 4, 11);
  EXPECT_NE(e.message.find("is not a version"), std::string::npos) << e.message;
}

TEST(ManifestReader, CudnnNeedsFourParts) {
  auto e = parse_error(base() + "[cudnn]\nversion = \"8.9.5\"\ncuda = 12\n");
  expect_at(e, 4, 11);
  EXPECT_NE(e.message.find("has 3 parts"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("8.9.5.29 and 8.9.5.30"), std::string::npos) << e.message;
}

TEST(ManifestReader, CudaMajorOutOfRange) {
  auto e = parse_error(base() + "[cudnn]\nversion = \"8.9.5.30\"\ncuda = 121\n");
  expect_at(e, 5, 8);
  EXPECT_NE(e.message.find("not a CUDA major"), std::string::npos) << e.message;
}

namespace {
std::string archive(const std::string& body) { return base() + "[cudnn]\nversion = \"8.9.5.30\"\ncuda = 12\n[[cudnn.archives]]\n" + body; }
}  // namespace

TEST(ManifestReader, BadHashLength) {
  auto e = parse_error(archive("platform = \"linux-x86_64\"\nsha256 = \"abc\"\n"));
  expect_at(e, 8, 10);
  EXPECT_NE(e.message.find("not a SHA-256"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("got 3 character(s)"), std::string::npos) << e.message;
}

TEST(ManifestReader, BadHashDigits) {
  auto e = parse_error(archive("platform = \"linux-x86_64\"\nsha256 = \"" + std::string(63, 'a') + "g\"\n"));
  EXPECT_NE(e.message.find("non-hex"), std::string::npos) << e.message;
}

TEST(ManifestReader, NonPositiveSize) {
  auto e = parse_error(archive("platform = \"linux-x86_64\"\nsize = 0\n"));
  expect_at(e, 8, 8);
  EXPECT_NE(e.message.find("positive number of bytes"), std::string::npos) << e.message;
}

TEST(ManifestReader, SizeAsStringIsATypeError) {
  auto e = parse_error(archive("platform = \"linux-x86_64\"\nsize = \"705347747\"\n"));
  EXPECT_NE(e.message.find("must be an integer (no quotes)"), std::string::npos) << e.message;
}

TEST(ManifestReader, UnknownPlatformListsValidOnes) {
  auto e = parse_error(archive("platform = \"win64\"\n"));
  expect_at(e, 7, 12);
  EXPECT_NE(e.message.find("\"linux-x86_64\", \"linux-sbsa\", \"windows-x86_64\""), std::string::npos) << e.message;
}

TEST(ManifestReader, MissingPlatform) {
  auto e = parse_error(archive("url = \"https://x/y.zip\"\n"));
  EXPECT_NE(e.message.find("missing required key `cudnn.archives[1].platform`"), std::string::npos) << e.message;
}

TEST(ManifestReader, BadOrigin) {
  auto e = parse_error(archive("platform = \"linux-x86_64\"\norigin = \"mirror\"\n"));
  EXPECT_NE(e.message.find("use \"nvidia\" or \"local\""), std::string::npos) << e.message;
}

TEST(ManifestReader, LocalArchiveNeedsAFileOrUrl) {
  auto e = parse_error(archive("platform = \"linux-x86_64\"\norigin = \"local\"\n"));
  EXPECT_NE(e.message.find("needs `url` or `file`"), std::string::npos) << e.message;
}

TEST(ManifestReader, UrlMustBeAUrl) {
  auto e = parse_error(archive("platform = \"linux-x86_64\"\nurl = \"cudnn.tar.xz\"\n"));
  EXPECT_NE(e.message.find("is not an http(s):// or file:// URL"), std::string::npos) << e.message;
}

TEST(ManifestReader, FileMustBeAPlainName) {
  auto e = parse_error(archive("platform = \"linux-x86_64\"\nfile = \"../x.tar.xz\"\n"));
  EXPECT_NE(e.message.find("plain file name"), std::string::npos) << e.message;
}

TEST(ManifestReader, DuplicatePlatformPointsAtBothEntries) {
  auto e = parse_error(archive("platform = \"linux-x86_64\"\n[[cudnn.archives]]\nplatform = \"linux-x86_64\"\n"));
  expect_at(e, 9, 12);
  EXPECT_NE(e.message.find("duplicate archive for platform \"linux-x86_64\" (already pinned on line 7)"), std::string::npos) << e.message;
}

TEST(ManifestReader, ArchivesMustBeAnArrayOfTables) {
  auto e = parse_error(base() + "[cudnn]\nversion = \"8.9.5.30\"\narchives = \"x\"\n");
  EXPECT_NE(e.message.find("[[cudnn.archives]]"), std::string::npos) << e.message;
}

TEST(ManifestReader, SchemaMustBeOne) {
  auto e = parse_error("schema = 2\nname = \"x\"\n");
  expect_at(e, 1, 10);
  EXPECT_NE(e.message.find("schema 2 is not supported"), std::string::npos) << e.message;
  EXPECT_NE(e.hints.at(0).find("upgrade stackpin"), std::string::npos) << e.hints.at(0);
}

TEST(ManifestReader, SchemaAndNameAreRequired) {
  auto e = parse_error("name = \"x\"\n");
  EXPECT_NE(e.message.find("missing required key `schema`"), std::string::npos) << e.message;
  auto e2 = parse_error("schema = 1\n");
  EXPECT_NE(e2.message.find("missing required key `name`"), std::string::npos) << e2.message;
}

TEST(ManifestReader, NameCharacters) {
  auto e = parse_error("schema = 1\nname = \"my stack\"\n");
  expect_at(e, 2, 8);
  EXPECT_NE(e.message.find("may only contain letters"), std::string::npos) << e.message;
}

TEST(ManifestReader, UnknownFramework) {
  auto e = parse_error(base() + "[frameworks]\npytorch = \"2.1.0\"\n");
  EXPECT_NE(e.message.find("unknown key `frameworks.pytorch`"), std::string::npos) << e.message;
  EXPECT_NE(e.hints.at(0).find("onnxruntime-gpu"), std::string::npos) << e.hints.at(0);
}

TEST(ManifestReader, FrameworkLocalTagIsRefusedWithAHint) {
  auto e = parse_error(base() + "[frameworks]\ntorch = \"2.1.0+cu121\"\n");
  expect_at(e, 4, 9);
  EXPECT_NE(e.hints.at(0).find("without the local tag"), std::string::npos) << e.hints.at(0);
}

TEST(ManifestReader, TargetLayoutValues) {
  auto e = parse_error(base() + "[targets.windows]\nlayout = \"merge\"\n");
  EXPECT_NE(e.message.find("use \"isolated\" or \"cuda-merge\""), std::string::npos) << e.message;
  auto e2 = parse_error(base() + "[targets.linux]\nlayout = \"lib\"\n");
  EXPECT_NE(e2.message.find("use \"lib64\" or \"deb\""), std::string::npos) << e2.message;
}

TEST(ManifestReader, LinuxPrefixMustBeAbsolute) {
  auto e = parse_error(base() + "[targets.linux]\nprefix = \"opt/cudnn\"\n");
  EXPECT_NE(e.message.find("must be an absolute path"), std::string::npos) << e.message;
}

TEST(ManifestReader, BaseDigestFormat) {
  auto e = parse_error(base() + "[targets.docker]\nbase_digest = \"sha256:abc\"\n");
  EXPECT_NE(e.message.find("\"sha256:\" followed by 64 hex digits"), std::string::npos) << e.message;
}

TEST(ManifestReader, CondaChannelsMustBeStrings) {
  auto e = parse_error(base() + "[targets.conda]\nchannels = [\"conda-forge\", 3]\n");
  expect_at(e, 4, 28);
  EXPECT_NE(e.message.find("must list strings"), std::string::npos) << e.message;
}

TEST(ManifestReader, ReportsTheEarliestOfSeveralProblems) {
  auto e = parse_error(base() + "[cuda]\nversion = \"x\"\n[cudnn]\nversion = \"y\"\n");
  expect_at(e, 4, 11);
  ASSERT_FALSE(e.hints.empty());
  EXPECT_NE(e.hints.back().find("1 more problem(s)"), std::string::npos) << e.hints.back();
}

TEST(ManifestReader, MissingFile) {
  auto r = format::load_manifest("/nonexistent/stack.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, util::ErrorCode::not_found);
  EXPECT_NE(r.error().context.find("/nonexistent/stack.toml"), std::string::npos) << r.error().context;
}

// A value of megabytes (a mangled or hostile manifest) is quoted once, cut, and the excerpt under
// the message is a window around the caret, not the whole line.
TEST(ManifestReader, AHugeValueIsQuotedOnceAndCut) {
  const std::string huge(5'000'000, 'A');
  for (const std::string& text : {"schema = 1\nname = \"x\"\n[cudnn]\nversion = \"" + huge + "\"\ncuda = 12\n",
                                  "schema = 1\nname = \"" + huge + "\"\n[cudnn]\nversion = \"9.1.0.70\"\ncuda = 12\n",
                                  "schema = 1\nname = \"x\"\nkey" + huge + " = 1\n",
                                  "schema = 1\nname = \"x\"\n[cudnn]\nversion = \"9.1.0.70\"\ncuda = 12\n[[cudnn.archives]]\nplatform = "
                                  "\"linux-x86_64\"\nfile = \"a/" +
                                      huge + "\"\nsha256 = \"" + std::string(64, '0') + "\"\n"}) {
    auto m = format::parse_manifest(text, "huge.toml");
    ASSERT_FALSE(m.ok());
    const auto& e = m.error();
    EXPECT_LT(e.message.size(), 600u) << e.message.substr(0, 300);
    EXPECT_NE(e.message.find("bytes in all"), std::string::npos) << e.message.substr(0, 300);
    ASSERT_TRUE(e.where.has_value());
    EXPECT_LE(e.where->excerpt.size(), 170u);
    EXPECT_GT(e.where->column, 0);
    EXPECT_LE(static_cast<std::size_t>(e.where->column), e.where->excerpt.size() + 1);
  }
}

TEST(ManifestReader, ReadsCudaComponentsAndTheirArchives) {
  auto m = format::parse_manifest(base() + R"([cuda]
version = "12.4.1"
components = ["runtime", "cufft", "libcurand"]

[[cuda.archives]]
component = "cuda_cudart"
platform = "linux-x86_64"
url = "https://developer.download.nvidia.com/compute/cuda/redist/cuda_cudart/linux-x86_64/cuda_cudart-linux-x86_64-12.4.127-archive.tar.xz"
sha256 = "0483BFF9A36E7A44465DB3CD42874F6F70F019297DCF803FBEFCBF58D7448C8F"
size = 1099680

[[cuda.archives]]
component = "cuda_cudart"
platform = "windows-x86_64"
origin = "local"
file = "cudart-repack.zip"
)",
                                  "m.toml");
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(m->cuda);
  ASSERT_EQ(m->cuda->components.size(), 3u);
  EXPECT_EQ(m->cuda->components[1].value, "cufft");
  EXPECT_EQ(m->cuda->components[1].pos.line, 5);
  EXPECT_EQ(m->cuda->components_pos.line, 5);
  ASSERT_EQ(m->cuda->archives.size(), 2u);
  const auto& a = m->cuda->archives[0];
  ASSERT_TRUE(a.component);
  EXPECT_EQ(a.component->value, "cuda_cudart");
  EXPECT_EQ(a.pos.line, 7);
  EXPECT_EQ(a.sha256->value, "0483bff9a36e7a44465db3cd42874f6f70f019297dcf803fbefcbf58d7448c8f");
  EXPECT_EQ(a.size->value, 1099680u);
  EXPECT_EQ(a.file_name(), "cuda_cudart-linux-x86_64-12.4.127-archive.tar.xz");
  EXPECT_EQ(m->cuda->archives[1].origin.value, model::Origin::local);
  EXPECT_FALSE(m->cudnn) << "a toolkit alone needs no [cudnn]";
  // and a manifest without components reads as before
  auto plain = format::parse_manifest(base() + "[cuda]\nversion = \"12.4.1\"\n", "m.toml");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->cuda->components.empty());
  EXPECT_TRUE(plain->cuda->archives.empty());
}

TEST(ManifestReader, RefusesBadCudaComponentsAtTheirEntry) {
  auto twice = parse_error(base() + "[cuda]\nversion = \"12.4.1\"\ncomponents = [\"runtime\",\n  \"runtime\"]\n");
  EXPECT_NE(twice.message.find("lists \"runtime\" twice (first on line 5)"), std::string::npos) << twice.message;
  expect_at(twice, 6, 3);
  auto type = parse_error(base() + "[cuda]\nversion = \"12.4.1\"\ncomponents = [\"runtime\", 12]\n");
  EXPECT_NE(type.message.find("must list strings"), std::string::npos) << type.message;
  auto name = parse_error(base() + "[cuda]\nversion = \"12.4.1\"\ncomponents = [\"../../etc\"]\n");
  EXPECT_NE(name.message.find("is not a component name"), std::string::npos) << name.message;
  expect_at(name, 5, 15);
  auto empty = parse_error(base() + "[cuda]\nversion = \"12.4.1\"\ncomponents = []\n");
  EXPECT_NE(empty.message.find("is empty"), std::string::npos) << empty.message;
  auto no_component = parse_error(base() + "[cuda]\nversion = \"12.4.1\"\n[[cuda.archives]]\nplatform = \"linux-x86_64\"\n");
  EXPECT_NE(no_component.message.find("cuda.archives[1].component"), std::string::npos) << no_component.message;
  auto dup = parse_error(base() +
                         "[cuda]\nversion = \"12.4.1\"\n[[cuda.archives]]\ncomponent = \"libcublas\"\nplatform = \"linux-x86_64\"\n"
                         "[[cuda.archives]]\ncomponent = \"libcublas\"\nplatform = \"linux-x86_64\"\n");
  EXPECT_NE(dup.message.find("duplicate archive for libcublas on platform \"linux-x86_64\" (already pinned on line 7)"), std::string::npos)
      << dup.message;
  expect_at(dup, 10, 12);
  // the same platform for two components is fine
  auto two =
      format::parse_manifest(base() +
                                 "[cuda]\nversion = \"12.4.1\"\n[[cuda.archives]]\ncomponent = \"libcublas\"\nplatform = \"linux-x86_64\"\n"
                                 "[[cuda.archives]]\ncomponent = \"cuda_cudart\"\nplatform = \"linux-x86_64\"\n",
                             "m.toml");
  EXPECT_TRUE(two.ok()) << two.error().message;
}

TEST(ManifestReader, GpusAreComputeCapabilitiesAndModelNames) {
  auto m =
      format::parse_manifest(base() + "[gpus]\narch = [\"8.6\", \"12.0\"]\nmodels = [\"RTX 4090\", \"NVIDIA H100 80GB HBM3\"]\n", "m.toml");
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(m->gpus.has_value());
  ASSERT_EQ(m->gpus->arch.size(), 2u);
  EXPECT_EQ(m->gpus->arch[1].value.text(), "12.0");
  EXPECT_EQ(m->gpus->arch[1].pos.line, 4);
  ASSERT_EQ(m->gpus->models.size(), 2u);
  EXPECT_EQ(m->gpus->models[0].value, "RTX 4090");
}

TEST(ManifestReader, GpuEntriesThatAreNotComputeCapabilitiesPointAtTheEntry) {
  struct Case {
    std::string body;
    int line, column;
    std::vector<std::string> words;
  };
  for (const auto& c : std::vector<Case>{
           {"arch = [\"sm_86\"]", 4, 9, {"\"sm_86\" is not a compute capability", "\"8.6\" for sm_86"}},
           {"arch = [\"8\"]", 4, 9, {"\"8\" is not a compute capability", "major.minor"}},
           {"arch = [\"8.6.1\"]", 4, 9, {"is not a compute capability"}},
           {"arch = [\"8.10\"]", 4, 9, {"is not a compute capability"}},
           {"arch = [\"8.6\", \"8.6\"]", 4, 16, {"lists 8.6 twice"}},
           {"arch = [86]", 4, 9, {"must list strings"}},
           {"models = [\"\"]", 4, 11, {"is not a GPU name"}},
           {"arch = []", 3, 1, {"[gpus] names no GPU"}},
           {"archs = [\"8.6\"]", 4, 1, {"archs"}},
       }) {
    SCOPED_TRACE(c.body);
    auto e = parse_error(base() + "[gpus]\n" + c.body + "\n");
    expect_at(e, c.line, c.column);
    std::string all = e.message;
    for (const auto& h : e.hints) all += " | " + h;
    for (const auto& w : c.words) EXPECT_NE(all.find(w), std::string::npos) << all;
  }
}

}  // namespace manifest_reader_test
