#pragma once
// The GPU code inside a library, read from its fatbin containers (fatbin.cpp): which SASS
// architectures, PTX targets and ISA versions it carries, without the CUDA toolkit and without
// decompressing anything. Works on ELF (.nv_fatbin, __nv_relfatbin) and PE (.nv_fatb) files, and
// finds the containers a library keeps in its data sections (cuFFT's .ldata) too.
#include <filesystem>
#include <string>
#include <string_view>

#include "model/kernels.hpp"
#include "util/result.hpp"

namespace probe {

// True when `head` (a file's first bytes) starts like an ELF or PE (MZ) file.
bool looks_like_binary(std::string_view head);

// Reads the GPU code of the ELF or PE file held in `bytes`; `name` is what errors and the report
// call it. A file without GPU code gives an empty target list. Errors: invalid (not ELF/PE,
// truncated tables, or a container in a fatbin section that is truncated, oversized, overlaps
// another, or whose entries would not advance), unsupported (big-endian ELF, no section headers).
// `use_wrapper_table` false ignores the table of containers a shared object carries and walks its
// fatbin section container by container: the table is only a shortcut, so what either way
// accepts must be the same (the fuzz target compares them).
util::Result<model::LibraryKernels> read_gpu_code(std::string_view bytes, const std::string& name, bool use_wrapper_table = true);
// The same for a file, read by small reads at the headers (the payloads are skipped). Errors: as
// above, and not_found / io for the file itself.
util::Result<model::LibraryKernels> read_gpu_code(const std::filesystem::path& path);

}  // namespace probe
