#pragma once
// What both captures decide the same way (capture_pins.cpp): the exact build of a cuDNN whose
// files reveal three parts, and the archive pin that reproduces it.
#include <optional>
#include <string>

#include "core/capture/capture.hpp"
#include "model/platform.hpp"
#include "model/staging.hpp"
#include "model/version.hpp"

namespace core::detail {

// The knowledge to pin cuDNN `three` by: `kb`, or, where it has no archive of that release with
// its size for `platform` (and `cuda_major`, when known) and `o.read_release` is set, `kb` with
// NVIDIA's manifest of it (kept in `own`; what could not be read becomes a note of `cap`).
const knowledge::KnowledgeBase& knowledge_for(const knowledge::KnowledgeBase& kb, const model::Version& three, model::Platform platform,
                                              int cuda_major, const CaptureOptions& o, std::optional<knowledge::KnowledgeBase>& own,
                                              Capture& cap);
// `r`, its error with the capture's notes so far as hints (why NVIDIA's manifest was not read).
util::Result<model::Version> with_notes(util::Result<model::Version> r, const Capture& cap);
// "knowledge base", or "NVIDIA's manifest of the release" when the pin came from one read.
std::string facts_from(const knowledge::KnowledgeBase& kb, const model::Version& three);

// The build of `three` (X.Y.Z): the knowledge base's only build for `platform` (and `cuda_major`
// when it is known, since one X.Y.Z may have a build per CUDA major). `where` names the copy in
// errors. Errors: invalid (none known, or several and nothing to choose by).
util::Result<model::Version> only_build(const knowledge::KnowledgeBase& kb, const model::Version& three, model::Platform platform,
                                        int cuda_major, const std::string& where);

// The [[cudnn.archives]] entry that reproduces `cudnn`: the archive stackpin staged it from (its
// receipt), else NVIDIA's from the knowledge base; a pin the knowledge base cannot complete (no
// size) is written as comments to finish, and no pin at all is a note.
void add_archive_pin(Capture& cap, const knowledge::KnowledgeBase& kb, const std::optional<model::Receipt>& receipt,
                     const model::Version& cudnn, int cuda_major, model::Platform platform, const std::string& receipt_place);

// `s` as a manifest name: every character other than letters, digits, '.', '_' and '-' becomes '-'.
std::string safe_name(std::string s);

}  // namespace core::detail
