// stackpin.exe, the Windows build (scripts/build-windows.sh --tests), run under Wine: its import
// table, and the commands a Windows user runs, on Windows paths inside Wine's C: drive, compared
// with what the Linux build does with the same inputs.
//
// Each test skips, saying why, when the Windows build or Wine is missing; scripts/test.sh installs
// both and builds stackpin.exe before it runs the `windows` label, so CI runs them. The Wine
// prefix is made once per machine (STACKPIN_WINE_PREFIX, else $TMPDIR/stackpin-wine-<uid>) and
// shared by these tests, which ctest runs one at a time (RESOURCE_LOCK wine).
#include <gtest/gtest.h>
#include <unistd.h>

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "fixtures.hpp"
#include "http_server.hpp"
#include "registry.hpp"
#include "test_support.hpp"
#include "tree.hpp"
#include "util/url.hpp"

namespace windows_exe_test {

namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using testing_support::RunResult;
using testing_support::ScratchDir;
using testing_support::show;

fs::path windows_build() {
  const char* v = std::getenv("STACKPIN_WINDOWS_BUILD");
  return v && *v ? fs::path(v) : testing_support::windows_build_dir();
}
fs::path exe() { return windows_build() / "stackpin.exe"; }
fs::path convtest_exe() { return windows_build() / "stackpin-convtest.exe"; }

// ---- the PE import table ------------------------------------------------------------------

std::uint32_t u32(const std::string& b, std::size_t at) {
  if (at + 4 > b.size()) throw std::runtime_error("PE read past the end at " + std::to_string(at));
  return static_cast<std::uint32_t>(static_cast<unsigned char>(b[at])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 2])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 3])) << 24;
}
std::uint16_t u16(const std::string& b, std::size_t at) {
  if (at + 2 > b.size()) throw std::runtime_error("PE read past the end at " + std::to_string(at));
  return static_cast<std::uint16_t>(static_cast<unsigned char>(b[at]) | static_cast<unsigned char>(b[at + 1]) << 8);
}

struct PeImage {
  std::uint16_t machine = 0;
  std::vector<std::string> imports;  // DLL names, as written
};

// The machine type and the DLLs of the import directory (and of the delay-load directory) of a
// PE32+ image, read from its section table as the loader does.
PeImage read_pe(const fs::path& file) {
  std::string b = testing_support::read_text(file);
  if (b.size() < 64 || b.compare(0, 2, "MZ") != 0) throw std::runtime_error(file.string() + " is not a PE image");
  std::size_t pe = u32(b, 0x3c);
  if (b.compare(pe, 4, std::string("PE\0\0", 4)) != 0) throw std::runtime_error(file.string() + ": no PE signature");
  PeImage out;
  out.machine = u16(b, pe + 4);
  std::size_t sections = u16(b, pe + 6);
  std::size_t opt = pe + 24;
  std::size_t opt_size = u16(b, pe + 20);
  if (u16(b, opt) != 0x20b) throw std::runtime_error(file.string() + " is not PE32+ (64-bit)");
  auto rva_to_offset = [&](std::uint32_t rva) -> std::size_t {
    for (std::size_t i = 0; i < sections; ++i) {
      std::size_t s = opt + opt_size + i * 40;
      std::uint32_t va = u32(b, s + 12), vsize = std::max(u32(b, s + 8), u32(b, s + 16)), raw = u32(b, s + 20);
      if (rva >= va && rva < va + vsize) return raw + (rva - va);
    }
    throw std::runtime_error(file.string() + ": RVA " + std::to_string(rva) + " is in no section");
  };
  auto name_at = [&](std::uint32_t rva) {
    std::size_t o = rva_to_offset(rva);
    std::size_t end = b.find('\0', o);
    return b.substr(o, end - o);
  };
  // data directories: [1] imports (20-byte descriptors, name at +12), [13] delay imports (32-byte, name at +4)
  std::size_t dirs = opt + 112;
  for (auto [index, stride, name_field] : {std::tuple{1, 20, 12}, std::tuple{13, 32, 4}}) {
    std::uint32_t rva = u32(b, dirs + static_cast<std::size_t>(index) * 8);
    if (rva == 0) continue;
    for (std::size_t d = rva_to_offset(rva);; d += static_cast<std::size_t>(stride)) {
      std::uint32_t name = u32(b, d + static_cast<std::size_t>(name_field));
      if (name == 0) break;
      out.imports.push_back(name_at(name));
    }
  }
  return out;
}

// The DLLs every Windows 10/11 has (the issue's list): nothing else may be imported.
bool windows_own_dll(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static const std::set<std::string> k_system{"kernel32.dll", "advapi32.dll", "user32.dll",   "bcrypt.dll",  "ncrypt.dll",   "crypt32.dll",
                                              "wintrust.dll", "winhttp.dll",  "ws2_32.dll",   "secur32.dll", "iphlpapi.dll", "shell32.dll",
                                              "shlwapi.dll",  "ole32.dll",    "oleaut32.dll", "rpcrt4.dll",  "rstrtmgr.dll", "psapi.dll",
                                              "version.dll",  "setupapi.dll", "cfgmgr32.dll", "dbghelp.dll", "userenv.dll",  "normaliz.dll",
                                              "wldap32.dll",  "ntdll.dll",    "msvcrt.dll",   "ucrtbase.dll"};
  return k_system.count(name) || name.rfind("api-ms-win-", 0) == 0;
}

// ---- Wine ---------------------------------------------------------------------------------

struct Wine {
  std::string wine;  // the wine program
  fs::path prefix;
  std::string skip;  // why the tests cannot run, or ""
};

const Wine& wine() {
  static const Wine w = [] {
    Wine w;
    if (!fs::is_regular_file(exe())) {
      w.skip = "no Windows build at " + exe().string() + " (scripts/build-windows.sh --tests makes it; scripts/test.sh runs it)";
      return w;
    }
    w.wine = testing_support::tool_path("wine");
    if (w.wine.empty()) {
      w.skip = "Wine is not installed (Debian: wine, wine64)";
      return w;
    }
    const char* p = std::getenv("STACKPIN_WINE_PREFIX");
    const char* tmp = std::getenv("TMPDIR");
    w.prefix = p && *p ? fs::path(p) : fs::path(tmp && *tmp ? tmp : "/tmp") / ("stackpin-wine-" + std::to_string(::getuid()));
    if (!fs::is_directory(w.prefix / "drive_c" / "windows")) {
      auto r = testing_support::run_process({testing_support::tool_path("wineboot"), "--init"},
                                            {"WINEPREFIX=" + w.prefix.string(), "WINEDEBUG=-all", "WINEDLLOVERRIDES=mscoree,mshtml="});
      testing_support::run_process({testing_support::tool_path("wineserver"), "-w"}, {"WINEPREFIX=" + w.prefix.string()});
      if (!fs::is_directory(w.prefix / "drive_c" / "windows"))
        w.skip = "wineboot could not make a Wine prefix at " + w.prefix.string() + ": " + show(r);
    }
    return w;
  }();
  return w;
}

#define SKIP_WITHOUT_WINE()                                \
  do {                                                     \
    if (!wine().skip.empty()) GTEST_SKIP() << wine().skip; \
  } while (0)

std::vector<std::string> wine_env(std::vector<std::string> extra = {}) {
  for (std::string v :
       {"WINEPREFIX=" + wine().prefix.string(), std::string("WINEDEBUG=-all"), std::string("WINEDLLOVERRIDES=mscoree,mshtml="),
        std::string("no_proxy=127.0.0.1"), std::string("NO_PROXY=127.0.0.1")})
    extra.push_back(v);
  return extra;
}

// Wine's console turns \n into \r\n on the way out: compare text as Linux writes it.
std::string unix_lines(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), '\r'), s.end());
  return s;
}

RunResult run_windows(const fs::path& program, std::vector<std::string> args, std::vector<std::string> env = {}) {
  args.insert(args.begin(), program.string());
  args.insert(args.begin(), wine().wine);
  RunResult r = testing_support::run_process(args, wine_env(std::move(env)));
  r.out = unix_lines(r.out);
  r.err = unix_lines(r.err);
  return r;
}
RunResult stackpin_exe(std::vector<std::string> args, std::vector<std::string> env = {}) {
  return run_windows(exe(), std::move(args), std::move(env));
}

// A folder on Wine's C: drive for one test, as Windows names it and as Linux sees it.
struct WinDir {
  std::string win;  // C:\stackpin-tests\<name>
  fs::path unix;
  explicit WinDir(const std::string& name) {
    std::string leaf = name + "-" + std::to_string(::getpid());
    unix = wine().prefix / "drive_c" / "stackpin-tests" / leaf;
    fs::remove_all(unix);
    fs::create_directories(unix);
    win = "C:\\stackpin-tests\\" + leaf;
  }
  ~WinDir() {
    std::error_code ec;
    fs::remove_all(unix, ec);
  }
};

