#include "core/inspect/cudnn_whole.hpp"

#include <algorithm>
#include <map>
#include <system_error>

#include "probe/cudnn_whole.hpp"
#include "util/strings.hpp"

namespace core {

namespace fs = std::filesystem;

void add_cudnn_whole_findings(const std::vector<model::CudnnWhole>& wholes, std::vector<model::Finding>& findings) {
  for (const auto& w : wholes) {
    std::string name = "cuDNN " + (w.release ? w.release->text() : std::to_string(w.major));
    if (w.whole()) {
      auto& f = model::add_finding(findings, "cudnn.whole", model::Severity::ok, name + " in " + w.dir);
      f.seen = "all " + std::to_string(w.present.size()) + " sub-libraries, read from the files" +
               (w.release ? "; the release from " + w.release_source : "");
      continue;
    }
    auto& f = model::add_finding(findings, "cudnn.whole", model::Severity::error, name + " in " + w.dir);
    std::vector<std::string> what;
    if (!w.missing.empty()) what.push_back("missing " + util::join(w.missing, ", "));
    for (const auto& p : w.problems) what.push_back(p);
    f.seen = util::join(what, "; ");
    f.expected = "every sub-library of cuDNN " + std::to_string(w.major) + ", of one release, in one directory";
    f.fix =
        "stage one cuDNN archive whole (stackpin stage), or copy every libcudnn* file of one release together with cp -P; "
        "a missing or foreign sub-library is loaded from elsewhere and the first convolution fails with "
        "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH";
    f.source = "the knowledge base's list of cuDNN " + std::to_string(w.major) + "'s sub-libraries (data/knowledge/cudnn-layouts.toml)";
  }
}

util::Result<std::string> require_cudnn_whole(const fs::path& root, const std::vector<archive_io::Entry>& entries,
                                              const std::string& archive, const model::Version& pinned,
                                              const knowledge::KnowledgeBase& kb) {
  // the entries by path, and the directories that hold cuDNN's library names; nothing is listed
  // (the archive says what it wrote, and Windows' long paths defeat directory listing under Wine)
  std::map<std::string, const archive_io::Entry*> by_path;
  std::map<std::string, std::vector<const archive_io::Entry*>> dirs;
  for (const auto& e : entries) {
    by_path[e.path] = &e;
    const auto slash = e.path.rfind('/');
    const std::string name = slash == std::string::npos ? e.path : e.path.substr(slash + 1);
    if (e.type != archive_io::EntryType::dir && probe::is_cudnn_library_name(name))
      dirs[slash == std::string::npos ? "" : e.path.substr(0, slash)].push_back(&e);
  }
  // a link followed through the entries to the file it ends at (at most 16 links), "" when it dangles
  auto file_of = [&](const archive_io::Entry* e, std::string& dangles_to) -> std::string {
    for (int hops = 0; e && hops < 16; ++hops) {
      if (e->type == archive_io::EntryType::file || e->type == archive_io::EntryType::hardlink) return e->path;
      if (e->type != archive_io::EntryType::symlink) break;
      if (hops == 0) dangles_to = e->link;
      const auto slash = e->path.rfind('/');
      const std::string target =
          fs::path(slash == std::string::npos ? e->link : e->path.substr(0, slash + 1) + e->link).lexically_normal().generic_string();
      auto it = by_path.find(target);
      e = it == by_path.end() ? nullptr : it->second;
    }
    return {};
  };
  std::vector<std::string> texts;
  for (const auto& [dir, names] : dirs) {
    std::vector<probe::CudnnFile> files;
    for (const auto* e : names) {
      probe::CudnnFile f{e->path.substr(dir.empty() ? 0 : dir.size() + 1), {}, {}};
      if (auto file = file_of(e, f.dangles_to); !file.empty()) f.file = root / fs::path(file);
      files.push_back(std::move(f));
    }
    // shown below the archive's top directory, as its users know the tree: "ARCHIVE:lib"
    const auto slash = dir.find('/');
    const std::string shown = slash == std::string::npos ? archive : archive + ":" + dir.substr(slash + 1);
    for (const auto& w : probe::judge_cudnn_files(std::move(files), shown, kb.facts().cudnn_majors)) {
      if (!w.whole())
        return util::Error(util::ErrorCode::invalid, "the cuDNN in " + w.dir + " is not whole: " + w.text())
            .with_hint("its sub-libraries were read from the files themselves (sonames, the release they name); nothing of it was used")
            .with_hint("use NVIDIA's archive as published, or one made from a whole cuDNN tree");
      // by the bytes only: the file names were held against the header already (check_header_version)
      const bool by_bytes = w.release_source.find("(file name)") == std::string::npos;
      if (w.release && by_bytes && model::compare_prefix(*w.release, pinned, 3) != 0)
        return util::Error(util::ErrorCode::mismatch, "the libraries in " + w.dir + " are cuDNN " + w.release->text() + " (" +
                                                          w.release_source + "), the manifest pins " + pinned.text())
            .with_hint("pin the version the archive really is, or use the archive of " + pinned.text());
      texts.push_back(w.text());
    }
  }
  if (texts.empty())
    return util::Error(util::ErrorCode::invalid, archive + " holds no cuDNN library (libcudnn*.so.N or cudnn*64_N.dll)")
        .with_hint("use NVIDIA's cuDNN archive for the platform; nothing of it was used");
  return util::join(texts, "; ");
}

}  // namespace core
