#pragma once
// The build-system files stage writes into a staged tree (build_files.cpp): the CMake package
// configuration and, for Linux trees, the pkg-config file, where find_package and pkg-config look
// given the tree's prefix. Like the activation scripts they are stackpin's own files, not staged
// ones: a restage rewrites them when missing or stale, and unstage removes them with the folders
// it made for them (recorded in DEST/.stackpin/build-files).
#include <string>
#include <utility>
#include <vector>

#include "gen/build_config.hpp"
#include "model/contracts.hpp"
#include "model/staging.hpp"
#include "util/result.hpp"

namespace core::detail {

struct BuildFiles {
  std::vector<std::pair<std::string, std::string>> files;  // DEST-relative path -> content
  std::string note;                                        // why there are none
};

// Where the files go: Linux share/cmake/CUDNN/ (searched under a prefix by every CMake, also on
// Debian and Ubuntu, which do not search lib64/cmake/) and <lib dir>/pkgconfig/; Windows cmake/
// (searched under a prefix; for cuda-merge, inside the CUDA root).
inline constexpr const char* k_linux_cmake_dir = "share/cmake/CUDNN";
inline constexpr const char* k_windows_cmake_dir = "cmake";

// The spec for the tree a receipt describes, from the files it lists (their directories, the
// libraries present). nullopt-like: an empty `libraries` when the tree has no main library.
gen::BuildConfig build_config_for(const model::Receipt& r);

// The files for a staged tree (none, with a note, when its layout holds no main library).
BuildFiles build_files_for(const model::Receipt& r);

// Every file is as build_files_for renders it (or left alone: another program's file at its path).
// When true and `report` is given, fills its build_files and build_files_note as writing them would.
bool build_files_current(const model::StateDir& dirs, const BuildFiles& b, model::StageReport* report = nullptr);

// Writes what is missing or stale, creating the folders it needs, and records them in
// DEST/.stackpin/build-files. A file at one of the paths that stackpin did not write is kept (and
// named in the report's note). Fills report.build_files with the absolute paths. Errors: io.
util::Status write_build_files(const model::StateDir& dirs, const BuildFiles& b, model::StageReport& report);

// The recorded files that are there but are not what stackpin wrote (their SHA-256 differs from the
// record's): unstage refuses over them without --force.
std::vector<std::string> build_files_changed(const model::StateDir& dirs);

// Removes the recorded files stackpin can prove it wrote (the record's SHA-256; with `force` also
// its own files edited since, recognised by the generated-file marker; never another file, whatever
// the record says) and the folders made for them (when empty), then the record.
void remove_build_files(const model::StateDir& dirs, bool force);

}  // namespace core::detail
