// What a lock's archives carry for GPUs, read from their bytes: each archive at hand is found as
// stage finds it, proven by its pinned size and SHA-256, unpacked into a temporary folder and its
// libraries' fatbin containers read (core/inspect), so that `check` judges [gpus] by the kernels
// the stack will really load rather than by NVIDIA's support matrices alone.
#include <algorithm>

#include "core/archives/lock.hpp"
#include "core/archives/verify.hpp"
#include "core/inspect/inspect.hpp"

namespace core {

namespace {

const model::LockedArchive* already_read(const model::Lock* previous, const model::LockedArchive& a) {
  if (!previous) return nullptr;
  for (const auto* list : {&previous->archives, &previous->cuda_archives})
    for (const auto& p : *list)
      if (p.kernels_read && p.sha256 == a.sha256 && p.size == a.size) return &p;
  return nullptr;
}

// The SASS and PTX targets of a library (LTO IR is linked by programs, not loaded by the driver).
model::LockedLibrary locked_library(const model::LibraryKernels& k) {
  model::LockedLibrary l;
  l.path = k.path;
  for (const auto& t : k.targets) {
    if (t.target.kind != model::CodeKind::sass && t.target.kind != model::CodeKind::ptx) continue;
    model::TargetImages x;
    x.target = t.target;
    x.ptx_isa = t.ptx_isa;
    l.targets.push_back(x);
  }
  return l;
}

}  // namespace

util::Status read_lock_kernels(model::Lock& lock, const KernelReadOptions& o, std::vector<model::Finding>& findings) {
  std::vector<std::string> read, absent;
  std::size_t kept = 0, with_code = 0;
  auto one = [&](model::LockedArchive& a) -> util::Status {
    a.kernels_read = false;
    a.libraries.clear();
    if (const auto* p = already_read(o.previous, a)) {
      a.kernels_read = true;
      a.libraries = p->libraries;
      ++kept;
      return {};
    }
    if (!o.read || (o.archives_dir.empty() && o.cache_dir.empty())) {
      absent.push_back(a.file);
      return {};
    }
    ArchiveExpectation e{a.platform, a.file, a.sha256, a.size};
    bool by_content = false;
    SP_TRY_ASSIGN(auto found, find_expected_archive(e, o.archives_dir, o.cache_dir, by_content));
    if (!found) {
      absent.push_back(a.file);
      return {};
    }
    auto not_read = [&](const util::Error& err) {
      auto& f = model::add_finding(findings, "lock.kernels", model::Severity::warning, found->string());
      f.seen = err.message;
      f.fix =
          "its GPU code was not read and `check` judges the GPUs by NVIDIA's documents; replace it with the pinned archive "
          "(`stackpin verify` names the difference)";
    };
    auto pinned = open_pinned(*found, e);
    if (!pinned) {
      not_read(pinned.error());
      return {};
    }
    auto k = archive_kernels(*pinned, found->string(), o.temp_parent);
    if (!k) {
      not_read(k.error());
      return {};
    }
    for (const auto& lib : k->libraries) {
      auto l = locked_library(lib);
      if (!l.targets.empty()) a.libraries.push_back(std::move(l));
    }
    for (const auto& u : k->unreadable) {
      auto& f = model::add_finding(findings, "lock.kernels", model::Severity::warning, a.file);
      f.seen = "a library that cannot be read: " + u;
      f.fix = "the archive is the pinned one, so this is how NVIDIA built it; `stackpin inspect` on the archive says more";
    }
    a.kernels_read = true;
    with_code += a.libraries.size();
    read.push_back(a.file);
    return {};
  };
  for (auto& a : lock.archives) SP_TRY(one(a));
  for (auto& a : lock.cuda_archives) SP_TRY(one(a));
  if (!read.empty()) {
    auto& f = model::add_finding(findings, "lock.kernels", model::Severity::note, "GPU code");
    f.seen = "read the libraries of " + std::to_string(read.size()) + " archive" + (read.size() == 1 ? "" : "s") + " (" +
             std::to_string(with_code) + " with SASS or PTX), each proven by its SHA-256 first";
  }
  if (!absent.empty() && read.size() + kept > 0) {
    auto& f = model::add_finding(findings, "lock.kernels", model::Severity::note, "GPU code");
    f.seen = std::to_string(absent.size()) + " archive" + (absent.size() == 1 ? " was" : "s were") +
             " not at hand, so the lock records no GPU code for " + (absent.size() == 1 ? "it" : "them") + ": " + absent.front() +
             (absent.size() > 1 ? " and " + std::to_string(absent.size() - 1) + " more" : "");
    f.fix = "`stackpin fetch` them (or pass --archives DIR) and lock again";
  }
  return {};
}

}  // namespace core
