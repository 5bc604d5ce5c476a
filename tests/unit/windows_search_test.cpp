// The Windows DLL search order applied to fake Windows trees built at test time, and doctor's
// judgements over it: the exact winning file, the exact order, each finding's rule and severity.
// Scenarios follow the seeds: an old cudnn64_8.dll first on PATH (CUDA 11.8's bin before the
// CUDA 12 tree cuDNN was merged into), a stale cudnn64_7.dll, a missing zlibwapi.dll for cuDNN
// 8.x, Python 3.8+ not searching PATH, a User-scope entry after the machine's CUDA entries.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/doctor/doctor.hpp"
#include "core/windows/windows_search.hpp"
#include "format/manifest_reader.hpp"
#include "knowledge/knowledge_base.hpp"
#include "test_support.hpp"
#include "windows_tree.hpp"

namespace windows_search_test {

namespace fs = std::filesystem;
using model::Severity;
using testing_support::ScratchDir;
using testing_support::WindowsTree;

namespace {

const std::string k_cuda = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA";
const std::string k_cudnn895 = "C:\\tools\\cudnn\\v8.9.5";

const knowledge::KnowledgeBase& kb() { return knowledge::KnowledgeBase::embedded(); }
std::vector<std::string> dlls(int major) { return kb().cudnn_contents(major)->windows_dlls; }

core::WindowsTree tree_of(const WindowsTree& w) {
  core::WindowsTree t;
  t.drives['C'] = w.root();
  t.vars = core::windows_default_vars();
  return t;
}

std::string manifest_text(const std::string& cuda, const std::string& cudnn, int cudnn_cuda, const std::string& layout,
                          const std::string& prefix, const std::string& cuda_path) {
  std::string s = "schema = 1\nname = \"doctor-test\"\n[cuda]\nversion = \"" + cuda + "\"\n[cudnn]\nversion = \"" + cudnn +
                  "\"\ncuda = " + std::to_string(cudnn_cuda) + "\n[targets.windows]\nlayout = \"" + layout + "\"\n";
  if (!prefix.empty()) s += "prefix = '" + prefix + "'\n";
  if (!cuda_path.empty()) s += "cuda_path = '" + cuda_path + "'\n";
  return s;
}

model::Manifest manifest(const std::string& text) {
  auto m = format::parse_manifest(text, "m.toml");
  if (!m) ADD_FAILURE() << m.error().message;
  return std::move(m).value();
}

// cuDNN 8.9.5.30 for CUDA 12 in its own prefix, CUDA 12.4 (the second seed's stack, isolated).
model::Manifest isolated_895() { return manifest(manifest_text("12.4.1", "8.9.5.30", 12, "isolated", k_cudnn895, k_cuda + "\\v12.4")); }

model::DoctorReport doctor(const WindowsTree& w, core::WindowsDoctorOptions o, const model::Manifest* m) {
  o.root = w.root();
  core::DoctorOptions d;
  d.manifest = m;
  d.windows = std::move(o);
  auto r = core::doctor(d, kb());
  if (!r) {
    ADD_FAILURE() << r.error().message;
    return {};
  }
  return std::move(r).value();
}

core::WindowsDoctorOptions path(std::string p) {
  core::WindowsDoctorOptions o;
  o.path = std::move(p);
  return o;
}

std::vector<const model::Finding*> findings(const model::DoctorReport& r, const std::string& rule) {
  std::vector<const model::Finding*> out;
  for (const auto& f : r.findings)
    if (f.rule == rule) out.push_back(&f);
  return out;
}

const model::Finding* finding(const model::DoctorReport& r, const std::string& rule, Severity sev, const std::string& subject_part = "") {
  for (const auto& f : r.findings)
    if (f.rule == rule && f.severity == sev && f.subject.find(subject_part) != std::string::npos) return &f;
  return nullptr;
}

std::string dump(const model::DoctorReport& r) {
  std::string s;
  for (const auto& f : r.findings)
    s += std::string(model::to_string(f.severity)) + " [" + f.rule + "] " + f.subject + " | " + f.seen + "\n";
  return s;
}

const model::DllLookup* lookup(const model::SearchOrder& o, const std::string& name) {
  for (const auto& l : o.dlls)
    if (l.name == name) return &l;
  return nullptr;
}

std::vector<std::string> windows_paths(const model::SearchOrder& o) {
  std::vector<std::string> out;
  for (const auto& d : o.dirs) out.push_back(d.windows_path);
  return out;
}

// A healthy isolated cuDNN 8.9.5 with zlibwapi.dll beside it, CUDA 12.4 after it on PATH.
struct Healthy {
  ScratchDir scratch;
  WindowsTree w{scratch.path() / "c"};
  std::string bin, cuda124;
  Healthy() {
    w.windows();
    bin = w.cudnn(k_cudnn895, "8.9.5", dlls(8));
    w.pe(bin + "\\zlibwapi.dll", 0x8664);
    cuda124 = w.cuda("12.4");
  }
};

}  // namespace

// --- paths -----------------------------------------------------------------------------------

TEST(WindowsPaths, NormalizesLikeWin32) {
  EXPECT_EQ(core::normalize_windows_path("c:/Program Files/x/"), "C:\\Program Files\\x");
  EXPECT_EQ(core::normalize_windows_path("C:\\a\\\\b\\.\\c\\..\\d"), "C:\\a\\b\\d");
  EXPECT_EQ(core::normalize_windows_path("C:\\a\\..\\..\\b"), "C:\\b");
  EXPECT_EQ(core::normalize_windows_path("C:\\"), "C:\\");
  EXPECT_EQ(core::normalize_windows_path("C:\\dir. \\bin"), "C:\\dir\\bin");
  EXPECT_EQ(core::normalize_windows_path("\\\\?\\C:\\long\\path"), "C:\\long\\path");
  EXPECT_EQ(core::normalize_windows_path("\\\\server\\share\\..\\x"), "\\\\server\\share\\x");
  EXPECT_EQ(core::normalize_windows_path("rel\\..\\..\\x"), "..\\x");
  EXPECT_EQ(core::normalize_windows_path(""), "");
}

TEST(WindowsPaths, ComparesNamesWithoutCaseLikeNtfs) {
  EXPECT_TRUE(core::names_equal_nocase("CUDNN64_8.DLL", "cudnn64_8.dll"));
  EXPECT_TRUE(core::names_equal_nocase("J\xc3\xbcrgen", "J\xc3\x9cRGEN"));                        // ü / Ü
  EXPECT_TRUE(core::names_equal_nocase("\xd0\x9f\xd1\x80\xd0\xbe", "\xd0\xbf\xd0\xa0\xd0\x9e"));  // Про / пРО
  EXPECT_FALSE(core::names_equal_nocase("cudnn64_8.dll", "cudnn64_9.dll"));
  EXPECT_FALSE(core::names_equal_nocase("bin", "bin2"));
  EXPECT_TRUE(core::same_windows_path("C:\\Tools\\CUDNN\\bin\\", "c:/tools/cudnn/BIN"));
}

TEST(WindowsPaths, ParsesPathValues) {
  auto vars = core::windows_default_vars({{"Cuda_Path", "C:\\CUDA\\v12.4"}});
  auto e = core::parse_windows_path_list(
      "C:\\a\\;;\"C:\\Program Files\\x;y\";%SystemRoot%\\system32; C:/b ;%NOPE%\\bin;%cuda_path%\\bin;\\\\srv\\share;rel\\dir;50%", vars);
  ASSERT_EQ(e.size(), 9u);
  EXPECT_EQ(e[0].path, "C:\\a");
  EXPECT_EQ(e[0].index, 1);
  EXPECT_TRUE(e[1].quoted);
  EXPECT_EQ(e[1].path, "C:\\Program Files\\x;y");  // a ';' inside quotes does not split
  EXPECT_EQ(e[1].raw, "\"C:\\Program Files\\x;y\"");
  EXPECT_EQ(e[2].path, "C:\\Windows\\system32");
  EXPECT_TRUE(e[2].unexpanded.empty());
  EXPECT_EQ(e[3].path, "C:\\b");
  EXPECT_EQ(e[4].unexpanded, std::vector<std::string>{"NOPE"});
  EXPECT_EQ(e[4].path, "%NOPE%\\bin");
  EXPECT_EQ(e[5].path, "C:\\CUDA\\v12.4\\bin");
  EXPECT_EQ(e[6].path, "\\\\srv\\share");
  EXPECT_EQ(e[7].path, "rel\\dir");
  EXPECT_EQ(e[8].path, "50%");  // a lone % stays
  EXPECT_EQ(e[8].index, 9);
}

TEST(WindowsPaths, MapsCaseInsensitivelyKeepingOnDiskNames) {
  ScratchDir s;
  WindowsTree w(s.path() / "c");
  w.dir("C:\\WINDOWS\\system32");
  w.dir("C:\\Users\\J\xc3\xbcrgen\\cuDNN v8.9\\BIN");
  auto t = tree_of(w);
  auto m = core::map_windows_path(t, "c:\\windows\\SYSTEM32\\");
  EXPECT_EQ(m.mapping, model::PathMapping::mapped);
  EXPECT_TRUE(m.exists);
  EXPECT_EQ(m.windows_path, "C:\\windows\\SYSTEM32");
  EXPECT_EQ(m.local_path, (w.root() / "WINDOWS" / "system32").string());
  auto u = core::map_windows_path(t, "C:\\users\\J\xc3\x9cRGEN\\CUDNN V8.9\\bin");
  EXPECT_TRUE(u.exists);
  EXPECT_EQ(u.local_path, (w.root() / "Users" / "J\xc3\xbcrgen" / "cuDNN v8.9" / "BIN").string());
  auto missing = core::map_windows_path(t, "C:\\Windows\\Nope\\bin");
  EXPECT_EQ(missing.mapping, model::PathMapping::mapped);
  EXPECT_FALSE(missing.exists);
  EXPECT_EQ(missing.local_path, (w.root() / "WINDOWS" / "Nope" / "bin").string());
  EXPECT_EQ(core::map_windows_path(t, "D:\\data").mapping, model::PathMapping::drive_unmapped);
  EXPECT_EQ(core::map_windows_path(t, "\\\\server\\share\\bin").mapping, model::PathMapping::unc);
  EXPECT_EQ(core::map_windows_path(t, "bin").mapping, model::PathMapping::relative);
  auto rel = core::map_windows_path(t, "system32", "C:\\Windows");
  EXPECT_EQ(rel.mapping, model::PathMapping::relative);
  EXPECT_TRUE(rel.exists);
  EXPECT_EQ(rel.windows_path, "C:\\Windows\\system32");
  EXPECT_EQ(core::map_windows_path(t, "%X%\\bin").mapping, model::PathMapping::variable);
}

// --- search orders ---------------------------------------------------------------------------

TEST(WindowsSearchOrder, DesktopOrderIsAppSystemWindowsCwdThenPath) {
  ScratchDir s;
  WindowsTree w(s.path() / "c");
  w.windows();
  auto t = tree_of(w);
  core::SearchInputs in;
  in.app_dir = "C:\\app";
  in.cwd = "C:\\work";
  in.path = "C:\\one;C:\\Windows\\SYSTEM32;C:\\two;c:\\ONE\\";
  in.user_path = "C:\\mine;C:\\two";
  auto o = core::desktop_search_order(t, in);
  EXPECT_EQ(windows_paths(o),
            (std::vector<std::string>{"C:\\app", "C:\\Windows\\System32", "C:\\Windows\\System", "C:\\Windows", "C:\\work", "C:\\one",
                                      "C:\\Windows\\SYSTEM32", "C:\\two", "C:\\ONE", "C:\\mine", "C:\\two"}));
  using S = model::SearchSource;
  std::vector<S> sources;
  for (const auto& d : o.dirs) sources.push_back(d.source);
  EXPECT_EQ(sources, (std::vector<S>{S::app_dir, S::system32, S::system16, S::windows_dir, S::cwd, S::path, S::path, S::path, S::path,
                                     S::user_path, S::user_path}));
  EXPECT_EQ(o.dirs[6].duplicate_of, 1);  // PATH's System32 is searched already
  EXPECT_EQ(o.dirs[8].duplicate_of, 5);
  EXPECT_EQ(o.dirs[10].duplicate_of, 7);
  EXPECT_FALSE(o.dirs[8].searched);
  EXPECT_EQ(o.dirs[9].path_index, 1);
  EXPECT_EQ(o.dirs[9].why, "User PATH entry 1");
  EXPECT_TRUE(o.dirs[1].exists);
  EXPECT_FALSE(o.dirs[0].exists);
}

TEST(WindowsSearchOrder, PythonSearchesAppDirSystem32AndDllDirectoriesOnly) {
  ScratchDir s;
  WindowsTree w(s.path() / "c");
  w.windows();
  core::SearchInputs in;
  in.app_dir = "C:\\Python310";
  in.path = "C:\\tools\\cudnn\\bin";
  in.dll_dirs = {"C:\\a", "C:\\b"};
  auto o = core::python_search_order(tree_of(w), in);
  EXPECT_EQ(windows_paths(o), (std::vector<std::string>{"C:\\Python310", "C:\\Windows\\System32", "C:\\a", "C:\\b"}));
  EXPECT_EQ(o.dirs[2].source, model::SearchSource::dll_dir);
  EXPECT_NE(std::find(o.notes.begin(), o.notes.end(), "Windows searches the os.add_dll_directory directories in an unspecified order"),
            o.notes.end());
}

TEST(WindowsSearchOrder, FindsEveryCopyWithItsVersionAndMachine) {
  ScratchDir s;
  WindowsTree w(s.path() / "c");
  w.windows();
  std::string old_bin = w.cudnn(k_cuda + "\\v11.8", "8.7.0", {"cudnn64_8.dll"});
  std::string new_bin = w.cudnn("C:\\tools\\cudnn\\v9.19", "9.19.0", {"cudnn64_9.dll"}, "bin\\x64");
  w.file("C:\\old\\bin\\CUDNN64_8.DLL");  // no header beside it: only the major is known
  w.pe("C:\\zlib\\zlibwapi.dll", 0x14C);
  core::SearchInputs in;
  in.path = "C:\\old\\bin;" + old_bin + ";" + new_bin + ";C:\\zlib";
  auto o = core::desktop_search_order(tree_of(w), in);
  auto l = core::find_dll(o, "cudnn64_8.dll", "test");
  ASSERT_EQ(l.copies.size(), 2u);
  EXPECT_EQ(l.copies[0].windows_path, "C:\\old\\bin\\CUDNN64_8.DLL");
  EXPECT_EQ(l.copies[0].version, "8");
  EXPECT_EQ(l.copies[0].version_from, "file name");
  EXPECT_EQ(l.copies[0].machine, "");
  EXPECT_EQ(l.copies[1].windows_path, k_cuda + "\\v11.8\\bin\\cudnn64_8.dll");
  EXPECT_EQ(l.copies[1].version, "8.7.0");
  EXPECT_EQ(l.copies[1].version_from, k_cuda + "\\v11.8\\include\\cudnn_version.h");
  EXPECT_EQ(l.copies[1].dir, 4);
  auto nine = core::find_dll(o, "cudnn64_9.dll", "test");
  ASSERT_EQ(nine.copies.size(), 1u);
  EXPECT_EQ(nine.copies[0].version, "9.19.0");  // include\ beside bin\, two levels up from bin\x64
  EXPECT_EQ(core::find_dll(o, "zlibwapi.dll", "").copies.at(0).machine, "x86");
  EXPECT_EQ(core::dll_names_in_order(o, "cudnn64_", ".dll"), (std::vector<std::string>{"cudnn64_8.dll", "cudnn64_9.dll"}));
}

// --- doctor: the healthy stack -----------------------------------------------------------------

TEST(DoctorWindows, HealthyIsolatedTreeHasNoErrorOrWarning) {
  Healthy h;
  auto m = isolated_895();
  auto r = doctor(h.w, path(h.bin + ";" + h.cuda124 + ";C:\\Windows\\system32;C:\\Windows"), &m);
  auto c = model::count(r.findings);
  EXPECT_EQ(c.errors, 0) << dump(r);
  EXPECT_EQ(c.warnings, 0) << dump(r);
  ASSERT_TRUE(r.windows);
  const auto& o = r.windows->desktop;
  EXPECT_EQ(windows_paths(o), (std::vector<std::string>{"C:\\Windows\\System32", "C:\\Windows\\System", "C:\\Windows", h.bin, h.cuda124,
                                                        "C:\\Windows\\system32", "C:\\Windows"}));
  EXPECT_EQ(o.dirs[5].duplicate_of, 0);
  EXPECT_EQ(o.dirs[4].cuda_version, "12.4");
  const auto* l = lookup(o, "cudnn64_8.dll");
  ASSERT_TRUE(l && l->winner());
  EXPECT_EQ(l->winner()->windows_path, "C:\\tools\\cudnn\\v8.9.5\\bin\\cudnn64_8.dll");
  EXPECT_EQ(l->winner()->version, "8.9.5");
  EXPECT_EQ(l->copies.size(), 1u);
  EXPECT_TRUE(finding(r, "windows.cudnn-dll", Severity::ok, "cudnn64_8.dll"));
  EXPECT_TRUE(finding(r, "windows.cudnn-sublibs", Severity::ok));
  EXPECT_TRUE(finding(r, "windows.zlibwapi", Severity::ok));
  EXPECT_TRUE(finding(r, "windows.vc-runtime", Severity::ok));
  EXPECT_TRUE(finding(r, "windows.cuda-bin-order", Severity::ok, "CUDA 12.4\\bin"));
  EXPECT_TRUE(finding(r, "windows.cuda-bin-order", Severity::ok, "cuDNN directory"));
  EXPECT_EQ(r.expected.windows_cudnn_dir, "C:\\tools\\cudnn\\v8.9.5\\bin");
}

// --- the seeds -------------------------------------------------------------------------------

// Second seed: cuDNN 8.9.5 copied into CUDA 12.1, but CUDA 11.8's bin, holding an older
// cudnn64_8.dll, comes first on PATH.
TEST(DoctorWindows, OldCudnnInEarlierCudaBinWins) {
  ScratchDir s;
  WindowsTree w(s.path() / "c");
  w.windows();
  std::string cuda118 = w.cuda("11.8");
  w.cudnn(k_cuda + "\\v11.8", "8.7.0", dlls(8));
  std::string cuda121 = w.cuda("12.1");
  w.cudnn(k_cuda + "\\v12.1", "8.9.5", dlls(8));
  w.pe(cuda121 + "\\zlibwapi.dll", 0x8664);
  auto m = manifest(manifest_text("12.1.1", "8.9.5.30", 12, "cuda-merge", "", k_cuda + "\\v12.1"));
  auto r = doctor(w, path(cuda118 + ";" + cuda121), &m);

  const auto* l = lookup(r.windows->desktop, "cudnn64_8.dll");
  ASSERT_TRUE(l && l->copies.size() == 2u) << dump(r);
  EXPECT_EQ(l->winner()->windows_path, cuda118 + "\\cudnn64_8.dll");
  EXPECT_EQ(l->winner()->version, "8.7.0");
  EXPECT_EQ(l->copies[1].windows_path, cuda121 + "\\cudnn64_8.dll");
  EXPECT_EQ(l->copies[1].version, "8.9.5");

  const auto* dll = finding(r, "windows.cudnn-dll", Severity::error, "cudnn64_8.dll");
  ASSERT_TRUE(dll) << dump(r);
  EXPECT_NE(dll->seen.find("cuDNN 8.7.0"), std::string::npos) << dll->seen;
  EXPECT_NE(dll->expected.find("cuDNN 8.9.5 from " + cuda121), std::string::npos) << dll->expected;
  const auto* stale = finding(r, "windows.stale-dll", Severity::error, cuda118 + "\\cudnn64_8.dll");
  ASSERT_TRUE(stale) << dump(r);
  // a CUDA bin is never taken out of PATH (it holds cudart and cuBLAS): the stale DLL goes, as the
  // PATH rule that activate.ps1 applies says
  EXPECT_EQ(stale->fix.find("take " + cuda118 + " out of PATH"), std::string::npos) << stale->fix;
  EXPECT_NE(stale->fix.find("delete " + cuda118 + "\\cudnn64_8.dll"), std::string::npos) << stale->fix;
  EXPECT_NE(stale->fix.find("activate.ps1 keeps it on PATH"), std::string::npos) << stale->fix;
  // CUDA 11.8 first when 12.1 is pinned: another major, a warning; but it holds a cuDNN and
  // comes before the cuDNN directory: an error
  EXPECT_TRUE(finding(r, "windows.cuda-bin-order", Severity::warning, "CUDA 12.1\\bin")) << dump(r);
  const auto* order = finding(r, "windows.cuda-bin-order", Severity::error, "cuDNN directory " + cuda121);
  ASSERT_TRUE(order) << dump(r);
  EXPECT_NE(order->seen.find("holds cudnn64_8.dll"), std::string::npos) << order->seen;
  EXPECT_EQ(findings(r, "windows.stale-dll").size(), 1u) << dump(r);  // the pinned tree's own copy is not stale
}

TEST(DoctorWindows, SameMajorToolkitFirstIsAnError) {
  Healthy h;
  std::string cuda121 = h.w.cuda("12.1");
  auto m = manifest(manifest_text("12.1.1", "8.9.5.30", 12, "isolated", k_cudnn895, k_cuda + "\\v12.1"));
  auto r = doctor(h.w, path(h.bin + ";" + h.cuda124 + ";" + cuda121), &m);
  const auto* f = finding(r, "windows.cuda-bin-order", Severity::error, "CUDA 12.1\\bin");
  ASSERT_TRUE(f) << dump(r);
  EXPECT_NE(f->seen.find("cudart64_12.dll"), std::string::npos) << f->seen;
  EXPECT_NE(f->fix.find("move " + cuda121 + " before " + h.cuda124), std::string::npos) << f->fix;
}

TEST(DoctorWindows, CudaBinBeforeCudnnWithoutCudnnIsAWarning) {
  Healthy h;
  auto m = isolated_895();
  auto r = doctor(h.w, path(h.cuda124 + ";" + h.bin), &m);
  EXPECT_EQ(model::count(r.findings).errors, 0) << dump(r);
  const auto* f = finding(r, "windows.cuda-bin-order", Severity::warning, "cuDNN directory " + h.bin);
  ASSERT_TRUE(f) << dump(r);
  EXPECT_NE(f->seen.find("holds no cuDNN now"), std::string::npos) << f->seen;
}

TEST(DoctorWindows, StaleCudnn7LaterOnPathIsAWarning) {
  Healthy h;
  h.w.cudnn("C:\\tools\\cudnn\\v7.6.5", "7.6.5", {"cudnn64_7.dll"});
  auto m = isolated_895();
  auto r = doctor(h.w, path(h.bin + ";C:\\tools\\cudnn\\v7.6.5\\bin;" + h.cuda124), &m);
  EXPECT_EQ(model::count(r.findings).errors, 0) << dump(r);
  const auto* f = finding(r, "windows.stale-dll", Severity::warning, "C:\\tools\\cudnn\\v7.6.5\\bin\\cudnn64_7.dll");
  ASSERT_TRUE(f) << dump(r);
  EXPECT_NE(f->seen.find("programs built for cuDNN 7"), std::string::npos) << f->seen;
  EXPECT_TRUE(finding(r, "windows.cudnn-dll", Severity::ok, "cudnn64_8.dll"));
  EXPECT_TRUE(lookup(r.windows->desktop, "cudnn64_7.dll"));
}

TEST(DoctorWindows, CudnnInSystem32WinsOverEveryPathEntry) {
  Healthy h;
  h.w.file("C:\\Windows\\System32\\cudnn64_8.dll");
  h.w.file("C:\\Windows\\System32\\cudnn64_7.dll");
  auto m = isolated_895();
  auto r = doctor(h.w, path(h.bin + ";" + h.cuda124), &m);
  const auto* l = lookup(r.windows->desktop, "cudnn64_8.dll");
  ASSERT_TRUE(l && l->winner());
  EXPECT_EQ(l->winner()->windows_path, "C:\\Windows\\System32\\cudnn64_8.dll");
  EXPECT_EQ(l->winner()->version, "8");
  const auto* dll = finding(r, "windows.cudnn-dll", Severity::error, "cudnn64_8.dll");
  ASSERT_TRUE(dll) << dump(r);
  EXPECT_NE(dll->seen.find("ahead of the manifest's tree"), std::string::npos) << dll->seen;
  EXPECT_TRUE(finding(r, "windows.stale-dll", Severity::error, "C:\\Windows\\System32\\cudnn64_8.dll")) << dump(r);
  EXPECT_TRUE(finding(r, "windows.stale-dll", Severity::error, "C:\\Windows\\System32\\cudnn64_7.dll")) << dump(r);
  EXPECT_EQ(findings(r, "windows.stale-dll").size(), 2u) << dump(r);
}

TEST(DoctorWindows, OlderCopyLaterOnPathIsAWarningAndSameVersionANote) {
  Healthy h;
  h.w.cudnn("C:\\old\\cudnn", "8.6.0", {"cudnn64_8.dll"});
  h.w.cudnn("C:\\copy\\cudnn", "8.9.5", {"cudnn64_8.dll"});
  auto m = isolated_895();
  auto r = doctor(h.w, path(h.bin + ";C:\\old\\cudnn\\bin;C:\\copy\\cudnn\\bin;" + h.cuda124), &m);
  EXPECT_TRUE(finding(r, "windows.stale-dll", Severity::warning, "C:\\old\\cudnn\\bin\\cudnn64_8.dll")) << dump(r);
  EXPECT_TRUE(finding(r, "windows.stale-dll", Severity::note, "C:\\copy\\cudnn\\bin\\cudnn64_8.dll")) << dump(r);
  EXPECT_EQ(model::count(r.findings).errors, 0) << dump(r);
}

TEST(DoctorWindows, CopyInApplicationDirectoryWins) {
  Healthy h;
  h.w.file("C:\\app\\cudnn64_8.dll");
  auto m = isolated_895();
  auto o = path(h.bin + ";" + h.cuda124);
  o.app_dir = "C:\\app";
  auto r = doctor(h.w, o, &m);
  EXPECT_EQ(lookup(r.windows->desktop, "cudnn64_8.dll")->winner()->windows_path, "C:\\app\\cudnn64_8.dll");
  const auto* f = finding(r, "windows.stale-dll", Severity::error, "C:\\app\\cudnn64_8.dll");
  ASSERT_TRUE(f) << dump(r);
  EXPECT_NE(f->fix.find("the application's directory comes first"), std::string::npos) << f->fix;
}

TEST(DoctorWindows, MissingZlibwapiFailsForCudnn8) {
  for (std::string v : {"8.8.0.121", "8.9.5.30"}) {
    ScratchDir s;
    WindowsTree w(s.path() / "c");
    w.windows();
    std::string bin = w.cudnn("C:\\tools\\cudnn", v.substr(0, 5), dlls(8));
    auto m = manifest(manifest_text("12.4.1", v, 12, "isolated", "C:\\tools\\cudnn", ""));
    auto r = doctor(w, path(bin), &m);
    const auto* f = finding(r, "windows.zlibwapi", Severity::error, "zlibwapi.dll");
    ASSERT_TRUE(f) << v << "\n" << dump(r);
    EXPECT_NE(f->fix.find("into C:\\tools\\cudnn\\bin"), std::string::npos) << f->fix;
    EXPECT_FALSE(f->source.empty());
  }
}

TEST(DoctorWindows, ZlibwapiJudgedByVersionAndMachine) {
  {
    Healthy h;  // 32-bit zlibwapi.dll first
    h.w.pe("C:\\zlib32\\zlibwapi.dll", 0x14C);
    auto m = isolated_895();
    auto r = doctor(h.w, path("C:\\zlib32;" + h.bin + ";" + h.cuda124), &m);
    const auto* f = finding(r, "windows.zlibwapi", Severity::error);
    ASSERT_TRUE(f) << dump(r);
    EXPECT_NE(f->seen.find("32-bit"), std::string::npos) << f->seen;
  }
  {
    ScratchDir s;  // cuDNN 9.13: zlib is linked in since 9.2
    WindowsTree w(s.path() / "c");
    w.windows();
    std::string bin = w.cudnn("C:\\tools\\cudnn9", "9.13.0", dlls(9));
    auto m = manifest(manifest_text("12.4.1", "9.13.0.50", 12, "isolated", "C:\\tools\\cudnn9", ""));
    auto r = doctor(w, path(bin), &m);
    EXPECT_TRUE(finding(r, "windows.zlibwapi", Severity::ok)) << dump(r);
    EXPECT_EQ(model::count(r.findings).errors, 0) << dump(r);
  }
  {
    ScratchDir s;  // no manifest: the version from cudnn_version.h decides
    WindowsTree w(s.path() / "c");
    w.windows();
    std::string bin = w.cudnn("C:\\tools\\cudnn", "8.9.7", dlls(8));
    auto r = doctor(w, path(bin), nullptr);
    EXPECT_TRUE(finding(r, "windows.zlibwapi", Severity::error)) << dump(r);
  }
}

TEST(DoctorWindows, VcRuntimePresentOrMissing) {
  ScratchDir s;
  WindowsTree w(s.path() / "c");
  w.windows(false);
  std::string bin = w.cudnn(k_cudnn895, "8.9.5", dlls(8));
  w.pe(bin + "\\zlibwapi.dll", 0x8664);
  w.pe("C:\\Windows\\System32\\vcruntime140.dll", 0x8664);
  auto m = isolated_895();
  auto r = doctor(w, path(bin), &m);
  auto vc = findings(r, "windows.vc-runtime");
  ASSERT_EQ(vc.size(), 2u) << dump(r);
  EXPECT_EQ(vc[0]->subject, "msvcp140.dll");
  EXPECT_EQ(vc[0]->severity, Severity::error);
  EXPECT_EQ(vc[1]->subject, "vcruntime140_1.dll");
  EXPECT_NE(vc[0]->fix.find("Visual C++ 2015-2022 Redistributable (x64)"), std::string::npos) << vc[0]->fix;
  EXPECT_EQ(lookup(r.windows->desktop, "vcruntime140.dll")->winner()->windows_path, "C:\\Windows\\System32\\vcruntime140.dll");
}

// First seed's Python angle: the cuDNN directory is on PATH, which Python 3.8+ ignores.
TEST(DoctorWindows, PythonDoesNotSearchPath) {
  Healthy h;
  h.w.file("C:\\Python310\\python.exe");
  auto m = isolated_895();
  auto o = path(h.bin + ";" + h.cuda124);
  o.python = "C:\\Python310\\python.exe";
  auto r = doctor(h.w, o, &m);
  ASSERT_TRUE(r.windows && r.windows->python_order) << dump(r);
  EXPECT_EQ(windows_paths(*r.windows->python_order), (std::vector<std::string>{"C:\\Python310", "C:\\Windows\\System32"}));
  EXPECT_EQ(r.windows->desktop.dirs.front().windows_path, "C:\\Python310");  // python.exe's directory is the application's
  const auto* f = finding(r, "windows.python-dll-dirs", Severity::error);
  ASSERT_TRUE(f) << dump(r);
  EXPECT_NE(f->seen.find("does not search PATH"), std::string::npos) << f->seen;
  EXPECT_NE(f->fix.find("os.add_dll_directory(r'" + h.bin + "')"), std::string::npos) << f->fix;
  EXPECT_NE(f->fix.find(".pth"), std::string::npos) << f->fix;

  o.dll_dirs = {h.bin};
  auto fixed = doctor(h.w, o, &m);
  EXPECT_TRUE(finding(fixed, "windows.python-dll-dirs", Severity::ok)) << dump(fixed);
  EXPECT_EQ(windows_paths(*fixed.windows->python_order), (std::vector<std::string>{"C:\\Python310", "C:\\Windows\\System32", h.bin}));
  EXPECT_EQ(model::count(fixed.findings).errors, 0) << dump(fixed);
}

// activate.ps1 -Scope User: the entry lands after the machine's CUDA entries.
TEST(DoctorWindows, UserScopeEntryComesAfterMachineCuda) {
  ScratchDir s;
  WindowsTree w(s.path() / "c");
  w.windows();
  std::string cuda118 = w.cuda("11.8");
  w.cudnn(k_cuda + "\\v11.8", "8.7.0", dlls(8));
  std::string cuda124 = w.cuda("12.4");
  std::string bin = w.cudnn(k_cudnn895, "8.9.5", dlls(8));
  w.pe(bin + "\\zlibwapi.dll", 0x8664);
  auto m = isolated_895();
  auto o = path(cuda124 + ";" + cuda118);
  o.user_path = bin;
  auto r = doctor(w, o, &m);
  const auto& dirs = r.windows->desktop.dirs;
  EXPECT_EQ(dirs.back().windows_path, bin);
  EXPECT_EQ(dirs.back().source, model::SearchSource::user_path);
  const auto* scope = finding(r, "windows.path-scope", Severity::warning, "cuDNN directory " + bin);
  ASSERT_TRUE(scope) << dump(r);
  EXPECT_NE(scope->seen.find("CUDA 12.4"), std::string::npos) << scope->seen;
  EXPECT_NE(scope->fix.find("-Scope Machine"), std::string::npos) << scope->fix;
  EXPECT_TRUE(finding(r, "windows.cudnn-dll", Severity::error, "cudnn64_8.dll")) << dump(r);
  EXPECT_EQ(lookup(r.windows->desktop, "cudnn64_8.dll")->winner()->windows_path, cuda118 + "\\cudnn64_8.dll");
}

// --- layouts: CUDA 13 and cuDNN 9.18+ ----------------------------------------------------------

TEST(DoctorWindows, Cuda13WantsBinX64) {
  ScratchDir s;
  WindowsTree w(s.path() / "c");
  w.windows();
  std::string bin = w.cudnn("C:\\tools\\cudnn\\v9.13", "9.13.0", dlls(9));
  w.cuda("13.0", true);
  auto m = manifest(manifest_text("13.0.2", "9.13.0.50", 13, "isolated", "C:\\tools\\cudnn\\v9.13", k_cuda + "\\v13.0"));
  auto only_bin = doctor(w, path(bin + ";" + k_cuda + "\\v13.0\\bin"), &m);
  const auto* f = finding(only_bin, "windows.cuda-bin-order", Severity::warning, "CUDA 13.0\\bin\\x64");
  ASSERT_TRUE(f) << dump(only_bin);
  EXPECT_NE(f->seen.find("bin\\x64, which is not"), std::string::npos) << f->seen;
  auto good = doctor(w, path(bin + ";" + k_cuda + "\\v13.0\\bin\\x64;" + k_cuda + "\\v13.0\\bin"), &m);
  EXPECT_TRUE(finding(good, "windows.cuda-bin-order", Severity::ok, "CUDA 13.0\\bin\\x64")) << dump(good);
  EXPECT_EQ(model::count(good.findings).warnings, 0) << dump(good);
  EXPECT_EQ(model::count(good.findings).errors, 0) << dump(good);
}

TEST(DoctorWindows, CudnnInBinX64ReadsHeaderBesideBin) {
  ScratchDir s;
  WindowsTree w(s.path() / "c");
  w.windows();
  std::string bin = w.cudnn("C:\\tools\\cudnn\\v9.19", "9.19.0", dlls(9), "bin\\x64");
  auto m = manifest(manifest_text("12.9.1", "9.19.0.56", 12, "isolated", "C:\\tools\\cudnn\\v9.19", ""));
  auto r = doctor(w, path(bin), &m);
  EXPECT_EQ(r.expected.windows_cudnn_dir, "C:\\tools\\cudnn\\v9.19\\bin\\x64");
  const auto* l = lookup(r.windows->desktop, "cudnn64_9.dll");
  ASSERT_TRUE(l && l->winner());
  EXPECT_EQ(l->winner()->version, "9.19.0");
  EXPECT_EQ(l->winner()->version_from, "C:\\tools\\cudnn\\v9.19\\include\\cudnn_version.h");
  EXPECT_TRUE(finding(r, "windows.cudnn-dll", Severity::ok)) << dump(r);
}

TEST(DoctorWindows, MixedSubLibrariesFail) {
  Healthy h;
  fs::remove(h.w.local(h.bin + "\\cudnn_cnn_infer64_8.dll"));
  h.w.cudnn("C:\\old\\cudnn", "8.6.0", {"cudnn_cnn_infer64_8.dll"});
  fs::remove(h.w.local(h.bin + "\\cudnn_ops_train64_8.dll"));
  auto m = isolated_895();
  auto r = doctor(h.w, path(h.bin + ";C:\\old\\cudnn\\bin;" + h.cuda124), &m);
  const auto* f = finding(r, "windows.cudnn-sublibs", Severity::error, "cuDNN 8 sub-libraries");
  ASSERT_TRUE(f) << dump(r);
  EXPECT_NE(f->seen.find("missing from the search order: cudnn_ops_train64_8.dll"), std::string::npos) << f->seen;
  EXPECT_NE(f->seen.find("C:\\old\\cudnn\\bin\\cudnn_cnn_infer64_8.dll"), std::string::npos) << f->seen;
}

// --- PATH itself --------------------------------------------------------------------------------

TEST(DoctorWindows, PathEntriesThatCannotHelp) {
  Healthy h;
  fs::create_directories(h.scratch.path() / "d" / "Data" / "Bin");
  std::string p = "\"" + h.bin + "\";C:\\gone\\bin;relative\\bin;\\\\server\\share\\bin;D:\\data\\bin;%NOPE%\\bin;" + h.cuda124 + ";" +
                  h.cuda124 + "\\";
  auto r = doctor(h.w, path(p), nullptr);
  EXPECT_TRUE(finding(r, "windows.path-quoted", Severity::warning, "PATH entry 1")) << dump(r);
  EXPECT_TRUE(finding(r, "windows.path-missing-dir", Severity::warning, "PATH entry 2: C:\\gone\\bin")) << dump(r);
  EXPECT_TRUE(finding(r, "windows.path-relative", Severity::warning, "PATH entry 3")) << dump(r);
  EXPECT_TRUE(finding(r, "windows.path-unmapped", Severity::note, "PATH entry 4")) << dump(r);
  const auto* d = finding(r, "windows.path-unmapped", Severity::note, "PATH entry 5");
  ASSERT_TRUE(d) << dump(r);
  EXPECT_NE(d->fix.find("--drive D=DIR"), std::string::npos) << d->fix;
  EXPECT_TRUE(finding(r, "windows.path-variable", Severity::note, "PATH entry 6")) << dump(r);
  EXPECT_TRUE(finding(r, "windows.path-duplicate", Severity::note, "PATH entry 8")) << dump(r);
  // the quoted entry is not searched: no cuDNN is found at all
  EXPECT_FALSE(r.windows->desktop.dirs[3].searched);
  EXPECT_TRUE(finding(r, "windows.cudnn-dll", Severity::note, "cudnn64_*.dll")) << dump(r);

  auto o = path(p);
  o.drives = {{'d', h.scratch.path() / "d"}};
  auto mapped = doctor(h.w, o, nullptr);
  EXPECT_FALSE(finding(mapped, "windows.path-unmapped", Severity::note, "PATH entry 5")) << dump(mapped);
  EXPECT_TRUE(mapped.windows->desktop.dirs[7].exists);
  EXPECT_EQ(mapped.windows->desktop.dirs[7].local_path, (h.scratch.path() / "d" / "Data" / "Bin").string());
}

// A conda environment whose Library\bin holds another cuDNN: its Python loads that one (conda's
// Python searches Library\bin), and with the staged tree first on PATH its other programs get the
// staged one instead of their own.
TEST(DoctorWindows, CondaEnvironmentsWithTheirOwnCudnn) {
  Healthy h;
  auto m = isolated_895();
  const std::string env = "C:\\Users\\u\\miniconda3\\envs\\ml";
  h.w.dir(env + "\\conda-meta");
  h.w.file(env + "\\conda-meta\\cudnn-8.9.7.29-h8c2e2a0_0.json", "{}");
  h.w.file(env + "\\python.exe");
  h.w.file(env + "\\Library\\bin\\cudnn64_8.dll");
  h.w.file(env + "\\Library\\bin\\cudart64_12.dll");
  const std::string same = "C:\\ProgramData\\miniforge3";  // the base environment, with the pinned cuDNN
  h.w.dir(same + "\\conda-meta");
  h.w.file(same + "\\Library\\bin\\cudnn64_8.dll");
  h.w.file(same + "\\Library\\include\\cudnn_version.h", testing_support::cudnn_version_header("8.9.5"));
  h.w.dir("C:\\Users\\u\\miniconda3\\envs\\empty\\conda-meta");  // no cuDNN: nothing to say
  auto r = doctor(h.w, path(h.bin + ";" + env + "\\Library\\bin;" + h.cuda124 + ";C:\\Windows\\system32"), &m);
  const auto* f = finding(r, "windows.conda-cudnn", Severity::warning, env);
  ASSERT_TRUE(f) << dump(r);
  EXPECT_NE(f->seen.find("cuDNN 8.9.7.29"), std::string::npos) << f->seen;
  EXPECT_NE(f->seen.find("conda's Python searches Library\\bin"), std::string::npos) << f->seen;
  EXPECT_NE(f->fix.find("conda remove cudnn"), std::string::npos) << f->fix;
  const auto* g = finding(r, "windows.conda-cudnn-shadowed", Severity::warning, env);
  ASSERT_TRUE(g) << dump(r);
  EXPECT_NE(g->seen.find("without `conda activate`"), std::string::npos) << g->seen;
  EXPECT_TRUE(finding(r, "windows.conda-cudnn", Severity::note, same)) << dump(r);
  EXPECT_TRUE(findings(r, "windows.conda-cudnn").size() == 2u) << dump(r);
  // --python names an environment outside the usual places
  const std::string other = "D:\\envs\\py311";
  h.w.dir("C:\\elsewhere\\py311\\conda-meta");
  h.w.file("C:\\elsewhere\\py311\\Library\\bin\\cudnn64_8.dll");
  auto o = path(h.bin);
  o.python = "C:\\elsewhere\\py311\\python.exe";
  auto r2 = doctor(h.w, o, &m);
  EXPECT_TRUE(finding(r2, "windows.conda-cudnn", Severity::warning, "C:\\elsewhere\\py311")) << dump(r2);
}

TEST(DoctorWindows, PathLengthLimits) {
  Healthy h;
  auto long_path = [&](std::size_t n) {
    std::string p = h.bin;
    while (p.size() < n) p += ";C:\\Windows";
    return p.substr(0, n);
  };
  EXPECT_TRUE(finding(doctor(h.w, path(long_path(1500)), nullptr), "windows.path-length", Severity::note));
  EXPECT_TRUE(finding(doctor(h.w, path(long_path(2100)), nullptr), "windows.path-length", Severity::warning));
  EXPECT_TRUE(finding(doctor(h.w, path(long_path(33000)), nullptr), "windows.path-length", Severity::error));
  EXPECT_TRUE(findings(doctor(h.w, path(long_path(900)), nullptr), "windows.path-length").empty());
}

TEST(DoctorWindows, WithoutManifestReportsWhatItFinds) {
  Healthy h;
  h.w.cudnn("C:\\tools\\cudnn\\v7.6.5", "7.6.5", {"cudnn64_7.dll"});
  std::string cuda118 = h.w.cuda("11.8");
  auto r = doctor(h.w, path(h.bin + ";C:\\tools\\cudnn\\v7.6.5\\bin;" + h.cuda124 + ";" + cuda118), nullptr);
  EXPECT_EQ(model::count(r.findings).errors, 0) << dump(r);
  EXPECT_TRUE(finding(r, "windows.cudnn-dll", Severity::ok, "cudnn64_8.dll"));
  EXPECT_TRUE(finding(r, "windows.cudnn-dll", Severity::ok, "cudnn64_7.dll"));
  const auto* cuda = finding(r, "windows.cuda-bin-order", Severity::note, "CUDA bin directories");
  ASSERT_TRUE(cuda) << dump(r);
  EXPECT_NE(cuda->seen.find("CUDA 12.4 (" + h.cuda124 + "), CUDA 11.8"), std::string::npos) << cuda->seen;
  EXPECT_TRUE(r.expected.manifest.empty());
}

TEST(DoctorWindows, UsageErrors) {
  ScratchDir s;
  core::DoctorOptions d;
  core::WindowsDoctorOptions o;
  o.root = s.path() / "missing";
  d.windows = o;
  auto r = core::doctor(d, kb());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, util::ErrorCode::usage);
  EXPECT_NE(r.error().message.find("--windows-root"), std::string::npos) << r.error().message;
  o.root = s.path();
  o.app_dir = "app\\dir";
  d.windows = o;
  r = core::doctor(d, kb());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("--app-dir app\\dir: not an absolute Windows path"), std::string::npos) << r.error().message;
}

TEST(DoctorWindows, WithoutWindowsRootTheRunningMachineIsInspected) {
  util::MapEnv env(std::map<std::string, std::string>{{"PATH", "/usr/bin:/bin"}});
  core::DoctorOptions d;
  d.env = &env;
  auto r = core::doctor(d, kb());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->windows);
  ASSERT_TRUE(r->machine);
  bool os = false;
  for (const auto& f : r->findings) {
    os |= f.rule == "linux.os";
    EXPECT_NE(f.rule, "doctor.linux");
  }
  EXPECT_TRUE(os) << "the Linux checks report the OS";
}

}  // namespace windows_search_test
