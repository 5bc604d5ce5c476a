#pragma once
// The GPU code a library carries, as its fatbin containers list it (probe/fatbin.hpp reads them):
// per target, how many kernel images, how large, how compressed, and for PTX the ISA version.
// Targets are named as nvcc names them: sm_86 (SASS for one architecture), sm_90a (SASS for
// exactly 9.0), sm_100f (SASS for the 10.x family), compute_121 (PTX), lto_80 (LTO IR).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/finding.hpp"
#include "model/version.hpp"

namespace model {

enum class CodeKind { sass, ptx, lto, other };
enum class ArchVariant { plain, specific, family };  // sm_90, sm_90a, sm_100f

struct GpuTarget {
  CodeKind kind = CodeKind::sass;
  Version arch;  // "9.0": the compute capability the code is for
  ArchVariant variant = ArchVariant::plain;
  std::uint16_t raw_kind = 0;  // the container's kind number, kept for CodeKind::other

  // "sm_90a", "compute_121", "lto_80"; "kind-4_80" for a kind stackpin does not know.
  std::string name() const;
  friend bool operator==(const GpuTarget& a, const GpuTarget& b) = default;
};
// Orders by kind (SASS, PTX, LTO, other), then architecture, then variant.
bool operator<(const GpuTarget& a, const GpuTarget& b);
// "sm_90a" / "compute_121" / "lto_80" back to a target; nullopt for anything else.
std::optional<GpuTarget> parse_gpu_target(const std::string& name);

struct TargetImages {
  GpuTarget target;
  std::uint64_t images = 0;              // kernel images of this target
  std::uint64_t stored_bytes = 0;        // their payload as stored in the file
  std::uint64_t uncompressed_bytes = 0;  // as the headers state it (stored size when uncompressed)
  std::uint64_t lz4 = 0, zstd = 0;       // images compressed with each
  std::optional<Version> ptx_isa;        // PTX: the newest ISA version among the images
};

struct LibraryKernels {
  std::string path;    // as the user named it, or "WHEEL!member" inside an archive
  std::string format;  // "ELF" | "PE"
  std::uint64_t file_size = 0;
  std::uint64_t containers = 0;
  // where containers were found: ".nv_fatbin" or other sections (cuFFT keeps its kernels in .ldata)
  std::vector<std::string> sections;
  std::vector<TargetImages> targets;  // sorted by target
  // the library's own identity (ELF: DT_SONAME), "" when it has none
  std::string soname;

  bool has_gpu_code() const { return !targets.empty(); }
};

// --- what stackpin inspect reports ---------------------------------------------------------

enum class Fit { native, compatible, jit, none };
const char* to_string(Fit f);

// One library judged for one GPU.
struct GpuFit {
  Version gpu;
  Fit fit = Fit::none;
  std::string via;                    // the target used: "sm_86", "compute_121"
  std::optional<Version> ptx_isa;     // jit: the PTX's ISA version
  std::optional<Version> jit_cuda;    // jit: the first CUDA release whose driver compiles it
  bool jit_cuda_at_least = false;     // the ISA is newer than stackpin's table: "at least" jit_cuda
  std::optional<Version> jit_driver;  // jit: that release's minimum driver for driver_os
  std::uint64_t ptx_bytes = 0;        // jit: the PTX the driver compiles (uncompressed)
};

// How code with `targets` runs on a GPU of compute capability `gpu`, by NVIDIA's binary
// compatibility rules (model/kernel_fit.cpp); the PTX-to-driver lookups are the caller's.
GpuFit fit_for(const Version& gpu, const std::vector<TargetImages>& targets);
// What a library needs to carry to run on `gpu` by those rules: "SASS for sm_86 (or an older
// 8.x), or PTX for compute_86 or older".
std::string code_that_runs_on(const Version& gpu);

struct InspectedLibrary {
  LibraryKernels kernels;
  std::string archive;  // the archive it was read from, "" for a file on disk
  std::vector<GpuFit> fits;
};

struct InspectedArchive {
  std::string path;
  std::string sha256;
  std::uint64_t size = 0;
  std::string pinned_by;  // "knowledge base (cuDNN 9.19.0.56 linux-x86_64)", or "" when hashed here
  std::uint64_t libraries = 0;
};

struct InspectReport {
  std::vector<InspectedLibrary> libraries;  // in path order
  std::vector<InspectedArchive> archives;
  std::vector<Version> gpus;
  std::uint64_t files_seen = 0;  // regular files looked at (directories and archives walked)
  std::vector<Finding> findings;
};

}  // namespace model
