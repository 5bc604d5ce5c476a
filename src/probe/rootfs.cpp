// Resolves paths inside a machine's root (--root) without leaving it, following symlinks as that machine would.
#include "rootfs.hpp"

#include <algorithm>
#include <deque>
#include <fstream>
#include <system_error>

namespace probe::detail {

namespace fs = std::filesystem;

namespace {
std::deque<std::string> components(const std::string& path) {
  std::deque<std::string> out;
  std::size_t i = 0;
  while (i < path.size()) {
    auto j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}
}  // namespace

std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

std::string parent(const std::string& path) {
  auto p = normal(path);
  auto slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

std::string base_name(const std::string& path) {
  auto p = normal(path);
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string normal(const std::string& path) {
  bool absolute = !path.empty() && path[0] == '/';
  std::vector<std::string> out;
  for (auto& c : components(path)) {
    if (c == ".") continue;
    if (c == "..") {
      if (!out.empty() && out.back() != "..")
        out.pop_back();
      else if (!absolute)
        out.push_back(c);
      continue;
    }
    out.push_back(c);
  }
  std::string s = absolute ? "/" : "";
  for (std::size_t i = 0; i < out.size(); ++i) s += (i ? "/" : "") + out[i];
  return s.empty() ? "." : s;
}

RootFs::RootFs(fs::path root) : m_root(root.empty() ? fs::path("/") : std::move(root)) {}

fs::path RootFs::host(const std::string& machine_path) const {
  std::string rel = machine_path;
  while (!rel.empty() && rel[0] == '/') rel.erase(0, 1);
  if (rel.empty()) return m_root;
  return m_root / rel;
}

std::optional<std::string> RootFs::resolve(const std::string& machine_path) const {
  if (machine_path.empty() || machine_path[0] != '/') return std::nullopt;
  std::deque<std::string> todo = components(machine_path);
  std::vector<std::string> done;
  int hops = 0;
  auto current = [&] {
    std::string s = "/";
    for (std::size_t i = 0; i < done.size(); ++i) s += (i ? "/" : "") + done[i];
    return s;
  };
  while (!todo.empty()) {
    std::string c = todo.front();
    todo.pop_front();
    if (c == ".") continue;
    if (c == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(c);
    std::error_code ec;
    fs::path h = host(current());
    auto st = fs::symlink_status(h, ec);
    if (ec || !fs::exists(st)) return std::nullopt;
    if (fs::is_symlink(st)) {
      if (++hops > 40) return std::nullopt;
      std::string target = fs::read_symlink(h, ec).string();
      if (ec || target.empty()) return std::nullopt;
      done.pop_back();
      if (target[0] == '/') done.clear();
      auto parts = components(target);
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_front(*it);
    }
  }
  return current();
}

bool RootFs::is_dir(const std::string& p) const {
  auto r = resolve(p);
  std::error_code ec;
  return r && fs::is_directory(host(*r), ec);
}

bool RootFs::is_file(const std::string& p) const {
  auto r = resolve(p);
  std::error_code ec;
  return r && fs::is_regular_file(host(*r), ec);
}

bool RootFs::is_symlink(const std::string& p) const {
  std::error_code ec;
  auto rp = resolve(parent(p));
  if (!rp) return false;
  return fs::is_symlink(fs::symlink_status(host(join(*rp, base_name(p))), ec));
}

std::string RootFs::link_target(const std::string& p) const {
  std::error_code ec;
  auto rp = resolve(parent(p));
  if (!rp) return {};
  fs::path h = host(join(*rp, base_name(p)));
  if (!fs::is_symlink(fs::symlink_status(h, ec))) return {};
  auto t = fs::read_symlink(h, ec);
  return ec ? std::string() : t.string();
}

std::optional<std::uint64_t> RootFs::file_size(const std::string& p) const {
  auto r = resolve(p);
  if (!r) return std::nullopt;
  std::error_code ec;
  auto n = fs::file_size(host(*r), ec);
  if (ec) return std::nullopt;
  return n;
}

std::optional<std::string> RootFs::read(const std::string& p, std::size_t limit) const {
  auto r = resolve(p);
  if (!r) return std::nullopt;
  std::error_code ec;
  if (!fs::is_regular_file(host(*r), ec)) return std::nullopt;
  std::ifstream in(host(*r), std::ios::binary);
  if (!in) return std::nullopt;
  std::string out(limit, '\0');
  in.read(out.data(), static_cast<std::streamsize>(limit));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

std::vector<std::string> RootFs::list(const std::string& dir) const {
  std::vector<std::string> out;
  auto r = resolve(dir);
  if (!r) return out;
  std::error_code ec;
  fs::directory_iterator it(host(*r), ec), end;
  for (; !ec && it != end; it.increment(ec)) out.push_back(it->path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace probe::detail
