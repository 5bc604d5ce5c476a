// stackpin inspect: libraries, trees and archives read for their GPU code, then judged per GPU.
// Archives are never read before their bytes are proven (archive::PinnedFile): NVIDIA's by the
// knowledge base's hash and size, others by the hash taken here first, and they are unpacked
// with the same containment and size rules as `stage` into a temporary directory that is removed
// again.
#include "core/inspect/inspect.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <system_error>

#include "archive/extract.hpp"
#include "core/inspect/cudnn_whole.hpp"
#include "crypto/sha256.hpp"
#include "probe/cudnn_whole.hpp"
#include "probe/fatbin.hpp"
#include "util/file_io.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core {

namespace fs = std::filesystem;

namespace {

enum class FileKind { binary, archive, other };

// What a file is, from its first bytes: an ELF/PE binary, an archive stackpin unpacks (zip, xz,
// gzip, tar), or something else.
util::Result<FileKind> kind_of(const fs::path& p) {
  int fd = util::io::open_read(p);
  if (fd < 0) return util::Error(util::ErrorCode::io, "cannot read " + p.string() + ": " + std::generic_category().message(errno));
  char head[264] = {};
  auto n = util::io::read_at(fd, head, sizeof head, 0);
  util::io::close(fd);
  if (n < 0) return util::Error(util::ErrorCode::io, "cannot read " + p.string());
  std::string_view h(head, static_cast<std::size_t>(n));
  if (probe::looks_like_binary(h)) return FileKind::binary;
  if (archive_io::archive_kind_of(h)) return FileKind::archive;
  return FileKind::other;
}

struct Walk {
  const InspectOptions& o;
  const knowledge::KnowledgeBase* kb;  // names NVIDIA's archives' hashes; null: archives come pinned
  model::InspectReport report;

  void unreadable(const std::string& name, const util::Error& e) {
    auto& f = model::add_finding(report.findings, "inspect.unreadable", model::Severity::error, name);
    f.seen = e.message;
    f.fix = "replace the file with an intact copy of the library it should be";
  }

  util::Status library(const fs::path& p, const std::string& shown, const std::string& archive) {
    SP_TRY_ASSIGN(auto k, probe::read_gpu_code(p));
    k.path = shown;
    report.libraries.push_back({std::move(k), archive, {}});
    return {};
  }

