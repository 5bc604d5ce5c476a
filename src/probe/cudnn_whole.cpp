// One cuDNN, whole, judged by its files' bytes: sonames and needs (and the release, where the bytes
// name it) from probe/library_identity.hpp, the sub-library list from the knowledge base.
#include "probe/cudnn_whole.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "probe/fatbin.hpp"
#include "probe/library_identity.hpp"
#include "util/strings.hpp"

namespace probe {

namespace fs = std::filesystem;

namespace {

using LibName = CudnnLibraryName;

struct Part {
  std::string soname;
  std::vector<std::string> names;  // the directory's names for the file
  probe::LibraryIdentity id;
  std::optional<model::Version> name_version;  // from a fully versioned name
  std::string versioned_name;
  std::vector<std::string> misnamed;  // names of the file that are not its soname's
};

std::string with_source(const model::Version& v, const std::string& soname, const std::string& evidence) {
  return soname + " " + v.text() + " (" + evidence + ")";
}

// `unreadable`: sonames whose files are there but cannot be read (a problem already, not missing).
void judge_major(model::CudnnWhole& w, std::vector<Part>& parts, const model::CudnnMajorContents* contents, bool windows,
                 const std::set<std::string>& unreadable) {
  std::set<std::string> present;
  for (const auto& p : parts) present.insert(util::to_lower(p.soname));
  for (const auto& u : unreadable) present.insert(util::to_lower(u));
  for (const auto& p : parts)
    if (std::find(w.present.begin(), w.present.end(), p.soname) == w.present.end()) w.present.push_back(p.soname);
  std::set<std::string> missing;
  if (contents) {
    for (const auto& lib : windows ? contents->windows_dlls : contents->linux_libraries) {
      std::string soname = windows ? lib : lib + ".so." + std::to_string(w.major);
      if (!present.count(util::to_lower(soname))) missing.insert(soname);
    }
  } else {
    w.problems.push_back("stackpin's knowledge base has no list of cuDNN " + std::to_string(w.major) +
                         "'s sub-libraries: only the ones the files need were looked for");
  }
  for (const auto& p : parts)
    for (const auto& need : p.id.needed) {
      auto n = parse_cudnn_library_name(need);
      if (n && n->major == w.major && !present.count(util::to_lower(need))) missing.insert(need + " (needed by " + p.soname + ")");
    }
  w.missing.assign(missing.begin(), missing.end());

  // the release: the bytes first; names only for the files whose bytes name none
  std::map<std::string, std::vector<std::string>> by_bytes, by_names;  // release -> who says so
  for (const auto& p : parts) {
    if (p.id.cudnn_version)
      by_bytes[p.id.cudnn_version->prefix(3)].push_back(with_source(*p.id.cudnn_version, p.soname, p.id.version_evidence));
    else if (p.name_version)
      by_names[p.name_version->prefix(3)].push_back(p.versioned_name + " (file name)");
  }
  if (by_bytes.size() > 1) {
    std::vector<std::string> said;
    for (const auto& [release, who] : by_bytes) said.push_back(util::join(who, ", "));
    w.problems.push_back("the sub-libraries are of " + std::to_string(by_bytes.size()) + " releases: " + util::join(said, "; "));
  }
  // of several: the one libcudnn_graph (the core every other loads) names, else the most files'
  const auto& settled = by_bytes.empty() ? by_names : by_bytes;
  auto chosen = settled.begin();
  for (auto it = settled.begin(); it != settled.end(); ++it) {
    const bool graph = std::any_of(it->second.begin(), it->second.end(), [](const std::string& who) {
      return who.starts_with("libcudnn_graph.") || util::to_lower(who).starts_with("cudnn_graph64_");
    });
    if (graph) {
      chosen = it;
      break;
    }
    if (it->second.size() > chosen->second.size()) chosen = it;
  }
  if (chosen != settled.end()) {
    w.release = model::Version::parse(chosen->first);
    w.release_source = util::join(chosen->second, ", ");
  }
  if (!by_bytes.empty()) {
    for (const auto& [release, who] : by_names)
      if (!by_bytes.count(release))
        w.problems.push_back(util::join(who, ", ") + " is of " + release + ", the others are " + chosen->first + " by their bytes");
  } else if (by_names.size() > 1) {
    std::vector<std::string> said;
    for (const auto& [release, who] : by_names) said.push_back(util::join(who, ", "));
    w.problems.push_back("the file names are of " + std::to_string(by_names.size()) + " releases: " + util::join(said, "; "));
  }
}

}  // namespace

std::vector<model::CudnnWhole> judge_cudnn_files(std::vector<CudnnFile> files, const std::string& shown,
                                                 const std::vector<model::CudnnMajorContents>& contents) {
  // the development links (libcudnn.so, no major) after the names that carry one, so that a file is
  // first met under a name that says its major
  auto dev_link = [](const CudnnFile& f) { return parse_cudnn_library_name(f.name).value_or(LibName{}).major < 0; };
  std::sort(files.begin(), files.end(), [&](const CudnnFile& a, const CudnnFile& b) {
    return std::make_pair(dev_link(a), a.name) < std::make_pair(dev_link(b), b.name);
  });
  std::map<std::string, std::size_t> file_index;  // real file -> part
  std::vector<Part> parts;
  std::map<int, std::vector<std::string>> problems;  // by major
  std::set<std::string> unreadable_files;
  std::map<int, std::set<std::string>> unreadable;  // by major: the sonames of files that cannot be read
  std::map<int, bool> windows;                      // by major: the names are DLLs'
  for (const auto& file : files) {
    const std::string& name = file.name;
    const auto parsed = parse_cudnn_library_name(name);
    if (!parsed) continue;
    const auto& l = *parsed;
    if (l.major >= 0) windows[l.major] = windows[l.major] || l.windows;
    if (!file.file) {
      if (l.major >= 8) problems[l.major].push_back(name + " -> " + file.dangles_to + " dangles");
      continue;
    }
    const fs::path& real = *file.file;
    auto found = file_index.find(real.string());
    if (found == file_index.end()) {
      // the major of the file itself (libcudnn.so, the development link, has none)
      const auto own_name = parse_cudnn_library_name(real.filename().string());
      const int major = own_name && own_name->major >= 0 ? own_name->major : l.major;
      if (unreadable_files.count(real.string())) {
        if (l.major >= 0) unreadable[major].insert(l.soname());
        continue;
      }
      auto id = read_library_identity(real);
      if (!id) {
        unreadable_files.insert(real.string());
        std::string why = id.error().message;
        if (auto at = why.find(real.string()); at != std::string::npos) why.replace(at, real.string().size(), "it");
        problems[major].push_back(real.filename().string() + " cannot be read as a library (" + why + ")");
        if (l.major >= 0) unreadable[major].insert(l.soname());
        continue;
      }
      Part part;
      part.id = std::move(*id);
      part.soname = part.id.soname.empty() ? name : part.id.soname;
      if (part.id.soname.empty())
        problems[major].push_back(real.filename().string() + " has no soname of its own: it is not a cuDNN library as NVIDIA builds them");
      else if (!parse_cudnn_library_name(part.id.soname))
        problems[major].push_back(real.filename().string() + " is " + part.id.soname +
                                  " by its own bytes (its soname): not a cuDNN library");
      found = file_index.emplace(real.string(), parts.size()).first;
      parts.push_back(std::move(part));
    }
    Part& part = parts[found->second];
    part.names.push_back(name);
    auto own = parse_cudnn_library_name(part.soname);
    if (!part.id.soname.empty() && own && (util::to_lower(own->stem) != util::to_lower(l.stem) || (l.major >= 0 && own->major != l.major)))
      part.misnamed.push_back(name);
    if (auto v = l.version()) {
      part.name_version = v;
      part.versioned_name = name;
      if (part.id.cudnn_version && model::compare_prefix(*v, *part.id.cudnn_version, 3) != 0)
        problems[std::max(l.major, 0)].push_back(name + " is named " + part.name_version->text() + ", its bytes say " +
                                                 part.id.cudnn_version->text() + " (" + part.id.version_evidence + ")");
    }
  }

  std::map<int, std::vector<Part>> by_major;
  for (auto& p : parts)
    if (!p.misnamed.empty())
      if (auto own = parse_cudnn_library_name(p.soname)) {
        std::sort(p.misnamed.begin(), p.misnamed.end());
        problems[own->major].push_back(util::join(p.misnamed, ", ") + (p.misnamed.size() == 1 ? " is " : " are ") + p.soname +
                                       " by its own bytes (its soname): a renamed or misplaced copy");
      }
  for (auto& p : parts) {
    auto own = parse_cudnn_library_name(p.soname);
    if (own && own->major >= 8) by_major[own->major].push_back(std::move(p));
  }
  for (const auto& [major, said] : problems)
    if (major >= 8) by_major[major];  // a major whose files are all unreadable or dangling is judged too
  std::vector<model::CudnnWhole> out;
  for (auto& [major, group] : by_major) {
    model::CudnnWhole w;
    w.dir = shown;
    w.major = major;
    std::sort(group.begin(), group.end(), [](const Part& a, const Part& b) { return a.soname < b.soname; });
    const model::CudnnMajorContents* list = nullptr;
    for (const auto& c : contents)
      if (c.major == major) list = &c;
    judge_major(w, group, list, windows[major], unreadable[major]);
    for (auto& p : problems[major]) w.problems.push_back(std::move(p));
    out.push_back(std::move(w));
  }
  return out;
}

std::optional<CudnnLibraryName> parse_cudnn_library_name(const std::string& name) {
  static const std::regex k_linux(R"(^(libcudnn[a-z_]*)\.so((?:\.[0-9]{1,6})*)$)");
  static const std::regex k_windows(R"(^(cudnn[a-z_]*?)64_([0-9]{1,3})\.dll$)", std::regex::icase);
  std::smatch m;
  CudnnLibraryName l;
  if (std::regex_match(name, m, k_linux)) {
    l.stem = m[1].str();
    l.numbers = m[2].length() > 0 ? m[2].str().substr(1) : std::string();
    if (!l.numbers.empty()) l.major = std::stoi(l.numbers.substr(0, l.numbers.find('.')));
    return l;
  }
  if (std::regex_match(name, m, k_windows)) {
    l.stem = util::to_lower(m[1].str());
    l.major = std::stoi(m[2].str());
    l.windows = true;
    return l;
  }
  return std::nullopt;
}

std::string CudnnLibraryName::soname() const {
  return windows ? stem + "64_" + std::to_string(major) + ".dll" : stem + ".so." + std::to_string(major);
}

std::optional<model::Version> CudnnLibraryName::version() const {
  if (std::count(numbers.begin(), numbers.end(), '.') < 2) return std::nullopt;
  return model::Version::parse(numbers);
}

bool is_cudnn_library_name(const std::string& name) { return parse_cudnn_library_name(name).has_value(); }

util::Result<std::vector<fs::path>> cudnn_libraries_of(const fs::path& dir, int major) {
  std::error_code ec;
  std::vector<fs::path> out;
  std::set<fs::path> files;
  fs::directory_iterator it(dir, ec);
  for (fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
    const auto n = parse_cudnn_library_name(it->path().filename().string());
    if (!n || n->major != major || (!n->windows && n->numbers != std::to_string(major))) continue;
    std::error_code e2;
    auto real = fs::canonical(it->path(), e2);
    if (!e2 && fs::is_regular_file(real, e2) && files.insert(real).second) out.push_back(it->path());
  }
  if (ec) return util::Error(util::ErrorCode::io, "cannot list " + dir.string() + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<model::CudnnWhole> read_cudnn_whole(const fs::path& dir, const std::string& shown,
                                                const std::vector<model::CudnnMajorContents>& contents) {
  std::error_code ec;
  std::vector<CudnnFile> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!parse_cudnn_library_name(name)) continue;
    CudnnFile f{name, {}, {}};
    auto real = fs::canonical(it->path(), ec);
    if (ec)
      f.dangles_to = fs::read_symlink(it->path(), ec).string();
    else
      f.file = real;
    ec.clear();
    files.push_back(std::move(f));
  }
  return judge_cudnn_files(std::move(files), shown, contents);
}

util::Result<CudnnKernels> read_cudnn_kernels(const fs::path& dir, int major) {
  SP_TRY_ASSIGN(auto paths, cudnn_libraries_of(dir, major));
  CudnnKernels out;
  for (const auto& p : paths) {
    auto k = read_gpu_code(p);
    if (!k) {
      out.unreadable.emplace_back(p, k.error().message);
      continue;
    }
    k->path = p.string();
    out.libraries.push_back(std::move(*k));
  }
  return out;
}

}  // namespace probe
