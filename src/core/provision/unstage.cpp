// unstage: remove exactly what the receipt lists, restoring what a cuda-merge replaced, under the
// journal, so that a killed run is finished or rolled back by the next one.
#include <system_error>

#include "core/provision/stage.hpp"
#include "provision/staging.hpp"
#include "provision/state.hpp"
#include "util/file_io.hpp"

namespace core {
namespace fs = std::filesystem;
using detail::Journal;
using detail::State;

util::Result<model::UnstageReport> unstage(const UnstageOptions& o, model::UnstageReport& report) {
  fs::path dest = util::io::absolute_path(o.dest);
  report.dest = dest.string();
  model::StateDir dirs{dest};
  std::error_code ec;
  if (!fs::exists(dirs.receipt(), ec) && !fs::exists(dirs.journal(), ec)) {
    // A stage killed before its journal existed leaves only .stackpin/ (the lock, an extraction
    // directory): nothing was staged, but that is not to stay behind either.
    if (fs::is_directory(dirs.root(), ec)) {
      auto state = State::open(dest, o.on_lock_wait);
      if (state && state->recover() && !fs::exists(dirs.receipt(), ec) && !fs::exists(dirs.journal(), ec)) {
        state->remove_root_if_only_the_lock();
      }
    }
    if (!fs::exists(dirs.receipt(), ec) && !fs::exists(dirs.journal(), ec))
      return util::Error(util::ErrorCode::not_found, "nothing staged in " + dest.string() + " (no .stackpin/receipt.json)")
          .with_hint("unstage removes only what `stackpin stage` put there");
  }
  SP_TRY_ASSIGN(auto state, State::open(dest, o.on_lock_wait));
  SP_TRY_ASSIGN(auto recovered, state.recover(o.force));
  report.recovered = recovered;
  SP_TRY_ASSIGN(auto receipt, state.read_receipt());
  if (receipt) {
    std::vector<std::string> removed;
    for (const auto& f : receipt->files)
      if (f.type != "removed") removed.push_back(f.path);
    SP_TRY(detail::refuse_files_in_use(dest, removed, "unstage from"));
    SP_TRY_ASSIGN(auto journal, Journal::begin(dirs, "unstage", o.fault));
    auto s = detail::remove_staged(dirs, *receipt, o.force, report.modified, report.removed, report.restored);
    if (!s) {
      journal.close();
      if (report.removed == 0 && report.restored == 0) fs::remove(dirs.journal(), ec);  // refused before touching anything
      return std::move(s).error();
    }
    SP_TRY(journal.record("done"));
    journal.close();
    fs::remove(dirs.receipt(), ec);
    fs::remove(dirs.journal(), ec);
  }
  // leave no trace: the activation scripts go with the staging, then .stackpin if only the lock is left
  for (const auto& name : detail::activation_names()) fs::remove(dirs.root() / name, ec);
  state.remove_root_if_only_the_lock();
  return report;
}

}  // namespace core