// A Linux path as a Windows program sees it (Wine maps / to Z:).
std::string z_path(const fs::path& p) {
  std::string s = "Z:" + fs::absolute(p).string();
  std::replace(s.begin(), s.end(), '/', '\\');
  return s;
}

// A cuDNN 9 Windows zip pinned by a local manifest, isolated layout.
struct CudnnWorld {
  ScratchDir dir;
  fixtures::Info info;
  CudnnWorld() {
    fs::create_directories(dir.path() / "archives");
    info = fixtures::make_cudnn_windows(dir.path() / "archives", "9.1.0.70", 12);
    testing_support::write_file(manifest(),
                                fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"windows-x86_64", info}},
                                                         "[targets.windows]\nlayout = \"isolated\"\nprefix = 'C:\\tools\\cudnn'\n"));
  }
  fs::path manifest() const { return dir.path() / "stack.toml"; }
  fs::path archives() const { return dir.path() / "archives"; }
};

std::string util_lower(const json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Every file of a staged tree but stackpin's own, as "relative/path sha256", sorted.
std::vector<std::string> staged_files(const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (const std::string rel = fs::relative(e.path(), root).generic_string(); e.is_regular_file() && rel.rfind(".stackpin/", 0) != 0)
      out.push_back(rel + " " + fixtures::info(e.path()).sha256);
  std::sort(out.begin(), out.end());
  return out;
}

// Stages `w`'s archive into DEST\cudnn on Wine's C: drive; returns that Windows path.
std::string stage_cudnn(const CudnnWorld& w, const WinDir& dest) {
  std::string into = dest.win + "\\cudnn";
  auto s = stackpin_exe({"stage", z_path(w.manifest()), "--archives", z_path(w.archives()), "--target", "windows", "--dest", into});
  if (s.exit_code != 0) throw std::runtime_error("stage failed: " + show(s));
  return into;
}

// `entries` (cuDNN 9.1.0.70 for CUDA 12) zipped under NVIDIA's name into D/NAME/, and D/NAME.toml
// pinning it, with `targets` for its [targets.*] tables; returns the manifest.
fs::path pinned_zip(const ScratchDir& d, const std::string& name, const std::vector<fixtures::Entry>& entries, const std::string& targets) {
  fs::create_directories(d.path() / name);
  fs::path zip = d.path() / name / fixtures::cudnn_archive_name("windows-x86_64", "9.1.0.70", 12);
  fixtures::write_archive(zip, fixtures::Format::zip, entries);
  return d.write(name + ".toml", fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"windows-x86_64", fixtures::info(zip)}}, targets));
}

// The folder of the DLL test doubles, or "" when build-windows.sh --tests has not made them.
fs::path dll_doubles() {
  fs::path doubles = windows_build() / "tests" / "doubles";
  return fs::is_regular_file(doubles / "hold-file.exe") && fs::is_regular_file(doubles / "cuda12-cudnn9" / "cudnn64_9.dll") ? doubles
                                                                                                                            : fs::path();
}

// cuDNN 9.1 whose cudnn64_9.dll is a real DLL (the test double), so that a process can load it.
std::vector<fixtures::Entry> cudnn_with_a_real_dll(const fs::path& doubles) {
  auto entries = fixtures::cudnn_windows_entries("9.1.0.70", 12);
  for (auto& e : entries)
    if (e.path.ends_with("/bin/cudnn64_9.dll")) e.data = testing_support::read_text(doubles / "cuda12-cudnn9" / "cudnn64_9.dll");
  return entries;
}

// ---- tests --------------------------------------------------------------------------------

TEST(WindowsBuild, ImportsOnlyDllsEveryWindowsHas) {
  if (!fs::is_regular_file(exe())) GTEST_SKIP() << "no Windows build at " << exe() << " (scripts/build-windows.sh --tests)";
  for (const fs::path& f : {exe(), convtest_exe()}) {
    PeImage pe = read_pe(f);
    EXPECT_EQ(pe.machine, 0x8664) << f << " is not an x64 image";
    ASSERT_FALSE(pe.imports.empty()) << f;
    std::vector<std::string> foreign;
    for (const auto& d : pe.imports)
      if (!windows_own_dll(d)) foreign.push_back(d);
    EXPECT_TRUE(foreign.empty()) << f << " imports DLLs a Windows machine does not have: " << testing::PrintToString(foreign);
    // the digests and the downloads come from the OS (CNG, WinHTTP), not from a library of ours
    if (f == exe()) {
      auto has = [&](const char* dll) {
        return std::any_of(pe.imports.begin(), pe.imports.end(), [&](const std::string& d) { return strcasecmp(d.c_str(), dll) == 0; });
      };
      EXPECT_TRUE(has("bcrypt.dll")) << testing::PrintToString(pe.imports);
      EXPECT_TRUE(has("winhttp.dll")) << testing::PrintToString(pe.imports);
    }
  }
}

TEST(WindowsBuild, ReleaseZipHoldsTheProgramsAndTheLicences) {
  fs::path zip;
  if (fs::is_directory(windows_build()))
    for (const auto& e : fs::directory_iterator(windows_build()))
      if (e.path().extension() == ".zip" && e.path().filename().string().find("-windows-x86_64") != std::string::npos) zip = e.path();
  if (zip.empty()) GTEST_SKIP() << "no release zip in " << windows_build() << " (scripts/build-windows.sh without --no-zip)";
  auto unzip = testing_support::tool_path("unzip");
  if (unzip.empty()) GTEST_SKIP() << "unzip is not installed";
  auto r = testing_support::run_process({unzip, "-Z1", zip.string()});
  ASSERT_EQ(r.exit_code, 0) << show(r);
  std::string top = zip.stem().string() + "/";
  for (std::string f : {"stackpin.exe", "stackpin-convtest.exe", "README.txt", "licenses/libarchive.txt", "licenses/liblzma.txt",
                        "licenses/zlib.txt", "licenses/tomlplusplus.txt", "licenses/cli11.txt", "licenses/nlohmann-json.txt"})
    EXPECT_TRUE(testing_support::contains(r.out, top + f + "\n")) << top + f << " missing from " << zip << ":\n" << r.out;
}

TEST(WindowsExe, VersionMatchesTheLinuxBuild) {
  SKIP_WITHOUT_WINE();
  auto w = stackpin_exe({"--version"});
  ASSERT_EQ(w.exit_code, 0) << show(w);
  auto l = testing_support::stackpin({"--version"});
  EXPECT_EQ(w.out, l.out);
}

TEST(WindowsExe, CheckGivesTheLinuxBuildsFindings) {
  SKIP_WITHOUT_WINE();
  for (std::string m : {"cu118-cudnn880-win.toml", "cu124-cudnn91-minimal.toml", "cu130-cudnn913.toml"}) {
    fs::path file = testing_support::source_dir() / "manifests" / m;
    auto w = stackpin_exe({"check", z_path(file), "--json"});
    auto l = testing_support::stackpin({"check", file.string(), "--json"});
    EXPECT_EQ(w.exit_code, l.exit_code) << m << "\n" << show(w);
    auto wj = json::parse(w.out, nullptr, false), lj = json::parse(l.out, nullptr, false);
    ASSERT_FALSE(wj.is_discarded()) << m << "\n" << show(w);
    ASSERT_FALSE(lj.is_discarded()) << m << "\n" << show(l);
    // the same findings; only the manifest's path is written the way each OS names it
    for (auto* doc : {&wj, &lj})
      for (auto& f : (*doc)["findings"])
        if (f.contains("where") && f["where"].contains("file")) {
          std::string file = f["where"]["file"];
          f["where"]["file"] = file.substr(file.find_last_of("/\\") + 1);
        }
    EXPECT_EQ(wj["findings"], lj["findings"]) << m;
    EXPECT_TRUE(testing_support::contains(w.out, "Z:\\\\")) << "the Windows build names the manifest by its Windows path";
  }
}

TEST(WindowsExe, BadManifestNamesTheFileAndLine) {
  SKIP_WITHOUT_WINE();
  ScratchDir d;
  auto m = d.write("broken.toml", "schema = 1\nname = \"x\"\n[cuda\nversion = \"12.4.1\"\n");
  auto r = stackpin_exe({"check", z_path(m)});
  auto l = testing_support::stackpin({"check", m.string()});
  EXPECT_NE(r.exit_code, 0) << show(r);
  EXPECT_EQ(r.exit_code, l.exit_code) << show(r);
  EXPECT_TRUE(testing_support::contains(r.err, "broken.toml")) << show(r);
  EXPECT_TRUE(testing_support::contains(r.err, ":3")) << show(r);
}