  // Every binary below `dir`, in name order; symbolic links are not followed (what they point to
  // inside the tree is read under its own name).
  util::Status tree(const fs::path& dir, const std::string& shown_root, const std::string& archive) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec) && !it->is_symlink(ec)) files.push_back(it->path());
    if (ec) return util::Error(util::ErrorCode::io, "cannot list " + dir.string() + ": " + ec.message());
    std::sort(files.begin(), files.end());
    auto shown_of = [&](const fs::path& f) {
      const std::string rel = f.lexically_relative(dir).generic_string();
      if (rel == ".") return shown_root.ends_with('!') ? shown_root.substr(0, shown_root.size() - 1) : shown_root;
      return shown_root.ends_with('!') ? shown_root + rel : shown_root + "/" + rel;
    };
    whole_cudnn(files, shown_of);
    for (const auto& f : files) {
      ++report.files_seen;
      std::string shown = shown_of(f);
      auto kind = kind_of(f);
      if (!kind) {
        unreadable(shown, kind.error());
        continue;
      }
      if (*kind != FileKind::binary) continue;
      if (auto st = library(f, shown, archive); !st) {
        if (st.error().code == util::ErrorCode::unsupported) {  // big-endian, no section headers: nothing to judge
          auto& x = model::add_finding(report.findings, "inspect.skipped", model::Severity::note, shown);
          x.seen = st.error().message;
          continue;
        }
        unreadable(shown, st.error());
      }
    }
    return {};
  }

  // Each directory of the tree that holds cuDNN's libraries (among the files the walk listed),
  // judged whole (inspect only: lock's reading of an archive has no knowledge base to judge by).
  template <typename ShownOf>
  void whole_cudnn(const std::vector<fs::path>& files, const ShownOf& shown_of) {
    if (!kb) return;
    std::set<fs::path> dirs;
    for (const auto& f : files)
      if (probe::is_cudnn_library_name(f.filename().string())) dirs.insert(f.parent_path());
    for (const auto& d : dirs) add_cudnn_whole_findings(probe::read_cudnn_whole(d, shown_of(d), kb->facts().cudnn_majors), report.findings);
  }

  util::Status unpacked(const fs::path& p) {
    const std::string name = p.filename().string();
    model::InspectedArchive a;
    a.path = p.string();
    crypto::Digest digest{};
    std::optional<std::uint64_t> size;
    if (const auto* fact = kb ? kb->cudnn_archive_by_file(name) : nullptr; fact && fact->size) {
      digest = *crypto::from_hex(fact->sha256);
      size = fact->size;
      a.pinned_by = "knowledge base (cuDNN " + fact->version.text() + " " + model::to_string(fact->platform) + ")";
    } else {
      SP_TRY_ASSIGN(auto h, crypto::hash_file(p));
      digest = h.digest;
      size = h.size;
    }
    SP_TRY_ASSIGN(auto pinned, archive_io::PinnedFile::open(p, digest, size));
    a.sha256 = crypto::to_hex(pinned.sha256());
    a.size = pinned.size();
    const std::size_t before = report.libraries.size();
    SP_TRY(read_pinned(pinned, a.path));
    a.libraries = report.libraries.size() - before;
    report.archives.push_back(std::move(a));
    return {};
  }

  // An archive whose bytes are proven, unpacked with stage's containment and size rules into a
  // temporary directory that is removed again; its libraries are named "ARCHIVE!member".
  util::Status read_pinned(archive_io::PinnedFile& pinned, const std::string& archive) {
    std::error_code ec;
    fs::path parent = o.temp_parent.empty() ? fs::temp_directory_path(ec) : o.temp_parent;
    if (ec) return util::Error(util::ErrorCode::io, "no temporary directory to unpack " + archive + " in: " + ec.message());
    SP_TRY_ASSIGN(auto tmp, util::TempDir::create(parent, "stackpin-inspect-"));
    archive_io::ExtractOptions xo;
    xo.max_total_bytes = std::max<std::uint64_t>(16 * pinned.size(), 256ull << 20);
    SP_TRY(archive_io::extract(pinned, tmp.path(), xo));
    return tree(tmp.path(), archive + "!", archive);
  }

  util::Status named(const fs::path& p) {
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) return util::Error(util::ErrorCode::not_found, p.string() + " does not exist");
    if (fs::is_directory(st)) return tree(p, p.generic_string(), "");
    if (!fs::is_regular_file(st)) return util::Error(util::ErrorCode::invalid, p.string() + " is neither a file nor a directory");
    ++report.files_seen;
    SP_TRY_ASSIGN(auto kind, kind_of(p));
    if (kind == FileKind::binary) return library(p, p.string(), "");
    if (kind == FileKind::archive) return unpacked(p);
    return util::Error(util::ErrorCode::invalid, p.string() + " is not a library (ELF or PE) nor an archive stackpin unpacks")
        .with_hint("name a library (.so, .dll), a directory, a wheel or NVIDIA's .tar.xz / .zip");
  }
};

std::string target_list(const model::LibraryKernels& k) {
  std::string s;
  for (const auto& t : k.targets) s += (s.empty() ? "" : " ") + t.target.name();
  return s.empty() ? "no GPU code" : s;
}

