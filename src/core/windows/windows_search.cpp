// The DLL search order, applied to a Windows tree seen from any OS. A desktop application that
// loads a DLL by name (LoadLibrary, or an import of its own) with SafeDllSearchMode on (the
// default since Windows XP SP2) gets it from the first of: its own directory, System32, the
// 16-bit System directory, the Windows directory, the current directory, then each PATH entry in
// order. The process PATH is the machine value followed by the user's, so a User-scope entry can
// never precede the machine's. Python 3.8+ loads extension modules with
// LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR: their dependencies come
// from the module's own directory, the application's directory, System32 and the directories
// added with os.add_dll_directory (in an order Windows leaves unspecified), never from PATH.
//
// What a tree on disk cannot show is left out and said so in the order's notes: a DLL of that
// name already loaded in the process, KnownDLLs, side-by-side manifests and SetDllDirectory.
// The loader does not strip double quotes from a PATH entry, so a quoted entry is kept in the
// table (to show what it names) but not searched.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <system_error>

#include "core/windows/windows_search.hpp"
#include "util/strings.hpp"

namespace core {

namespace fs = std::filesystem;

namespace {

const char* k_search_order_note_loaded =
    "not visible in a tree: a DLL of the same name already loaded in the process wins, and so do KnownDLLs, "
    "side-by-side manifests and SetDllDirectory";

// "12.4" when `dir` is a CUDA toolkit's bin, bin\x64 or bin\arm64 directory (the installer's
// ...\CUDA\vX.Y\bin, or the manifest's cuda_path).
std::string cuda_bin_version(const std::string& dir, const SearchInputs& in) {
  if (!in.cuda_path.empty() && !in.cuda_version.empty() &&
      (same_windows_path(dir, in.cuda_path + "\\bin") || same_windows_path(dir, in.cuda_path + "\\bin\\x64") ||
       same_windows_path(dir, in.cuda_path + "\\bin\\arm64")))
    return in.cuda_version;
  static const std::regex k_re(R"(\\cuda\\v([0-9]+\.[0-9]+)\\bin(\\x64|\\arm64)?$)", std::regex::icase);
  std::smatch m;
  if (std::regex_search(dir, m, k_re)) return m[1].str();
  return "";
}

model::SearchDir make_dir(const WindowsTree& tree, const SearchInputs& in, model::SearchSource source, std::string why,
                          const std::string& windows_path) {
  model::SearchDir d;
  d.source = source;
  d.why = std::move(why);
  MappedPath m = map_windows_path(tree, windows_path, in.cwd);
  d.windows_path = m.windows_path;
  d.local_path = m.local_path;
  d.mapping = m.mapping;
  d.exists = m.exists;
  d.cuda_version = cuda_bin_version(d.windows_path, in);
  return d;
}

void add_path_entries(const WindowsTree& tree, const SearchInputs& in, const std::string& value, model::SearchSource source,
                      std::vector<model::SearchDir>& dirs) {
  const char* label = source == model::SearchSource::user_path ? "User PATH entry " : "PATH entry ";
  for (const auto& e : parse_windows_path_list(value, tree.vars)) {
    auto d = make_dir(tree, in, source, label + std::to_string(e.index), e.path);
    d.raw = e.raw;
    d.path_index = e.index;
    d.quoted = e.quoted;
    d.unexpanded = e.unexpanded;
    if (!e.unexpanded.empty()) d.mapping = model::PathMapping::variable;
    if (e.quoted) d.searched = false;
    dirs.push_back(std::move(d));
  }
}

bool same_dir(const model::SearchDir& a, const model::SearchDir& b) {
  if (!a.windows_path.empty() && !b.windows_path.empty() && same_windows_path(a.windows_path, b.windows_path)) return true;
  if (a.exists && b.exists) {
    std::error_code ec;
    return fs::equivalent(a.local_path, b.local_path, ec);
  }
  return false;
}

void mark_duplicates(std::vector<model::SearchDir>& dirs) {
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    if (!dirs[i].searched) continue;
    for (std::size_t j = 0; j < i; ++j) {
      if (dirs[j].searched && same_dir(dirs[i], dirs[j])) {
        dirs[i].searched = false;
        dirs[i].duplicate_of = static_cast<int>(j);
        break;
      }
    }
  }
}

// The Windows path of `dir`'s parent ("C:\a\bin" -> "C:\a", "C:\a" -> "C:\"); "" at a root.
std::string windows_parent(const std::string& dir) {
  auto pos = dir.rfind('\\');
  if (pos == std::string::npos || dir.size() <= 3) return "";
  return dir.substr(0, pos == 2 ? 3 : pos);
}

std::string join_windows(const std::string& dir, const std::string& name) {
  return !dir.empty() && dir.back() == '\\' ? dir + name : dir + "\\" + name;
}

std::string last_name(const std::string& dir) {
  auto pos = dir.rfind('\\');
  return pos == std::string::npos ? dir : dir.substr(pos + 1);
}

// The version of a cudnn*64_N.dll: N from its name; the full version from cudnn_version.h in the
// include directory beside bin\ (or bin\x64\) when that header is of the same major.
void tell_cudnn_version(const model::SearchDir& d, model::DllCopy& copy) {
  static const std::regex k_re(R"(^cudnn.*64_([0-9]+)\.dll$)", std::regex::icase);
  std::smatch m;
  std::string file = fs::path(copy.local_path).filename().string();
  if (!std::regex_match(file, m, k_re)) return;
  copy.version = m[1].str();
  copy.version_from = "file name";
  fs::path local = d.local_path;
  std::string win = d.windows_path;
  for (int up = 0; up < 2; ++up) {
    local = local.parent_path();
    win = windows_parent(win);
    if (win.empty()) return;
    if (auto inc = find_child_nocase(local, "include")) {
      if (auto header = find_child_nocase(*inc, "cudnn_version.h")) {
        auto v = read_cudnn_header_version(*header);
        if (v && std::to_string(v->major()) == copy.version) {
          copy.version = v->text();
          copy.version_from = join_windows(join_windows(win, inc->filename().string()), header->filename().string());
        }
        return;
      }
    }
    // bin\x64 (bin\arm64): also look beside bin
    if (!names_equal_nocase(last_name(d.windows_path), "x64") && !names_equal_nocase(last_name(d.windows_path), "arm64")) return;
  }
}

}  // namespace