TEST(WindowsExe, VerifyHashesWithCngAndRefusesASwappedArchive) {
  SKIP_WITHOUT_WINE();
  CudnnWorld w;
  auto ok = stackpin_exe({"verify", z_path(w.manifest()), "--archives", z_path(w.archives())});
  EXPECT_EQ(ok.exit_code, 0) << show(ok);
  // the same size, other bytes: the SHA-256 (from CNG) must differ from the pin
  std::string bytes = testing_support::read_text(w.info.path);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
  testing_support::write_file(w.info.path, bytes);
  auto bad = stackpin_exe({"verify", z_path(w.manifest()), "--archives", z_path(w.archives())});
  EXPECT_NE(bad.exit_code, 0) << show(bad);
  EXPECT_TRUE(testing_support::contains(bad.out + bad.err, "sha256")) << show(bad);
  // and the digest itself agrees with the Linux build's, byte for byte
  auto wv = stackpin_exe({"verify", z_path(w.info.path), "--sha256", std::string(64, '0')});
  auto lv = testing_support::stackpin({"verify", w.info.path.string(), "--sha256", std::string(64, '0')});
  EXPECT_EQ(wv.exit_code, lv.exit_code) << show(wv);
  std::string actual = fixtures::info(w.info.path).sha256;
  EXPECT_TRUE(testing_support::contains(wv.out + wv.err, actual)) << show(wv);
}

TEST(WindowsExe, StageStatusUnstageOnTheCDrive) {
  SKIP_WITHOUT_WINE();
  CudnnWorld w;
  WinDir dest("stage");
  std::string into = dest.win + "\\cuDNN v9";  // a space, as in C:\Program Files
  auto s = stackpin_exe({"stage", z_path(w.manifest()), "--archives", z_path(w.archives()), "--target", "windows", "--dest", into});
  ASSERT_EQ(s.exit_code, 0) << show(s);
  fs::path tree = dest.unix / "cuDNN v9";
  EXPECT_TRUE(fs::is_regular_file(tree / "bin" / "cudnn64_9.dll")) << show(s);
  // staged elsewhere than the manifest's prefix: the next steps say to copy it there
  EXPECT_TRUE(testing_support::contains(s.out, "copy " + into + " to C:\\tools\\cudnn on the Windows machine")) << show(s);
  EXPECT_TRUE(fs::is_regular_file(tree / "include" / "cudnn_version.h"));
  EXPECT_TRUE(fs::is_regular_file(tree / "lib" / "x64" / "cudnn.lib"));

  // the same tree as the Linux build stages from the same archive
  ScratchDir linux_dest;
  auto ls = testing_support::stackpin({"stage", w.manifest().string(), "--archives", w.archives().string(), "--target", "windows", "--dest",
                                       (linux_dest.path() / "t").string()});
  ASSERT_EQ(ls.exit_code, 0) << show(ls);
  EXPECT_EQ(staged_files(tree), staged_files(linux_dest.path() / "t"));

  auto st = stackpin_exe({"status", "--dest", into});
  EXPECT_EQ(st.exit_code, 0) << show(st);
  // drift: a DLL changed after staging is found
  testing_support::write_file(tree / "bin" / "cudnn64_9.dll", "MZ not the staged bytes");
  auto drift = stackpin_exe({"status", "--dest", into});
  EXPECT_EQ(drift.exit_code, 1) << show(drift);
  EXPECT_TRUE(testing_support::contains(drift.out, "cudnn64_9.dll")) << show(drift);
  auto un = stackpin_exe({"unstage", "--dest", into, "--force"});
  EXPECT_EQ(un.exit_code, 0) << show(un);
  EXPECT_FALSE(fs::exists(tree / "bin" / "cudnn64_9.dll")) << show(un);
}

