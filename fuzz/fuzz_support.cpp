// Scratch directories and tree snapshots for the fuzz targets (fuzz_support.hpp).
#include "fuzz_support.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <system_error>

#include "crypto/sha256.hpp"

namespace fuzz {
namespace fs = std::filesystem;

namespace {
struct Root {
  fs::path path;
  int counter = 0;
  Root() {
    std::error_code ec;
    fs::path base;
    if (const char* s = std::getenv("STACKPIN_FUZZ_SCRATCH"); s && *s)
      base = s;
    else if (fs::is_directory("/dev/shm", ec))
      base = "/dev/shm";
    else
      base = fs::temp_directory_path(ec);
    path = base / ("stackpin-fuzz-" + std::to_string(::getpid()));
    fs::remove_all(path, ec);
    fs::create_directories(path, ec);
    if (ec) {
      std::fprintf(stderr, "stackpin fuzz: cannot create %s: %s\n", path.c_str(), ec.message().c_str());
      std::abort();
    }
  }
  ~Root() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};
Root& root() {
  static Root r;
  return r;
}
}  // namespace

const fs::path& scratch_root() { return root().path; }

fs::path fresh_dir() {
  auto& r = root();
  std::error_code ec;
  fs::path prev = r.path / ("in-" + std::to_string(r.counter));
  fs::remove_all(prev, ec);
  fs::path next = r.path / ("in-" + std::to_string(++r.counter));
  fs::remove_all(next, ec);
  fs::create_directories(next, ec);
  if (ec) fail("cannot create " + next.string() + ": " + ec.message());
  return next;
}

Snapshot snapshot(const fs::path& root_dir) {
  Snapshot s;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(root_dir, ec))) return s;
  for (fs::recursive_directory_iterator it(root_dir, fs::directory_options::none, ec), end; !ec && it != end; it.increment(ec)) {
    std::string rel = it->path().lexically_relative(root_dir).generic_string();  // (fs::relative would follow links)
    auto st = it->symlink_status(ec);
    if (fs::is_symlink(st)) {
      s[rel] = "symlink " + fs::read_symlink(it->path(), ec).string();
    } else if (fs::is_directory(st)) {
      s[rel] = "dir";
    } else if (fs::is_regular_file(st)) {
      auto h = crypto::hash_file(it->path());
      s[rel] = "file " + (h ? crypto::to_hex(h->digest) : std::string("unreadable"));
    } else {
      s[rel] = "other";
    }
  }
  return s;
}

void fail(const std::string& what) {
  std::fprintf(stderr, "stackpin fuzz: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

std::string_view as_text(const std::uint8_t* data, std::size_t size) { return std::string_view(reinterpret_cast<const char*>(data), size); }

void write_file(const fs::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) fail("cannot write " + p.string());
}

}  // namespace fuzz
