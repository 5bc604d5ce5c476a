#pragma once
// Snapshots of directory trees for tests that must prove a tree is unchanged, byte for byte
// (rollback, refused staging), or equal to another one: every entry with its type, and for
// regular files their SHA-256, size and permission bits, for symlinks their target.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace testing_support {

// relative path ('/'-separated) -> "dir 0755" | "file 0644 <size> <sha256>" | "symlink -> target" | "other"
using Tree = std::map<std::string, std::string>;

// The tree below `root` (root itself not listed). A missing root gives an empty tree. Paths that
// equal one of `exclude` or lie below it are left out (e.g. ".stackpin").
Tree snapshot(const std::filesystem::path& root, const std::vector<std::string>& exclude = {});

// Differences of two trees, one line per path ("- a: ...", "+ a: ...", "~ a: ... => ..."), "" when equal.
std::string diff(const Tree& before, const Tree& after);

// sha256 (lowercase hex) of a file's bytes.
std::string sha256_file(const std::filesystem::path& p);

// Writes `content` to `p` (creating its parents).
void write_file(const std::filesystem::path& p, const std::string& content);
// Writes `content` over the start of the existing file `p` in place: the same file (inode), other
// bytes, as a file changed behind a reader's back.
void overwrite_in_place(const std::filesystem::path& p, const std::string& content);

// Whether `message` refuses an archive rewritten in place and given its old modification time
// back by the chunk seals checked while decoding ("the bytes decoded are not the bytes verified"). On
// Windows the identity check before it ("changed while it was read") may see the rewrite first:
// the time set back is not all of the file's identity there.
bool refused_as_rewritten(const std::string& message);

// A mount made for a test (tmpfs, read-only bind), unmounted (lazily) at destruction.
// `error` is set when mounting failed (not root, no CAP_SYS_ADMIN, ...): the test skips then.
class Mount {
 public:
  static Mount tmpfs(const std::filesystem::path& dir, const std::string& size);
  static Mount read_only_bind(const std::filesystem::path& from, const std::filesystem::path& to);
  Mount(Mount&& o) noexcept : m_dir(std::move(o.m_dir)), m_error(std::move(o.m_error)) { o.m_dir.clear(); }
  Mount(const Mount&) = delete;
  ~Mount();
  bool ok() const { return m_error.empty(); }
  const std::string& error() const { return m_error; }

 private:
  Mount() = default;
  std::filesystem::path m_dir;  // mounted on; empty when not mounted
  std::string m_error;
};

}  // namespace testing_support