// Windows on Arm: stackpin.exe (an x64 program) stages NVIDIA's windows-arm64 layout (bin\arm64,
// lib\arm64) as the Linux build does, and its doctor, asking Wine's x64 machine, says that no
// program there can load the Arm64 DLLs.
TEST(WindowsExe, StagesAWindowsOnArmTreeAndItsDoctorJudgesItForThisMachine) {
  SKIP_WITHOUT_WINE();
  ScratchDir d;
  fs::create_directories(d.path() / "archives");
  auto arm = fixtures::make_cudnn_windows(d.path() / "archives", "9.27.0.42", 13, {}, "windows-arm64");
  WinDir dest("woa");
  const std::string into = dest.win + "\\cudnn";
  testing_support::write_file(
      d.path() / "stack.toml",
      fixtures::local_manifest("9.27.0.42", 13, "13.4.2", {{"windows-arm64", arm}},
                               "[targets.windows]\narch = \"arm64\"\nlayout = \"isolated\"\nprefix = '" + into + "'\n"));
  auto s = stackpin_exe(
      {"stage", z_path(d.path() / "stack.toml"), "--archives", z_path(d.path() / "archives"), "--target", "windows", "--dest", into});
  ASSERT_EQ(s.exit_code, 0) << show(s);
  fs::path tree = dest.unix / "cudnn";
  EXPECT_TRUE(fs::is_regular_file(tree / "bin" / "arm64" / "cudnn64_9.dll")) << show(s);
  EXPECT_TRUE(fs::is_regular_file(tree / "lib" / "arm64" / "cudnn.lib")) << show(s);
  ScratchDir linux_dest;
  auto ls = testing_support::stackpin({"stage", (d.path() / "stack.toml").string(), "--archives", (d.path() / "archives").string(),
                                       "--target", "windows", "--dest", (linux_dest.path() / "t").string()});
  ASSERT_EQ(ls.exit_code, 0) << show(ls);
  EXPECT_EQ(staged_files(tree), staged_files(linux_dest.path() / "t"));

  auto doc = stackpin_exe({"doctor", "--manifest", z_path(d.path() / "stack.toml"), "--path", into + "\\bin\\arm64", "--json"});
  auto j = json::parse(doc.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << show(doc);
  EXPECT_EQ(j["report"]["windows"]["machine"], "x64") << show(doc);
  EXPECT_EQ(doc.exit_code, 1) << show(doc);
  int errors = 0;
  for (const auto& f : j["findings"])
    if (f["rule"] == "windows.architecture" && f["severity"] == "error") ++errors;
  EXPECT_EQ(errors, 2) << j.dump(2);  // the manifest's arch, and the winning DLL
}

TEST(WindowsExe, StagesNamesOutsideTheAnsiCodePageAndTheBmp) {
  SKIP_WITHOUT_WINE();
  // a user folder in Chinese with a space, as the seeds' users have, and one with an emoji (a
  // surrogate pair in UTF-16), and headers named outside the BMP in the archive: the names must
  // reach the file system as typed, not as the ANSI code page's rendering of them
  auto entries = fixtures::cudnn_windows_entries("9.1.0.70", 12);
  const std::string top = entries.front().path.substr(0, entries.front().path.find('/'));
  for (const char* h : {"\U00010400.h", "\U00010428.h"})  // Deseret capital and small: two names on Windows too
    entries.push_back({top + "/include/" + h, fixtures::Kind::file, h});
  ScratchDir d;
  // no prefix: the tree is staged where it is used
  fs::path m = pinned_zip(d, "archives", entries, "[targets.windows]\nlayout = \"isolated\"\n");
  WinDir dest("unicode");
  for (std::string folder : {"\u6df1\u5ea6\u5b66\u4e60 cuDNN", "cuDNN \U0001F680 \u6df1\u5ea6"}) {
    std::string into = dest.win + "\\" + folder;
    auto s = stackpin_exe({"stage", z_path(m), "--archives", z_path(d.path() / "archives"), "--target", "windows", "--dest", into});
    ASSERT_EQ(s.exit_code, 0) << show(s);
    fs::path tree = dest.unix / fs::path(folder);
    EXPECT_TRUE(fs::is_regular_file(tree / "bin" / "cudnn64_9.dll")) << show(s);
    EXPECT_EQ(testing_support::read_text(tree / "include" / fs::path(std::string("\U00010428.h"))), "\U00010428.h") << show(s);
    EXPECT_TRUE(testing_support::contains(s.out, folder)) << show(s);
    // and activated there, with nothing to copy
    EXPECT_FALSE(testing_support::contains(s.out, "on the Windows machine")) << show(s);
    EXPECT_TRUE(testing_support::contains(s.out, "activate it, in PowerShell: ")) << show(s);
    auto st = stackpin_exe({"status", "--dest", into});
    EXPECT_EQ(st.exit_code, 0) << show(st);
    EXPECT_TRUE(testing_support::contains(st.out, folder)) << show(st);
    auto un = stackpin_exe({"unstage", "--dest", into});
    EXPECT_EQ(un.exit_code, 0) << show(un);
    EXPECT_FALSE(fs::exists(tree / "include" / fs::path(std::string("\U00010400.h")))) << show(un);
  }
}

// A value of HKCU\Environment as `wine reg query` prints it: {type, data}; nullopt when absent.
std::optional<std::pair<std::string, std::string>> user_env_value(const std::string& name) {
  auto r = testing_support::run_process({wine().wine, "reg", "query", "HKCU\\Environment", "/v", name}, wine_env());
  std::istringstream lines(unix_lines(r.out));
  for (std::string line; std::getline(lines, line);) {
    auto at = line.find("    " + name + "    ");
    if (at == std::string::npos) continue;
    std::string rest = line.substr(at + name.size() + 8);
    auto sep = rest.find("    ");
    if (sep == std::string::npos) return std::pair<std::string, std::string>{rest, ""};
    return std::pair<std::string, std::string>{rest.substr(0, sep), rest.substr(sep + 4)};
  }
  return std::nullopt;
}
void set_user_env(const std::string& name, const std::string& type, const std::string& data) {
  auto r =
      testing_support::run_process({wine().wine, "reg", "add", "HKCU\\Environment", "/v", name, "/t", type, "/d", data, "/f"}, wine_env());
  ASSERT_EQ(r.exit_code, 0) << show(r);
}
void delete_user_env(const std::string& name) {
  testing_support::run_process({wine().wine, "reg", "delete", "HKCU\\Environment", "/v", name, "/f"}, wine_env());
}

// Paths past MAX_PATH (260), given plainly or as \\?\ verbatim paths, and a UNC path: stage,
// status and unstage work on each (stackpin.exe declares itself long-path aware; Windows also
// needs LongPathsEnabled, which Wine does not limit).
TEST(WindowsExe, LongVerbatimAndUncPathsAreStagedAndUnstaged) {
  SKIP_WITHOUT_WINE();
  CudnnWorld w;
  WinDir dest("long");
  std::string deep = dest.win;
  for (int i = 0; i < 6; ++i) deep += "\\" + std::string(40, static_cast<char>('a' + i));
  ASSERT_GT(deep.size() + std::string("\\cudnn\\include\\cudnn_version.h").size(), 260u);
  // a share: Wine serves \\SERVER\SHARE from dosdevices/unc/SERVER/SHARE, here C: itself, as a
  // Windows machine's administrative share C$ is
  const fs::path server = wine().prefix / "dosdevices" / "unc" / "stackpin-host";
  fs::create_directories(server);
  fs::remove(server / "C$");
  fs::create_directory_symlink(wine().prefix / "drive_c", server / "C$");
  struct Unshare {
    fs::path server;
    ~Unshare() {
      std::error_code ec;
      fs::remove_all(server, ec);
    }
  } unshare{server};
  const std::string unc = "\\\\stackpin-host\\C$" + deep.substr(2);
  for (const std::string& into :
       {deep + "\\plain", "\\\\?\\" + deep + "\\verbatim", unc + "\\unc", "\\\\?\\UNC\\" + unc.substr(2) + "\\uncverbatim"}) {
    SCOPED_TRACE(into);
    auto s = stackpin_exe({"stage", z_path(w.manifest()), "--archives", z_path(w.archives()), "--target", "windows", "--dest", into});
    ASSERT_EQ(s.exit_code, 0) << show(s);
    fs::path tree = dest.unix;  // where the files must be: C:\stackpin-tests\long-...\aaa...\...\LEAF
    for (int i = 0; i < 6; ++i) tree /= std::string(40, static_cast<char>('a' + i));
    tree /= into.substr(into.rfind('\\') + 1);
    EXPECT_TRUE(fs::is_regular_file(tree / "bin" / "cudnn64_9.dll")) << show(s);
    auto st = stackpin_exe({"status", "--dest", into});
    EXPECT_EQ(st.exit_code, 0) << show(st);
    auto u = stackpin_exe({"unstage", "--dest", into});
    EXPECT_EQ(u.exit_code, 0) << show(u);
    EXPECT_FALSE(fs::exists(tree / "bin")) << show(u);
  }
  std::string exe_bytes = testing_support::read_text(exe());
  EXPECT_TRUE(testing_support::contains(exe_bytes, "longPathAware>true</")) << "no long-path-aware manifest in stackpin.exe";
}

TEST(WindowsExe, ActivateChangesTheUserEnvironmentAndUndoRestoresIt) {
  SKIP_WITHOUT_WINE();
  CudnnWorld w;
  WinDir dest("activate");
  const std::string into = stage_cudnn(w, dest);
  // another cuDNN tree on the user PATH (taken out), a system entry written with a variable (kept as written)
  testing_support::write_file(dest.unix / "old-cudnn" / "bin" / "cudnn64_8.dll", "MZ an older cuDNN");
  const std::string old_path = "%SystemRoot%\\system32;" + dest.win + "\\old-cudnn\\bin;C:\\tools\\bin";
  set_user_env("Path", "REG_EXPAND_SZ", old_path);
  delete_user_env("CUDNN_PATH");
  struct Restore {
    ~Restore() {
      delete_user_env("Path");
      delete_user_env("CUDNN_PATH");
    }
  } restore;

  auto dry = stackpin_exe({"activate", z_path(w.manifest()), "--dest", into, "--dry-run", "--json"});
  ASSERT_EQ(dry.exit_code, 0) << show(dry);
  auto dj = json::parse(dry.out, nullptr, false);
  ASSERT_FALSE(dj.is_discarded()) << show(dry);
  const std::string want = into + "\\bin;%SystemRoot%\\system32;C:\\tools\\bin";
  EXPECT_EQ(dj["report"]["changes"][0]["after"], want) << dry.out;
  EXPECT_EQ(user_env_value("Path")->second, old_path) << "--dry-run changed the registry";
  EXPECT_FALSE(fs::exists(dest.unix / "cudnn" / ".stackpin" / "activation-user.json"));

  auto a = stackpin_exe({"activate", z_path(w.manifest()), "--dest", into});
  ASSERT_EQ(a.exit_code, 0) << show(a);
  auto path = user_env_value("Path");
  ASSERT_TRUE(path) << show(a);
  EXPECT_EQ(path->first, "REG_EXPAND_SZ") << "the value's type is kept";
  EXPECT_EQ(path->second, want) << show(a);
  EXPECT_TRUE(testing_support::contains(a.out, "old-cudnn")) << show(a);
  auto cudnn_path = user_env_value("CUDNN_PATH");
  ASSERT_TRUE(cudnn_path) << show(a);
  EXPECT_EQ(cudnn_path->second, into);
  EXPECT_TRUE(fs::is_regular_file(dest.unix / "cudnn" / ".stackpin" / "activation-user.json")) << show(a);

  auto again = stackpin_exe({"activate", z_path(w.manifest()), "--dest", into});
  EXPECT_EQ(again.exit_code, 0) << show(again);
  EXPECT_TRUE(testing_support::contains(again.out, "already active")) << show(again);

  auto undo = stackpin_exe({"activate", z_path(w.manifest()), "--dest", into, "--undo"});
  ASSERT_EQ(undo.exit_code, 0) << show(undo);
  EXPECT_EQ(user_env_value("Path")->second, old_path) << show(undo);
  EXPECT_FALSE(user_env_value("CUDNN_PATH")) << show(undo);
  EXPECT_FALSE(fs::exists(dest.unix / "cudnn" / ".stackpin" / "activation-user.json")) << show(undo);

  // a record edited to set another variable is refused, naming the file, and nothing changes
  auto b = stackpin_exe({"activate", z_path(w.manifest()), "--dest", into});
  ASSERT_EQ(b.exit_code, 0) << show(b);
  fs::path record = dest.unix / "cudnn" / ".stackpin" / "activation-user.json";
  std::string text = testing_support::read_text(record);
  text.replace(text.find("CUDNN_PATH"), 10, "ComSpec");
  testing_support::write_file(record, text);
  auto hostile = stackpin_exe({"activate", z_path(w.manifest()), "--dest", into, "--undo"});
  EXPECT_NE(hostile.exit_code, 0) << show(hostile);
  EXPECT_TRUE(testing_support::contains(hostile.err, "activation-user.json")) << show(hostile);
  EXPECT_TRUE(testing_support::contains(hostile.err, "ComSpec")) << show(hostile);
  EXPECT_EQ(user_env_value("Path")->second, want) << show(hostile);

  // a tree that was never staged: nothing to activate
  auto none = stackpin_exe({"activate", z_path(w.manifest()), "--dest", dest.win + "\\nothing"});
  EXPECT_NE(none.exit_code, 0) << show(none);
  EXPECT_TRUE(testing_support::contains(none.err, "nothing is staged")) << show(none);
}

// The findings of one rule for one subject in a doctor --json document.
std::vector<json> findings_for(const json& doc, const std::string& rule, const std::string& subject) {
  std::vector<json> out;
  for (const auto& f : doc["findings"])
    if (f["rule"] == rule && f["subject"] == subject) out.push_back(f);
  return out;
}

// On a live machine the GPUs come from nvml.dll: the NVML double, where the live doctor looks
// after System32 (NVSMI under Program Files), lists two GPUs, and the winning cuDNN's DLLs are
// judged by their GPU code for each of them.
TEST(WindowsExe, DoctorJudgesTheWinningCudnnsGpuCodeForTheGpusNvmlLists) {
  SKIP_WITHOUT_WINE();
  fs::path nvml = windows_build() / "tests" / "doubles" / "nvsmi" / "nvml.dll";
  if (!fs::is_regular_file(nvml)) GTEST_SKIP() << "no NVML double at " << nvml << " (build-windows.sh --tests)";
  fs::path nvsmi = wine().prefix / "drive_c" / "Program Files" / "NVIDIA Corporation" / "NVSMI";
  fs::create_directories(nvsmi);
  fs::copy_file(nvml, nvsmi / "nvml.dll", fs::copy_options::overwrite_existing);
  struct Remove {
    fs::path dll;
    ~Remove() {
      std::error_code ec;
      fs::remove(dll, ec);
    }
  } remove{nvsmi / "nvml.dll"};
  WinDir d("gpu-code");
  fs::create_directories(d.unix / "bin");
  for (const char* dll : {"cudnn64_9.dll", "cudnn_adv64_9.dll", "cudnn_cnn64_9.dll", "cudnn_engines_precompiled64_9.dll",
                          "cudnn_engines_runtime_compiled64_9.dll", "cudnn_graph64_9.dll", "cudnn_heuristic64_9.dll", "cudnn_ops64_9.dll"})
    testing_support::write_file(
        d.unix / "bin" / dll,
        fixtures::pe_library(dll, {}, std::string(dll) == "cudnn_cnn64_9.dll" ? fixtures::fatbin_container({{2, 86, 0x11}}) : "", 0));
  set_user_env("Path", "REG_EXPAND_SZ", d.win + "\\bin");
  struct Restore {
    ~Restore() { delete_user_env("Path"); }
  } restore;
  auto r = stackpin_exe({"doctor", "--json"},
                        {"STACKPIN_FAKE_NVML_GPUS=NVIDIA RTX A4000=8.6;Tesla P100-PCIE-16GB=6.0", "STACKPIN_FAKE_NVML_DRIVER=572.16"});
  auto j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << show(r);
  auto ampere = findings_for(j, "windows.gpu-kernels", "GPU 0 NVIDIA RTX A4000");
  ASSERT_EQ(ampere.size(), 1u) << j.dump(2);
  EXPECT_EQ(ampere[0]["severity"], "ok") << ampere[0].dump(2);
  EXPECT_TRUE(testing_support::contains(ampere[0]["seen"].get<std::string>(), "carries SASS that runs on 8.6")) << ampere[0].dump(2);
  auto pascal = findings_for(j, "windows.gpu-kernels", "GPU 1 Tesla P100-PCIE-16GB");
  ASSERT_EQ(pascal.size(), 1u) << j.dump(2);
  EXPECT_EQ(pascal[0]["severity"], "error") << pascal[0].dump(2);
  EXPECT_TRUE(testing_support::contains(pascal[0]["seen"].get<std::string>(), "cudnn_cnn64_9.dll (sm_86) carry nothing that runs on 6.0"))
      << pascal[0].dump(2);
  EXPECT_EQ(r.exit_code, 1) << show(r);
}

TEST(WindowsExe, DoctorAsksTheRealLoaderAndFindsTheStaleCopyFirst) {
  SKIP_WITHOUT_WINE();
  fs::path doubles = windows_build() / "tests" / "doubles" / "cuda12-cudnn9";
  if (!fs::is_regular_file(doubles / "cudnn64_9.dll"))
    GTEST_SKIP() << "no DLL test doubles in " << doubles << " (build-windows.sh --tests)";
  CudnnWorld w;
  WinDir dest("doctor");
  const std::string staged = stage_cudnn(w, dest);
  // real DLLs for the loader: the staged one, and a stale copy in a folder earlier on PATH
  fs::copy_file(doubles / "cudnn64_9.dll", dest.unix / "cudnn" / "bin" / "cudnn64_9.dll", fs::copy_options::overwrite_existing);
  fs::create_directories(dest.unix / "stale" / "bin");
  fs::copy_file(doubles / "cudnn64_9.dll", dest.unix / "stale" / "bin" / "cudnn64_9.dll");
  // and a 32-bit zlibwapi.dll (cuDNN 9.1 loads it) beside the staged DLLs
  std::string x86(0x88, '\0');
  x86[0] = 'M', x86[1] = 'Z', x86[0x3C] = static_cast<char>(0x80);
  x86.replace(0x80, 4, std::string("PE\0\0", 4));
  x86[0x84] = static_cast<char>(0x4c), x86[0x85] = static_cast<char>(0x01);
  testing_support::write_file(dest.unix / "cudnn" / "bin" / "zlibwapi.dll", x86);
  set_user_env("Path", "REG_EXPAND_SZ", dest.win + "\\stale\\bin;" + staged + "\\bin");
  struct Restore {
    ~Restore() { delete_user_env("Path"); }
  } restore;
  // the manifest says where the tree lives: here
  std::string text = testing_support::read_text(w.manifest());
  text.replace(text.find("prefix = 'C:\\tools\\cudnn'"), 25, "prefix = '" + staged + "'");
  testing_support::write_file(w.manifest(), text);

  auto d = stackpin_exe({"doctor", "--manifest", z_path(w.manifest()), "--json"});
  auto j = json::parse(d.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << show(d);
  EXPECT_EQ(d.exit_code, 1) << show(d);
  auto loader = findings_for(j, "windows.loader", "cudnn64_9.dll");
  ASSERT_EQ(loader.size(), 1u) << j.dump(2);
  EXPECT_EQ(loader[0]["severity"], "ok") << loader[0].dump(2);
  EXPECT_TRUE(testing_support::contains(util_lower(loader[0]["seen"]), "\\stale\\bin\\cudnn64_9.dll")) << loader[0].dump(2);
  bool stale_named = false;
  for (const auto& f : j["findings"])
    if (f["severity"] == "error" && f["rule"] == "windows.cudnn-dll" &&
        testing_support::contains(util_lower(f["seen"]), "\\stale\\bin\\cudnn64_9.dll"))
      stale_named = true;
  EXPECT_TRUE(stale_named) << "the stale copy that wins is an error\n" << j.dump(2);
  bool x86_named = false;
  for (const auto& f : j["findings"])
    if (f["subject"].get<std::string>().find("zlibwapi") != std::string::npos && testing_support::contains(f.dump(), "32-bit"))
      x86_named = true;
  EXPECT_TRUE(x86_named) << j.dump(2);
  auto z = findings_for(j, "windows.loader", "zlibwapi.dll");
  ASSERT_EQ(z.size(), 1u) << j.dump(2);
  EXPECT_EQ(z[0]["severity"], "error") << "the loader cannot load a 32-bit DLL into a 64-bit process\n" << z[0].dump(2);
  // Wine has no nvml.dll: no NVIDIA driver answers, which is a note
  auto drv = findings_for(j, "windows.driver", "NVIDIA driver");
  ASSERT_EQ(drv.size(), 1u) << j.dump(2);
  EXPECT_EQ(drv[0]["severity"], "note") << drv[0].dump(2);
  EXPECT_TRUE(testing_support::contains(drv[0]["seen"].get<std::string>(), "nvml.dll")) << drv[0].dump(2);

  // As Python 3.8+ loads it, PATH is not searched: neither copy on PATH loads. With the staged
  // folder added by os.add_dll_directory (--dll-dir), the staged copy does.
  WinDir py("python");
  testing_support::write_file(py.unix / "python.exe", "MZ");
  auto p1 = json::parse(stackpin_exe({"doctor", "--manifest", z_path(w.manifest()), "--python", py.win + "\\python.exe", "--json"}).out,
                        nullptr, false);
  ASSERT_FALSE(p1.is_discarded());
  EXPECT_TRUE(findings_for(p1, "windows.loader.python", "cudnn64_9.dll").empty()) << "nothing loads it from PATH\n" << p1.dump(2);
  EXPECT_EQ(findings_for(p1, "windows.loader", "cudnn64_9.dll").size(), 1u) << p1.dump(2);
  auto p2 = json::parse(stackpin_exe({"doctor", "--manifest", z_path(w.manifest()), "--python", py.win + "\\python.exe", "--dll-dir",
                                      staged + "\\bin", "--json"})
                            .out,
                        nullptr, false);
  ASSERT_FALSE(p2.is_discarded());
  auto lp = findings_for(p2, "windows.loader.python", "cudnn64_9.dll");
  ASSERT_EQ(lp.size(), 1u) << p2.dump(2);
  EXPECT_EQ(lp[0]["severity"], "ok") << lp[0].dump(2);
  EXPECT_TRUE(testing_support::contains(util_lower(lp[0]["seen"]), "\\cudnn\\bin\\cudnn64_9.dll as python 3.8+ loads it")) << lp[0].dump(2);

  // activated, the staged copy comes first, and the loader agrees
  auto a = stackpin_exe({"activate", z_path(w.manifest())});
  ASSERT_EQ(a.exit_code, 0) << show(a);
  auto after = json::parse(stackpin_exe({"doctor", "--manifest", z_path(w.manifest()), "--json"}).out, nullptr, false);
  ASSERT_FALSE(after.is_discarded());
  auto l2 = findings_for(after, "windows.loader", "cudnn64_9.dll");
  ASSERT_EQ(l2.size(), 1u) << after.dump(2);
  EXPECT_EQ(l2[0]["severity"], "ok") << l2[0].dump(2);
  EXPECT_TRUE(testing_support::contains(util_lower(l2[0]["seen"]), "\\doctor-")) << l2[0].dump(2);
  EXPECT_TRUE(testing_support::contains(util_lower(l2[0]["seen"]), "\\cudnn\\bin\\cudnn64_9.dll")) << l2[0].dump(2);
  auto undo = stackpin_exe({"activate", z_path(w.manifest()), "--undo"});
  EXPECT_EQ(undo.exit_code, 0) << show(undo);
}

TEST(WindowsExe, CaptureOfTheLiveMachinePinsTheTreeOnItsPath) {
  SKIP_WITHOUT_WINE();
  CudnnWorld w;
  WinDir dest("capture");
  const std::string staged = stage_cudnn(w, dest);
  // and the CUDA 12.4 toolkit the installer would have put on PATH, with its version.json
  testing_support::write_file(dest.unix / "CUDA" / "v12.4" / "bin" / "cudart64_12.dll", "MZ toolkit runtime");
  testing_support::write_file(dest.unix / "CUDA" / "v12.4" / "version.json", R"({"cuda": {"name": "CUDA SDK", "version": "12.4.1"}})");
  set_user_env("Path", "REG_EXPAND_SZ", staged + "\\bin;" + dest.win + "\\CUDA\\v12.4\\bin");
  struct Restore {
    ~Restore() { delete_user_env("Path"); }
  } restore;
  auto c = stackpin_exe({"capture", "--name", "teammate"});
  ASSERT_EQ(c.exit_code, 0) << show(c);
  EXPECT_TRUE(testing_support::contains(c.out, "version = \"9.1.0.70\"")) << show(c);
  EXPECT_TRUE(testing_support::contains(c.out, "[targets.windows]")) << show(c);
  EXPECT_TRUE(testing_support::contains(c.out, staged)) << show(c);
  EXPECT_TRUE(testing_support::contains(c.out, "12.4.1")) << show(c);
  // what a teammate gets is a manifest check accepts, on either build
  ScratchDir d;
  auto m = d.write("teammate.toml", c.out);
  auto ck = testing_support::stackpin({"check", m.string()});
  EXPECT_EQ(ck.exit_code, 0) << show(ck);
}

// apply on the Windows machine itself, with DEST the manifest's prefix (its default there): the
// plan with --dry-run (nothing written), then the whole sequence: the tree staged, doctor asking
// Wine's loader with the tree's DLL folder first on PATH (as after `stackpin activate`), the conv
// test skipped for want of a driver; then again, which finds the tree staged and changes nothing.
TEST(WindowsExe, ApplyProvisionsATreeOnceAndThenChangesNothing) {
  SKIP_WITHOUT_WINE();
  const fs::path doubles = dll_doubles();
  if (doubles.empty()) GTEST_SKIP() << "no DLL test doubles in " << windows_build() << " (build-windows.sh --tests)";
  ScratchDir d;
  WinDir dest("apply");
  const std::string into = dest.win + "\\cudnn";
  fs::path m =
      pinned_zip(d, "archives", cudnn_with_a_real_dll(doubles), "[targets.windows]\nlayout = \"isolated\"\nprefix = '" + into + "'\n");
  auto apply = [&](const std::string& extra) {
    std::vector<std::string> args{
        "apply", z_path(m), "--target", "windows", "--archives", z_path(d.path() / "archives"), "--cache-dir", dest.win + "\\cache",
        "--json"};
    if (!extra.empty()) args.push_back(extra);
    auto r = stackpin_exe(args);
    auto j = json::parse(r.out, nullptr, false);
    if (j.is_discarded()) throw std::runtime_error("apply printed no JSON: " + show(r));
    std::map<std::string, json> steps;
    for (const auto& s : j["report"]["steps"]) steps[s["name"].get<std::string>()] = s;
    return std::tuple{r, j, steps};
  };
  auto [dry, dry_json, dry_steps] = apply("--dry-run");
  EXPECT_EQ(dry.exit_code, 0) << show(dry);
  EXPECT_EQ(dry_steps["doctor"]["status"], "planned") << dry_json.dump(2);
  EXPECT_FALSE(fs::exists(dest.unix / "cudnn")) << show(dry);

  auto [first, j, steps] = apply("");
  EXPECT_EQ(first.exit_code, 0) << show(first);
  EXPECT_TRUE(fs::is_regular_file(dest.unix / "cudnn" / "bin" / "cudnn64_9.dll")) << show(first);
  EXPECT_EQ(steps["doctor"]["status"], "passed") << j.dump(2);
  EXPECT_TRUE(testing_support::contains(util_lower(steps["doctor"]["detail"]), util_lower(into + "\\bin\\cudnn64_9.dll"))) << j.dump(2);
  EXPECT_TRUE(testing_support::contains(steps["convtest"]["detail"].get<std::string>(), "no NVIDIA driver")) << j.dump(2);
  EXPECT_FALSE(testing_support::contains(j["report"]["remaining"].dump(), "copy ")) << j.dump(2);
  const auto receipt = testing_support::read_text(dest.unix / "cudnn" / ".stackpin" / "receipt.json");

  auto [again, j2, steps2] = apply("");
  EXPECT_EQ(again.exit_code, 0) << show(again);
  EXPECT_EQ(j2["report"]["changed"], false) << j2.dump(2);
  EXPECT_EQ(steps2["doctor"]["status"], "passed") << j2.dump(2);
  EXPECT_EQ(testing_support::read_text(dest.unix / "cudnn" / ".stackpin" / "receipt.json"), receipt) << show(again);
}

TEST(WindowsExe, LockGenerateDiffAndConvtestMatchTheLinuxBuild) {
  SKIP_WITHOUT_WINE();
  ScratchDir d;
  fs::path src = testing_support::source_dir() / "manifests" / "cu124-cudnn91-minimal.toml";
  fs::copy_file(src, d.path() / "a.toml");
  auto wl = stackpin_exe({"lock", z_path(d.path() / "a.toml"), "-o", "-"});
  auto ll = testing_support::stackpin({"lock", (d.path() / "a.toml").string(), "-o", "-"});
  ASSERT_EQ(wl.exit_code, 0) << show(wl);
  EXPECT_EQ(wl.exit_code, ll.exit_code);
  EXPECT_EQ(wl.out, ll.out) << "the lock is the same bytes on both builds";
  for (std::vector<std::string> g :
       {std::vector<std::string>{"generate", "activate", "--shell", "powershell"},
        std::vector<std::string>{"generate", "activate", "--shell", "cmd"}, std::vector<std::string>{"generate", "conda"}}) {
    fs::path m = testing_support::source_dir() / "manifests" / "cu118-cudnn880-win.toml";
    auto wa = g, la = g;
    wa.push_back(z_path(m));
    la.push_back(m.string());
    auto wg = stackpin_exe(wa);
    auto lg = testing_support::stackpin(la);
    EXPECT_EQ(wg.exit_code, lg.exit_code) << show(wg);
    // the console turns \n into \r\n; activate.cmd is CRLF on both
    EXPECT_EQ(wg.out, unix_lines(lg.out)) << g[1] << " " << g.back();
  }
  auto wd = stackpin_exe({"diff", z_path(testing_support::source_dir() / "manifests" / "cu121-cudnn895-torch21.toml"),
                          z_path(testing_support::source_dir() / "manifests" / "cu130-cudnn913.toml"), "--json"});
  auto ld = testing_support::stackpin({"diff", (testing_support::source_dir() / "manifests" / "cu121-cudnn895-torch21.toml").string(),
                                       (testing_support::source_dir() / "manifests" / "cu130-cudnn913.toml").string(), "--json"});
  EXPECT_EQ(wd.exit_code, ld.exit_code) << show(wd);
  auto wj = json::parse(wd.out, nullptr, false), lj = json::parse(ld.out, nullptr, false);
  ASSERT_FALSE(wj.is_discarded()) << show(wd);
  EXPECT_EQ(wj["report"]["rows"], lj["report"]["rows"]);

  fs::path doubles = windows_build() / "tests" / "doubles" / "cuda12-cudnn9";
  if (!fs::is_regular_file(doubles / "cudnn64_9.dll"))
    GTEST_SKIP() << "the lock, generate and diff parts passed; the conv test part needs " << (doubles / "cudnn64_9.dll")
                 << ", the DLL test doubles that scripts/build-windows.sh --tests builds";
  auto ct =
      stackpin_exe({"convtest", "--cudnn", z_path(doubles / "cudnn64_9.dll"), "--cudart", z_path(doubles / "cudart64_12.dll"), "--quick"});
  EXPECT_EQ(ct.exit_code, 0) << show(ct);
}

TEST(WindowsExe, ReservedAndCollidingNamesAreRefusedBeforeAnythingIsWritten) {
  SKIP_WITHOUT_WINE();
  ScratchDir d;
  // Archives made here, on Linux, byte for byte as given: entries that collide on a
  // case-insensitive file system (in ASCII and as Windows' upcase table folds Greek), reserved
  // names (ASCII and with a superscript digit), and a backslash, which Windows reads as a folder.
  struct Case {
    std::string name;
    std::vector<fixtures::Entry> entries;
    std::string words;
  };
  using fixtures::Kind;
  const std::vector<Case> cases{
      {"case", {{"top/bin/cudnn64_9.dll", Kind::file, "MZ a"}, {"top/bin/CUDNN64_9.DLL", Kind::file, "MZ b"}}, "the same name on Windows"},
      {"greek", {{"top/include/\u03A3.h", Kind::file, "a"}, {"top/include/\u03C2.h", Kind::file, "b"}}, "the same name on Windows"},
      {"reserved", {{"top/bin/aux.dll", Kind::file, "MZ"}}, "reserved device name"},
      {"superscript", {{"top/bin/COM\u00B9.dll", Kind::file, "MZ"}}, "reserved device name"},
      {"backslash", {{"top/bin\\cudnn64_9.dll", Kind::file, "MZ"}}, "backslash"},
      {"climbing", {{"top\\..\\..\\evil.dll", Kind::file, "MZ"}}, "backslash"},
      {"unc", {{"\\\\server\\share\\x.dll", Kind::file, "MZ"}}, "backslash"}};
  for (const auto& c : cases) {
    ASSERT_TRUE(fixtures::writes_name_verbatim(c.entries[0].path));
    fs::create_directories(d.path() / c.name);
    fs::path zip = d.path() / c.name / "cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip";
    fixtures::write_archive(zip, fixtures::Format::zip, c.entries);
    auto info = fixtures::info(zip);
    auto m = d.write(c.name + ".toml", fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"windows-x86_64", info}},
                                                                "[targets.windows]\nlayout = \"isolated\"\nprefix = 'C:\\tools\\cudnn'\n"));
    WinDir dest(c.name);
    auto s =
        stackpin_exe({"stage", z_path(m), "--archives", z_path(d.path() / c.name), "--target", "windows", "--dest", dest.win + "\\cudnn"});
    EXPECT_NE(s.exit_code, 0) << c.name << "\n" << show(s);
    EXPECT_TRUE(testing_support::contains(s.err, c.words)) << c.name << "\n" << show(s);
    EXPECT_FALSE(fs::exists(dest.unix / "cudnn" / "bin")) << c.name << "\n" << show(s);
  }
}

