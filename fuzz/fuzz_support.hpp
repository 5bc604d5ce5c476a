#pragma once
// Shared by the fuzz targets: a scratch directory that lives for the whole run (inputs are
// written under it, one fresh subdirectory per input), a snapshot of a tree to compare before and
// after, and a failure that aborts with a message, so that libFuzzer (or the replay driver) keeps
// the input that caused it.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace fuzz {

// A directory for this process, removed at exit: under $STACKPIN_FUZZ_SCRATCH, else /dev/shm
// (tmpfs, so that file system work costs little), else the temporary directory.
const std::filesystem::path& scratch_root();

// A fresh, empty directory under scratch_root() for one input; the previous one is removed.
std::filesystem::path fresh_dir();

// path -> "file <size> <first bytes hash>", "dir", "symlink <target>": what a tree holds.
using Snapshot = std::map<std::string, std::string>;
Snapshot snapshot(const std::filesystem::path& root);

// Aborts with "stackpin fuzz: <what>": the input is kept as a crash.
[[noreturn]] void fail(const std::string& what);
#define FUZZ_CHECK(cond, what)       \
  do {                               \
    if (!(cond)) ::fuzz::fail(what); \
  } while (0)

std::string_view as_text(const std::uint8_t* data, std::size_t size);

// Writes bytes to a file (overwriting). Aborts when it cannot: that is the harness, not the input.
void write_file(const std::filesystem::path& p, std::string_view bytes);

}  // namespace fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
