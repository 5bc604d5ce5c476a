// `stackpin inspect` on libraries compiled here by the real nvcc (several -gencode targets,
// sm_90a, sm_100f, PTX only, each --compress-mode), the same containers in the .nv_fatb section
// of a DLL built with mingw, a wheel and an NVIDIA-named archive made at test time, and the real
// cuDNN under /usr/local/cuda where the machine has it. Skips, saying why, without nvcc.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fixtures.hpp"
#include "test_support.hpp"

namespace cli_inspect_test {

using nlohmann::json;
using testing_support::contains;
using testing_support::read_text;
using testing_support::run_process;
using testing_support::ScratchDir;
using testing_support::stackpin;
namespace fs = std::filesystem;

namespace {

std::string nvcc() {
  for (const char* p : {"/usr/local/cuda/bin/nvcc"})
    if (fs::exists(p)) return p;
  return testing_support::have_tool("nvcc") ? testing_support::tool_path("nvcc") : std::string();
}

const char* k_kernel = "__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n";

class CliInspect : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (nvcc().empty()) return;
    s_dir = new ScratchDir();
    fs::path cu = s_dir->write("k.cu", k_kernel);
    auto build = [&](const std::string& name, std::vector<std::string> flags) {
      std::vector<std::string> argv{nvcc(), "-shared", "-Xcompiler", "-fPIC", "-o", (s_dir->path() / name).string(), cu.string()};
      argv.insert(argv.end(), flags.begin(), flags.end());
      auto r = run_process(argv);
      if (r.exit_code != 0) s_error += name + ": " + testing_support::show(r);
    };
    // one nvcc run per compression mode: zstd (size), lz4 (speed), none
    build("libmulti.so", {"-gencode", "arch=compute_75,code=sm_75", "-gencode", "arch=compute_90a,code=sm_90a", "-gencode",
                          "arch=compute_100f,code=sm_100f", "-gencode", "arch=compute_120,code=compute_120", "--compress-mode=size"});
    build("libptx.so", {"-gencode", "arch=compute_80,code=compute_80", "--compress-mode=speed"});
    build("libplain.so", {"-gencode", "arch=compute_86,code=sm_86", "--compress-mode=none"});
  }
  static void TearDownTestSuite() {
    delete s_dir;
    s_dir = nullptr;
  }
  void SetUp() override {
    if (!s_dir) GTEST_SKIP() << "no nvcc on this machine (/usr/local/cuda/bin/nvcc or PATH): the libraries are compiled by it";
    ASSERT_TRUE(s_error.empty()) << s_error;
  }
  static fs::path lib(const std::string& name) { return s_dir->path() / name; }
  static json inspect_json(const std::vector<std::string>& args, int expect_exit = 0) {
    std::vector<std::string> a{"inspect"};
    a.insert(a.end(), args.begin(), args.end());
    a.push_back("--json");
    auto r = stackpin(a);
    EXPECT_EQ(r.exit_code, expect_exit) << r.out << r.err;
    return json::parse(r.out);
  }
  static ScratchDir* s_dir;
  static std::string s_error;
};
ScratchDir* CliInspect::s_dir = nullptr;
std::string CliInspect::s_error;

std::vector<std::string> list(const json& j) { return j.get<std::vector<std::string>>(); }

