#pragma once
// Test fixtures made at test time: archives written with libarchive (including hostile entries),
// cuDNN archives in NVIDIA's exact layouts, manifests pinning them, and broken streams that
// libarchive's writer cannot produce (a tar whose header lies about the size, truncated and
// corrupted copies).
//
// Everything here is deterministic: the same input gives the same bytes on every run (fixed mtime,
// uid/gid 0, uname/gname "root", no gzip timestamp, pseudo-random library contents seeded by name).
// Failures throw std::runtime_error naming the file and libarchive's message.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace fixtures {
namespace fs = std::filesystem;

enum class Kind { file, dir, symlink, hardlink, fifo, chardev };

struct Entry {
  std::string path;  // archive path as stored (may be hostile: "../x", "/etc/x", "a/../../b")
  Kind kind = Kind::file;
  std::string data;      // file contents
  std::string link;      // symlink target or hardlink target (archive path)
  unsigned mode = 0644;  // include setuid etc. when a test wants it (e.g. 04755)
                         // dir and symlink entries left at the default 0644 are written 0755 / 0777
};

enum class Format { tar, tar_gz, tar_xz, zip };

// The fixed modification time of every entry written here (2024-01-01T00:00:00Z).
inline constexpr std::int64_t fixed_mtime = 1704067200;

// Whether write_archive stores `name` exactly as given. Always on Linux; on Windows libarchive
// turns a backslash into '/' and writes a non-ASCII name in the ANSI code page, so a test of such
// names leaves them out there (tests/windows/ runs them through stackpin.exe with Linux-made archives).
bool writes_name_verbatim(const std::string& name);

// Writes `entries` in order with libarchive (pax-restricted tar: ustar headers plus pax extended
// headers only where needed; zip with deflate). Paths and link targets are stored verbatim.
// Hardlink entries carry no data. Chardev entries get rdev 1:3 (/dev/null). In zip, symlinks are Unix
// symlink entries; hardlinks (refused here) and fifos/devices (refused by libarchive's zip writer)
// throw std::runtime_error.
// tar_xz: xz_threads > 1 selects liblzma's multi-threaded encoder ("xz:threads") at compression level
// 0, whose blocks are 1 MiB of input each: the stream has several blocks once the tar exceeds 1 MiB
// (e.g. CudnnOptions::library_bytes = 256 KiB for a cuDNN layout). The bytes do not depend on the
// number of threads beyond "1" versus "more than 1".
void write_archive(const fs::path& out, Format fmt, const std::vector<Entry>& entries, int xz_threads = 1);

struct Info {
  fs::path path;
  std::string sha256;  // lowercase hex
  std::uint64_t size;
};
Info info(const fs::path& p);  // sha256 (lowercase hex) and size of a file

// A shared library as the loader and stackpin's readers see one, of at least `size` bytes (the
// rest deterministic pseudo-random bytes seeded by `soname`): an ELF64 x86-64 shared object with
// a dynamic segment (DT_SONAME, DT_NEEDED), section headers and `rodata` at the start of its
// .rodata; or a PE32+ DLL whose export directory names it `soname`, whose import directory lists
// `needed`, and whose .rdata starts with `rodata`. Neither has code: the ELF one loads (dlopen) and
// exports nothing (scripts/stand-in-library.py writes the same).
std::string elf_library(const std::string& soname, const std::vector<std::string>& needed, const std::string& rodata, std::size_t size);
// `machine`: the PE machine (0x8664 x64, 0xAA64 Arm64).
std::string pe_library(const std::string& dll_name, const std::vector<std::string>& needed, const std::string& rodata, std::size_t size,
                       std::uint16_t machine = 0x8664);
// The sub-libraries a cuDNN library of `version` needs (libcudnn_ops.so.9 needs libcudnn_graph.so.9,
// as NVIDIA's do), and the read-only data that names its release where NVIDIA's does (libcudnn_graph:
// "cudnn_version_9_19_0_56_"). `windows` names DLLs.
// A fatbin container as nvcc writes them into .nv_fatbin (ELF) and .nv_fatb (PE): a 16-byte header
// (magic 0xBA55ED50, version 1, header size, body size + `claimed_extra`), then per image a
// 64-byte entry header (kind, header size, payload size, PTX ISA, architecture, flags, the
// uncompressed size) and `payload` bytes of filler.
struct FatbinImage {
  std::uint16_t kind = 2;  // 1 PTX, 2 SASS, 8 LTO
  std::uint32_t arch = 86;
  std::uint64_t flags = 0x11;  // 0x2000 lz4, 0x8000 zstd, 0x100000 an arch-specific target (sm_90a), 0x200000 a family one (sm_100f)
  std::uint16_t isa_major = 9, isa_minor = 0;
  std::size_t payload = 40;
  std::uint64_t uncompressed = 0;
  std::uint32_t header = 64;
};
std::string fatbin_container(const std::vector<FatbinImage>& images, std::uint64_t claimed_extra = 0);

