// The Windows scripts stage and generate write (activate.ps1, activate.cmd, check-cudnn.ps1),
// tested by class of defect since PowerShell does not run here: every script, for the example
// stacks and for hostile prefixes, passes the lint (no drive-qualified variable in an expandable
// string, no wildcard given to -LiteralPath, every string closed, a BOM; cmd: the UTF-8 code page
// set and restored around non-ASCII text, no lone %), embeds each path so that the language reads
// it back exactly, prints a Python line that Python parses, checks the DLLs the pinned cuDNN has,
// and mirrors the C++ PATH rule (core/windows_path_rule.hpp), which is tested on fake trees here.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/layout/activation.hpp"
#include "core/windows/windows_path_rule.hpp"
#include "format/manifest_reader.hpp"
#include "gen/activate_windows.hpp"
#include "gen/quote.hpp"
#include "knowledge/knowledge_base.hpp"
#include "script_lint.hpp"
#include "test_support.hpp"
#include "tree.hpp"

namespace windows_scripts_test {

namespace {
namespace fs = std::filesystem;
using testing_support::ScratchDir;

const knowledge::KnowledgeBase& kb() { return knowledge::KnowledgeBase::embedded(); }

model::Manifest example(const std::string& name) {
  auto m = format::load_manifest(testing_support::source_dir() / "manifests" / name);
  if (!m) throw std::runtime_error(m.error().message);
  return std::move(m).value();
}

// The prefixes users have: spaces, an apostrophe (plain and typographic), non-ASCII (Latin and
// CJK), and the characters each language treats specially.
const std::vector<std::string>& hostile_prefixes() {
  static const std::vector<std::string> k{
      "C:\\tools\\cudnn\\v8.8.0",
      "C:\\Users\\Jos\xC3\xA9 O'Brien\\cudnn v8",
      "C:\\Users\\O\xE2\x80\x99"
      "Brien\\cudnn",
      "D:\\\xE6\xB7\xB1\xE5\xBA\xA6\xE5\xAD\xA6\xE4\xB9\xA0\\cuDNN 9",
      "C:\\R&D\\100% done\\$env:X `n",
      "\\\\server\\share\\cudnn v8",
  };
  return k;
}

gen::WindowsActivation activation(const std::string& manifest, const std::string& prefix = "") {
  auto m = example(manifest);
  auto w = core::windows_activation(m, kb());
  if (!w) throw std::runtime_error(w.error().message);
  if (prefix.empty()) return *w;
  // the same tree at another place (what `generate --prefix` and a receipt's prefix give)
  auto rel_dll = w->dll_dir.substr(w->cudnn_root.size() + 1);
  auto rel_lib = w->import_lib.substr(w->cudnn_root.size() + 1);
  std::replace(rel_dll.begin(), rel_dll.end(), '\\', '/');
  std::replace(rel_lib.begin(), rel_lib.end(), '\\', '/');
  return core::windows_activation_for_tree(m, kb(), prefix, rel_dll, rel_lib);
}

struct Script {
  std::string what, text;
  bool cmd = false;
};

std::vector<Script> every_script() {
  std::vector<Script> out;
  for (const std::string manifest : {"cu118-cudnn880-win.toml", "cu121-cudnn895-torch21.toml", "cu130-cudnn913.toml"}) {
    for (const auto& prefix : hostile_prefixes()) {
      auto w = activation(manifest, manifest == "cu121-cudnn895-torch21.toml" ? "" : prefix);
      std::string what = manifest + " at " + w.cudnn_root;
      out.push_back({"activate.ps1 of " + what, gen::render_activate_ps1(w)});
      out.push_back({"check-cudnn.ps1 of " + what, gen::render_check_ps1(w)});
      if (auto c = gen::render_activate_cmd(w)) out.push_back({"activate.cmd of " + what, *c, true});
    }
  }
  // trees that hold the toolkit (what stage writes for [cuda] components): with cuDNN, and alone
  for (const auto& prefix : hostile_prefixes()) {
    for (bool with_cudnn : {true, false}) {
      auto w = activation("cu130-cudnn913.toml", prefix);
      w.cuda_path = w.cudnn_root;
      w.cuda_version = "13.0";
      w.toolkit_bin_dirs = {w.cudnn_root + "\\bin", w.cudnn_root + "\\bin\\x64"};
      w.cuda_bin_dirs = w.toolkit_bin_dirs;
      if (!with_cudnn) {
        w.dll_dir.clear();
        w.import_lib.clear();
        w.cudnn_version.clear();
        w.dlls.clear();
        w.header_version.clear();
      }
      std::string what = std::string(with_cudnn ? "toolkit and cuDNN" : "toolkit") + " at " + w.cudnn_root;
      out.push_back({"activate.ps1 of " + what, gen::render_activate_ps1(w)});
      out.push_back({"check-cudnn.ps1 of " + what, gen::render_check_ps1(w)});
      if (auto c = gen::render_activate_cmd(w)) out.push_back({"activate.cmd of " + what, *c, true});
    }
  }
  return out;
}

// A toolkit tree's scripts put each of its bin directories first, once, after cuDNN's DLL
// directory, and the Python line adds each of them.
TEST(WindowsScripts, AToolkitTreePutsItsBinDirectoriesFirst) {
  auto w = activation("cu130-cudnn913.toml", "D:\\CUDA\\v13.0");
  w.cuda_path = w.cudnn_root;
  w.cuda_version = "13.0";
  w.toolkit_bin_dirs = {"D:\\CUDA\\v13.0\\bin", "D:\\CUDA\\v13.0\\bin\\x64"};
  auto dirs = gen::first_path_dirs(w);
  ASSERT_EQ(dirs.size(), 2u) << "cuDNN 9.13 keeps its DLLs in bin\\, the toolkit's own bin: named once";
  EXPECT_EQ(dirs[0], "D:\\CUDA\\v13.0\\bin");
  auto ps1 = gen::render_activate_ps1(w);
  EXPECT_NE(ps1.find("$FirstDirs = @('D:\\CUDA\\v13.0\\bin', 'D:\\CUDA\\v13.0\\bin\\x64')"), std::string::npos) << ps1;
  std::string python =
      "import os; os.add_dll_directory(" + gen::py_quote(dirs[0]) + "); os.add_dll_directory(" + gen::py_quote(dirs[1]) + ")";
  EXPECT_NE(ps1.find("$PythonLine = " + gen::ps_quote(python)), std::string::npos) << ps1;
  auto cmd = gen::render_activate_cmd(w);
  ASSERT_TRUE(cmd.ok());
  // the last is put first before the first, so that the first ends up in front
  auto x64 = cmd->find("set \"STACKPIN_DIR=D:\\CUDA\\v13.0\\bin\\x64\"");
  auto bin = cmd->find("set \"STACKPIN_DIR=D:\\CUDA\\v13.0\\bin\"");
  ASSERT_NE(x64, std::string::npos);
  ASSERT_NE(bin, std::string::npos);
  EXPECT_LT(x64, bin);
  EXPECT_NE(cmd->find("set \"CUDA_PATH_V13_0=D:\\CUDA\\v13.0\""), std::string::npos) << *cmd;
}

TEST(WindowsScripts, EveryGeneratedScriptPassesTheLint) {
  for (const auto& s : every_script()) {
    auto f = s.cmd ? script_lint::lint_cmd(s.text) : script_lint::lint_powershell(s.text);
    EXPECT_TRUE(f.empty()) << s.what << ":\n" << script_lint::describe(f);
  }
}

TEST(WindowsScripts, GoldenFilesPassTheLint) {
  int seen = 0;
  for (auto& e : fs::directory_iterator(testing_support::source_dir() / "tests" / "data" / "golden")) {
    auto ext = e.path().extension().string();
    if (ext != ".ps1" && ext != ".cmd") continue;
    ++seen;
    std::string text = testing_support::read_text(e.path());
    auto f = ext == ".cmd" ? script_lint::lint_cmd(text) : script_lint::lint_powershell(text);
    EXPECT_TRUE(f.empty()) << e.path().filename() << ":\n" << script_lint::describe(f);
  }
  EXPECT_GE(seen, 3);
}

TEST(WindowsScripts, TheLintFindsEachClassOfDefect) {
  // the defects found by trying the scripts on Windows, each in the smallest form
  auto kinds = [](const std::vector<script_lint::Finding>& f) {
    std::vector<std::string> k;
    for (const auto& x : f) k.push_back(x.kind);
    return k;
  };
  const std::string bom = "\xEF\xBB\xBF";
  EXPECT_EQ(kinds(script_lint::lint_powershell(bom + "Write-Warning \"no dll in $CudnnBin: copy it\"\n")),
            std::vector<std::string>{"drive-variable"});
  EXPECT_TRUE(script_lint::lint_powershell(bom + "Write-Warning \"in ${CudnnBin}: $env:Path $($x + \":\")\"\n").empty());
  EXPECT_EQ(kinds(script_lint::lint_powershell(bom + "Test-Path -LiteralPath (Join-Path $Bin 'cudnn*.dll')\n")),
            std::vector<std::string>{"literalpath-glob"});
  EXPECT_EQ(kinds(script_lint::lint_powershell(bom + "$x = 'it's'\n")), std::vector<std::string>{"unterminated"});
  EXPECT_EQ(kinds(script_lint::lint_powershell(bom + "$x = 'O\xE2\x80\x99"
                                                     "Brien'\n")),
            std::vector<std::string>{"unterminated"});
  EXPECT_EQ(kinds(script_lint::lint_powershell("$x = 1\n")), std::vector<std::string>{"no-bom"});
  EXPECT_EQ(kinds(script_lint::lint_cmd("@echo off\nset \"X=C:\\Jos\xC3\xA9\"\n")), std::vector<std::string>{"cmd-codepage"});
  EXPECT_EQ(kinds(script_lint::lint_cmd("@echo off\nset \"X=C:\\100% done\"\n")), std::vector<std::string>{"cmd-percent"});
}

TEST(WindowsScripts, HostilePrefixesAreEmbeddedLiterally) {
  for (const auto& prefix : hostile_prefixes()) {
    auto w = activation("cu118-cudnn880-win.toml", prefix);
    for (const auto& text : {gen::render_activate_ps1(w), gen::render_check_ps1(w)}) {
      auto vars = script_lint::ps_literal_assignments(text);
      EXPECT_EQ(vars["CudnnRoot"], prefix);
      EXPECT_EQ(vars["CudnnBin"], prefix + "\\bin");
    }
    auto cmd = gen::render_activate_cmd(w);
    ASSERT_TRUE(cmd.ok()) << prefix;
    auto at = cmd->find("set \"CUDNN_PATH=");
    ASSERT_NE(at, std::string::npos);
    std::string value = cmd->substr(at + 16, cmd->find("\"\r\n", at) - at - 16), back;
    for (std::size_t i = 0; i < value.size(); ++i) {
      back += value[i];
      if (value[i] == '%' && i + 1 < value.size() && value[i + 1] == '%') ++i;
    }
    EXPECT_EQ(back, prefix);
  }
}

// The Python line the script prints: a literal in the script, never a PowerShell variable
// expanded inside Python source (an apostrophe in the path would end Python's string).
TEST(WindowsScripts, ThePythonHintIsValidPythonForEveryPrefix) {
  for (const auto& prefix : hostile_prefixes()) {
    auto w = activation("cu118-cudnn880-win.toml", prefix);
    std::string text = gen::render_activate_ps1(w);
    std::string want = "import os; os.add_dll_directory(" + gen::py_quote(w.dll_dir) + ")";
    int found = 0;
    for (std::size_t at = text.find("add_dll_directory"); at != std::string::npos; at = text.find("add_dll_directory", at + 1)) {
      auto line_start = text.rfind('\n', at) + 1;
      auto quote = text.find('\'', line_start);
      ASSERT_NE(quote, std::string::npos);
      auto literal = script_lint::read_ps_single_quoted(std::string_view(text).substr(quote));
      ASSERT_TRUE(literal.has_value()) << text.substr(line_start, 200);
      EXPECT_EQ(*literal, want) << prefix;
      ++found;
    }
    EXPECT_GE(found, 1) << prefix;
    if (testing_support::have_tool("python3")) {
      auto r = testing_support::run_process({testing_support::tool_path("python3"), "-c",
                                             "import ast,sys; t=ast.parse(sys.argv[1]); "
                                             "a=t.body[1].value.args[0]; sys.stdout.buffer.write(ast.literal_eval(a).encode())",
                                             want});
      EXPECT_EQ(r.exit_code, 0) << want << "\n" << r.err;
      EXPECT_EQ(r.out, w.dll_dir);
    }
  }
}

TEST(WindowsScripts, TheDllCheckNamesTheDllsOfThePinnedCudnn) {
  for (const std::string manifest : {"cu118-cudnn880-win.toml", "cu130-cudnn913.toml"}) {
    auto m = example(manifest);
    auto w = activation(manifest);
    const auto* contents = kb().cudnn_contents(static_cast<int>(m.cudnn->version.value.major()));
    ASSERT_NE(contents, nullptr);
    std::string text = gen::render_activate_ps1(w);
    for (const auto& dll : contents->windows_dlls) EXPECT_NE(text.find("'" + dll + "'"), std::string::npos) << manifest << ": " << dll;
  }
}

TEST(WindowsScripts, ThePathRuleInTheScriptIsTheCxxRule) {
  auto text = gen::render_activate_ps1(activation("cu118-cudnn880-win.toml"));
  auto list = [](const std::vector<std::string>& v) {
    std::string s = "@(";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", '" : "'") + v[i] + "'";
    return s + ")";
  };
  EXPECT_NE(text.find("$CudnnPatterns = " + list(core::cudnn_dll_patterns())), std::string::npos) << text;
  EXPECT_NE(text.find("$ToolkitPatterns = " + list(core::toolkit_dll_patterns())), std::string::npos) << text;
  for (const char* kind : {"'cudnn-only'", "'toolkit-with-cudnn'"}) EXPECT_NE(text.find(kind), std::string::npos) << kind;
}

TEST(WindowsScripts, WhatIfChangesNothingAndNeedsNoAdministrator) {
  std::string text = gen::render_activate_ps1(activation("cu118-cudnn880-win.toml"));
  auto guard = text.find("if ($WhatIfPreference)");
  ASSERT_NE(guard, std::string::npos) << "no dry-run branch";
  for (const char* change : {"Set-ItemProperty", "$env:Path = ", "Set-Item ", "Send-EnvironmentChange\n", "throw ", "removed from PATH"}) {
    // the definition of a function may come first; its first use must follow the guard
    auto use = text.find(change);
    while (use != std::string::npos && text.rfind("function ", use) != std::string::npos &&
           text.find("\n}\n", text.rfind("function ", use)) > use)
      use = text.find(change, use + 1);
    if (use != std::string::npos) {
      EXPECT_GT(use, guard) << change << " comes before the dry-run branch";
    }
  }
}

TEST(WindowsScripts, TheCmdScriptSwitchesToUtf8AndBack) {
  auto w = activation("cu118-cudnn880-win.toml", "C:\\Users\\Jos\xC3\xA9\\cudnn");
  auto cmd = gen::render_activate_cmd(w);
  ASSERT_TRUE(cmd.ok());
  EXPECT_TRUE(script_lint::lint_cmd(*cmd).empty()) << script_lint::describe(script_lint::lint_cmd(*cmd));
  auto chcp = cmd->find("chcp 65001");
  ASSERT_NE(chcp, std::string::npos);
  for (std::size_t i = 0; i < chcp; ++i) EXPECT_LT(static_cast<unsigned char>((*cmd)[i]), 0x80u) << "non-ASCII before chcp";
}

// The commands printed for the user: each reads back, in its own shell, as the script's path.
TEST(WindowsScripts, RunHintsQuoteThePathForEachShell) {
  for (const auto& prefix : hostile_prefixes()) {
    std::string script = prefix + "\\.stackpin\\check-cudnn.ps1";
    auto h = gen::run_hints(script, false);
    const std::string ps_head = "powershell -NoProfile -ExecutionPolicy Bypass -File ";
    ASSERT_EQ(h.powershell.rfind(ps_head, 0), 0u) << h.powershell;
    EXPECT_EQ(script_lint::read_ps_single_quoted(h.powershell.substr(ps_head.size())).value_or("?"), script);
    // WSL: bash reads the word back as the path (sh is the same here)
    const std::string wsl_head = "powershell.exe -NoProfile -ExecutionPolicy Bypass -File ";
    ASSERT_EQ(h.wsl.rfind(wsl_head, 0), 0u);
    auto r = testing_support::run_process({"/bin/sh", "-c", "printf '%s' " + h.wsl.substr(wsl_head.size())});
    EXPECT_EQ(r.out, script);
    if (script.find_first_of("\"%") == std::string::npos)
      EXPECT_EQ(h.cmd, "powershell -NoProfile -ExecutionPolicy Bypass -File \"" + script + "\"");
    else
      EXPECT_EQ(h.cmd.rfind("(from PowerShell", 0), 0u) << h.cmd;
    auto in = gen::run_hints(prefix + "\\.stackpin\\activate.ps1", true);
    const std::string in_head = "Set-ExecutionPolicy -Scope Process -ExecutionPolicy Bypass; & ";
    ASSERT_EQ(in.powershell.rfind(in_head, 0), 0u) << in.powershell;
    EXPECT_EQ(script_lint::read_ps_single_quoted(in.powershell.substr(in_head.size())).value_or("?"), prefix + "\\.stackpin\\activate.ps1");
  }
}

// cmd's %VAR:old=new% reads the directory again: with '=', '%', '^' or '!' in it the search would
// corrupt PATH, so such a directory is only put first; every line ends in CRLF.
TEST(WindowsScripts, TheCmdScriptNeverSearchesForADirectoryItCannotQuote) {
  for (const std::string prefix : {"C:\\a=b", "C:\\100% done", "C:\\x^y", "C:\\wow!"}) {
    auto cmd = gen::render_activate_cmd(activation("cu118-cudnn880-win.toml", prefix));
    ASSERT_TRUE(cmd.ok()) << prefix;
    EXPECT_EQ(cmd->find("call set"), std::string::npos) << prefix;
    EXPECT_NE(cmd->find("set \"PATH=%STACKPIN_DIR%;%PATH%\""), std::string::npos) << prefix;
  }
  auto plain = gen::render_activate_cmd(activation("cu118-cudnn880-win.toml"));
  ASSERT_TRUE(plain.ok());
  std::size_t calls = 0;
  for (auto at = plain->find("call set"); at != std::string::npos; at = plain->find("call set", at + 1)) ++calls;
  EXPECT_EQ(calls, 4u) << "two passes of both substitutions";
  for (std::size_t i = 0; i < plain->size(); ++i) {
    if ((*plain)[i] == '\n') {
      ASSERT_TRUE(i > 0 && (*plain)[i - 1] == '\r') << "a line without CRLF at byte " << i;
    }
  }
}

// ---- the PATH rule on fake Windows trees ----------------------------------------------------------

struct FakeMachine {
  ScratchDir dir;
  core::WindowsTree tree;
  FakeMachine() {
    tree.drives['C'] = dir.path();
    tree.vars = core::windows_default_vars();
  }
  void file(const std::string& windows_rel) {
    std::string rel = windows_rel;
    std::replace(rel.begin(), rel.end(), '\\', '/');
    testing_support::write_file(dir.path() / rel, "MZ");
  }
};

TEST(WindowsPathRule, AStaleCudnnInACudaBinKeepsTheToolkitOnPath) {
  FakeMachine m;
  m.file("Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\bin\\cudart64_110.dll");
  m.file("Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\bin\\cublas64_11.dll");
  m.file("Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\bin\\cudnn64_7.dll");  // a manual copy of long ago
  m.file("tools\\cudnn\\v8.6.0\\bin\\cudnn64_8.dll");                                      // an older isolated cuDNN
  m.file("tools\\cudnn\\v8.6.0\\bin\\cudnn_ops_infer64_8.dll");
  m.file("tools\\cudnn\\v8.8.0\\bin\\cudnn64_8.dll");
  m.file("Users\\u\\miniconda3\\envs\\ml\\Library\\bin\\cudart64_110.dll");
  m.file("Users\\u\\miniconda3\\envs\\ml\\Library\\bin\\cudnn64_8.dll");
  std::string path =
      "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\bin;C:\\tools\\cudnn\\v8.6.0\\bin;"
      "%SystemRoot%\\system32;C:\\tools\\cudnn\\v8.8.0\\bin\\;C:\\Users\\u\\miniconda3\\envs\\ml\\Library\\bin;"
      "c:\\program files\\nvidia gpu computing toolkit\\cuda\\v11.8\\bin";
  auto d = core::decide_path(m.tree, path, "C:\\tools\\cudnn\\v8.8.0\\bin");
  EXPECT_EQ(d.value,
            "C:\\tools\\cudnn\\v8.8.0\\bin;C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\bin;"
            "%SystemRoot%\\system32;C:\\Users\\u\\miniconda3\\envs\\ml\\Library\\bin");
  EXPECT_EQ(d.removed, (std::vector<std::string>{"C:\\tools\\cudnn\\v8.6.0\\bin",
                                                 "c:\\program files\\nvidia gpu computing toolkit\\cuda\\v11.8\\bin"}));
  EXPECT_EQ(d.stale, (std::vector<std::string>{"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\bin\\cudnn64_7.dll",
                                               "C:\\Users\\u\\miniconda3\\envs\\ml\\Library\\bin\\cudnn64_8.dll"}));
  ASSERT_EQ(d.entries.size(), 6u);
  EXPECT_EQ(d.entries[0].kind, core::PathEntryKind::toolkit_with_cudnn);
  EXPECT_EQ(d.entries[1].kind, core::PathEntryKind::cudnn_only);
  EXPECT_EQ(d.entries[2].kind, core::PathEntryKind::other);
  EXPECT_EQ(d.entries[3].kind, core::PathEntryKind::ours);
  EXPECT_TRUE(d.entries[5].duplicate);
}

TEST(WindowsPathRule, PatternsMatchWithoutCase) {
  EXPECT_TRUE(core::matches_pattern("CUDNN64_9.DLL", "cudnn*64_*.dll"));
  EXPECT_TRUE(core::matches_pattern("cudnn_engines_runtime_compiled64_9.dll", "cudnn*64_*.dll"));
  EXPECT_FALSE(core::matches_pattern("cudnn.lib", "cudnn*64_*.dll"));
  EXPECT_FALSE(core::matches_pattern("cudart64_12.dll.bak", "cudart64_*.dll"));
  EXPECT_EQ(core::classify_dir({"cudnn64_8.dll", "zlibwapi.dll"}), core::PathEntryKind::cudnn_only);
  EXPECT_EQ(core::classify_dir({"cudnn64_8.dll", "cudart64_12.dll"}), core::PathEntryKind::toolkit_with_cudnn);
  EXPECT_EQ(core::classify_dir({"python.exe"}), core::PathEntryKind::other);
}

}  // namespace

}  // namespace windows_scripts_test
