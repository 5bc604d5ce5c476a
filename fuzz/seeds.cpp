// Writes the seed corpus of every fuzz target into OUT/<target>/: the project's own test data
// (manifests, locks, NVIDIA's redistrib files), this machine's ld.so cache and a few of its ELF
// files, and what the test fixtures make (cuDNN archives in NVIDIA's layouts, the hostile set,
// receipts and journals of real stagings). Deterministic; run by scripts/fuzz.sh and by CTest.
//
//   stackpin_fuzz_seeds OUT
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "crypto/sha256.hpp"
#include "fixtures.hpp"
#include "format/receipt.hpp"
#include "test_support.hpp"

namespace {
namespace fs = std::filesystem;
using fixtures::Entry;
using fixtures::Format;
using fixtures::Kind;

fs::path g_out;
int g_count = 0;

void put(const std::string& target, const std::string& name, const std::string& bytes) {
  fs::create_directories(g_out / target);
  std::ofstream(g_out / target / name, std::ios::binary) << bytes;
  ++g_count;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void copy_matching(const std::string& target, const fs::path& dir, const std::string& ext, std::size_t max_bytes = 4u << 20) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  std::vector<fs::path> files;
  for (auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().string().size() >= ext.size() &&
        e.path().string().compare(e.path().string().size() - ext.size(), ext.size(), ext) == 0 && e.file_size() <= max_bytes)
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) put(target, f.parent_path().filename().string() + "-" + f.filename().string(), slurp(f));
}

std::string archive_bytes(Format fmt, const std::vector<Entry>& es) {
  testing_support::ScratchDir d;
  auto p = d.path() / "a";
  fixtures::write_archive(p, fmt, es);
  return slurp(p);
}

void archives() {
  fixtures::CudnnOptions small;
  small.library_bytes = 64;
  auto lin = fixtures::cudnn_linux_entries("9.1.0.70", 12, small);
  auto lin8 = fixtures::cudnn_linux_entries("8.9.7.29", 12, small);
  auto win = fixtures::cudnn_windows_entries("9.1.0.70", 12, small);
  const std::string top = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive/";
  for (auto [fmt, ext] : {std::pair{Format::tar_xz, "tar.xz"}, std::pair{Format::tar_gz, "tar.gz"}, std::pair{Format::tar, "tar"}}) {
    put("stage", std::string("cudnn9.") + ext, archive_bytes(fmt, lin));
    put("extract", std::string("cudnn9.") + ext, archive_bytes(fmt, lin));
  }
  put("extract", "cudnn8.tar.xz", archive_bytes(Format::tar_xz, lin8));
  put("extract", "cudnn9-windows.zip", archive_bytes(Format::zip, win));
  put("zip_directory", "cudnn9-windows.zip", archive_bytes(Format::zip, win));
  // the hostile set, as the extraction tests write it
  std::vector<std::pair<std::string, std::vector<Entry>>> hostile = {
      {"dotdot", {{"../outside/evil.txt", Kind::file, "evil"}}},
      {"absolute", {{"/tmp/evil.txt", Kind::file, "evil"}}},
      {"symlink-out", {{"d", Kind::dir}, {"d/l", Kind::symlink, "", "../../etc/passwd"}}},
      {"two-step", {{"d", Kind::dir}, {"d/s", Kind::symlink, "", ".."}, {"l", Kind::symlink, "", "d/s/../x"}}},
      {"through-link", {{"l", Kind::symlink, "", "."}, {"l/x", Kind::file, "x"}}},
      {"hardlink-out", {{"h", Kind::hardlink, "", "../x"}}},
      {"duplicate", {{"a", Kind::file, "1"}, {"a", Kind::file, "2"}}},
      {"case", {{"A.h", Kind::file, "1"}, {"a.h", Kind::file, "2"}}},
      {"fifo", {{"p", Kind::fifo}}},
      {"staged-link-out", {{top + "include/x", Kind::symlink, "", "../.."}}},
  };
  for (auto& [name, es] : hostile) {
    put("extract", name + ".tar", archive_bytes(Format::tar, es));
    if (name != "hardlink-out" && name != "fifo") put("extract", name + ".zip", archive_bytes(Format::zip, es));
    auto staged = lin;
    staged.insert(staged.end(), es.begin(), es.end());
    put("stage", name + ".tar", archive_bytes(Format::tar, staged));
  }
  // GNU sparse, a name that is not UTF-8, a size that lies
  fixtures::RawTarEntry sparse;
  sparse.name = "s.bin";
  sparse.type = 'S';
  sparse.data = std::string(512, 'a');
  sparse.sparse = {{0, 512}};
  sparse.real_size = 4096;
  put("extract", "sparse-trailing-hole.tar", fixtures::raw_tar({sparse}));
  put("extract", "latin1-name.tar", fixtures::raw_tar({fixtures::RawTarEntry{"caf\xE9.h", '0', "x"}}));
  fixtures::RawTarEntry lying{"l.bin", '0', "short"};
  lying.declared_size = 1 << 20;
  put("extract", "lying-size.tar", fixtures::raw_tar({lying}));
  // the bounds: modes an archive made on Windows says, a name past 4,096 bytes and 128 components
  put("extract", "modes-0777.tar",
      archive_bytes(Format::tar, {{"d", Kind::dir}, {"d/all", Kind::file, "x", "", 0777}, {"d/rw", Kind::file, "y", "", 0666}}));
  put("extract", "modes-0777.zip", archive_bytes(Format::zip, {{"d/all", Kind::file, "x", "", 0777}}));
  std::string deep;
  for (int i = 0; i < 3000; ++i) deep += "a/";
  put("extract", "deep-name.tar", archive_bytes(Format::tar, {{deep + "x", Kind::file, "x"}}));
  put("extract", "short-name.zip", archive_bytes(Format::zip, {{"bin/CUDNN6~1.DLL", Kind::file, "MZ"}}));
  // the tar header scan: plain tars, after the byte that sets the chunk size (fuzz/targets/tar_scan.cpp)
  put("tar_scan", "cudnn9.tar", "\x07" + archive_bytes(Format::tar, lin));
  put("tar_scan", "sparse.tar", "\x01" + fixtures::raw_tar({sparse}));
  std::vector<Entry> long_names{{top + std::string(150, 'n') + "/lib/libcudnn.so.9", Kind::file, "x"},
                                {top + "l", Kind::symlink, "", std::string(120, 't')}};
  put("tar_scan", "pax-long-names.tar", "\xff" + archive_bytes(Format::tar, long_names));
  fixtures::RawTarEntry gnu_long{"././@LongLink", 'L', top + std::string(120, 'g') + std::string(1, '\0')};
  put("tar_scan", "gnu-longname.tar", "\x40" + fixtures::raw_tar({gnu_long, fixtures::RawTarEntry{"shortened", '0', "x"}}));
}

