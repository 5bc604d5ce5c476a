// NVIDIA's redistributable archives have one top directory named like the file, holding
// include/, lib/ (Linux) or bin/ + lib/x64/ (Windows; bin/x64/ from 9.18, lib/ before 8.5; Windows
// on Arm's bin/arm64/ + lib/arm64/) and
// LICENSE. Which directories a version uses comes from the knowledge base; an archive whose
// entries fall outside them is refused rather than guessed at, and one that lacks the main
// library or cudnn.h / cudnn_version.h is refused as incomplete (the half-copied tree of the
// seeds). Targets then decide where each directory goes: Linux renames lib/ to lib64/ and keeps
// the so-name symlink chain; a Windows prefix keeps NVIDIA's layout; a CUDA merge puts DLLs in
// the toolkit's bin\ (bin\x64\ from CUDA 13), import libraries in lib\x64\ and headers in include\ too
// (bin\arm64\ and lib\arm64\ for Windows on Arm).
#include "core/layout/layout_plan.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "archive/paths.hpp"
#include "core/windows/windows_search.hpp"
#include "util/strings.hpp"

namespace core::detail {

namespace {

util::Error layout_error(const std::string& msg, const std::string& hint) {
  util::Error e(util::ErrorCode::unsupported, msg);
  e.hints.push_back(hint);
  return e;
}

bool under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size() + 1, dir + "/") == 0;
}

// The first of the knowledge base's candidate directories that the archive has.
std::string pick(const model::LayoutRule* rule, const std::set<std::string>& dirs) {
  if (!rule) return {};
  for (const auto& d : rule->dirs)
    if (dirs.count(d)) return d;
  return {};
}

// The one directory every entry of NVIDIA's archives lies in (`what`: "the archive" in messages).
util::Result<std::string> top_directory(const std::vector<archive_io::Entry>& entries, const std::string& what, const std::string& hint) {
  std::string top;
  for (const auto& e : entries) {
    std::string first = e.path.substr(0, e.path.find('/'));
    if (top.empty()) top = first;
    if (first != top || (e.path == first && e.type != archive_io::EntryType::dir))
      return layout_error(what + " does not have NVIDIA's layout: \"" + e.path + "\" is outside the top directory \"" + top + "/\"", hint);
  }
  if (top.empty()) return layout_error(what + " is empty", hint);
  return top;
}

// An archive entry (`rel`: its path below the top directory) placed at `to` in DEST.
model::PlannedFile planned(const archive_io::Entry& e, const std::string& rel, const std::string& to) {
  model::PlannedFile f;
  f.from = rel;
  f.to = to;
  f.type = e.type == archive_io::EntryType::symlink ? "symlink" : "file";
  f.link = e.link;
  f.size = e.size;
  return f;
}

// Where every file will live in DEST, judged once for every product and layout: nothing of an
// archive may land in DEST/.stackpin (stackpin's receipt, journal, backups and scripts: a file
// placed there would make the staging impossible to check or undo), judged without regard to case
// since DEST may lie on a file system that ignores it (NTFS, also under WSL). Then every link,
// judged where it will live: the archive's own checks saw them under its top directory.
util::Status check_plan(const LayoutPlan& plan) {
  const std::string state = util::to_lower(model::StateDir::k_name);
  for (const auto& f : plan.files)
    if (util::to_lower(f.to.substr(0, f.to.find('/'))) == state)
      return archive_io::unsafe_entry(plan.top + "/" + f.from, "it would be placed in DEST/" + f.to + ", inside stackpin's own state (" +
                                                                   model::StateDir::k_name + "/)");
  std::vector<TreeNode> nodes;
  for (const auto& f : plan.files) nodes.push_back(TreeNode{f.to, f.type == "symlink", f.link, plan.top + "/" + f.from});
  return check_links_in_tree(nodes, "DEST");
}

}  // namespace

