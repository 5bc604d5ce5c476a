#pragma once
// Area core/layout (layout_plan.hpp): what the activation scripts need, derived once from a
// manifest and the knowledge base.
#include "gen/activate.hpp"
#include "gen/activate_windows.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/manifest.hpp"
#include "util/result.hpp"

namespace core {

// The Linux/WSL2 activation (activate.sh, profile.d, ld.so.conf.d) for the tree at `prefix`, else
// at the manifest's [targets.linux] prefix. Errors: invalid (neither is given), usage (the prefix
// is not an absolute path).
util::Result<gen::LinuxActivation> linux_activation(const model::Manifest& m, const std::string& prefix = "");

// The Windows tree's root and DLL directory: the isolated prefix with this cuDNN version's
// DLL directory ("bin", or "bin\x64" from 9.18), or for cuda-merge the CUDA root's "bin"
// ("bin\x64" from CUDA 13). Errors: invalid (no [targets.windows], or no prefix / cuda_path for its layout),
// unsupported (a cuDNN version whose Windows layout the knowledge base does not know).
util::Result<gen::WindowsActivation> windows_activation(const model::Manifest& m, const knowledge::KnowledgeBase& kb);

// The manifest with its Windows tree at `root`: the CUDA root of a cuda-merge layout, else the
// prefix (unchanged without [targets.windows]).
model::Manifest windows_tree_placed_at(const model::Manifest& m, const std::string& root);

// The same tree at `root` instead of the manifest's prefix or cuda_path (`generate activate
// --prefix`): the layout below it is the manifest's. Errors: those of windows_activation, usage
// (`root` is not an absolute Windows path), unsupported (a root that cannot be a PATH entry).
util::Result<gen::WindowsActivation> windows_activation_at(const model::Manifest& m, const knowledge::KnowledgeBase& kb,
                                                           const std::string& root);

// What to do on the Windows machine once a tree for it is staged in `dest` (a local folder) for
// `prefix` (where it will live there): copy it, activate it, check it, each command right for the
// shell it is shown for (PowerShell with the execution policy bypassed for that script, cmd.exe,
// WSL's bash) and every path quoted for that shell.
std::vector<std::string> windows_next_steps(const std::string& dest, const std::string& prefix);

// A directory that can be a PATH entry: no ';' (it separates entries, and a quoted entry is not
// searched by the DLL loader) and no '"'. Errors: unsupported.
util::Status check_path_entry(const std::string& dir);

// The same for a tree whose layout is known from its files: `root` is where it lives on the
// Windows machine, `dll_dir` and `import_lib` are relative to it ('/'-separated).
gen::WindowsActivation windows_activation_for_tree(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const std::string& root,
                                                   const std::string& dll_dir, const std::string& import_lib);

}  // namespace core
