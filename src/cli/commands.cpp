#include <unistd.h>

#include <ostream>

#include "commands.hpp"
#include "core/cache.hpp"
#include "crypto/sha256.hpp"
#include "format/json.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace cli {

int fail(Context& ctx, const std::string& command, bool json, const util::Error& e) {
  if (json) ctx.io.out << format::envelope(command, false, {}, format::empty_object(), &e);
  else render_error(ctx.io.err, e, ctx.err_style);
  return exit_code_for(e);
}

std::function<void(std::uint64_t, std::uint64_t, std::uint64_t)> progress_printer(Context& ctx, bool json, const std::string& what) {
  if (json || !ctx.io.err_is_tty) return {};
  return [&ctx, what](std::uint64_t done, std::uint64_t total, std::uint64_t files) {
    char buf[160];
    double mib = 1024.0 * 1024.0;
    if (total) {
      std::snprintf(buf, sizeof buf, "\r%s: %.1f / %.1f MiB (%3.0f%%), %llu files ", what.c_str(), done / mib, total / mib,
                    100.0 * static_cast<double>(done) / static_cast<double>(total), static_cast<unsigned long long>(files));
    } else {
      std::snprintf(buf, sizeof buf, "\r%s: %.1f MiB, %llu files ", what.c_str(), done / mib, static_cast<unsigned long long>(files));
    }
    ctx.io.err << buf << std::flush;
    if (total && done >= total) ctx.io.err << "\n";
  };
}

std::function<void(const std::string&, std::uint64_t, std::uint64_t)> download_progress_printer(Context& ctx, bool json) {
  if (json || !ctx.io.err_is_tty) return {};
  return [&ctx](const std::string& file, std::uint64_t done, std::uint64_t total) {
    char buf[320];
    double mib = 1024.0 * 1024.0;
    std::snprintf(buf, sizeof buf, "\rdownloading %s: %.1f / %.1f MiB (%3.0f%%) ", file.c_str(), done / mib, total / mib,
                  total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 0.0);
    ctx.io.err << buf << std::flush;
    if (done >= total) ctx.io.err << "\n";
  };
}

std::string archive_cache_dir(Context& ctx, const std::string& flag) {
  if (!flag.empty()) return flag;
  auto d = core::default_cache_dir(ctx.io.env);
  return d ? d->string() : std::string();
}

std::function<void(int)> fault_hook(Context& ctx) {
  auto at = ctx.io.env.get("STACKPIN_TEST_FAULT_AT");
  if (!at) return {};
  auto n = util::parse_u64(*at);
  if (!n) return {};
  int target = static_cast<int>(*n);
  return [target](int seq) {
    if (seq == target) ::_exit(86);  // a crash at exactly this journal record
  };
}

std::string sha256_of_file(const std::string& path) {
  auto h = crypto::hash_file(path);
  return h ? crypto::to_hex(h->digest) : std::string();
}

}  // namespace cli