model::SearchOrder desktop_search_order(const WindowsTree& tree, const SearchInputs& in) {
  model::SearchOrder o;
  o.kind = "desktop";
  o.title = "DLL search order of a desktop application (SafeDllSearchMode on)";
  std::string root = tree.system_root();
  if (!in.app_dir.empty())
    o.dirs.push_back(make_dir(tree, in, model::SearchSource::app_dir,
                              in.app_dir_from_python ? "the application's directory, python.exe's" : "the application's directory",
                              in.app_dir));
  o.dirs.push_back(make_dir(tree, in, model::SearchSource::system32, "System32, searched before PATH", root + "\\System32"));
  o.dirs.push_back(make_dir(tree, in, model::SearchSource::system16, "the 16-bit System directory", root + "\\System"));
  o.dirs.push_back(make_dir(tree, in, model::SearchSource::windows_dir, "the Windows directory", root));
  if (!in.cwd.empty()) o.dirs.push_back(make_dir(tree, in, model::SearchSource::cwd, "the current directory", in.cwd));
  add_path_entries(tree, in, in.path, model::SearchSource::path, o.dirs);
  if (in.user_path) add_path_entries(tree, in, *in.user_path, model::SearchSource::user_path, o.dirs);
  mark_duplicates(o.dirs);
  if (in.app_dir.empty())
    o.notes.push_back("no application directory given (--app-dir or --python): a DLL next to the program's .exe wins over all of these");
  if (in.cwd.empty()) o.notes.push_back("no current directory given (--cwd): it is searched after the Windows directory");
  o.notes.push_back(k_search_order_note_loaded);
  return o;
}

model::SearchOrder python_search_order(const WindowsTree& tree, const SearchInputs& in) {
  model::SearchOrder o;
  o.kind = "python";
  o.title = "Python 3.8+ extension modules (LOAD_LIBRARY_SEARCH_DEFAULT_DIRS): PATH is not searched";
  if (!in.app_dir.empty())
    o.dirs.push_back(make_dir(tree, in, model::SearchSource::app_dir, "the application's directory, python.exe's", in.app_dir));
  o.dirs.push_back(make_dir(tree, in, model::SearchSource::system32, "System32", tree.system_root() + "\\System32"));
  for (std::size_t i = 0; i < in.dll_dirs.size(); ++i)
    o.dirs.push_back(
        make_dir(tree, in, model::SearchSource::dll_dir, "os.add_dll_directory (--dll-dir " + std::to_string(i + 1) + ")", in.dll_dirs[i]));
  mark_duplicates(o.dirs);
  o.notes.push_back("the extension module's own directory (the .pyd's) is searched first");
  if (in.dll_dirs.size() > 1) o.notes.push_back("Windows searches the os.add_dll_directory directories in an unspecified order");
  o.notes.push_back("in a venv, Scripts\\python.exe starts the base interpreter: give that python.exe");
  o.notes.push_back(k_search_order_note_loaded);
  return o;
}

