#pragma once
// Area core/layout: where a manifest's tree lives, and the DEST a command takes when no --dest is
// given (the contract in docs/architecture.md: DEST becomes the prefix, or the CUDA root for
// cuda-merge; never joined onto the prefix like DESTDIR).
#include <filesystem>
#include <optional>
#include <string>

#include "model/contracts.hpp"
#include "model/manifest.hpp"

namespace core {

// The tree the manifest names for `target`: the [targets.linux] prefix; for windows the CUDA root
// of a cuda-merge layout, else the isolated prefix; "" when the manifest names none.
std::string manifest_tree(model::Target target, const model::Manifest& m);

// The DEST a command uses: --dest (`dest_option`) when given; else, for the linux target, the
// manifest's prefix; nullopt otherwise (a Windows tree is built where --dest says and copied to the
// Windows machine, unless stackpin.exe runs there: its apply and activate take manifest_tree).
std::optional<std::filesystem::path> default_dest(model::Target target, const std::optional<std::filesystem::path>& dest_option,
                                                  const model::Manifest& m);

}  // namespace core