TEST_F(CliInspect, ReadsWhatNvccBuiltTargetsVariantsIsaAndCompression) {
  auto j = inspect_json({lib("libmulti.so").string(), lib("libptx.so").string(), lib("libplain.so").string()});
  ASSERT_EQ(j["report"]["libraries"].size(), 3u) << j.dump(2);
  const auto& multi = j["report"]["libraries"][0];
  EXPECT_EQ(multi["format"], "ELF");
  EXPECT_EQ(list(multi["sass"]), (std::vector<std::string>{"sm_75", "sm_90a", "sm_100f"})) << multi.dump(2);
  EXPECT_EQ(list(multi["ptx"]), std::vector<std::string>{"compute_120"});
  for (const auto& t : multi["targets"]) {
    EXPECT_EQ(t["compressed"]["zstd"], t["images"]) << t.dump();  // --compress-mode=size compresses every image with zstd
    if (t["kind"] == "ptx") EXPECT_EQ(t["ptx_isa"], "9.0") << "nvcc 13.0 writes PTX ISA 9.0";
  }
  const auto& ptx = j["report"]["libraries"][1];
  EXPECT_TRUE(ptx["sass"].empty()) << ptx.dump(2);
  EXPECT_EQ(list(ptx["ptx"]), std::vector<std::string>{"compute_80"});
  EXPECT_EQ(ptx["targets"][0]["compressed"]["lz4"], 1) << "--compress-mode=speed is lz4";
  const auto& plain = j["report"]["libraries"][2];
  EXPECT_EQ(list(plain["sass"]), std::vector<std::string>{"sm_86"});
  EXPECT_EQ(plain["targets"][0]["compressed"]["none"], plain["targets"][0]["images"]);
  EXPECT_EQ(plain["targets"][0]["uncompressed_bytes"], plain["targets"][0]["stored_bytes"]);
}

