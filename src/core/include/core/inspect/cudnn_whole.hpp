#pragma once
// One cuDNN, whole, as findings and as a condition of using an archive (cudnn_whole.cpp); the
// judgement itself is probe/cudnn_whole.hpp's, from the files' own bytes.
#include <filesystem>
#include <string>
#include <vector>

#include "archive/extract.hpp"
#include "knowledge/knowledge_base.hpp"
#include "model/finding.hpp"
#include "model/machine.hpp"
#include "util/result.hpp"

namespace core {

// A finding (rule cudnn.whole) for each: an error naming what is missing or mixed and how to
// mend it, else ok with the release and where it was read.
void add_cudnn_whole_findings(const std::vector<model::CudnnWhole>& wholes, std::vector<model::Finding>& findings);

// The cuDNN of an archive unpacked under `root`, judged before any of it is used (stage, deb): the
// libraries of each directory its `entries` (paths relative to `root`, as archive_io::extract
// returns them) put cuDNN's library names in, links followed through the entries. Returns each
// one's text, "; "-joined. Errors: invalid (no cuDNN library at all, or one not whole: what is
// missing or mixed, naming `archive`), mismatch (the bytes name another release than `pinned`).
util::Result<std::string> require_cudnn_whole(const std::filesystem::path& root, const std::vector<archive_io::Entry>& entries,
                                              const std::string& archive, const model::Version& pinned, const knowledge::KnowledgeBase& kb);

}  // namespace core
