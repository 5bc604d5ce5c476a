#pragma once
// One cuDNN, whole (cudnn_whole.cpp): cuDNN 8 and 9 are a set of sub-libraries that the main
// library loads at run time, and they must all be there and of one release. One missing, or of
// another release, makes the loader take it from elsewhere and the first convolution fail with
// CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH (or NOT_INITIALIZED). A directory is judged by the
// files' own bytes (library_identity.hpp): the soname each file has, the libraries it needs, and
// the release the bytes name where they do. File names count only where the bytes name no
// release, and a name that disagrees with its own bytes is a problem.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/facts.hpp"
#include "model/kernels.hpp"
#include "model/machine.hpp"
#include "util/result.hpp"

namespace probe {

// A cuDNN library's name taken apart: "libcudnn_ops.so.9.19.0" (stem libcudnn_ops, major 9,
// numbers "9.19.0"), "libcudnn.so" (the development link: no major, no numbers),
// "cudnn_ops64_9.dll" (stem cudnn_ops, major 9, Windows). Each number has at most 6 digits.
struct CudnnLibraryName {
  std::string stem;
  int major = -1;       // -1: the development link
  std::string numbers;  // every number after ".so", as written ("9", "9.19.0"); "" for a DLL
  bool windows = false;
  std::string soname() const;  // "libcudnn_ops.so.9", "cudnn_ops64_9.dll"
  // The release a fully versioned name says (three numbers or more), else nullopt.
  std::optional<model::Version> version() const;
};
std::optional<CudnnLibraryName> parse_cudnn_library_name(const std::string& name);
// True for a name cuDNN's libraries have: libcudnn*.so[.N...] or cudnn*64_N.dll.
bool is_cudnn_library_name(const std::string& name);
// The cuDNN libraries of `major` in `dir` as the loader finds them: each sub-library's soname
// (libcudnn_ops.so.9) or DLL (cudnn_ops64_9.dll), sorted, one path per file. Errors: io (the
// directory cannot be listed, with why).
util::Result<std::vector<std::filesystem::path>> cudnn_libraries_of(const std::filesystem::path& dir, int major);
// The GPU code of those libraries, each read from its fatbin containers (probe/fatbin.hpp), its
// path the one listed; one that cannot be read goes to `unreadable` with why. Errors: as above.
struct CudnnKernels {
  std::vector<model::LibraryKernels> libraries;
  std::vector<std::pair<std::filesystem::path, std::string>> unreadable;
};
util::Result<CudnnKernels> read_cudnn_kernels(const std::filesystem::path& dir, int major);

// One name in the directory: the file it is (links followed, on this machine), or the text of a
// link that leads nowhere.
struct CudnnFile {
  std::string name;
  std::optional<std::filesystem::path> file;
  std::string dangles_to;
};

// Every cuDNN major of 8 or later among `files` (names of one directory, shown as `shown`), judged
// against `contents` (the knowledge base's sub-library lists; a major without one is judged by
// what the files need, and says so). Names that are not cuDNN's are ignored.
std::vector<model::CudnnWhole> judge_cudnn_files(std::vector<CudnnFile> files, const std::string& shown,
                                                 const std::vector<model::CudnnMajorContents>& contents);
// The same for a directory of this machine.
std::vector<model::CudnnWhole> read_cudnn_whole(const std::filesystem::path& dir, const std::string& shown,
                                                const std::vector<model::CudnnMajorContents>& contents);

}  // namespace probe
