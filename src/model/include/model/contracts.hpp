#pragma once
// The contracts every command shares (ARCHITECTURE "Contracts"), defined once.
//
// DEST: `--dest DIR` is the local directory that *becomes* the target's prefix (isolated, lib64)
// or the CUDA root (cuda-merge); it is never joined onto the manifest's prefix the way DESTDIR is.
// stackpin's own files in a staged tree live under DEST/.stackpin/, except the CMake and pkg-config
// files, which must lie where those tools look (recorded in DEST/.stackpin/build-files).
#include <filesystem>
#include <optional>
#include <string>

#include "model/manifest.hpp"
#include "model/platform.hpp"

namespace model {

struct StateDir {
  static constexpr const char* k_name = ".stackpin";  // the one name of the state folder in DEST
  std::filesystem::path dest;
  std::filesystem::path root() const { return dest / k_name; }
  std::filesystem::path receipt() const { return root() / "receipt.json"; }  // versioned
  std::filesystem::path journal() const { return root() / "journal"; }       // in-progress operations
  std::filesystem::path backup() const { return root() / "backup"; }         // what cuda-merge overwrote
  std::filesystem::path lock() const { return root() / "lock"; }
};

enum class Target { windows, linux, docker, conda };
std::optional<Target> parse_target(const std::string& text);
const char* to_string(Target t);

// --platform default: the manifest's Windows platform (windows-x86_64, or windows-arm64 for
// [targets.windows] arch = "arm64") for the windows target, the host's platform otherwise.
Platform default_platform(const Manifest& m, Target target, Platform host);
// Why a Windows --platform contradicts the manifest's [targets.windows] arch ("" when it does not).
std::string windows_arch_conflict(const Manifest& m, Platform chosen);

// The cuDNN library an application loads for cuDNN `major`: "cudnn64_9.dll" on Windows,
// "libcudnn.so.9" elsewhere. The one spelling of the rule, for every layer that looks for it
// (probe reads machines, core lays out, judges and captures trees).
std::string cudnn_library_name(int major, bool windows);

// An absolute Windows path: a drive letter with a separator (C:\ or C:/) or a UNC path (\\server).
bool is_windows_absolute(const std::string& path);

}  // namespace model