void state_files() {
  model::Receipt r;
  r.stackpin_version = "0.1.0";
  r.manifest_path = "/home/u/stack.toml";
  r.manifest_name = "fixture";
  r.manifest_sha256 = std::string(64, 'a');
  r.cudnn_version = "9.1.0.70";
  r.cudnn_cuda_major = 12;
  r.platform = "linux-x86_64";
  r.target = "linux";
  r.layout = "lib64";
  r.dest = "/opt/cudnn";
  r.prefix = "/opt/cudnn";
  r.archive_file = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz";
  r.archive_sha256 = std::string(64, 'b');
  r.archive_size = 1234;
  model::StagedFile f;
  f.path = "lib64/libcudnn.so.9";
  f.type = "file";
  f.sha256 = std::string(64, 'c');
  f.size = 6;
  f.mode = 0644;
  r.files.push_back(f);
  model::StagedFile l;
  l.path = "lib64/libcudnn.so";
  l.type = "symlink";
  l.link = "libcudnn.so.9";
  r.files.push_back(l);
  model::StagedFile b = f;
  b.path = "include/cudnn.h";
  b.backup = "backup/include/cudnn.h";
  r.files.push_back(b);
  r.created_dirs = {"lib64"};
  put("receipt", "receipt.json", format::write_receipt(r));
  const std::string head = "stackpin-journal\t2\n";
  // the journal target's DEST holds include/cudnn.h = "staged" (the file a stage placed) and notes.txt = "mine\n"
  const std::string placed = "\tsha256:" + crypto::to_hex(crypto::sha256_of("staged"));
  put("journal", "stage-rollback",
      head + "op\tstage\ntmp\ttmp-abc\nmkdir\tlib64\nbackup\tinclude/cudnn.h\tbackup/include/cudnn.h\nplace\tinclude/cudnn.h" + placed +
          "\n");
  put("journal", "stage-commit", head + "op\tstage\ntmp\ttmp-abc\nplace\tinclude/cudnn.h" + placed + "\ncommit\n");
  put("journal", "unstage", head + "op\tunstage\ndone\n");
  put("journal", "cut-short", head + "op\tstage\nmkdir\tlib");
  put("journal", "hostile", head + "op\tstage\nplace\t../outside/victim.txt" + placed + "\n");
  put("journal", "not-placed", head + "op\tstage\nplace\tnotes.txt" + placed + "\n");
  put("journal", "mkdir-a-file", head + "op\tstage\nmkdir\tnotes.txt\n");
  put("journal", "link-proof", head + "op\tstage\nplace\tnotes.txt\tlink:../outside/victim.txt\n");
}