// A program holding a file on Wine's C: drive (hold-file.exe, tests/doubles/hold_file.c) until
// the test ends; `how` is "load" (a DLL loaded as Python loads cuDNN) or "open" (open for reading
// without sharing delete).
struct Holder {
  std::unique_ptr<testing_support::Process> p;
  Holder(const std::string& how, const std::string& file, const WinDir& dir) {
    fs::path ready = dir.unix / ("ready-" + how);
    fs::remove(ready);
    p = std::make_unique<testing_support::Process>(
        std::vector<std::string>{wine().wine, (windows_build() / "tests" / "doubles" / "hold-file.exe").string(), how, file,
                                 dir.win + "\\ready-" + how},
        wine_env());
    for (int i = 0; i < 300 && !fs::exists(ready); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!fs::exists(ready)) throw std::runtime_error("hold-file.exe " + how + " " + file + " did not start: " + show(p->wait()));
  }
  ~Holder() {
    p->kill(SIGKILL);
    p->wait();
    testing_support::run_process({testing_support::tool_path("wineserver"), "-w"}, wine_env());
  }
};

TEST(WindowsExe, FilesInUseAreNamedAndNothingIsChanged) {
  SKIP_WITHOUT_WINE();
  const fs::path doubles = dll_doubles();
  if (doubles.empty()) GTEST_SKIP() << "no hold-file.exe or DLL test doubles in " << windows_build() << " (build-windows.sh --tests)";
  ScratchDir d;
  auto entries = cudnn_with_a_real_dll(doubles);
  const std::string targets = "[targets.windows]\nlayout = \"isolated\"\nprefix = 'C:\\tools\\cudnn'\n";
  fs::path first = pinned_zip(d, "first", entries, targets);
  for (auto& e : entries)
    if (e.path.ends_with("/LICENSE")) e.data += "\nanother build\n";
  fs::path second = pinned_zip(d, "second", entries, targets);

  WinDir dest("in-use");
  const std::string into = dest.win + "\\cudnn";
  auto s = stackpin_exe({"stage", z_path(first), "--archives", z_path(d.path() / "first"), "--target", "windows", "--dest", into});
  ASSERT_EQ(s.exit_code, 0) << show(s);
  const fs::path tree = dest.unix / "cudnn";
  const std::string before = testing_support::read_text(tree / ".stackpin" / "receipt.json");
  auto unchanged = [&](const RunResult& r) {
    EXPECT_EQ(testing_support::read_text(tree / ".stackpin" / "receipt.json"), before) << show(r);
    EXPECT_FALSE(fs::exists(tree / ".stackpin" / "journal")) << show(r);
    auto st = stackpin_exe({"status", "--dest", into});
    EXPECT_EQ(st.exit_code, 0) << "the staged tree is whole\n" << show(st);
  };
  {
    // a running program has the staged cuDNN loaded: its holder is named, and neither unstage nor
    // a stage of another build changes a file
    Holder h("load", into + "\\bin\\cudnn64_9.dll", dest);
    auto un = stackpin_exe({"unstage", "--dest", into});
    EXPECT_EQ(un.exit_code, 1) << show(un);
    EXPECT_TRUE(testing_support::contains(un.err, "in use")) << show(un);
    EXPECT_TRUE(testing_support::contains(un.err, "bin\\cudnn64_9.dll, held by hold-file.exe (pid ")) << show(un);
    EXPECT_TRUE(testing_support::contains(un.err, "close hold-file.exe (pid ")) << show(un);
    EXPECT_TRUE(testing_support::contains(un.err, "nothing was changed")) << show(un);
    unchanged(un);
    auto again = stackpin_exe({"stage", z_path(second), "--archives", z_path(d.path() / "second"), "--target", "windows", "--dest", into});
    EXPECT_EQ(again.exit_code, 1) << show(again);
    EXPECT_TRUE(testing_support::contains(again.err, "cannot stage into")) << show(again);
    EXPECT_TRUE(testing_support::contains(again.err, "hold-file.exe (pid ")) << show(again);
    unchanged(again);
  }
  {
    // a header held open without delete sharing: Windows' Restart Manager names the program; where
    // it does not answer (Wine), the refusal says that no program was named and how to find it
    Holder h("open", into + "\\include\\cudnn.h", dest);
    auto un = stackpin_exe({"unstage", "--dest", into});
    EXPECT_EQ(un.exit_code, 1) << show(un);
    EXPECT_TRUE(testing_support::contains(un.err, "include\\cudnn.h, held by ")) << show(un);
    EXPECT_TRUE(testing_support::contains(un.err, "hold-file.exe") || testing_support::contains(un.err, "Resource Monitor")) << show(un);
    unchanged(un);
  }
  // once the programs have ended, the other build replaces the first, and unstage removes it
  auto again = stackpin_exe({"stage", z_path(second), "--archives", z_path(d.path() / "second"), "--target", "windows", "--dest", into});
  EXPECT_EQ(again.exit_code, 0) << show(again);
  auto un = stackpin_exe({"unstage", "--dest", into});
  EXPECT_EQ(un.exit_code, 0) << show(un);
  EXPECT_FALSE(fs::exists(tree / "bin" / "cudnn64_9.dll")) << show(un);
}