std::vector<std::string> cudnn_library_needs(const std::string& stem, int major, bool windows);
std::string cudnn_library_rodata(const std::string& stem, const std::string& version);

// cuDNN archives in NVIDIA's exact layouts. Top directory "cudnn-<platform>-<version>_cuda<M>-archive/".
// version has 4 parts ("8.9.7.29", "9.1.0.70", "9.19.0.56"); the major is taken from it.
//
// Linux (tar.xz): <top>/, <top>/include/, <top>/lib/ directory entries first, then <top>/LICENSE,
//   <top>/include/<headers>, and in <top>/lib/ for each library stem L:
//   L.so.<maj>.<min>.<patch> (regular file), L.so.<maj> -> L.so.<maj>.<min>.<patch>, L.so -> L.so.<maj>
//   (relative symlinks), then L_static.a (v8: sub-libraries only, not libcudnn; v9: every stem).
// Windows (zip): <top>/LICENSE, <top>/include/*.h, DLLs in <top>/bin/ (version < 9.18) or
//   <top>/bin/x64/ (>= 9.18), import libraries B.lib and B64_<maj>.lib for each DLL base B in
//   <top>/lib/x64/ (version >= 8.5) or <top>/lib/ (version < 8.5). windows-arm64 (Windows on Arm):
//   Arm64 DLLs in <top>/bin/arm64/, import libraries in <top>/lib/arm64/.
// cudnn_version.h carries real-looking CUDNN_MAJOR/MINOR/PATCHLEVEL lines and NVIDIA's CUDNN_VERSION
// formula for the major (v8: * 1000, v9: * 10000).
struct CudnnOptions {
  std::size_t library_bytes = 4096;  // least size of each library (elf_library / pe_library: headers, then pseudo-random bytes)
  bool real_libraries = false;       // Linux, major 9: take the bytes of /usr/local/cuda/lib64/L.so.9 where present
                                     // (the first library_bytes of them when library_bytes > 0)
  int xz_threads = 1;
};

// NVIDIA's library stems, header names and DLL names for a major (8 or 9).
std::vector<std::string> cudnn_linux_stems(int major);
std::vector<std::string> cudnn_headers(int major);
std::vector<std::string> cudnn_dlls(int major);
// The text of cudnn_version.h for a version.
std::string cudnn_version_header(const std::string& version);

std::vector<Entry> cudnn_linux_entries(const std::string& version, int cuda_major, const CudnnOptions& o = {},
                                       const std::string& platform = "linux-x86_64");
std::vector<Entry> cudnn_windows_entries(const std::string& version, int cuda_major, const CudnnOptions& o = {},
                                         const std::string& platform = "windows-x86_64");
// NVIDIA's file name: cudnn-<platform>-<version>_cuda<M>-archive.zip (windows-*) or .tar.xz (others).
std::string cudnn_archive_name(const std::string& platform, const std::string& version, int cuda_major);
// Builds the archive into dir under NVIDIA's name and returns its info.
Info make_cudnn_linux(const fs::path& dir, const std::string& version, int cuda_major, const CudnnOptions& o = {});
Info make_cudnn_windows(const fs::path& dir, const std::string& version, int cuda_major, const CudnnOptions& o = {},
                        const std::string& platform = "windows-x86_64");

// cuDNN 9.1.0.70 for CUDA 12 in NVIDIA's Linux layout whose libraries are real ELF shared objects:
// the packaging doubles that tests/doubles builds into `stems_dir` (lib<stem>.so.9.1.0 with NVIDIA's
// SONAMEs, libstem_static.a), so that lintian, ldconfig and dpkg see real libraries. Throws when a
// double is missing.
// `extra` entries are appended (paths as stored, under the top directory where they should be).
Info make_cudnn_linux_elf(const fs::path& dir, const fs::path& stems_dir, const std::vector<Entry>& extra = {});