void judge(model::InspectReport& r, const InspectOptions& o, const knowledge::KnowledgeBase& kb) {
  for (const auto& gpu : o.gpus) {
    std::size_t native = 0, with_code = 0;
    for (auto& lib : r.libraries) {
      const bool loadable = std::any_of(lib.kernels.targets.begin(), lib.kernels.targets.end(), [](const model::TargetImages& t) {
        return t.target.kind == model::CodeKind::sass || t.target.kind == model::CodeKind::ptx;
      });
      if (!loadable) continue;  // no GPU code, or only LTO IR (which a program links, not the driver loads)
      ++with_code;
      model::GpuFit f = model::fit_for(gpu, lib.kernels.targets);
      if (f.fit == model::Fit::jit) add_jit_driver(f, o.driver_os, kb);
      lib.fits.push_back(f);
      const std::string subject = lib.kernels.path + " on " + kb.gpu_label(gpu);
      if (f.fit == model::Fit::native || f.fit == model::Fit::compatible) {
        ++native;
        continue;
      }
      if (f.fit == model::Fit::none) {
        auto& x = model::add_finding(r.findings, "kernels.none", model::Severity::error, subject);
        x.seen = target_list(lib.kernels);
        x.expected = model::code_that_runs_on(gpu);
        x.fix = "this library cannot run there (\"no kernel image is available for execution on the device\"): use a release built for " +
                gpu.text() + ", or a GPU this build carries code for";
        continue;
      }
      const std::string isa = f.ptx_isa ? " (PTX ISA " + f.ptx_isa->text() + ")" : "";
      std::string needs = f.jit_cuda ? "a driver of CUDA " + f.jit_cuda->text() +
                                           (f.jit_cuda_at_least ? " or newer (the ISA is newer than stackpin's table)" : "") +
                                           (f.jit_driver ? " (" + f.jit_driver->text() + " or newer)" : "")
                                     : "a driver new enough for its PTX ISA";
      bool too_old = o.driver && f.jit_driver && *o.driver < *f.jit_driver;
      const bool unknown_minimum = o.driver && !f.jit_driver;
      auto& x = model::add_finding(r.findings, too_old ? "kernels.ptx-too-new" : "kernels.jit",
                                   too_old ? model::Severity::error : model::Severity::warning, subject);
      x.seen = "no SASS for " + gpu.text() + "; PTX " + f.via + isa + (o.driver ? ", driver " + o.driver->text() : "");
      x.expected =
          needs + " compiles it at first use" +
          (unknown_minimum ? " (stackpin knows no minimum driver for it, so --driver " + o.driver->text() + " was not judged)" : "");
      x.fix = too_old ? "update the driver to " + (f.jit_driver ? f.jit_driver->text() : std::string("a newer one")) +
                            " or newer, or use a build with SASS for " + gpu.text()
                      : "the first load compiles " + util::short_size(f.ptx_bytes) +
                            " of PTX (seconds to minutes; cached in the driver's compute cache, CUDA_CACHE_PATH / CUDA_CACHE_MAXSIZE)";
      x.source = "PTX ISA release history (NVIDIA), CUDA Programming Guide: binary compatibility";
    }
    if (with_code > 0 && native > 0) {
      auto& x = model::add_finding(r.findings, "kernels.native", model::Severity::ok, kb.gpu_label(gpu));
      x.seen = std::to_string(native) + " of " + std::to_string(with_code) + " libraries with GPU code carry SASS that runs on it";
    }
  }
}

}  // namespace

util::Result<model::InspectReport> inspect(const InspectOptions& o, const knowledge::KnowledgeBase& kb) {
  if (o.paths.empty()) return util::Error(util::ErrorCode::usage, "name at least one library, directory or archive to inspect");
  Walk w{o, &kb, {}};
  w.report.gpus = o.gpus;
  for (const auto& p : o.paths) SP_TRY(w.named(p));
  judge(w.report, o, kb);
  return std::move(w.report);
}

util::Result<ArchiveKernels> archive_kernels(archive_io::PinnedFile& pinned, const std::string& name, const fs::path& temp_parent) {
  InspectOptions o;
  o.temp_parent = temp_parent;
  Walk w{o, nullptr, {}};
  SP_TRY(w.read_pinned(pinned, name));
  ArchiveKernels out;
  const std::string prefix = name + "!";
  for (auto& lib : w.report.libraries) {
    auto& k = lib.kernels;
    if (k.path.starts_with(prefix)) k.path.erase(0, prefix.size());
    out.libraries.push_back(std::move(k));
  }
  for (const auto& f : w.report.findings)
    if (f.severity == model::Severity::error) out.unreadable.push_back(f.subject + ": " + f.seen);
  return out;
}

}  // namespace core