// The portable unit tests, cross-built (tests/CMakeLists.txt lists them), run as a Windows
// program: the libraries on Windows' own file system, C runtime, CNG and loader.
TEST(WindowsBuild, UnitTestsPassAsAWindowsProgram) {
  SKIP_WITHOUT_WINE();
  fs::path tests = windows_build() / "tests" / "stackpin_unit_tests.exe";
  if (!fs::is_regular_file(tests)) GTEST_SKIP() << "no " << tests.string() << " (scripts/build-windows.sh --tests makes it)";
  auto r = run_windows(tests, {"--gtest_brief=1"});
  // GoogleTest's own summary lines, bracket-free: ctest reads "[  SKIPPED ]" in this test's output as its skip
  std::string summary;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    for (const char* tag : {"[  FAILED  ]", "[  PASSED  ]", "[  SKIPPED ]"})
      if (line.rfind(tag, 0) == 0) summary += "stackpin_unit_tests.exe " + std::string(tag + 3, 7) + line.substr(12) + "\n";
  EXPECT_EQ(r.exit_code, 0) << summary << "\n" << r.err;
  EXPECT_TRUE(testing_support::contains(summary, "PASSED")) << r.out.substr(r.out.size() > 4000 ? r.out.size() - 4000 : 0);
  std::cout << summary;
}