model::DllLookup find_dll(const model::SearchOrder& order, std::string_view name, std::string why) {
  model::DllLookup l;
  l.name = util::to_lower(name);
  l.why = std::move(why);
  std::error_code ec;
  for (std::size_t i = 0; i < order.dirs.size(); ++i) {
    const auto& d = order.dirs[i];
    if (!d.searched || !d.exists) continue;
    auto f = find_child_nocase(d.local_path, name);
    if (!f || !fs::is_regular_file(*f, ec)) continue;
    model::DllCopy c;
    c.dir = static_cast<int>(i);
    c.local_path = f->string();
    c.windows_path = join_windows(d.windows_path, f->filename().string());
    c.machine = pe_machine(*f);
    tell_cudnn_version(d, c);
    l.copies.push_back(std::move(c));
  }
  return l;
}

std::vector<std::string> dll_names_in_order(const model::SearchOrder& order, std::string_view prefix, std::string_view suffix) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& d : order.dirs) {
    if (!d.searched || !d.exists) continue;
    for (fs::directory_iterator it(d.local_path, ec), end; !ec && it != end; it.increment(ec)) {
      std::string n = util::to_lower(it->path().filename().string());
      if (n.size() >= prefix.size() + suffix.size() && n.rfind(prefix, 0) == 0 &&
          n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0 && it->is_regular_file(ec))
        names.insert(n);
    }
  }
  return {names.begin(), names.end()};
}

std::optional<model::Version> read_cudnn_header_version(const fs::path& header) {
  std::ifstream in(header);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  auto define = [&](const char* name) -> std::optional<std::string> {
    std::regex re(std::string("#\\s*define\\s+") + name + "\\s+([0-9]+)");
    std::smatch m;
    if (std::regex_search(text, m, re)) return m[1].str();
    return std::nullopt;
  };
  auto major = define("CUDNN_MAJOR"), minor = define("CUDNN_MINOR"), patch = define("CUDNN_PATCHLEVEL");
  if (!major || !minor || !patch) return std::nullopt;
  return model::Version::parse(*major + "." + *minor + "." + *patch);
}

std::string pe_machine_of(std::string_view b) {
  auto byte = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(b[i])); };
  if (b.size() < 64 || b[0] != 'M' || b[1] != 'Z') return "";
  std::uint32_t offset = byte(0x3C) | (byte(0x3D) << 8) | (byte(0x3E) << 16) | (byte(0x3F) << 24);
  if (offset > b.size() || b.size() - offset < 6) return "";
  if (b[offset] != 'P' || b[offset + 1] != 'E' || b[offset + 2] != 0 || b[offset + 3] != 0) return "";
  unsigned machine = byte(offset + 4) | (byte(offset + 5) << 8);
  switch (machine) {
    case 0x8664: return "x64";
    case 0x014C: return "x86";
    case 0xAA64: return "arm64";
    default: return "other";
  }
}

std::string pe_machine(const fs::path& file) {
  // the PE header is where the DOS header's e_lfanew says: read that far (at most 64 KiB, the
  // field's practical range), not the whole DLL
  std::ifstream in(file, std::ios::binary);
  char dos[64] = {};
  if (!in.read(dos, sizeof dos) || dos[0] != 'M' || dos[1] != 'Z') return "";
  auto u = [&](int i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(dos[i])); };
  std::uint32_t offset = u(0x3C) | (u(0x3D) << 8) | (u(0x3E) << 16) | (u(0x3F) << 24);
  if (offset > (1u << 26)) return "";
  std::string head(dos, sizeof dos);
  if (offset + 6 > head.size()) {
    head.resize(static_cast<std::size_t>(offset) + 6);
    in.read(head.data() + 64, static_cast<std::streamsize>(head.size() - 64));
    head.resize(64 + static_cast<std::size_t>(in.gcount()));
  }
  return pe_machine_of(head);
}

std::vector<std::string> windows_path_variables(std::string_view value) {
  std::vector<std::string> names;
  for (std::size_t at = value.find('%'); at != std::string_view::npos;) {
    auto end = value.find('%', at + 1);
    if (end == std::string_view::npos) break;
    if (end > at + 1) names.emplace_back(value.substr(at + 1, end - at - 1));
    at = value.find('%', end + 1);
  }
  return names;
}

}  // namespace core
