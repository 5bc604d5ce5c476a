#pragma once
// What stage, unstage and status share (staging.cpp): the names of stackpin's own files beside a
// staging, the refusal to touch files another program holds, and how a receipt is read and named.
#include <filesystem>
#include <string>
#include <vector>

#include "model/staging.hpp"
#include "util/result.hpp"

namespace core::detail {

// The activation scripts a staging keeps in DEST/.stackpin/ (stage writes them, unstage removes them).
const std::vector<std::string>& activation_names();

// Windows does not let a file another program holds be moved or removed (a cuDNN DLL a running
// Python has loaded, a .lib an IDE has open): such files are found before the first change, and
// named with the programs that hold them, rather than met halfway through as a half-replaced tree.
// `rels` are DEST-relative paths this run would move or remove, `verb` what it would do ("stage
// into"). Errors: conflict (files in use, with the programs to close).
util::Status refuse_files_in_use(const std::filesystem::path& dest, const std::vector<std::string>& rels, const std::string& verb);

// What the receipt of a staging says it holds, for messages: "cuDNN 9.1.0.70", "CUDA 12.4.1 (4 components)".
std::string staged_what(const model::Receipt& r);

}  // namespace core::detail
