// Archive bytes (tar, tar.gz, tar.xz, zip: the format comes from the bytes, as for a real
// archive) through PinnedFile and archive_io::extract / list, the functions stage and deb call.
// After every input: nothing exists outside the extraction directory but the archive and an
// untouched sentinel tree, no symlink in the extraction directory resolves outside it, nothing in
// it is writable by group or others or carries a set-id bit (whatever modes the archive says), and
// what extract() reports is what it wrote.
#include <system_error>

#include "archive/extract.hpp"
#include "crypto/sha256.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace fs = std::filesystem;
  auto dir = fuzz::fresh_dir();
  auto archive = dir / "archive.bin", out = dir / "work" / "out", outside = dir / "outside";
  fs::create_directories(out);
  fs::create_directories(outside);
  fuzz::write_file(outside / "keep.txt", "untouched\n");
  auto bytes = fuzz::as_text(data, size);
  fuzz::write_file(archive, bytes);
  auto before = fuzz::snapshot(dir);
  auto pinned = archive_io::PinnedFile::open(archive, crypto::sha256_of(bytes), size);
  if (!pinned) return 0;  // a format stackpin does not read
  archive_io::ExtractOptions o;
  o.rules = pinned->kind() == archive_io::ArchiveKind::zip ? archive_io::NameRules::windows : archive_io::NameRules::posix;
  o.max_total_bytes = 64u << 20;
  o.max_entries = 10000;
  auto listed = archive_io::list(*pinned, o);
  auto x = archive_io::extract(*pinned, out, o);
  FUZZ_CHECK(listed.ok() == x.ok(), "list and extract disagree: " + (listed ? std::string("listed") : listed.error().message) + " / " +
                                        (x ? std::string("extracted") : x.error().message));
  FUZZ_CHECK(!x || x->archive_sha256 == crypto::sha256_of(bytes), "the hash of the bytes decoded is not the pin");
  // nothing outside out/: the archive and the sentinel as they were
  auto after = fuzz::snapshot(dir);
  for (auto it = after.begin(); it != after.end();) it = it->first.rfind("work/out/", 0) == 0 ? after.erase(it) : std::next(it);
  FUZZ_CHECK(after == before, "something was written outside the extraction directory");
  std::error_code ec;
  auto real_out = fs::canonical(out, ec);
  for (fs::recursive_directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_symlink(ec)) {
      auto perms = it->symlink_status(ec).permissions();
      FUZZ_CHECK((perms & (fs::perms::group_write | fs::perms::others_write | fs::perms::set_uid | fs::perms::set_gid)) == fs::perms::none,
                 it->path().string() + " is writable by group or others, or set-id");
      continue;
    }
    auto target = fs::weakly_canonical(it->path(), ec);
    if (ec) {
      ec.clear();
      continue;  // a loop goes nowhere
    }
    auto rel = target.lexically_relative(real_out).generic_string();
    FUZZ_CHECK(!rel.empty() && rel.rfind("..", 0) != 0, it->path().string() + " resolves outside: " + target.string());
  }
  if (x) {
    for (const auto& e : x->entries) {
      auto st = fs::symlink_status(out / e.path, ec);
      FUZZ_CHECK(fs::exists(st), "a reported entry is missing: " + e.path);
      if (e.type == archive_io::EntryType::file)
        FUZZ_CHECK(fs::file_size(out / e.path, ec) == e.size, "a file's size differs from the report: " + e.path);
    }
  }
  return 0;
}
