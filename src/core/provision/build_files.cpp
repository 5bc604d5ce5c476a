// The build-system files of a staged tree are derived from its receipt alone (the directories
// and libraries it lists), so stage, a no-op restage and any later stackpin agree on them. They
// live in the tree itself, where find_package and pkg-config look, not in .stackpin/, so they
// share folders with the user's files: stackpin writes only where nothing is or where its own file
// is (recognised by the record, or by the generated-file marker when the record was lost), never
// through a symlinked folder, and records every folder it creates so that unstage removes exactly
// those (when empty) and nothing that was there before.
#include "provision/build_files.hpp"
#include "provision/state.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <system_error>

#include "crypto/sha256.hpp"
#include "model/contracts.hpp"
#include "util/file_io.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core::detail {
namespace fs = std::filesystem;

namespace {

struct Record {
  std::vector<std::string> dirs;              // DEST-relative, in creation order (parents first)
  std::vector<std::string> files;             // DEST-relative
  std::map<std::string, std::string> sha256;  // file -> the SHA-256 (hex) of what stackpin wrote there
};

fs::path record_path(const model::StateDir& dirs) { return dirs.root() / "build-files"; }
std::string parent_of(const std::string& rel) { return fs::path(rel).parent_path().generic_string(); }
std::string name_of(const std::string& rel) { return fs::path(rel).filename().string(); }

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

std::optional<Record> read_record(const model::StateDir& dirs) {
  auto text = util::read_file(record_path(dirs));
  if (!text) return std::nullopt;
  Record r;
  for (const auto& line : util::split(*text, '\n')) {
    auto fields = util::split(line, '\t');
    if (fields.size() < 2 || fields.size() > 3) continue;
    const std::string& kind = fields[0];
    const std::string& path = fields[1];
    // not one of ours (a hostile or foreign record): never acted on
    if (!check_dest_path(dirs, path, record_path(dirs).string())) continue;
    if (kind == "dir" && fields.size() == 2) {
      r.dirs.push_back(path);
    } else if (kind == "file") {
      r.files.push_back(path);
      if (fields.size() == 3 && fields[2].size() == 64 && util::is_hex(fields[2])) r.sha256[path] = fields[2];
    }
  }
  return r;
}

std::string render_record(const Record& r) {
  std::string s;
  for (const auto& d : r.dirs) s += "dir\t" + d + "\n";
  for (const auto& f : r.files) {
    auto h = r.sha256.find(f);
    s += "file\t" + f + (h != r.sha256.end() ? "\t" + h->second : std::string()) + "\n";
  }
  return s;
}

bool generated_by_stackpin(const fs::path& p) {
  auto text = util::read_file(p);
  return text && text->rfind(gen::k_generated_marker, 0) == 0;
}

// DEST/rel is the file stackpin wrote there: it carries stackpin's generated-file marker and its
// SHA-256 is the one recorded (a record of a stackpin that kept no hash: the marker alone).
bool proven_own(const fs::path& dest, const std::string& rel, const Record& rec) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(dest / rel, ec))) return false;
  // every file stackpin generates starts with its marker: a record (copied from elsewhere) can
  // name a user's file with that file's hash, but not make it stackpin's
  if (!generated_by_stackpin(dest / rel)) return false;
  auto h = rec.sha256.find(rel);
  if (h == rec.sha256.end()) return true;  // a record of a stackpin that kept no hash
  auto got = crypto::hash_file(dest / rel);
  return got && crypto::to_hex(got->digest) == h->second;
}

// stackpin may write DEST/rel: no folder on the way is a symlink or a non-folder, and the path
// holds nothing, or a file stackpin wrote.
bool placeable(const fs::path& dest, const std::string& rel, const Record& rec) {
  std::error_code ec;
  fs::path cur = dest;
  for (const auto& part : fs::path(rel).parent_path()) {
    cur /= part;
    auto st = fs::symlink_status(cur, ec);
    if (!fs::exists(st)) break;
    if (!fs::is_directory(st)) return false;  // a symlink (which may lead out of the tree) or a file
  }
  auto st = fs::symlink_status(dest / rel, ec);
  if (!fs::exists(st)) return true;
  if (!fs::is_regular_file(st)) return false;
  if (contains(rec.files, rel) && proven_own(dest, rel, rec)) return true;
  return generated_by_stackpin(dest / rel);
}

// What a write killed halfway left beside DEST/rel: util::write_file_atomic's temporary file.
void remove_strays(const fs::path& p) {
  std::error_code ec;
  const std::string stray = "." + p.filename().string() + ".tmp-";
  std::vector<fs::path> found;
  for (fs::directory_iterator d(p.parent_path(), ec), end; !ec && d != end; d.increment(ec))
    if (d->path().filename().string().rfind(stray, 0) == 0) found.push_back(d->path());
  for (const auto& f : found) fs::remove(f, ec);
}