// A schema-1 manifest pinning the given archives with origin = "local" (file = basename):
//   schema = 1 / name = "fixture" / [cuda] version / [cudnn] version, cuda /
//   [[cudnn.archives]] platform, origin = "local", file, sha256, size   (one per platform_archives entry)
// followed by `extra` verbatim (targets etc.).
std::string local_manifest(const std::string& cudnn_version, int cuda_major, const std::string& cuda_version,
                           const std::vector<std::pair<std::string, Info>>& platform_archives, const std::string& extra = "");

// CUDA toolkit component archives in NVIDIA's redist layout (Linux: tar.xz): top directory
// "<component>-<platform>-<version>-archive/" holding LICENSE and what the component's kind puts
// there: cuda_cudart include/cuda_runtime.h, cuda_runtime_api.h, lib/libcudart.so.<version> with its
// .so.<major> and .so links, libcudart_static.a and lib/stubs/libcuda.so; cuda_nvcc bin/nvcc,
// bin/ptxas, include/crt/host_config.h and nvvm/bin/cicc, nvvm/libdevice/libdevice.10.bc; any other
// component C (cuda_X or libX) include/X.h and lib/libX.so.<version> with its links.
// A windows-* platform gives the Windows layout (zip): bin\<base>64_<major>.dll (bin\x64\ when the
// component's major is 13 or more, as CUDA 13 moved its DLLs), lib\x64\<base>.lib, the headers
// (windows-arm64: bin\arm64\ and lib\arm64\);
// cuda_nvcc bin\nvcc.exe, bin\ptxas.exe, nvvm\bin\cicc.exe and libdevice.
// `version` is the component's own ("12.4.127"); its first part is the library's SONAME major.
std::string cuda_component_archive_name(const std::string& component, const std::string& platform, const std::string& version);
std::vector<Entry> cuda_component_entries(const std::string& component, const std::string& version,
                                          const std::string& platform = "linux-x86_64");
Info make_cuda_component(const fs::path& dir, const std::string& component, const std::string& version,
                         const std::vector<Entry>& extra = {}, const std::string& platform = "linux-x86_64");

// A [cuda] pin with `components` and one [[cuda.archives]] origin = "local" entry per
// (component, archive) for `platform`, then `extra` verbatim (a [cudnn] table, targets).
std::string local_toolkit_manifest(const std::string& cuda_version, const std::vector<std::string>& components,
                                   const std::vector<std::pair<std::string, Info>>& archives, const std::string& extra = "",
                                   const std::string& platform = "linux-x86_64");

// Hostile/broken archive helpers that libarchive's writer cannot produce directly.
// A ustar tar (uncompressed) with one regular entry `path` whose header declares `declared_size` bytes
// but which carries `actual` bytes of data, padded to 512, followed by the two zero end blocks (no
// further record padding, so a declared size beyond the data runs into end of file).
void write_tar_with_lying_size(const fs::path& out, const std::string& path, std::uint64_t declared_size, const std::string& actual);
// A tar written byte by byte, for what libarchive's writer refuses to write: names that are not
// valid UTF-8, GNU sparse entries whose holes are huge or at the end, lying sizes.
struct RawTarEntry {
  std::string name;  // stored as is (ustar name/prefix split past 100 bytes)
  char type = '0';   // '0' file, '2' symlink, '5' directory, 'S' GNU (old) sparse file
  std::string data;  // the stored data (for 'S': only the mapped regions, one after the other)
  std::string link;  // linkname
  unsigned mode = 0644;
  std::uint64_t declared_size = UINT64_MAX;                     // the header's size field; default data.size()
  std::vector<std::pair<std::uint64_t, std::uint64_t>> sparse;  // 'S': (offset, length) of each data region, at most 4
  std::uint64_t real_size = 0;                                  // 'S': the file's full size, holes included
};
std::string raw_tar(const std::vector<RawTarEntry>& entries);
void write_raw_tar(const fs::path& out, const std::vector<RawTarEntry>& entries);
// Copies `in` to `out` keeping only the first `keep` bytes (truncated stream).
void truncate_copy(const fs::path& in, const fs::path& out, std::uint64_t keep);
// Copies `in` to `out` with the byte at `offset` inverted (corrupt stream).
void corrupt_copy(const fs::path& in, const fs::path& out, std::uint64_t offset);

}  // namespace fixtures