util::Result<LayoutPlan> plan_layout(const std::vector<archive_io::Entry>& entries, const model::Manifest& m, model::Platform platform,
                                     const knowledge::KnowledgeBase& kb) {
  LayoutPlan plan;
  const model::Version& version = m.cudnn->version.value;
  SP_TRY_ASSIGN(
      plan.top,
      top_directory(entries, "the archive",
                    "NVIDIA's archives hold one top directory named like the file (cudnn-<platform>-<version>_cuda<M>-archive/)"));

  // every directory that holds something, relative to the top
  std::set<std::string> dirs;
  for (const auto& e : entries) {
    if (e.path.size() <= plan.top.size()) continue;
    std::string rel = e.path.substr(plan.top.size() + 1);
    for (auto pos = rel.find('/'); pos != std::string::npos; pos = rel.find('/', pos + 1)) dirs.insert(rel.substr(0, pos));
  }

  const bool windows = model::is_windows(platform);
  const auto* contents = kb.cudnn_contents(static_cast<int>(version.major()));
  std::string libdir, dlldir, implibdir;
  if (windows) {
    const auto* dll_rule = kb.windows_dll_dir(version, platform);
    const auto* lib_rule = kb.windows_import_lib_dir(version, platform);
    dlldir = pick(dll_rule, dirs);
    implibdir = pick(lib_rule, dirs);
    if (!dll_rule || !lib_rule || !contents)
      return layout_error(
          "stackpin does not know the " + std::string(model::to_string(platform)) + " archive layout of cuDNN " + version.prefix(3),
          "add the layout to data/knowledge/cudnn-layouts.toml (with its source) to stage this version");
    if (dlldir.empty() || implibdir.empty()) {
      std::vector<std::string> want;
      for (const auto& d : dll_rule->dirs) want.push_back(d + "/");
      for (const auto& d : lib_rule->dirs) want.push_back(d + "/");
      return layout_error("the archive's layout matches no known cuDNN " + version.prefix(3) + " " + model::to_string(platform) +
                              " layout: expected " + util::one_of(want) + " inside " + plan.top + "/",
                          "is this the " + std::string(model::to_string(platform)) + " archive of cuDNN " + version.text() +
                              "? (NVIDIA moved DLLs to bin\\x64 in 9.18 and import libraries to lib\\x64 by 8.8; Windows on Arm's "
                              "archives keep bin\\arm64 and lib\\arm64)");
    }
  } else {
    libdir = pick(kb.linux_lib_dir(version), dirs);
    if (!kb.linux_lib_dir(version) || !contents)
      return layout_error("stackpin does not know the Linux archive layout of cuDNN " + version.prefix(3),
                          "add the layout to data/knowledge/cudnn-layouts.toml (with its source) to stage this version");
    if (libdir.empty())
      return layout_error("the archive's layout matches no known cuDNN " + version.prefix(3) + " Linux layout: no " +
                              kb.linux_lib_dir(version)->dirs.front() + "/ inside " + plan.top + "/",
                          "is this the Linux archive of cuDNN " + version.text() + "?");
  }
  bool merge = windows && m.windows && m.windows->layout.value == model::WindowsLayout::cuda_merge;
  // the toolkit's own directories: CUDA 13 keeps DLLs in bin\x64 (bin\arm64 on Arm), import
  // libraries are in lib\x64 (lib\arm64)
  const std::string arch = windows ? model::windows_arch_dir(platform) : "";
  const std::string merge_dll_dir =
      platform == model::Platform::windows_arm64 || (m.cuda && m.cuda->version.value.major() >= 13) ? "bin/" + arch : "bin";
  const std::string merge_lib_dir = "lib/" + arch;

  for (const auto& e : entries) {
    if (e.type == archive_io::EntryType::dir || e.path.size() <= plan.top.size()) continue;
    std::string rel = e.path.substr(plan.top.size() + 1);
    std::string to;
    std::string tail;
    if (under(rel, "include")) {
      to = rel;
    } else if (rel == "LICENSE") {
      to = merge ? "LICENSE-cudnn.txt" : "LICENSE";
    } else if (!windows && under(rel, libdir)) {
      to = "lib64/" + rel.substr(libdir.size() + 1);
    } else if (windows && under(rel, dlldir)) {
      to = merge ? merge_dll_dir + "/" + rel.substr(dlldir.size() + 1) : rel;
    } else if (windows && under(rel, implibdir)) {
      to = merge ? merge_lib_dir + "/" + rel.substr(implibdir.size() + 1) : rel;
    } else {
      return layout_error("the archive's layout matches no known cuDNN " + version.prefix(3) + " layout: unexpected \"" + rel + "\"",
                          "stackpin stages only what NVIDIA's archives hold (include/, " +
                              (windows ? dlldir + "/, " + implibdir + "/" : libdir + "/") + ", LICENSE)");
    }
    plan.files.push_back(planned(e, rel, to));
  }

  // completeness: the main library and the headers every build needs
  auto has = [&](const std::string& to) {
    return std::any_of(plan.files.begin(), plan.files.end(), [&](const model::PlannedFile& f) { return f.to == to; });
  };
  std::vector<std::string> missing;
  for (const char* h : {"include/cudnn.h", "include/cudnn_version.h"})
    if (!has(h)) missing.push_back(h);
  if (windows) {
    std::string dll = (merge ? merge_dll_dir : dlldir) + "/" + contents->main_dll;
    if (!has(dll)) missing.push_back(dll);
    std::string lib = (merge ? merge_lib_dir : implibdir) + "/cudnn.lib";
    if (!has(lib)) missing.push_back(lib);
  } else {
    std::string so = "lib64/" + contents->soname;
    if (!has(so)) missing.push_back(so);
  }
  if (!missing.empty())
    return util::Error(util::ErrorCode::invalid, "incomplete cuDNN archive: missing " + util::join(missing, ", "))
        .with_hint("a half-copied or repacked tree; download NVIDIA's archive again");
  SP_TRY(check_plan(plan));
  return plan;
}