// The files stackpin may not write: those not placeable, and every file in a folder with one of
// them (CUDNNConfigVersion.cmake must not stand next to another program's CUDNNConfig.cmake).
std::vector<std::string> foreign(const fs::path& dest, const BuildFiles& b, const Record& rec) {
  std::vector<std::string> dirs, out;
  for (const auto& f : b.files)
    if (!placeable(dest, f.first, rec)) dirs.push_back(parent_of(f.first));
  for (const auto& f : b.files)
    if (contains(dirs, parent_of(f.first))) out.push_back(f.first);
  return out;
}

bool identifier(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// "cudnn" first, the sub-libraries in name order
void order(std::vector<std::string>& libs) {
  std::sort(libs.begin(), libs.end(), [](const std::string& a, const std::string& b) {
    if ((a == "cudnn") != (b == "cudnn")) return a == "cudnn";
    return a < b;
  });
}

}  // namespace

gen::BuildConfig build_config_for(const model::Receipt& r) {
  gen::BuildConfig c;
  c.name = r.manifest_name;
  c.version = r.cudnn_version;
  auto major = util::parse_u64(util::split(r.cudnn_version, '.').front());
  c.cudnn_major = major ? static_cast<int>(*major) : 0;
  c.cuda_major = r.cudnn_cuda_major;
  if (auto p = model::parse_platform(r.platform)) c.platform = *p;
  const std::string maj = std::to_string(c.cudnn_major);
  const bool windows = model::is_windows(c.platform);

  std::vector<std::string> names;  // DEST-relative paths of the staged files and links
  for (const auto& f : r.files)
    if (f.type == "file" || f.type == "symlink") names.push_back(f.path);
  for (const auto& p : names) {
    std::string n = util::to_lower(name_of(p));
    if (n == "cudnn.h") c.include_dir = parent_of(p);
    if (!windows && n == model::cudnn_library_name(c.cudnn_major, false)) c.lib_dir = parent_of(p);
    if (windows && n == model::cudnn_library_name(c.cudnn_major, true)) c.bin_dir = parent_of(p);
    if (windows && n == "cudnn.lib") c.lib_dir = parent_of(p);
  }
  if (c.lib_dir.empty() || (windows && c.bin_dir.empty())) return c;  // no main library: no libraries

  for (const auto& p : names) {
    std::string n = util::to_lower(name_of(p));
    std::string dir = parent_of(p);
    if (!windows && dir == c.lib_dir && n.rfind("libcudnn", 0) == 0) {
      const std::string so = ".so." + maj, st = "_static.a";
      if (n.size() > so.size() && n.compare(n.size() - so.size(), so.size(), so) == 0) {
        std::string lib = n.substr(3, n.size() - 3 - so.size());
        if (identifier(lib)) c.libraries.push_back(lib);
      } else if (n.size() > st.size() && n.compare(n.size() - st.size(), st.size(), st) == 0) {
        std::string lib = n.substr(3, n.size() - 3 - st.size());
        if (identifier(lib)) c.static_libraries.push_back(lib);
      }
    }
    const std::string dll = "64_" + maj + ".dll";
    if (windows && dir == c.bin_dir && n.rfind("cudnn", 0) == 0 && n.size() > dll.size() &&
        n.compare(n.size() - dll.size(), dll.size(), dll) == 0) {
      std::string lib = n.substr(0, n.size() - dll.size());
      bool implib = std::any_of(names.begin(), names.end(), [&](const std::string& q) {
        return parent_of(q) == c.lib_dir && util::to_lower(name_of(q)) == lib + ".lib";
      });
      if (identifier(lib) && implib) c.libraries.push_back(lib);
    }
  }
  order(c.libraries);
  order(c.static_libraries);
  c.cmake_dir = windows ? k_windows_cmake_dir : k_linux_cmake_dir;
  if (!windows) c.pkgconfig_dir = c.lib_dir + "/pkgconfig";
  return c;
}

BuildFiles build_files_for(const model::Receipt& r) {
  BuildFiles b;
  auto c = build_config_for(r);
  if (r.cudnn_version.empty()) return b;  // a CUDA toolkit alone: CMake's FindCUDAToolkit finds it through CUDA_HOME
  if (c.libraries.empty() || c.libraries.front() != "cudnn") {
    b.note = "the staged tree has no main cuDNN library where its layout puts it: no CMake or pkg-config files written";
    return b;
  }
  b.files.push_back({c.cmake_dir + "/CUDNNConfig.cmake", gen::render_cmake_config(c)});
  b.files.push_back({c.cmake_dir + "/CUDNNConfigVersion.cmake", gen::render_cmake_config_version(c)});
  if (!model::is_windows(c.platform)) {
    // relocatable and made of the receipt's own paths, so this cannot fail; keep going without it if it does
    if (auto pc = gen::render_pkg_config(c)) b.files.push_back({c.pkgconfig_dir + "/cudnn.pc", *pc});
  }
  return b;
}

