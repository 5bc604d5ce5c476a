#pragma once
// Files another program holds so that they cannot be moved or removed. Windows refuses to rename or
// delete a file that a process opened without FILE_SHARE_DELETE, and to delete or overwrite a DLL
// that a process has loaded; a stage or unstage that met one halfway through would leave a
// half-replaced tree (and a running Python would load the rest of cuDNN from another release).
// stage and unstage ask first, and refuse with the programs' names. On Linux and macOS a rename or
// unlink never waits for other processes, so nothing is ever held.
#include <filesystem>
#include <string>
#include <vector>

namespace probe {

struct FileHolder {
  unsigned long pid = 0;
  std::string process;  // the program's file name ("python.exe"), or what the system calls it
};

struct FileInUse {
  std::filesystem::path path;       // as it was asked for
  std::vector<FileHolder> holders;  // by pid; empty when the system did not say which program
};

// Those of `paths` that are held, in the order asked. A path that does not exist, or that cannot be
// opened for another reason (permissions), is not reported here: the change itself reports it.
std::vector<FileInUse> files_in_use(const std::vector<std::filesystem::path>& paths);

}  // namespace probe