TEST_F(CliInspect, JudgesEachGpuNativeThroughPtxOrNotAtAll) {
  auto r = stackpin({"inspect", lib("libmulti.so").string(), "--gpu", "9.0", "--gpu", "sm_75", "--gpu", "12.0", "--gpu", "8.6"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // nothing for 8.6: sm_75 is another major, compute_120 is newer
  EXPECT_TRUE(contains(r.out, "on 9.0: native (sm_90a)")) << r.out;
  EXPECT_TRUE(contains(r.out, "on 7.5: native (sm_75)")) << r.out;
  EXPECT_TRUE(contains(r.out, "on 12.0: jit (compute_120)")) << r.out;
  EXPECT_TRUE(contains(r.out, "on 8.6: none")) << r.out;
  EXPECT_TRUE(contains(r.out, "error [kernels.none] " + lib("libmulti.so").string() + " on compute capability 8.6 (Ampere)")) << r.out;
  EXPECT_TRUE(contains(r.out, "warning [kernels.jit]")) << r.out;
  EXPECT_TRUE(contains(r.out, "a driver of CUDA 13.0 (580")) << r.out;  // PTX ISA 9.0 -> CUDA 13.0 -> its minimum driver

  // the same library on a driver too old for its PTX is an error; on a new enough one a warning,
  // and --strict makes that fail
  auto old = stackpin({"inspect", lib("libptx.so").string(), "--gpu", "RTX 4090", "--driver", "550.54.14", "--driver-os", "linux"});
  EXPECT_EQ(old.exit_code, 1) << old.out << old.err;
  EXPECT_TRUE(contains(old.out, "error [kernels.ptx-too-new]")) << old.out;
  auto fine = stackpin({"inspect", lib("libptx.so").string(), "--gpu", "8.9", "--driver", "590.44.01", "--driver-os", "linux"});
  EXPECT_EQ(fine.exit_code, 0) << fine.out << fine.err;
  EXPECT_EQ(stackpin({"inspect", lib("libptx.so").string(), "--gpu", "8.9", "--strict"}).exit_code, 1);
}

TEST_F(CliInspect, ReadsTheGpusOfAManifest) {
  ScratchDir d;
  auto m = d.write("stack.toml", "schema = 1\nname = \"lab\"\n[cuda]\nversion = \"13.0.2\"\n[gpus]\narch = [\"8.6\", \"9.0\"]\n");
  auto j = inspect_json({lib("libplain.so").string(), "--manifest", m.string()}, 1);
  EXPECT_EQ(list(j["report"]["gpus"]), (std::vector<std::string>{"8.6", "9.0"})) << j.dump(2);
  const auto& fits = j["report"]["libraries"][0]["gpus"];
  ASSERT_EQ(fits.size(), 2u);
  EXPECT_EQ(fits[0]["fit"], "native");
  EXPECT_EQ(fits[1]["fit"], "none");
  EXPECT_FALSE(j["ok"]);
}

TEST_F(CliInspect, WalksATreeAWheelAndTheSameContainersInADll) {
  ScratchDir d;
  fs::create_directories(d.path() / "site-packages/nvidia/cudnn/lib");
  fs::copy_file(lib("libplain.so"), d.path() / "site-packages/nvidia/cudnn/lib/libcudnn_cnn.so.9");
  d.write("site-packages/nvidia/cudnn/__init__.py", "");
  fs::create_symlink("libcudnn_cnn.so.9", d.path() / "site-packages/nvidia/cudnn/lib/libcudnn_cnn.so");
  // one sub-library alone, without a soname: not a whole cuDNN (exit 1)
  auto tree = inspect_json({(d.path() / "site-packages").string()}, 1);
  ASSERT_EQ(tree["report"]["libraries"].size(), 1u) << tree.dump(2);
  ASSERT_EQ(tree["findings"].size(), 1u) << tree.dump(2);
  EXPECT_EQ(tree["findings"][0]["rule"], "cudnn.whole");
  EXPECT_TRUE(contains(tree["findings"][0]["seen"].get<std::string>(), "missing libcudnn.so.9")) << tree.dump(2);
  EXPECT_TRUE(contains(tree["findings"][0]["seen"].get<std::string>(), "libcudnn_cnn.so.9 has no soname of its own"))
      << tree.dump(2);  // the link is not read twice; the .py is not a library
  EXPECT_TRUE(contains(tree["report"]["libraries"][0]["path"].get<std::string>(), "nvidia/cudnn/lib/libcudnn_cnn.so.9"));

  fixtures::write_archive(d.path() / "nvidia_cudnn_cu13-9.19.0.56-py3-none-manylinux_2_27_x86_64.whl", fixtures::Format::zip,
                          {{"nvidia/cudnn/lib/libcudnn_cnn.so.9", fixtures::Kind::file, read_text(lib("libmulti.so"))},
                           {"nvidia/cudnn/__init__.py", fixtures::Kind::file, ""}});
  auto wheel = inspect_json({(d.path() / "nvidia_cudnn_cu13-9.19.0.56-py3-none-manylinux_2_27_x86_64.whl").string()}, 1);
  ASSERT_EQ(wheel["report"]["archives"].size(), 1u) << wheel.dump(2);
  EXPECT_EQ(wheel["report"]["archives"][0]["libraries"], 1);
  EXPECT_EQ(wheel["report"]["archives"][0]["sha256"].get<std::string>().size(), 64u);
  EXPECT_TRUE(wheel["report"]["archives"][0]["pinned_by"].is_null());
  EXPECT_TRUE(contains(wheel["report"]["libraries"][0]["path"].get<std::string>(), ".whl!nvidia/cudnn/lib/libcudnn_cnn.so.9"));
  EXPECT_EQ(list(wheel["report"]["libraries"][0]["sass"]), (std::vector<std::string>{"sm_75", "sm_90a", "sm_100f"}));

  const std::string mingw =
      testing_support::have_tool("x86_64-w64-mingw32-gcc") ? testing_support::tool_path("x86_64-w64-mingw32-gcc") : "";
  if (mingw.empty()) GTEST_SKIP() << "no x86_64-w64-mingw32-gcc: the DLL part needs it (scripts/test.sh installs it)";
  // the containers of libplain.so, placed where nvcc puts them in a Windows DLL
  auto lib_json = inspect_json({lib("libplain.so").string()});
  std::string so = read_text(lib("libplain.so"));
  auto sections = run_process({testing_support::tool_path("readelf"), "-SW", lib("libplain.so").string()});
  auto at = sections.out.find(".nv_fatbin");
  ASSERT_NE(at, std::string::npos) << sections.out;
  std::istringstream fields(sections.out.substr(at));
  std::string name, type, addr, off, size;
  fields >> name >> type >> addr >> off >> size;
  std::string bytes = so.substr(std::stoul(off, nullptr, 16), std::stoul(size, nullptr, 16));
  std::string c = "__attribute__((section(\".nv_fatb\"), used, aligned(8))) const unsigned char fatbin[] = {";
  for (unsigned char b : bytes) c += std::to_string(b) + ",";
  c += "};\n__declspec(dllexport) int probe(void) { return fatbin[0]; }\n";
  auto src = d.write("dll.c", c);
  auto built = run_process({mingw, "-shared", "-o", (d.path() / "cudnn_cnn64_9.dll").string(), src.string()});
  ASSERT_EQ(built.exit_code, 0) << testing_support::show(built);
  auto dll = inspect_json({(d.path() / "cudnn_cnn64_9.dll").string()});
  EXPECT_EQ(dll["report"]["libraries"][0]["format"], "PE");
  EXPECT_EQ(dll["report"]["libraries"][0]["sections"], json::array({".nv_fatb"}));
  EXPECT_EQ(dll["report"]["libraries"][0]["targets"], lib_json["report"]["libraries"][0]["targets"]);
}

TEST_F(CliInspect, AnArchiveNamedAsNvidiasMustBeNvidiasBytes) {
  ScratchDir d;
  // a name the knowledge base pins, with other bytes: refused before anything is unpacked
  auto fake = d.path() / "cudnn-linux-x86_64-9.19.0.56_cuda13-archive.tar.xz";
  fixtures::write_archive(fake, fixtures::Format::tar_xz,
                          {{"cudnn/lib/libcudnn_cnn.so.9", fixtures::Kind::file, read_text(lib("libplain.so"))}});
  auto r = stackpin({"inspect", fake.string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "9.19.0.56")) << r.err;
  EXPECT_TRUE(contains(r.err, "size") || contains(r.err, "SHA-256")) << r.err;
  // under another name it is read, hashed here
  auto local = d.path() / "repack.tar.xz";
  fs::copy_file(fake, local);
  auto j = inspect_json({local.string()}, 1);  // one sub-library alone: not whole
  EXPECT_EQ(j["report"]["libraries"][0]["path"], local.string() + "!cudnn/lib/libcudnn_cnn.so.9");
}

// `lock` reads the GPU code of the archives it has at hand (proven by their hashes first) into
// the lock; `check` then judges [gpus] by those libraries, before NVIDIA's support matrix, and
// says so; a lock of other bytes, or one that cannot be read, leaves the judgement to the documents.
TEST_F(CliInspect, LockRecordsTheArchivesGpuCodeAndCheckJudgesByIt) {
  ScratchDir d;
  fs::create_directories(d.path() / "archives");
  const std::string top = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive/";
  auto archive = d.path() / "archives" / "cudnn-local-9.1.0.70.tar.xz";
  fixtures::write_archive(archive, fixtures::Format::tar_xz,
                          {{top + "include/cudnn_version.h", fixtures::Kind::file, "#define CUDNN_MAJOR 9\n"},
                           {top + "lib/libcudnn_cnn.so.9.1.0", fixtures::Kind::file, read_text(lib("libmulti.so"))},
                           {top + "lib/libcudnn_cnn.so.9", fixtures::Kind::symlink, "", "libcudnn_cnn.so.9.1.0"}});
  // 6.1: nothing runs there; 7.5: sm_75; 10.3: sm_100f (its family); 12.0: only the PTX (compute_120)
  auto manifest = d.write("stack.toml", fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"linux-x86_64", fixtures::info(archive)}},
                                                                 "\n[gpus]\narch = [\"6.1\", \"7.5\", \"10.3\", \"12.0\"]\n"));
  auto before = stackpin({"check", manifest.string(), "--json"});
  ASSERT_FALSE(contains(before.out, "judged by the libraries")) << before.out;

  // NVIDIA's matrix lists 6.1 for cuDNN 9.1, but this archive's library carries nothing for it:
  // lock reads the library before it judges the stack, and refuses it
  auto refused =
      stackpin({"lock", manifest.string(), "--archives", (d.path() / "archives").string(), "--cache-dir", (d.path() / "cache").string()});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_TRUE(contains(refused.err, "does not pass `stackpin check`")) << refused.err;
  EXPECT_TRUE(contains(refused.err, "carries nothing that runs on 6.1")) << refused.err;
  EXPECT_FALSE(fs::exists(d.path() / "stack.lock"));
  // the lock is made without the 6.1 GPU; check then judges a manifest with it by that lock
  auto without = d.write("without.toml", fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"linux-x86_64", fixtures::info(archive)}},
                                                                  "\n[gpus]\narch = [\"7.5\", \"10.3\", \"12.0\"]\n"));
  auto lock = stackpin({"lock", without.string(), "--archives", (d.path() / "archives").string(), "--cache-dir",
                        (d.path() / "cache").string(), "--output", (d.path() / "stack.lock").string()});
  ASSERT_EQ(lock.exit_code, 0) << lock.out << lock.err;
  EXPECT_TRUE(contains(lock.out, "kernels   GPU code of 1 of 4 archives (1 library with SASS or PTX)")) << lock.out;
  std::string text = read_text(d.path() / "stack.lock");
  EXPECT_TRUE(contains(text, "kernels_read = true")) << text;
  EXPECT_TRUE(contains(text, "path = \"" + top +
                                 "lib/libcudnn_cnn.so.9.1.0\"\nsass = [\"sm_75\", \"sm_90a\", \"sm_100f\"]\n"
                                 "ptx = [{ target = \"compute_120\", isa = \"9.0\" }]"))
      << text;

  auto check = stackpin({"check", manifest.string(), "--lock", (d.path() / "stack.lock").string(), "--json"});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  std::map<std::string, json> by_gpu;
  const json checked = json::parse(check.out);
  for (const auto& f : checked["findings"])
    if (f["rule"] == "gpu.cudnn") by_gpu[f["subject"].get<std::string>().substr(4, 4)] = f;
  ASSERT_EQ(by_gpu.size(), 4u) << check.out;
  EXPECT_EQ(by_gpu["6.1 "]["severity"], "error") << by_gpu["6.1 "].dump(2);
  EXPECT_TRUE(contains(by_gpu["6.1 "]["seen"], "libcudnn_cnn.so.9.1.0 (sm_75 sm_90a sm_100f compute_120) carries nothing that runs on 6.1"))
      << by_gpu["6.1 "].dump(2);
  EXPECT_TRUE(contains(by_gpu["6.1 "]["fix"], "pin cuDNN")) << by_gpu["6.1 "].dump(2);
  EXPECT_TRUE(contains(by_gpu["6.1 "]["source"], "read by `stackpin lock` from the pinned bytes")) << by_gpu["6.1 "].dump(2);
  EXPECT_EQ(by_gpu["7.5 "]["severity"], "ok");
  EXPECT_TRUE(contains(by_gpu["7.5 "]["seen"], "judged by the libraries themselves")) << by_gpu["7.5 "].dump(2);
  EXPECT_EQ(by_gpu["10.3"]["severity"], "ok") << by_gpu["10.3"].dump(2);
  EXPECT_EQ(by_gpu["12.0"]["severity"], "warning") << by_gpu["12.0"].dump(2);
  EXPECT_TRUE(contains(by_gpu["12.0"]["seen"], "the driver compiles its PTX (compute_120, ISA 9.0) at first use"))
      << by_gpu["12.0"].dump(2);

  // locking again without the archives keeps what was read: the same bytes, the same lock
  auto again =
      stackpin({"lock", without.string(), "--cache-dir", (d.path() / "cache").string(), "--output", (d.path() / "stack.lock").string()});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_TRUE(contains(again.out, "unchanged")) << again.out;
  EXPECT_EQ(stackpin({"lock", without.string(), "--check", "--cache-dir", (d.path() / "cache").string(), "--output",
                      (d.path() / "stack.lock").string()})
                .exit_code,
            0);

  // a lock of other bytes than the manifest pins now is no evidence for it
  auto other =
      d.write("other.toml", fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"linux-x86_64", fixtures::info(lib("libplain.so"))}},
                                                     "\n[gpus]\narch = [\"6.1\"]\n"));
  auto stale = stackpin({"check", other.string(), "--lock", (d.path() / "stack.lock").string(), "--json"});
  EXPECT_FALSE(contains(stale.out, "judged by the libraries")) << stale.out;
  EXPECT_FALSE(contains(stale.out, "read by `stackpin lock`")) << stale.out;

  // a hand-edited lock is read strictly: a warning naming its line, and the documents decide
  std::string edited = text;
  edited.replace(edited.find("\"sm_75\""), 7, "\"sm_7x\"");
  d.write("stack.lock", edited);
  auto broken = stackpin({"check", manifest.string(), "--lock", (d.path() / "stack.lock").string()});
  EXPECT_TRUE(contains(broken.out, "stack.lock")) << broken.out;
  EXPECT_TRUE(contains(broken.out, "sm_7x")) << broken.out;
  EXPECT_TRUE(contains(broken.out, "not a SASS target")) << broken.out;
  EXPECT_FALSE(contains(broken.out, "judged by the libraries")) << broken.out;

  // an archive at hand that is not the pinned bytes is not read; the lock is still written
  fs::remove(d.path() / "stack.lock");
  fs::copy_file(lib("libplain.so"), d.path() / "archives" / "cudnn-local-9.1.0.70.tar.xz", fs::copy_options::overwrite_existing);
  auto swapped =
      stackpin({"lock", manifest.string(), "--archives", (d.path() / "archives").string(), "--cache-dir", (d.path() / "cache").string()});
  EXPECT_EQ(swapped.exit_code, 0) << swapped.out << swapped.err;
  EXPECT_FALSE(contains(read_text(d.path() / "stack.lock"), "kernels_read")) << read_text(d.path() / "stack.lock");
}