namespace {
std::string kept_note(const std::vector<std::string>& kept) {
  return "not written, since another program's file or a symlinked folder is in the way (stackpin replaces only its own): " +
         util::join(kept, ", ");
}
}  // namespace

bool build_files_current(const model::StateDir& dirs, const BuildFiles& b, model::StageReport* report) {
  auto rec = read_record(dirs);
  auto skip = foreign(dirs.dest, b, rec ? *rec : Record{});
  std::vector<std::string> ours, kept;
  for (const auto& [rel, content] : b.files) {
    if (contains(skip, rel)) {  // another program's file: left alone
      kept.push_back((dirs.dest / rel).make_preferred().string());
      continue;
    }
    if (!rec || !contains(rec->files, rel)) return false;
    auto text = util::read_file(dirs.dest / rel);
    if (!text || *text != content) return false;
    ours.push_back((dirs.dest / rel).string());
  }
  if (report) {
    report->build_files = ours;
    report->build_files_note = kept.empty() ? b.note : kept_note(kept);
  }
  return true;
}

util::Status write_build_files(const model::StateDir& dirs, const BuildFiles& b, model::StageReport& report) {
  std::error_code ec;
  Record rec = read_record(dirs).value_or(Record{});
  const std::string before = render_record(rec);
  std::vector<std::string> kept;
  std::vector<const std::pair<std::string, std::string>*> writes;
  auto skip = foreign(dirs.dest, b, rec);
  for (const auto& f : b.files) {
    if (contains(skip, f.first)) {
      kept.push_back((dirs.dest / f.first).make_preferred().string());
      continue;
    }
    writes.push_back(&f);
    fs::path cur;
    for (const auto& part : fs::path(f.first).parent_path()) {
      cur /= part;
      std::string d = cur.generic_string();
      if (!fs::exists(fs::symlink_status(dirs.dest / cur, ec)) && !contains(rec.dirs, d)) rec.dirs.push_back(d);
    }
    if (!contains(rec.files, f.first)) rec.files.push_back(f.first);
    rec.sha256[f.first] = crypto::to_hex(crypto::sha256_of(f.second));
  }
  // the record first: a run killed after it leaves nothing unstage does not know about
  remove_strays(record_path(dirs));
  if (render_record(rec) != before || !fs::exists(record_path(dirs), ec))
    SP_TRY(util::write_file_atomic(record_path(dirs), render_record(rec)));
  for (const auto& d : rec.dirs) {
    if (fs::is_directory(fs::symlink_status(dirs.dest / d, ec))) continue;
    SP_TRY(util::io::make_directory(dirs.dest / d));
  }
  for (const auto* f : writes) {
    remove_strays(dirs.dest / f->first);
    auto text = util::read_file(dirs.dest / f->first);
    if (!text || *text != f->second) SP_TRY(util::write_file_atomic(dirs.dest / f->first, f->second));
    report.build_files.push_back((dirs.dest / f->first).string());
  }
  report.build_files_note = kept.empty() ? b.note : kept_note(kept);
  return {};
}

std::vector<std::string> build_files_changed(const model::StateDir& dirs) {
  std::vector<std::string> out;
  auto rec = read_record(dirs);
  if (!rec) return out;
  std::error_code ec;
  for (const auto& f : rec->files)
    if (fs::exists(fs::symlink_status(dirs.dest / f, ec)) && !proven_own(dirs.dest, f, *rec)) out.push_back(f);
  return out;
}

void remove_build_files(const model::StateDir& dirs, bool force) {
  remove_strays(record_path(dirs));
  auto rec = read_record(dirs);
  if (!rec) return;
  std::error_code ec;
  for (auto it = rec->files.rbegin(); it != rec->files.rend(); ++it) {
    // only what stackpin can prove it wrote; with --force also its own files a user edited since,
    // never a file without its marker (the user's own, whatever the record says)
    if (proven_own(dirs.dest, *it, *rec) || (force && generated_by_stackpin(dirs.dest / *it))) fs::remove(dirs.dest / *it, ec);
    remove_strays(dirs.dest / *it);
  }
  for (auto it = rec->dirs.rbegin(); it != rec->dirs.rend(); ++it) util::io::remove_empty_directory(dirs.dest / *it);
  fs::remove(record_path(dirs), ec);
}

}  // namespace core::detail
