// The exact build and the archive pin, decided once for capture (Linux) and capture --windows-root.
#include "capture/capture_pins.hpp"

#include <cctype>
#include <set>

#include "util/strings.hpp"

namespace core::detail {

std::string safe_name(std::string s) {
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '-';
  return s;
}

const knowledge::KnowledgeBase& knowledge_for(const knowledge::KnowledgeBase& kb, const model::Version& three, model::Platform platform,
                                              int cuda_major, const CaptureOptions& o, std::optional<knowledge::KnowledgeBase>& own,
                                              Capture& cap) {
  for (const auto& a : kb.facts().cudnn_archives)
    if (model::compare_prefix(a.version, three, 3) == 0 && a.platform == platform && (!cuda_major || a.cuda == cuda_major) && a.size)
      return kb;
  if (!o.read_release) return kb;
  auto not_read = [&](const util::Error& e) {
    cap.notes.push_back("NVIDIA's manifest of cuDNN " + three.text() + " (a release the knowledge base lacks) was not read: " + e.message +
                        (e.hints.empty() ? std::string() : " (" + e.hints.front() + ")"));
  };
  auto read = o.read_release(three);
  if (!read) {
    not_read(read.error());
    return kb;
  }
  auto with = kb.with_cudnn_archives(std::move(read).value());
  if (!with) {
    not_read(with.error());
    return kb;
  }
  own = std::move(with).value();
  return *own;
}

util::Result<model::Version> with_notes(util::Result<model::Version> r, const Capture& cap) {
  if (r) return r;
  auto e = std::move(r).error();
  for (const auto& n : cap.notes) e.hints.push_back(n);
  return e;
}

std::string facts_from(const knowledge::KnowledgeBase& kb, const model::Version& three) {
  for (const auto& a : kb.facts().cudnn_archives)
    if (model::compare_prefix(a.version, three, 3) == 0 && !a.source.empty() && a.source.front().rfind("NVIDIA redistrib_", 0) == 0) {
      const auto at = a.source.front().find("read from ");
      return "NVIDIA's manifest of the release: " + (at == std::string::npos ? a.source.front() : a.source.front().substr(at + 10));
    }
  return "knowledge base";
}

util::Result<model::Version> only_build(const knowledge::KnowledgeBase& kb, const model::Version& three, model::Platform platform,
                                        int cuda_major, const std::string& where) {
  std::set<std::string> builds;
  for (const auto& a : kb.facts().cudnn_archives)
    if (a.platform == platform && model::compare_prefix(a.version, three, 3) == 0 && (!cuda_major || a.cuda == cuda_major))
      builds.insert(a.version.text());
  if (builds.size() == 1) return *model::Version::parse(*builds.begin());
  if (builds.empty())
    return util::Error(util::ErrorCode::invalid,
                       "cuDNN " + three.text() + " in " + where + " is not in the knowledge base and no metadata names its build")
        .with_hint("pin it by hand: [cudnn] version = \"" + three.text() + ".<build>\" with the archive you installed it from");
  return util::Error(util::ErrorCode::invalid, "cuDNN " + three.text() + " in " + where + " has several builds (" +
                                                   util::join(std::vector<std::string>(builds.begin(), builds.end()), ", ") +
                                                   ") and no metadata says which this is")
      .with_hint("the files report only three parts; pin the build you installed by hand");
}

void add_archive_pin(Capture& cap, const knowledge::KnowledgeBase& kb, const std::optional<model::Receipt>& receipt,
                     const model::Version& cudnn, int cuda_major, model::Platform platform, const std::string& receipt_place) {
  auto& s = cap.spec;
  gen::ManifestArchive a;
  a.platform = model::to_string(platform);
  if (receipt && !receipt->archive_sha256.empty()) {
    const auto* known = kb.cudnn_archive_by_sha256(receipt->archive_sha256);
    a.origin = known ? "nvidia" : "local";
    a.file = receipt->archive_file.empty() ? "" : util::basename_of(receipt->archive_file);
    if (known) a.url = known->url;
    a.sha256 = receipt->archive_sha256;
    if (receipt->archive_size) a.size = receipt->archive_size;
    a.comment = "the archive stackpin staged this copy from (" + receipt_place + ")";
    s.archives.push_back(a);
  } else if (const auto* fact = kb.cudnn_archive(cudnn, cuda_major, platform); fact && !fact->size) {
    // A pin without a size is refused by check and stage: leave the entry for the user to finish.
    s.archive_comments = {"NVIDIA's archive of this build; its size is not in the knowledge base, so the pin is left",
                          "for you to complete after downloading it (stackpin verify FILE --sha256 " + fact->sha256 + "):",
                          "[[cudnn.archives]]",
                          "platform = \"" + std::string(model::to_string(platform)) + "\"",
                          "origin = \"nvidia\"",
                          "url = \"" + fact->url + "\"",
                          "sha256 = \"" + fact->sha256 + "\"",
                          "size = <bytes>"};
    cap.notes.push_back("the size of NVIDIA's " + fact->url +
                        " is not in the knowledge base: the archive pin is written as a comment to complete");
  } else if (fact) {
    a.origin = "nvidia";
    a.url = fact->url;
    a.sha256 = fact->sha256;
    a.size = fact->size;
    a.comment = "NVIDIA's archive of this build (knowledge base)";
    s.archives.push_back(a);
  } else if (cuda_major) {
    cap.notes.push_back("no archive is known for cuDNN " + cudnn.text() + " (CUDA " + std::to_string(cuda_major) + ", " +
                        model::to_string(platform) +
                        "): add [[cudnn.archives]] by hand (stackpin lock --redistrib fills it from NVIDIA's JSON)");
  }
}

}  // namespace core::detail
