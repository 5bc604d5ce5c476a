// Where the archive cache lives (--cache-dir, STACKPIN_CACHE_DIR, XDG_CACHE_HOME, ~/.cache), its content-addressed paths, and
// the settling of entries a crash may have torn (see cache.hpp).
#include "core/archives/cache.hpp"

#include <system_error>
#include <vector>

#include "crypto/sha256.hpp"
#include "util/file_lock.hpp"

namespace core {
namespace fs = std::filesystem;

namespace {
constexpr const char* k_unsynced = ".unsynced";

// A variable's value when it is set and not empty.
std::optional<std::string> non_empty(const util::Env& env, const char* name) {
  auto v = env.get(name);
  if (v && !v->empty()) return v;
  return std::nullopt;
}
}  // namespace

util::Result<fs::path> default_cache_dir(const util::Env& env) {
  auto set = [&](const char* name) { return non_empty(env, name); };
  if (auto v = set("STACKPIN_CACHE_DIR")) return fs::path(*v);
  if (util::host_is_windows()) {
    if (auto v = set("LOCALAPPDATA")) return fs::path(*v) / "stackpin" / "cache";
  } else {
    if (auto v = set("XDG_CACHE_HOME")) return fs::path(*v) / "stackpin";
    if (auto v = set("HOME")) return fs::path(*v) / ".cache" / "stackpin";
  }
  return util::Error(util::ErrorCode::not_found, "no cache directory: STACKPIN_CACHE_DIR, XDG_CACHE_HOME and HOME are all unset")
      .with_hint("give one with --cache-dir DIR or STACKPIN_CACHE_DIR=DIR");
}

std::optional<fs::path> user_config_path(const util::Env& env) {
  auto set = [&](const char* name) { return non_empty(env, name); };
  if (auto v = set("STACKPIN_CONFIG")) return fs::path(*v);
  if (util::host_is_windows()) {
    if (auto v = set("APPDATA")) return fs::path(*v) / "stackpin" / "config.toml";
    return std::nullopt;
  }
  if (auto v = set("XDG_CONFIG_HOME")) return fs::path(*v) / "stackpin" / "config.toml";
  if (auto v = set("HOME")) return fs::path(*v) / ".config" / "stackpin" / "config.toml";
  return std::nullopt;
}

fs::path cache_entry_dir(const fs::path& cache, const std::string& sha256) { return cache / "sha256" / sha256; }

fs::path cache_entry_path(const fs::path& cache, const std::string& sha256, const std::string& file) {
  return cache_entry_dir(cache, sha256) / file;
}

fs::path unsynced_entry_path(const fs::path& cache, const std::string& sha256, const std::string& boot, const std::string& file) {
  return cache_entry_dir(cache, sha256) / k_unsynced / boot / file;
}

fs::path archive_lock_path(const fs::path& cache, const std::string& sha256) { return cache / "partial" / (sha256 + ".lock"); }

fs::path partial_path(const fs::path& cache, const std::string& sha256) { return cache / "partial" / (sha256 + ".part"); }

fs::path partial_url_path(const fs::path& cache, const std::string& sha256) { return cache / "partial" / (sha256 + ".url"); }

namespace {

// The archive in one folder: `file` when it has the pinned size, else the one file of that size.
std::optional<fs::path> find_in(const fs::path& dir, const ArchiveExpectation& e) {
  std::error_code ec;
  if (!e.file.empty()) {
    fs::path p = dir / e.file;
    if (fs::is_regular_file(p, ec) && fs::file_size(p, ec) == *e.size && !ec) return p;
  }
  std::optional<fs::path> found;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (!it->is_regular_file(ec2) || it->file_size(ec2) != *e.size || ec2) continue;
    if (found) return std::nullopt;  // ambiguous: not something fetch leaves behind
    found = it->path();
  }
  return found;
}

bool usable(const fs::path& cache, const ArchiveExpectation& e) { return !cache.empty() && !e.sha256.empty() && e.size; }

// Whether the entry's unsynced folder holds anything to settle: another boot's folder, or this
// boot's archive written long enough ago while no plain entry exists.
bool needs_settling(const fs::path& cache, const ArchiveExpectation& e, const std::string& boot) {
  std::error_code ec;
  fs::path unsynced = cache_entry_dir(cache, e.sha256) / k_unsynced;
  if (!fs::is_directory(unsynced, ec)) return false;
  for (fs::directory_iterator it(unsynced, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() != boot) return true;
    if (auto p = find_in(it->path(), e)) {
      auto written = fs::last_write_time(*p, ec);
      if (!ec && fs::file_time_type::clock::now() - written >= k_settle_after && !find_in(cache_entry_dir(cache, e.sha256), e)) return true;
    }
  }
  return false;
}

bool is_pin(const fs::path& p, const ArchiveExpectation& e) {
  auto h = crypto::hash_file(p);
  return h && crypto::to_hex(h->digest) == e.sha256;
}

// What another boot left, used where it is once its hash is the pin: for a lookup that may not
// settle (a read-only cache, a lock file of another user's, a dry run).
std::optional<fs::path> verified_in_place(const fs::path& cache, const ArchiveExpectation& e, const std::string& boot) {
  std::error_code ec;
  for (fs::directory_iterator it(cache_entry_dir(cache, e.sha256) / k_unsynced, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() == boot) continue;
    if (auto p = find_in(it->path(), e); p && is_pin(*p, e)) return p;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> unsynced_boot(const fs::path& cache) {
  auto boot = util::boot_identity();
  if (!boot || !util::local_file_system(cache)) return std::nullopt;
  return boot;
}

void settle_cache_entry(const fs::path& cache, const ArchiveExpectation& e) {
  if (!usable(cache, e)) return;
  std::error_code ec;
  const fs::path dir = cache_entry_dir(cache, e.sha256);
  const fs::path unsynced = dir / k_unsynced;
  if (!fs::is_directory(unsynced, ec)) return;
  const auto boot = unsynced_boot(cache);
  if (!boot) return;  // neither used nor touched (see cache.hpp)
  bool plain = find_in(dir, e).has_value();
  std::vector<fs::path> folders;
  for (fs::directory_iterator it(unsynced, ec), end; !ec && it != end; it.increment(ec)) folders.push_back(it->path());
  for (const fs::path& folder : folders) {
    auto p = find_in(folder, e);
    if (folder.filename() == *boot) {
      // this boot's: readers may hold its path, so it stays; once written back, a plain name too
      if (plain || !p) continue;
      auto written = fs::last_write_time(*p, ec);
      if (ec || fs::file_time_type::clock::now() - written < k_settle_after) continue;
      if (!util::sync_file(*p)) {  // the kernel could not write it back: what the disk holds is unknown
        fs::remove(*p, ec);
        continue;
      }
      fs::create_hard_link(*p, dir / p->filename(), ec);
      if (ec) continue;  // a file system without hard links: the next boot re-hashes it
      util::sync_directory(dir);
      plain = true;
      continue;
    }
    // another boot's (no lookup of this boot hands it out unverified): what the disk holds decides
    if (plain) {  // a leftover of an entry that has its plain name
      fs::remove_all(folder, ec);
      continue;
    }
    if (!p) continue;  // nothing of the pinned size: not this pin's to judge
    auto h = crypto::hash_file(*p);
    if (!h) continue;                             // unreadable now: judged by a later lookup
    if (crypto::to_hex(h->digest) != e.sha256) {  // torn by the crash
      fs::remove_all(folder, ec);
      continue;
    }
    if (!util::sync_file(*p)) continue;
    fs::rename(*p, dir / p->filename(), ec);
    if (ec) continue;
    util::sync_directory(dir);
    plain = true;
    fs::remove_all(folder, ec);
  }
  fs::remove(unsynced, ec);  // only when empty
}

namespace {
// The plain entry, else this boot's (`boot`: unsynced_boot(cache), asked once per lookup).
std::optional<fs::path> settled_entry(const fs::path& cache, const ArchiveExpectation& e, const std::optional<std::string>& boot) {
  fs::path dir = cache_entry_dir(cache, e.sha256);
  if (auto p = find_in(dir, e)) return p;
  if (boot) return find_in(dir / k_unsynced / *boot, e);
  return std::nullopt;
}
}  // namespace

std::optional<fs::path> find_settled(const fs::path& cache, const ArchiveExpectation& e) {
  if (!usable(cache, e)) return std::nullopt;
  return settled_entry(cache, e, unsynced_boot(cache));
}

std::optional<fs::path> find_in_cache(const fs::path& cache, const ArchiveExpectation& e, CacheLookup how) {
  if (!usable(cache, e)) return std::nullopt;
  const auto boot = unsynced_boot(cache);
  if (boot && how == CacheLookup::settle && needs_settling(cache, e, *boot)) {
    // waits for a download or a settling of the archive by another process; a cache where the
    // lock cannot be taken (read-only, another user's) is looked up without settling
    if (auto lock = util::FileLock::acquire(archive_lock_path(cache, e.sha256))) settle_cache_entry(cache, e);
  }
  if (auto p = settled_entry(cache, e, boot)) return p;
  if (boot) return verified_in_place(cache, e, *boot);
  return std::nullopt;
}

void remove_cached_archive(const fs::path& cache, const ArchiveExpectation& e) {
  if (!usable(cache, e)) return;
  std::error_code ec;
  auto lock = util::FileLock::acquire(archive_lock_path(cache, e.sha256));
  fs::remove_all(cache_entry_dir(cache, e.sha256), ec);
}

}  // namespace core
