#pragma once
// The pieces every package `stackpin deb` builds shares (deb.cpp: cuDNN's; deb_cuda.cpp: the CUDA
// toolkit's): the package as a value, its members, its relations from the ELF dynamic sections,
// and writing a set of packages so that they replace their older files together.
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "archive/deb.hpp"
#include "core/package/deb.hpp"
#include "gen/deb_control.hpp"
#include "model/staging.hpp"
#include "probe/elf.hpp"
#include "util/result.hpp"

namespace core::deb_parts {

constexpr const char* k_default_maintainer = "stackpin <stackpin@users.noreply.github.com>";

bool ends_with(const std::string& s, const std::string& suffix);
// "libcudnn_ops.so.9.1.0" -> true for any versioned shared object name.
bool versioned_so(const std::string& name);

// What a set of libraries needs, from their dynamic sections: Debian's glibc package at the newest
// GLIBC_x.y any of them needs, and the other Debian packages their DT_NEEDED entries map onto.
struct Needs {
  std::set<std::string> packages;  // Debian packages other than libc6
  std::string glibc;               // newest GLIBC_ version ("2.17"), "" if none
  bool libc = false;
  std::set<std::string> cuda;     // CUDA libraries needed (sonames)
  std::set<std::string> unknown;  // needed sonames nothing known provides
};
void add_needs(const probe::ElfInfo& elf, const std::set<std::string>& own_sonames, Needs& n);
// The Depends those needs give: libc6 at the newest glibc (also when `libc` is false but
// `force_libc`), then the other Debian packages.
std::vector<std::string> depends_of(const Needs& n, bool force_libc = false);
// The dynamic section of a file packaged as a library or tool for `platform`; nullopt for a file
// that is not ELF. Errors: mismatch (built for another machine), io.
util::Result<std::optional<probe::ElfInfo>> read_packaged_elf(const std::filesystem::path& file, model::Platform platform);

// One package as a value: what it installs (paths without "./"), its control fields.
struct Pkg {
  std::string name, role, version;
  std::int64_t mtime = 0;  // every member's timestamp
  std::vector<archive_io::TarMember> members;
  gen::DebControl control;
  std::vector<std::string> sonames;  // non-empty: a shlibs file and an ldconfig trigger
  std::uint64_t files = 0;
};

// Members in path order, parents first, each directory once, with "./" prefixes.
std::vector<archive_io::TarMember> with_dirs(std::vector<archive_io::TarMember> files);
archive_io::TarMember text_member(std::string path, std::string data);
// A member for a staged file or link: `type` as a receipt or layout plan writes it ("file",
// "symlink"), its link target, the file it is read from; mode 0644 (0755 when `executable`).
archive_io::TarMember staged_member(const std::string& type, const std::string& link, const std::filesystem::path& source,
                                    bool executable = false);
// The copyright holder line: the first "Copyright ..." line of NVIDIA's LICENSE when it has one
// with a year, else NVIDIA with the year `mtime` falls in.
std::string copyright_line(const std::string& license, std::int64_t mtime);
// The lintian overrides of packaging NVIDIA's binaries byte for byte, each with its reason.
const std::vector<std::pair<std::string, std::string>>& binary_overrides();
const std::vector<std::pair<std::string, std::string>>& static_library_overrides();

// Where and how the packages of one run are written.
struct Writing {
  const DebOptions& o;
  std::filesystem::path tmp;  // the run's own temporary folder (in out_dir)
  std::string arch;           // amd64 | arm64
};
// The package as planned: name, fields, installed size and (dry run) every path; not its bytes.
model::DebPackage describe_package(const Writing& w, Pkg& p);
// One package's .deb, complete and flushed, in w.tmp (`part`).
util::Result<model::DebPackage> write_package(const Writing& w, Pkg& p, std::filesystem::path& part);
// The written parts replace their older files together: an older file is first moved aside into
// w.tmp, and put back if a later rename fails, so the folder never holds a new runtime package
// beside an old -dev package that depends on another version.
util::Status replace_together(const Writing& w, std::vector<model::DebPackage>& written, const std::vector<std::filesystem::path>& parts);

// The CUDA toolkit's packages (deb_cuda.cpp): the manifest's [cuda] components staged from their
// verified archives into `work`, then a runtime package (the shared libraries, into
// /usr/lib/<triplet>/) and a -dev package (a complete CUDA_HOME at /usr/lib/cuda-X.Y, its library
// folder linking the runtime's files). Errors: those of stage, mismatch (a library built for
// another machine), invalid (no shared library among the components).
util::Result<std::vector<Pkg>> cuda_packages(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const DebOptions& o,
                                             model::Platform platform, const std::string& maintainer, const std::filesystem::path& work,
                                             model::DebReport& report);

}  // namespace core::deb_parts