TEST_F(CliInspect, ALibraryThatCarriesWhatTheDocumentsRuleOutIsLockedByItsCode) {
  ScratchDir d;
  // libplain's one image relabelled sm_70: code for a GPU that CUDA 13 dropped (the documents say
  // no CUDA 13 library carries any), as a vendor's own build of the libraries might still have
  std::string so = read_text(lib("libplain.so"));
  const auto at = so.find(std::string("\x50\xed\x55\xba", 4));
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(static_cast<unsigned char>(so[at + 16 + 28]), 86u);  // the first image's architecture
  so[at + 16 + 28] = 70;
  const std::string top = "cudnn-linux-x86_64-9.13.0.50_cuda13-archive/";
  auto archive = d.path() / "archives" / "cudnn-local-9.13.0.50.tar.xz";
  fs::create_directories(archive.parent_path());
  fixtures::write_archive(archive, fixtures::Format::tar_xz,
                          {{top + "include/cudnn_version.h", fixtures::Kind::file, "#define CUDNN_MAJOR 9\n"},
                           {top + "lib/libcudnn_cnn.so.9.13.0", fixtures::Kind::file, so},
                           {top + "lib/libcudnn_cnn.so.9", fixtures::Kind::symlink, "", "libcudnn_cnn.so.9.13.0"}});
  auto manifest = d.write("stack.toml", fixtures::local_manifest("9.13.0.50", 13, "13.0.2", {{"linux-x86_64", fixtures::info(archive)}},
                                                                 "\n[gpus]\narch = [\"7.0\"]\n"));
  // without the archive the documents decide: refused
  auto documents = stackpin({"lock", manifest.string(), "--cache-dir", (d.path() / "cache").string()});
  EXPECT_EQ(documents.exit_code, 1) << documents.out << documents.err;
  EXPECT_TRUE(contains(documents.err, "removed library and offline-compilation support for 7.0")) << documents.err;
  EXPECT_FALSE(fs::exists(d.path() / "stack.lock"));
  // with it, the library's own sm_70 SASS decides
  auto lock =
      stackpin({"lock", manifest.string(), "--archives", (d.path() / "archives").string(), "--cache-dir", (d.path() / "cache").string()});
  ASSERT_EQ(lock.exit_code, 0) << lock.out << lock.err;
  const std::string text = read_text(d.path() / "stack.lock");
  EXPECT_TRUE(contains(text, "sass = [\"sm_70\"")) << text;
  EXPECT_TRUE(contains(text, "compute_capability = \"7.0\"\narchitecture = \"Volta\"\ncudnn = \"supported\"")) << text;
  auto check = stackpin({"check", manifest.string(), "--json"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_TRUE(contains(check.out, "carry SASS that runs on 7.0 (judged by the libraries themselves")) << check.out;

  // libraries that carry no GPU code at all overturn nothing: the documents still refuse
  auto bare = d.path() / "bare" / "cudnn-local-9.13.0.50.tar.xz";
  fs::create_directories(bare.parent_path());
  fixtures::write_archive(bare, fixtures::Format::tar_xz,
                          {{top + "include/cudnn_version.h", fixtures::Kind::file, "#define CUDNN_MAJOR 9\n"},
                           {top + "lib/libcudnn_cnn.so.9", fixtures::Kind::file, fixtures::elf_library("libcudnn_cnn.so.9", {}, "", 0)}});
  auto bare_manifest = d.write("bare.toml", fixtures::local_manifest("9.13.0.50", 13, "13.0.2", {{"linux-x86_64", fixtures::info(bare)}},
                                                                     "\n[gpus]\narch = [\"7.0\"]\n"));
  auto refused =
      stackpin({"lock", bare_manifest.string(), "--archives", bare.parent_path().string(), "--cache-dir", (d.path() / "cache").string()});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_TRUE(contains(refused.err, "removed library and offline-compilation support for 7.0")) << refused.err;
  EXPECT_FALSE(fs::exists(d.path() / "bare.lock"));
}

TEST_F(CliInspect, BadInputGetsAClearErrorNamingIt) {
  ScratchDir d;
  auto missing = stackpin({"inspect", (d.path() / "nope.so").string()});
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  EXPECT_TRUE(contains(missing.err, "nope.so does not exist")) << missing.err;
  auto text = d.write("notes.txt", "hello");
  auto not_lib = stackpin({"inspect", text.string()});
  EXPECT_TRUE(contains(not_lib.err, "notes.txt is not a library")) << not_lib.err;
  // a library whose container claims more bytes than it has, named directly and inside a tree
  std::string so = read_text(lib("libplain.so"));
  auto at = so.find(std::string("\x50\xed\x55\xba", 4));
  ASSERT_NE(at, std::string::npos);
  so[at + 12] = '\x7f';  // the container's size, now far past its section
  fs::create_directories(d.path() / "tree");
  std::ofstream(d.path() / "tree/libbroken.so", std::ios::binary) << so;
  fs::copy_file(lib("libplain.so"), d.path() / "tree/libgood.so");
  auto direct = stackpin({"inspect", (d.path() / "tree/libbroken.so").string()});
  EXPECT_EQ(direct.exit_code, 1) << direct.err;
  EXPECT_TRUE(contains(direct.err, "libbroken.so: fatbin container claims")) << direct.err;
  EXPECT_TRUE(contains(direct.err, "at file offset 0x")) << direct.err;
  EXPECT_TRUE(contains(direct.err, "truncated")) << direct.err;
  auto tree = inspect_json({(d.path() / "tree").string()}, 1);
  ASSERT_EQ(tree["findings"].size(), 1u) << tree.dump(2);
  EXPECT_EQ(tree["findings"][0]["rule"], "inspect.unreadable");
  EXPECT_EQ(tree["report"]["libraries"].size(), 1u);  // the good one is still read
  auto gpu = stackpin({"inspect", lib("libplain.so").string(), "--gpu", "Quadro Nonexistent 9000"});
  EXPECT_EQ(gpu.exit_code, 2) << gpu.err;
  EXPECT_TRUE(contains(gpu.err, "--gpu Quadro Nonexistent 9000")) << gpu.err;
}

TEST_F(CliInspect, ReadsTheRealCudnnOfThisMachine) {
  const fs::path cnn = "/usr/local/cuda/lib64/libcudnn_cnn.so.9";
  if (!fs::exists(cnn)) GTEST_SKIP() << "no cuDNN 9 under /usr/local/cuda/lib64";
  auto j = inspect_json({cnn.string(), "--gpu", "6.1"}, 1);
  const auto& l = j["report"]["libraries"][0];
  EXPECT_FALSE(l["sass"].empty()) << l.dump(2);
  EXPECT_GT(l["containers"].get<int>(), 0);
  for (const auto& s : l["sass"]) EXPECT_GE(std::stoi(s.get<std::string>().substr(3)), 70) << "cuDNN 9 has no kernels below Volta";
  EXPECT_EQ(l["gpus"][0]["fit"], "none") << "no cuDNN 9 build runs on Pascal";
}

}  // namespace

}  // namespace cli_inspect_test