util::Result<LayoutPlan> plan_cuda_component(const std::vector<archive_io::Entry>& entries, const std::string& component,
                                             model::Target target) {
  LayoutPlan plan;
  std::string hint =
      "NVIDIA's CUDA component archives hold one top directory named like the file (" + component + "-<platform>-<version>-archive/)";
  SP_TRY_ASSIGN(plan.top, top_directory(entries, "the " + component + " archive", hint));
  const bool windows = target == model::Target::windows;
  for (const auto& e : entries) {
    if (e.type == archive_io::EntryType::dir || e.path.size() <= plan.top.size()) continue;
    std::string rel = e.path.substr(plan.top.size() + 1);
    std::string to;
    if (rel.find('/') == std::string::npos)
      to = "share/doc/" + component + "/" + rel;  // LICENSE, and any other file NVIDIA puts beside the directories
    else if (!windows && (rel.rfind("lib/", 0) == 0))
      to = "lib64/" + rel.substr(4);
    else
      to = rel;
    plan.files.push_back(planned(e, rel, to));
  }
  if (plan.files.empty()) return layout_error("the " + component + " archive holds no file", hint);
  SP_TRY(check_plan(plan));
  return plan;
}

util::Status check_links_in_tree(const std::vector<TreeNode>& nodes, const std::string& where) {
  std::map<std::string, const TreeNode*> by_path;
  for (const auto& n : nodes) by_path[n.path] = &n;
  auto is_dir_prefix = [&](const std::string& p) {
    auto it = by_path.lower_bound(p + "/");
    return it != by_path.end() && it->first.compare(0, p.size() + 1, p + "/") == 0;
  };
  // Resolves `target` from the directory `dir`; returns the path it names in the tree, or an
  // explanation of why it names nothing the tree holds.
  std::function<std::optional<std::string>(std::vector<std::string>, const std::string&, int, std::string&)> resolve =
      [&](std::vector<std::string> dir, const std::string& target, int depth, std::string& why) -> std::optional<std::string> {
    if (depth > 40) {
      why = "the links loop";
      return std::nullopt;
    }
    if (target.empty() || target.front() == '/') {
      why = "it is absolute";
      return std::nullopt;
    }
    auto parts = util::split(target, '/');
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const auto& part = parts[i];
      if (part.empty() || part == ".") continue;
      if (part == "..") {
        if (dir.empty()) {
          why = "it climbs above " + where;
          return std::nullopt;
        }
        dir.pop_back();
        continue;
      }
      dir.push_back(part);
      std::string here = util::join(dir, "/");
      auto it = by_path.find(here);
      if (it != by_path.end() && it->second->symlink) {
        dir.pop_back();
        auto r = resolve(dir, it->second->link, depth + 1, why);
        if (!r) return std::nullopt;
        dir = util::split(*r, '/');
        if (r->empty()) dir.clear();
      } else if (it != by_path.end() && i + 1 < parts.size()) {
        why = "it goes through the file " + here;
        return std::nullopt;
      }
    }
    std::string final_path = util::join(dir, "/");
    auto it = by_path.find(final_path);
    if (it == by_path.end()) {
      why = final_path.empty() ? "it names " + where + " itself"
                               : (is_dir_prefix(final_path) ? final_path + " is a directory" : "nothing is staged at " + final_path);
      return std::nullopt;
    }
    return final_path;
  };
  for (const auto& n : nodes) {
    if (!n.symlink) continue;
    auto parts = util::split(n.path, '/');
    std::vector<std::string> dir(parts.begin(), parts.end() - 1);
    std::string why;
    auto r = resolve(dir, n.link, 0, why);
    if (!r) {
      util::Error e(util::ErrorCode::unsafe, "unsafe archive entry \"" + util::printable(n.shown) + "\": as " + n.path + " in " + where +
                                                 ", its link to \"" + util::printable(n.link) + "\" points at no file " + where +
                                                 " holds (" + why + ")");
      e.hints.push_back(
          "NVIDIA's archives link libraries to their versioned files only; the archive is not NVIDIA's original; nothing was staged");
      return e;
    }
  }
  return {};
}

util::Status check_header_version(const std::filesystem::path& header, const model::Version& pinned) {
  auto version = read_cudnn_header_version(header);
  if (!version)
    return util::Error(util::ErrorCode::invalid, "include/cudnn_version.h of the archive defines no CUDNN_MAJOR/MINOR/PATCHLEVEL")
        .with_hint("not a cuDNN 8 or 9 archive");
  std::string found = version->text();
  if (found != pinned.prefix(3))
    return util::Error(util::ErrorCode::mismatch,
                       "the archive holds cuDNN " + found + " (cudnn_version.h), the manifest pins " + pinned.text())
        .with_hint("pin the version the archive really is, or use the archive of " + pinned.text());
  return {};
}

}  // namespace core::detail