void text_inputs(const fs::path& source, const fs::path& shared) {
  copy_matching("manifest", source / "manifests", ".toml");
  copy_matching("manifest", source / "tests" / "data" / "check", ".toml");
  copy_matching("lock", source / "manifests", ".lock");
  // the Python target reads its first byte as the reader to use: 0 a Python lock, 1 an index page, 2 pip's report
  for (const auto& e : fs::directory_iterator(source / "tests" / "data" / "check"))
    if (e.path().extension() == ".pylock") put("python", e.path().filename().string(), std::string(1, '\0') + slurp(e.path()));
  put("python", "index-page",
      "\x01<html><body><a href=\"../../files/torch-2.9.0%2Bcu130-py3-none-any.whl#sha256=" + std::string(64, 'a') +
          "\">torch</a><a href='/x/y.whl'>y</a><a href=https://h.example/z.whl#md5=1>z</a></body></html>");
  put("python", "pip-report",
      "\x02{\"version\": \"1\", \"install\": [{\"download_info\": {\"url\": \"https://h.example/Torch-2.9.0-py3-none-any.whl\", "
      "\"archive_info\": {\"hashes\": {\"sha256\": \"" +
          std::string(64, 'b') + "\"}}}, \"metadata\": {\"name\": \"Torch\", \"version\": \"2.9.0\"}}]}");
  // the OCI target reads its first byte as the reader to use: 0 a manifest, 1 an index, 2 a token,
  // 3 Docker's config.json or a credential helper's answer, 4 a registry's error body
  {
    const std::string blob = "sha256:" + std::string(64, 'a');
    const std::string empty = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
    put("oci", "manifest",
        std::string(1, '\0') + R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)" +
            R"("artifactType":"application/vnd.stackpin.archive.v1","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":")" +
            empty + R"(","size":2,"data":"e30="},"layers":[{"mediaType":"application/x-xz","digest":")" + blob +
            R"(","size":42,"annotations":{"org.opencontainers.image.title":"a.tar.xz"}}],"annotations":{"dev.stackpin.archive.url":"https://x/a.tar.xz"}})");
    put("oci", "index",
        std::string(1, '\1') + R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":)" +
            R"("application/vnd.oci.image.manifest.v1+json","digest":")" + blob +
            R"(","size":876,"platform":{"os":"linux","architecture":"amd64"}}]})");
    put("oci", "token", "\x02{\"token\":\"abc.def\",\"access_token\":\"x\",\"expires_in\":300}");
    put("oci", "config",
        "\x03{\"auths\":{\"r.example\":{\"auth\":\"bWU6czNjcmV0\"}},\"credHelpers\":{\"e\":\"ecr-login\"},\"credsStore\":\"pass\"}");
    put("oci", "errors", "\x04{\"errors\":[{\"code\":\"DENIED\",\"message\":\"no\"}]}");
  }
  copy_matching("redistrib", source / "tests" / "data" / "redistrib", ".json");
  copy_matching("redistrib", shared / "data" / "redist" / "cudnn", ".json");
  copy_matching("redistrib", shared / "data" / "redist" / "cuda", ".json");
  put("settings", "mirrors.toml", "[fetch]\nmirrors = [\"https://mirror.example/nvidia/\", \"file:///srv/mirror/\"]\n");
  put("settings", "empty.toml", "");
  for (const char* v : {"9.1.0.70\n9.1.0", "8.9.5.30\n8.9.5.29", "12.4.1\n12.4", "575.57.08\n575.51.03", "2.5.1+cu124\n2.5.1"})
    put("version", std::string(v).substr(0, std::string(v).find('\n')), v);
  put("windows_paths", "path",
      "C:\\Windows\\system32;%SystemRoot%;\"C:\\Program Files\\NVIDIA GPU Computing "
      "Toolkit\\CUDA\\v12.1\\bin\";C:\\tools\\cudnn\\v8.8.0\\bin\n"
      "C:\\Python311\nC:\\Users\\Jos\xC3\xA9\ncudnn64_8.dll");
  put("windows_paths", "unc", "\\\\server\\share\\bin;\\\\?\\C:\\tools\\x;..\\..\\x\n\\\\?\\C:\\a\\..\\b. \nC:\nCUDNN64_8.DLL");
  for (const char* q : {"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.1", "/home/u/it's here/$HOME/`x`",
                        "C:\\Users\\Jos\xC3\xA9 O'Brien\\cudnn v8",
                        "O\xE2\x80\x99"
                        "Brien 100% & more",
                        "line\nbreak\ttab\x7F\x01", "\xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80"})
    put("quote", std::to_string(g_count), q);
}

