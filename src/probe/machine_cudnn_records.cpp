// Where a cuDNN copy came from. A wheel's dist-info is trusted for a directory only when its RECORD
// lists libcudnn.so.N with the very size found there: NVIDIA's wheels ship no fully versioned file
// names, and a file copied over the wheel's must not inherit the wheel's version.
#include "machine_cudnn_records.hpp"

#include <regex>
#include <set>

#include "model/contracts.hpp"
#include "model/version.hpp"
#include "util/strings.hpp"

namespace probe::detail {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool under(const std::string& path, const std::string& dir) {
  if (dir.empty()) return false;
  return path == dir || path.rfind(dir == "/" ? dir : dir + "/", 0) == 0;
}

std::optional<WheelMatch> find_wheel(const MachineCtx& c, const std::string& dir, int major, const std::vector<std::string>& places) {
  std::string soname = model::cudnn_library_name(major, false);
  auto actual = c.fs.file_size(join(dir, soname));
  for (const auto& place : places) {
    for (const auto& name : c.fs.list(place)) {
      auto nv = split_dist_info_name(name);
      if (!nv || nv->first.rfind("nvidia-cudnn", 0) != 0) continue;
      std::string info = join(place, name);
      WheelMatch w;
      w.version = nv->second;
      if (auto text = c.fs.read(join(info, "METADATA"), 256 * 1024)) {
        auto h = read_metadata_headers(*text);
        if (h.count("Version")) w.version = h["Version"];
      }
      auto v = model::Version::parse(w.version);
      if (!v || static_cast<int>(v->major()) != major) continue;  // the wheel of another major
      w.where = join(info, "METADATA");
      if (auto record = c.fs.read(join(info, "RECORD"), 4u << 20)) {
        bool listed = false;
        for (const auto& line : util::split(*record, '\n')) {
          auto parts = util::split(line, ',');
          if (parts.size() < 3 || base_name(parts[0]) != soname) continue;
          listed = true;
          auto size = util::parse_u64(util::trim(parts[2]));
          if (size && actual && *size == *actual) {
            w.verified = true;
          } else {
            w.problem = soname + " is " + (actual ? std::to_string(*actual) : std::string("absent")) + " bytes but " + info +
                        "/RECORD lists " + std::string(util::trim(parts[2])) + ": the file is not the wheel's";
          }
          break;
        }
        if (!listed) w.problem = info + "/RECORD does not list " + soname;
      } else {
        w.verified = actual.has_value();  // no RECORD to hold it against
      }
      return w;
    }
  }
  return std::nullopt;
}

// Installed dpkg runtime packages of cuDNN: package -> upstream version.
std::vector<std::pair<std::string, std::string>> dpkg_cudnn(const MachineCtx& c) {
  std::vector<std::pair<std::string, std::string>> out;
  auto text = c.fs.read("/var/lib/dpkg/status", 64u << 20);
  if (!text) return out;
  static const std::regex k_pkg(R"(^libcudnn[0-9]+(-cuda-[0-9]+)?$)");
  std::string pkg, version, status;
  auto flush = [&] {
    if (std::regex_match(pkg, k_pkg) && status.find(" installed") != std::string::npos && !version.empty())
      out.emplace_back(pkg, version.substr(0, version.find('-')));
    pkg.clear(), version.clear(), status.clear();
  };
  for (const auto& raw : util::split(*text, '\n')) {
    std::string line = raw;
    if (line.empty()) {
      flush();
      continue;
    }
    if (line.rfind("Package:", 0) == 0)
      pkg = std::string(util::trim(line.substr(8)));
    else if (line.rfind("Version:", 0) == 0)
      version = std::string(util::trim(line.substr(8)));
    else if (line.rfind("Status:", 0) == 0)
      status = line;
  }
  flush();
  return out;
}

model::CudnnKind classify(const MachineCtx& c, const std::string& dir, std::string& detail) {
  std::string receipt = join(parent(dir), ".stackpin/receipt.json");
  if (c.fs.is_file(receipt)) {
    detail = "staged by stackpin (" + receipt + ")";
    return model::CudnnKind::staged;
  }
  if (ends_with(dir, "/nvidia/cudnn/lib")) {
    detail = "NVIDIA's nvidia-cudnn pip wheel in " + parent(parent(parent(dir)));
    return model::CudnnKind::pip_wheel;
  }
  if (ends_with(dir, "/torch/lib")) {
    detail = "bundled in the torch wheel (" + parent(parent(dir)) + ")";
    return model::CudnnKind::torch_lib;
  }
  std::string cudnn_path = c.env("CUDNN_PATH");
  if (!cudnn_path.empty())
    if (auto real = c.fs.resolve(normal(cudnn_path)); real && under(dir, *real)) {
      detail = "CUDNN_PATH=" + cudnn_path;
      return model::CudnnKind::cudnn_path;
    }
  if (c.r.conda)
    if (auto real = c.fs.resolve(normal(c.r.conda->prefix)); real && under(dir, *real)) {
      detail = "conda environment " + c.r.conda->prefix;
      return model::CudnnKind::conda;
    }
  if (c.fs.is_dir(join(parent(dir), "conda-meta"))) {
    detail = "conda environment " + parent(dir) + " (not the active one)";
    return model::CudnnKind::conda;
  }
  for (const auto& t : c.r.toolkits)
    if (under(dir, t.root)) {
      detail = "inside the CUDA toolkit " + t.root;
      return model::CudnnKind::toolkit;
    }
  std::set<std::string> system(c.r.default_dirs.begin(), c.r.default_dirs.end());
  for (const char* d : {"/lib", "/usr/lib", "/lib64", "/usr/lib64", "/usr/local/lib", "/usr/local/lib64"}) system.insert(d);
  for (const auto& d : system)
    if (auto real = c.fs.resolve(d); real && *real == dir) {
      detail = "system library directory";
      return model::CudnnKind::system;
    }
  detail = "";
  return model::CudnnKind::other;
}

}  // namespace probe::detail
