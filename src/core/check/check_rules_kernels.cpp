// [gpus] judged by the bytes: the GPU code `stackpin lock` read from the archives the manifest
// pins (SASS and PTX targets per library, core/archives/lock_kernels.cpp), so that check says
// what the stack will really load on each GPU instead of what a support matrix lists.
#include <algorithm>

#include "check/check_rules.hpp"
#include "util/strings.hpp"

namespace core::rules {

namespace {

// The SHA-256 the manifest (or stackpin's NVIDIA manifests) gives for an archive file, "" if none.
std::string pinned_sha256(const Ctx& c, const model::LockedArchive& a, bool cuda) {
  if (cuda) {
    for (const auto& p : c.report.cuda_components)
      if (p.component == a.component && p.platform == a.platform) return p.sha256;
    return "";
  }
  for (const auto& m : c.report.archives)
    if (m.platform == a.platform) return m.sha256;
  return "";
}

}  // namespace

std::vector<const model::LockedArchive*> archives_read(const Ctx& c, bool cuda) {
  std::vector<const model::LockedArchive*> out;
  if (!c.lock) return out;
  if (cuda) {
    if (c.lock->cuda != c.cuda.text()) return out;
  } else {
    auto locked = model::Version::parse(c.lock->cudnn);
    if (!locked || c.lock->cudnn_cuda != c.cudnn_cuda || !model::has_prefix(*locked, c.cudnn)) return out;
  }
  for (const auto& a : cuda ? c.lock->cuda_archives : c.lock->archives) {
    if (!a.kernels_read) continue;
    const std::string pinned = pinned_sha256(c, a, cuda);
    if (!pinned.empty() && pinned != a.sha256) continue;  // the lock is of other bytes than the manifest pins now
    out.push_back(&a);
  }
  return out;
}

LibraryFits fits_of(const std::vector<const model::LockedArchive*>& archives, const model::Version& gpu) {
  LibraryFits out;
  for (const auto* a : archives)
    for (const auto& lib : a->libraries) {
      if (lib.targets.empty()) continue;
      ++out.with_code;
      LibraryFits::One one{a, &lib, model::fit_for(gpu, lib.targets)};
      if (one.fit.fit == model::Fit::jit) out.jit.push_back(one);
      if (one.fit.fit == model::Fit::none) out.none.push_back(one);
    }
  return out;
}

std::string library_targets(const LibraryFits::One& x) {
  std::vector<std::string> names;
  for (const auto& t : x.library->targets) names.push_back(t.target.name());
  return util::basename_of(x.library->path) + " (" + util::join(names, " ") + ")";
}

std::string evidence_source(const Ctx& c, const std::vector<const model::LockedArchive*>& archives) {
  std::vector<std::string> files;
  for (const auto* a : archives) files.push_back(a->file);
  if (files.size() > 3) files = {files.front(), std::to_string(files.size() - 1) + " more archives"};
  return "the GPU code of the libraries in " + util::join(files, ", ") + ", read by `stackpin lock` from the pinned bytes" +
         (c.lock->path.empty() ? std::string() : " (" + c.lock->path + ")");
}

}  // namespace core::rules