void machine_inputs() {
  std::error_code ec;
  if (fs::is_regular_file("/etc/ld.so.cache", ec)) put("ld_cache", "this-machine", slurp("/etc/ld.so.cache"));
  for (const char* f : {"/usr/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libdl.so.2", "/bin/true"}) {
    fs::path p = fs::canonical(f, ec);
    if (!ec && fs::file_size(p, ec) < (1u << 20)) put("elf", fs::path(f).filename().string(), slurp(p));
  }
  // fatbin: small libraries with GPU code where the machine has them, else its ELF files
  for (const char* f : {"/usr/local/cuda/lib64/libcufftw.so.12", "/usr/local/cuda/lib64/libnvblas.so.13", "/bin/true"}) {
    fs::path p = fs::canonical(f, ec);
    if (!ec && fs::file_size(p, ec) < (2u << 20)) put("fatbin", fs::path(f).filename().string(), slurp(p));
  }
  for (const char* stem : {"cudnn", "cudnn_ops"}) {
    fs::path p = testing_support::doubles_dir() / "stems" / (std::string("lib") + stem + ".so.9.1.0");
    if (fs::is_regular_file(p, ec)) put("elf", p.filename().string(), slurp(p));
  }
  // library_identity: this machine's small cuDNN libraries, and the test fixtures' stand-ins, ELF
  // and PE, that name themselves and their release as NVIDIA's do
  for (const char* f : {"/usr/local/cuda/lib64/libcudnn.so.9", "/usr/local/cuda/lib64/libcudnn_graph.so.9"}) {
    fs::path p = fs::canonical(f, ec);
    if (!ec && fs::file_size(p, ec) < (8u << 20)) put("library_identity", fs::path(f).filename().string(), slurp(p));
  }
  for (const char* stem : {"cudnn_graph", "cudnn_ops"}) {
    const std::string rodata = fixtures::cudnn_library_rodata(stem, "9.19.0.56");
    put("library_identity", std::string(stem) + ".so",
        fixtures::elf_library("lib" + std::string(stem) + ".so.9", fixtures::cudnn_library_needs(stem, 9, false), rodata, 4096));
    put("library_identity", std::string(stem) + ".dll",
        fixtures::pe_library(std::string(stem) + "64_9.dll", fixtures::cudnn_library_needs(stem, 9, true), rodata, 4096));
  }
  // minimal PE headers: x64, x86 (an x86 zlibwapi.dll is a classic), arm64
  for (auto [name, machine] : {std::pair{"x64.dll", 0x8664}, std::pair{"x86.dll", 0x014C}, std::pair{"arm64.dll", 0xAA64}}) {
    std::string pe(0x80 + 24, '\0');
    pe[0] = 'M';
    pe[1] = 'Z';
    pe[0x3C] = static_cast<char>(0x80);
    pe.replace(0x80, 4, std::string("PE\0\0", 4));
    pe[0x84] = static_cast<char>(machine & 0xFF);
    pe[0x85] = static_cast<char>(machine >> 8);
    put("pe", name, pe);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: stackpin_fuzz_seeds OUT\n");
    return 2;
  }
  g_out = argv[1];
  std::error_code ec;
  fs::remove_all(g_out, ec);
  fs::create_directories(g_out);
  text_inputs(testing_support::source_dir(), testing_support::shared_dir());
  state_files();
  archives();
  machine_inputs();
  std::printf("wrote %d seed input(s) into %s\n", g_count, g_out.c_str());
  return 0;
}