TEST(WindowsExe, FetchDownloadsThroughWinHttpIntoLocalAppData) {
  SKIP_WITHOUT_WINE();
  CudnnWorld w;
  testing_support::HttpServer server;
  std::string rel = "/redist/cudnn/windows-x86_64/" + w.info.path.filename().string();
  server.serve(rel, testing_support::read_text(w.info.path));
  std::string text = testing_support::read_text(w.manifest());
  text.replace(text.find("origin = \"local\"\n"), 17, "origin = \"local\"\nurl = \"" + server.url(rel) + "\"\n");
  testing_support::write_file(w.manifest(), text);
  // no STACKPIN_CACHE_DIR: the default cache, %LOCALAPPDATA%\stackpin\cache
  auto f = stackpin_exe({"fetch", z_path(w.manifest()), "--retry-delay-ms", "1", "--json"},
                        {"STACKPIN_CACHE_DIR=", "STACKPIN_CONFIG=" + z_path(w.dir.path() / "none.toml")});
  ASSERT_EQ(f.exit_code, 0) << show(f);
  auto j = json::parse(f.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << show(f);
  fs::path cache;
  for (const auto& u : fs::directory_iterator(wine().prefix / "drive_c" / "users"))
    if (fs::is_directory(u.path() / "AppData" / "Local" / "stackpin" / "cache" / "sha256" / w.info.sha256))
      cache = u.path() / "AppData" / "Local" / "stackpin" / "cache";
  ASSERT_FALSE(cache.empty()) << "nothing under AppData\\Local\\stackpin\\cache\n" << show(f);
  fs::path got = cache / "sha256" / w.info.sha256 / w.info.path.filename();
  EXPECT_EQ(fixtures::info(got).sha256, w.info.sha256);
  EXPECT_GE(server.requests().size(), 1u);
  fs::remove_all(cache / "sha256" / w.info.sha256);

  // a 404 is an error naming the URL, and nothing is left in the cache
  testing_support::HttpServer empty;
  text.replace(text.find(server.url(rel)), server.url(rel).size(), empty.url(rel));
  testing_support::write_file(w.manifest(), text);
  auto missing = stackpin_exe({"fetch", z_path(w.manifest()), "--retry-delay-ms", "1", "--cache-dir", z_path(w.dir.path() / "c")});
  EXPECT_NE(missing.exit_code, 0) << show(missing);
  EXPECT_TRUE(testing_support::contains(missing.err, "404")) << show(missing);
  EXPECT_FALSE(fs::exists(w.dir.path() / "c" / "sha256" / w.info.sha256 / w.info.path.filename())) << show(missing);
  EXPECT_FALSE(fs::exists(w.dir.path() / "c" / "partial" / (w.info.sha256 + ".part"))) << show(missing);
}

// stackpin.exe pulls from a registry through WinHTTP: the reference registry with Basic
// authentication, filled by the Linux build; and a registry that speaks the token flow, rate-limits
// and redirects to blob storage, where the token must not follow (WinHTTP would send it on: stackpin
// follows such redirects itself).
TEST(WindowsExe, PullsFromARegistryThroughWinHttp) {
  SKIP_WITHOUT_WINE();
  if (auto why = testing_support::registry_tools_missing(); !why.empty()) GTEST_SKIP() << why;
  CudnnWorld w;
  testing_support::Registry reg(w.dir.path() / "registry", {false, "fleet", "s3cret"});
  const std::vector<std::string> creds = {"STACKPIN_REGISTRY_USERNAME=fleet", "STACKPIN_REGISTRY_PASSWORD=s3cret", "no_proxy=127.0.0.1"};
  const std::string repo = "oci://" + reg.host() + "/team/cuda";
  auto push = testing_support::run_process({testing_support::binary().string(), "mirror", "push", w.manifest().string(), repo, "--archives",
                                            w.archives().string(), "--cache-dir", (w.dir.path() / "linux-cache").string()},
                                           creds);
  ASSERT_EQ(push.exit_code, 0) << show(push);
  // the pin has no URL of its own: the registry serves it by its digest
  auto f = stackpin_exe({"fetch", z_path(w.manifest()), "--mirror", repo, "--cache-dir", z_path(w.dir.path() / "c1")}, creds);
  ASSERT_EQ(f.exit_code, 0) << show(f);
  EXPECT_EQ(fixtures::info(w.dir.path() / "c1" / "sha256" / w.info.sha256 / w.info.path.filename()).sha256, w.info.sha256);
  auto refused = stackpin_exe({"fetch", z_path(w.manifest()), "--mirror", repo, "--cache-dir", z_path(w.dir.path() / "c2")},
                              {"STACKPIN_REGISTRY_USERNAME=fleet", "STACKPIN_REGISTRY_PASSWORD=wrong"});
  EXPECT_EQ(refused.exit_code, 1) << show(refused);
  EXPECT_TRUE(testing_support::contains(refused.err, "refused the credentials from STACKPIN_REGISTRY_USERNAME")) << show(refused);
  EXPECT_FALSE(fs::exists(w.dir.path() / "c2" / "sha256" / w.info.sha256 / w.info.path.filename()));

  testing_support::FakeRegistry fake(w.info.path, w.info.sha256);
  fs::create_directories(w.dir.path() / "docker");
  testing_support::write_file(
      w.dir.path() / "docker" / "config.json",
      R"({"auths":{"127.0.0.1:)" + std::to_string(fake.api.port()) + R"(":{"auth":")" + util::base64_encode("fleet:s3cret") + R"("}}})");
  auto g =
      stackpin_exe({"fetch", z_path(w.manifest()), "--mirror", "oci+http://127.0.0.1:" + std::to_string(fake.api.port()) + "/team/cuda",
                    "--cache-dir", z_path(w.dir.path() / "c3"), "--retry-delay-ms", "10"},
                   {"DOCKER_CONFIG=" + z_path(w.dir.path() / "docker")});
  ASSERT_EQ(g.exit_code, 0) << show(g);
  EXPECT_EQ(fixtures::info(w.dir.path() / "c3" / "sha256" / w.info.sha256 / w.info.path.filename()).sha256, w.info.sha256);
  auto at_storage = fake.storage.requests_for(fake.blob_path);
  ASSERT_FALSE(at_storage.empty());
  for (const auto& q : at_storage) EXPECT_EQ(q.authorization, "") << "the registry's token went to the blob storage";
}

TEST(WindowsExe, ConvtestLoadsTheDllDoublesThroughTheWindowsLoader) {
  SKIP_WITHOUT_WINE();
  fs::path doubles = windows_build() / "tests" / "doubles" / "cuda12-cudnn9";
  if (!fs::is_regular_file(doubles / "cudnn64_9.dll"))
    GTEST_SKIP() << "no DLL test doubles in " << doubles << " (build-windows.sh --tests)";
  // named by path, and found by name through PATH, as an application finds them
  auto by_path = run_windows(
      convtest_exe(), {"--cudnn", z_path(doubles / "cudnn64_9.dll"), "--cudart", z_path(doubles / "cudart64_12.dll"), "--quick", "--json"});
  ASSERT_EQ(by_path.exit_code, 0) << show(by_path);
  auto j = json::parse(by_path.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << show(by_path);
  EXPECT_TRUE(testing_support::contains(j.dump(), "cudnn64_9.dll")) << j.dump(2);

  auto by_name = run_windows(convtest_exe(), {"--quick", "--json"}, {"WINEPATH=" + z_path(doubles)});
  ASSERT_EQ(by_name.exit_code, 0) << show(by_name);
  EXPECT_TRUE(testing_support::contains(by_name.out, "cudnn64_9.dll")) << show(by_name);

  // no GPU (the double reports none): exit 3, nothing to run on, as on Linux
  auto none = run_windows(convtest_exe(), {"--quick", "--json"}, {"WINEPATH=" + z_path(doubles), "STACKPIN_FAKE_CUDA_DEVICES=0"});
  EXPECT_EQ(none.exit_code, 3) << show(none);
}

}  // namespace

}  // namespace windows_exe_test
