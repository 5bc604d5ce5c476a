// File helpers: whole-file reads, atomic writes (temp, fsync, rename), scratch directories that outlive a kill only until the next run.
#include "util/fs.hpp"

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <system_error>
#include <thread>
#include <vector>

#ifdef _WIN32
#include <io.h>
#else
#include <fcntl.h>
#include <unistd.h>
#endif

namespace util {
namespace fs = std::filesystem;

std::string os_error_text(int errno_value) { return std::generic_category().message(errno_value); }

std::FILE* open_file(const fs::path& path, const char* mode) {
#ifdef _WIN32
  std::wstring wmode(mode, mode + std::strlen(mode));
  return ::_wfopen(path.c_str(), wmode.c_str());
#else
  return std::fopen(path.c_str(), mode);
#endif
}

int seek_file(std::FILE* f, std::uint64_t offset) {
#ifdef _WIN32
  return ::_fseeki64(f, static_cast<__int64>(offset), SEEK_SET);
#else
  return ::fseeko(f, static_cast<off_t>(offset), SEEK_SET);
#endif
}

Result<std::string> read_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Error(ErrorCode::not_found, "no such file: " + path.string());
  if (fs::is_directory(path, ec)) return Error(ErrorCode::io, path.string() + " is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ErrorCode::io, "cannot open " + path.string() + ": " + os_error_text(errno));
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Error(ErrorCode::io, "cannot read " + path.string() + ": " + os_error_text(errno));
  return data;
}

namespace {
std::string random_suffix() {
  // Names only need to differ between concurrent runs (creation is exclusive anyway); the clock,
  // the thread and an address are enough, and avoid std::random_device (arc4random, glibc 2.36).
  static thread_local std::mt19937_64 rng{static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                                          std::hash<std::thread::id>{}(std::this_thread::get_id()) ^
                                          reinterpret_cast<std::uintptr_t>(&rng)};
  static const char k_chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string s(8, 'x');
  for (auto& c : s) c = k_chars[rng() % (sizeof k_chars - 1)];
  return s;
}
}  // namespace

Status write_file_atomic(const fs::path& path, std::string_view content) {
  fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  fs::path tmp = dir / ("." + path.filename().string() + ".tmp-" + random_suffix());
#ifdef _WIN32
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Error(ErrorCode::io, "cannot write " + tmp.string());
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return Error(ErrorCode::io, "cannot write " + tmp.string());
    }
  }
#else
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Error(ErrorCode::io, "cannot create " + tmp.string() + ": " + os_error_text(errno));
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return Error(ErrorCode::io, "cannot write " + path.string() + ": " + os_error_text(e));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return Error(ErrorCode::io, "cannot write " + path.string() + ": " + os_error_text(e));
  }
#endif
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Error(ErrorCode::io, "cannot replace " + path.string() + ": " + ec.message());
  }
  return {};
}

Result<TempDir> TempDir::create(const fs::path& parent, std::string_view prefix) {
  std::error_code ec;
  for (int attempt = 0; attempt < 16; ++attempt) {
    fs::path p = parent / (std::string(prefix) + random_suffix());
    if (fs::create_directory(p, ec)) {
      // its owner's alone, whatever the umask: what is unpacked there is checked before it moves
      fs::permissions(p, fs::perms::owner_all, fs::perm_options::replace, ec);
      return TempDir(p);
    }
    if (ec) return Error(ErrorCode::io, "cannot create a directory in " + parent.string() + ": " + ec.message());
  }
  return Error(ErrorCode::io, "cannot create a unique directory in " + parent.string());
}

Result<TempDir> TempDir::create_owned(const fs::path& parent, std::string_view prefix) {
  auto t = create(parent, prefix);
  if (!t) return t;
  SP_TRY_ASSIGN(auto lock, FileLock::acquire(t->path() / ".owner"));
  t->m_owner.emplace(std::move(lock));
  return t;
}

std::size_t TempDir::remove_abandoned(const fs::path& parent, std::string_view prefix) {
  std::error_code ec;
  std::vector<fs::path> found;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::error_code ec2;
    if (name.rfind(prefix, 0) == 0 && it->is_directory(ec2) && !it->is_symlink(ec2)) found.push_back(it->path());
  }
  std::size_t removed = 0;
  for (const auto& dir : found) {
    auto lock = FileLock::try_acquire(dir / ".owner");
    bool abandoned = false;
    if (lock && *lock) {
      abandoned = true;  // its owner is gone: the lock is ours
    } else if (lock && !fs::exists(fs::symlink_status(dir / ".owner", ec))) {
      auto t = fs::last_write_time(dir, ec);
      abandoned = !ec && fs::file_time_type::clock::now() - t > std::chrono::minutes(10);
    }
    if (!abandoned) continue;
    lock = Result<std::optional<FileLock>>(std::optional<FileLock>());  // release before removing (Windows)
    if (fs::remove_all(dir, ec) > 0 && !ec) ++removed;
  }
  return removed;
}

TempDir::TempDir(TempDir&& other) noexcept : m_path(std::move(other.m_path)), m_owner(std::move(other.m_owner)) {
  other.m_path.clear();
  other.m_owner.reset();
}
TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    m_owner.reset();
    if (!m_path.empty()) {
      std::error_code ec;
      fs::remove_all(m_path, ec);
    }
    m_path = std::move(other.m_path);
    m_owner = std::move(other.m_owner);
    other.m_path.clear();
    other.m_owner.reset();
  }
  return *this;
}
TempDir::~TempDir() {
  m_owner.reset();  // the lock first: Windows cannot remove a file that is open
  if (!m_path.empty()) {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
}
fs::path TempDir::release() {
  m_owner.reset();
  fs::path p = std::move(m_path);
  m_path.clear();
  return p;
}

}  // namespace util
