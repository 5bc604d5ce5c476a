#pragma once
// `stackpin activate` on Windows (activate.cpp): what activate.ps1 does, done by stackpin itself
// through a PersistentEnv (the registry): the scope's PATH by the PATH rule of
// core/windows/windows_path_rule.hpp (one decision for both), CUDNN_PATH, CUDA_PATH and
// CUDA_PATH_VX_Y, WM_SETTINGCHANGE, and a record in DEST/.stackpin/ from which --undo restores
// only what stackpin itself added, removed or set.
#include <filesystem>
#include <string>

#include "core/windows/windows_search.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/activation.hpp"
#include "model/manifest.hpp"
#include "util/env.hpp"
#include "util/persistent_env.hpp"
#include "util/result.hpp"

namespace core {

struct ActivateOptions {
  util::EnvScope scope = util::EnvScope::user;
  std::string root;             // the tree's Windows path ("" = the manifest's [targets.windows] prefix or cuda_path)
  std::filesystem::path state;  // the staged tree on this machine (its .stackpin/ holds the receipt and the record)
  bool dry_run = false;         // compute and report, change nothing
  bool undo = false;            // restore what the record says stackpin changed
};

// Errors: not_found (nothing staged at `state`; --undo without a record), those of
// windows_activation, of reading the record (invalid/parse, naming the file) and of the store (io,
// with what to do for the Machine scope without elevation). Nothing is written on an error found
// before the first change; the record is written before the store, so a run cut short can still
// be undone.
util::Result<model::ActivationReport> activate_windows(const model::Manifest& m, const knowledge::KnowledgeBase& kb,
                                                       const WindowsTree& tree, util::PersistentEnv& store, const ActivateOptions& o);

// On Linux and WSL2 (activate_linux.cpp): the Machine scope installs the profile.d snippet and the
// ld.so.conf.d entry that `stackpin generate` writes for the staged tree, under `root`
// (/etc/profile.d/stackpin-<name>.sh, /etc/ld.so.conf.d/stackpin-<name>.conf) and runs ldconfig
// when `root` is "/"; the User scope, which has no loader configuration, installs the snippet as
// ~/.config/stackpin/activate-<name>.sh and sources it from a marked block in ~/.profile. --undo
// removes exactly those, leaving alone (and reporting) a file changed since.
struct LinuxActivateOptions {
  util::EnvScope scope = util::EnvScope::user;
  std::filesystem::path state;       // the staged tree (its receipt says where it lives and what it holds)
  std::filesystem::path root = "/";  // the file system the Machine scope writes into
  std::filesystem::path home;        // the User scope's home directory
  bool dry_run = false;
  bool undo = false;
  const util::Env* env = nullptr;  // for finding ldconfig
};
// Errors: not_found (nothing staged), invalid (a receipt of a Windows tree), unsupported (a prefix
// ld.so.conf cannot hold), io (with what to do without the rights to write there).
util::Result<model::ActivationReport> activate_linux(const model::Manifest& m, const LinuxActivateOptions& o);

// The live machine as a WindowsTree: every drive letter as itself, the variables a PATH value can
// name taken from `env` (the process environment) over Windows' defaults.
WindowsTree live_windows_tree(const util::Env& env, std::string_view path_value);

}  // namespace core
