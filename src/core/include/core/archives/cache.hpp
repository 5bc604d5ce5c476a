#pragma once
// The download cache: archives kept by their SHA-256, so that a file in the cache is the pinned
// one by construction (fetch renames a download into place only after size and hash matched).
//   CACHE/sha256/<64 hex>/<NVIDIA's file name>   complete, verified archives, on disk
//   CACHE/sha256/<64 hex>/.unsynced/<boot>/<file>
//                                                complete, verified archives written under that
//                                                boot and not flushed (see below)
//   CACHE/partial/<64 hex>.part                  a download in progress (resumable)
//   CACHE/partial/<64 hex>.url                   the URL the .part came from
//   CACHE/partial/<64 hex>.lock                  held while the archive is downloaded or settled
//
// Why unsynced entries: flushing every download to disk before naming it (fsync) made a fetch wait
// for the disk, while curl or a browser leaves its bytes in the page cache. Where the kernel names
// its boot (util::boot_identity, Linux) and the cache is on a local file system, fetch names a
// verified download by the boot it was written in instead. Within that boot the page cache is the
// truth: a killed process loses nothing it closed. A crash of the machine can tear the file, and
// the machine then comes back under another boot, whose first lookup re-hashes what the old boot
// left: kept (flushed and moved to the plain name) when it is the pin, removed when not. So no file
// a crash tore is used. Not covered: storage that loses written data while the kernel runs (a
// volume detached and attached again); fetch --verify-cached re-hashes what the cache holds.
// Where no boot is named (Windows, a Linux without /proc) or the cache is on a file system that
// other kernels share (NFS, SMB, FUSE, 9p: another machine, WSL's Windows side, a VM's host),
// downloads are flushed before they are renamed, and unsynced entries are neither used nor
// touched.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "core/archives/verify.hpp"
#include "util/env.hpp"
#include "util/result.hpp"

namespace core {

// $STACKPIN_CACHE_DIR, else $XDG_CACHE_HOME/stackpin, else $HOME/.cache/stackpin (Windows:
// %LOCALAPPDATA%\stackpin\cache). Errors: not_found (none of these variables is set), with a hint
// naming --cache-dir.
util::Result<std::filesystem::path> default_cache_dir(const util::Env& env);

// The settings file: $STACKPIN_CONFIG, else $XDG_CONFIG_HOME/stackpin/config.toml, else
// $HOME/.config/stackpin/config.toml (Windows: %APPDATA%\stackpin\config.toml); nullopt when no
// variable tells where it is.
std::optional<std::filesystem::path> user_config_path(const util::Env& env);

std::filesystem::path cache_entry_dir(const std::filesystem::path& cache, const std::string& sha256);
std::filesystem::path cache_entry_path(const std::filesystem::path& cache, const std::string& sha256, const std::string& file);
// CACHE/sha256/<hex>/.unsynced/<boot>/<file>
std::filesystem::path unsynced_entry_path(const std::filesystem::path& cache, const std::string& sha256, const std::string& boot,
                                          const std::string& file);
std::filesystem::path archive_lock_path(const std::filesystem::path& cache, const std::string& sha256);
std::filesystem::path partial_path(const std::filesystem::path& cache, const std::string& sha256);
std::filesystem::path partial_url_path(const std::filesystem::path& cache, const std::string& sha256);

// The boot whose unsynced entries this process writes, uses and settles in `cache`; nullopt where
// the kernel names no boot or `cache` is on a file system other kernels share.
std::optional<std::string> unsynced_boot(const std::filesystem::path& cache);

// How a lookup treats what another boot left unsynced: settle it (under the archive's lock), or
// only hash it where it is (a dry run).
enum class CacheLookup { settle, read_only };

// The cached copy of an archive: CACHE/sha256/<hex>/<file> when it has the pinned size, else
// the one file of the pinned size in that folder (a cache filled under another file name), else
// the same in this boot's unsynced folder. With CacheLookup::settle the entry is settled first
// (settle_cache_entry) when it needs it, waiting for the archive's lock; where the lock cannot be
// taken (a read-only cache) and with CacheLookup::read_only, another boot's entry is returned
// where it is once its hash is the pin. nullopt when there is none; the plain and this boot's
// entries are not re-hashed (see fetch's --verify-cached).
std::optional<std::filesystem::path> find_in_cache(const std::filesystem::path& cache, const ArchiveExpectation& e,
                                                   CacheLookup how = CacheLookup::settle);

// What find_in_cache finds without settling or hashing: for a caller that holds the archive's lock
// and settled it.
std::optional<std::filesystem::path> find_settled(const std::filesystem::path& cache, const ArchiveExpectation& e);

// With the archive's lock held (archive_lock_path): an entry that another boot left unsynced is
// re-hashed, then flushed and moved to the plain name when it is the pin, and removed when its
// hash is another (a crash tore it); what cannot be judged now (unreadable, not of the pinned
// size) stays, unused. An entry of this boot that was written more than `k_settle_after` ago (the
// kernel has written it back by then, so the flush costs little) is flushed and linked under the
// plain name, so that the next boot need not re-hash it; one whose flush fails is removed.
void settle_cache_entry(const std::filesystem::path& cache, const ArchiveExpectation& e);

// Removes every name the cache holds for the archive (a plain entry and its unsynced links share
// their bytes), under the archive's lock: for a cached copy whose hash is not the pin.
void remove_cached_archive(const std::filesystem::path& cache, const ArchiveExpectation& e);

inline constexpr std::chrono::minutes k_settle_after{10};

}  // namespace core
