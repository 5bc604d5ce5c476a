#pragma once
// Build-system files for a cuDNN tree (build_config.cpp): a CMake package configuration
// (CUDNNConfig.cmake + CUDNNConfigVersion.cmake, found by `find_package(CUDNN CONFIG)` given the
// tree's prefix) and a pkg-config file (cudnn.pc).
#include <string>
#include <vector>

#include "model/platform.hpp"
#include "util/result.hpp"

namespace gen {

struct BuildConfig {
  std::string name;     // manifest name (comments only)
  std::string version;  // the package version, "9.1.0.70"
  int cudnn_major = 0;  // 8, 9
  int cuda_major = 0;   // the CUDA major cuDNN was built for; 0 when unknown
  model::Platform platform = model::Platform::linux_x86_64;
  // "" for a relocatable tree: each file finds the prefix from its own place in the tree (cmake_dir,
  // pkgconfig_dir). Otherwise the absolute prefix the tree is installed at ("/usr" for a .deb).
  std::string prefix;
  std::string cmake_dir;      // where CUDNNConfig.cmake lies, relative to the prefix: "share/cmake/CUDNN", "cmake"
  std::string pkgconfig_dir;  // where cudnn.pc lies, relative to the prefix: "lib64/pkgconfig"
  // the tree's directories, relative to the prefix, '/'-separated
  std::string include_dir = "include";
  std::string lib_dir;  // Linux: the shared libraries ("lib64", "lib/x86_64-linux-gnu"); Windows: the import libraries ("lib/x64")
  std::string bin_dir;  // Windows: the DLLs ("bin", "bin/x64")
  // The libraries the tree has, without "lib" and suffixes: "cudnn" first, then the sub-libraries
  // ("cudnn_ops", ...; they differ between cuDNN 8 and 9). Linux: lib<name>.so.<major>; Windows:
  // <name>64_<major>.dll with the import library <name>.lib.
  std::vector<std::string> libraries;
  std::vector<std::string> static_libraries;  // Linux: those with NVIDIA's lib<name>_static.a
};

// The first line of every file rendered here: stackpin recognises its own files by it.
extern const char* const k_generated_marker;

// CUDNNConfig.cmake: imported targets CUDNN::cudnn (the main shared library: on Linux
// lib<name>.so.<major> with its SONAME, on Windows the DLL with its import library), one per
// sub-library (CUDNN::cudnn_ops ...), CUDNN::cudnn_all, and CUDNN::<name>_static for static
// archives; the variables of FindCUDNN modules (CUDNN_INCLUDE_DIR, CUDNN_LIBRARY, CUDNN_VERSION ...).
// A file it names that is missing (a half-copied tree) makes find_package fail, naming it.
std::string render_cmake_config(const BuildConfig& c);

// CUDNNConfigVersion.cmake: the same major at or above the requested version, any version within a
// requested range; a tree for another platform or pointer size is unsuitable.
std::string render_cmake_config_version(const BuildConfig& c);

// cudnn.pc for `pkg-config --cflags --libs cudnn`. Errors (unsupported): a Windows tree (the
// CMake configuration serves it), a prefix a .pc file cannot hold (a line break).
util::Result<std::string> render_pkg_config(const BuildConfig& c);

// DEST/version.json of a staged CUDA toolkit, in the format of NVIDIA's own toolkit trees: one
// object per installed component ({"name": ..., "version": ...}) and "cuda" for the release,
// keys in order, three-space indent. `components` are (NVIDIA's id, its name, its version).
struct CudaComponentVersion {
  std::string id, name, version;
};
std::string render_cuda_version_json(const std::string& release, std::vector<CudaComponentVersion> components);

}  // namespace gen
