// Reading NVIDIA's redistrib_*.json, cuDNN's and CUDA's. For cuDNN, the CUDA variant of an archive is taken from the key that
// holds it ("cuda12") in the per-variant shape; in the older one-variant shape there is no such
// key, so it comes from the file name NVIDIA gives every archive (..._cuda11-archive.tar.xz), and
// a file whose name does not tell is refused rather than guessed. "size" is a string in NVIDIA's
// files; a number is accepted too. Platforms stackpin cannot provision are listed, not refused.
#include "format/redistrib.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include "util/strings.hpp"

namespace format {
namespace {

using nlohmann::json;
using util::Error;
using util::ErrorCode;

// An invalid value of a redistrib file of `product` ("cuDNN" or "CUDA"), with where to get the real one.
Error invalid_in(const std::string& product, const std::string& path, const std::string& where, const std::string& what) {
  return Error(ErrorCode::invalid, path + ": " + where + " " + what)
      .with_hint("give NVIDIA's redistrib_<version>.json for " + product +
                 ", as published at https://developer.download.nvidia.com/compute/" + (product == "cuDNN" ? "cudnn" : "cuda") + "/redist/");
}

Error invalid(const std::string& path, const std::string& where, const std::string& what) { return invalid_in("cuDNN", path, where, what); }

std::string string_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The fields every archive of every NVIDIA redistrib file has: relative_path, sha256, md5 (may be
// absent) and size (a string in NVIDIA's files; a number is accepted too).
struct Pin {
  std::string relative_path, sha256, md5;
  std::uint64_t size = 0;
};

util::Result<Pin> read_pin(const json& j, const std::string& path, const std::string& where, const std::string& product) {
  auto bad = [&](const std::string& key, const std::string& what) { return invalid_in(product, path, where + key, what); };
  if (!j.is_object()) return bad("", "is not an object");
  Pin p;
  p.relative_path = string_at(j, "relative_path");
  if (!is_redist_relative_path(p.relative_path))
    return bad(".relative_path", "is missing or not a relative path (names under the redist tree, after any leading \"../\")");
  p.sha256 = util::to_lower(string_at(j, "sha256"));
  if (p.sha256.size() != 64 || !util::is_hex(p.sha256)) return bad(".sha256", "is missing or not 64 hexadecimal digits");
  p.md5 = util::to_lower(string_at(j, "md5"));
  if (!p.md5.empty() && (p.md5.size() != 32 || !util::is_hex(p.md5))) return bad(".md5", "is not 32 hexadecimal digits");
  auto size = j.find("size");
  if (size != j.end() && size->is_number_unsigned())
    p.size = size->get<std::uint64_t>();
  else if (size != j.end() && size->is_string())
    p.size = util::parse_u64(size->get<std::string>()).value_or(0);
  if (p.size == 0) return bad(".size", "is missing or not a positive number of bytes");
  return p;
}

// What NVIDIA's name for a cuDNN archive says:
// cudnn-<platform>-<X.Y.Z.B>_cuda<M>[.<m>]-archive.<zip|tar.xz>.
struct ArchiveName {
  model::Version build;      // X.Y.Z.B
  int cuda = 0;              // M
  std::string cuda_release;  // "M.m" for a build of one CUDA release, else ""
};

// The archive's file name, which must be NVIDIA's for a `key` archive of the manifest's own
// release X.Y.Z (.zip on Windows).
util::Result<ArchiveName> read_file_name(const std::string& relative_path, const std::string& path, const std::string& where,
                                         const std::string& key, model::Platform platform, const model::Version& release) {
  const std::string file = relative_path.substr(relative_path.rfind('/') + 1);
  static const std::regex k_name(
      R"(cudnn-([a-z0-9_-]{1,32})-(\d{1,4}\.\d{1,4}\.\d{1,4}\.\d{1,6})_cuda(\d{1,3})(\.\d{1,3})?-archive\.(zip|tar\.xz))");
  std::smatch m;
  const std::string ext = model::archive_extension(platform);
  auto build = std::regex_match(file, m, k_name) ? model::Version::parse(m[2].str()) : std::nullopt;
  if (!build || m[1].str() != key || m[5].str() != ext || build->prefix(3) != release.prefix(3))
    return invalid(path, where + ".relative_path",
                   "(" + util::printable(file, 120) + ") is not NVIDIA's name for a " + key + " archive of cuDNN " + release.prefix(3) +
                       " (cudnn-" + key + "-" + release.prefix(3) + ".<build>_cuda<M>-archive." + ext + ")");
  ArchiveName n;
  n.build = *build;
  n.cuda = std::stoi(m[3].str());
  if (m[4].matched) n.cuda_release = m[3].str() + m[4].str();
  return n;
}

util::Result<RedistribArchive> read_archive(const json& j, const std::string& path, const std::string& where, model::Platform platform,
                                            int cuda_from_key, const std::string& key, const model::Version& release) {
  SP_TRY_ASSIGN(auto pin, read_pin(j, path, where, "cuDNN"));
  SP_TRY_ASSIGN(auto name, read_file_name(pin.relative_path, path, where, key, platform, release));
  RedistribArchive a;
  a.platform = platform;
  a.relative_path = pin.relative_path;
  a.sha256 = pin.sha256;
  a.md5 = pin.md5;
  a.size = pin.size;
  a.build = name.build;
  a.cuda_release = name.cuda_release;
  a.cuda = cuda_from_key ? cuda_from_key : name.cuda;
  if (a.cuda == 0) return invalid(path, where, "does not say which CUDA major the archive is built for");
  if (cuda_from_key && name.cuda && name.cuda != cuda_from_key)
    return invalid(
        path, where,
        "is listed under cuda" + std::to_string(cuda_from_key) + " but its file is a cuda" + std::to_string(name.cuda) + " build");
  return a;
}

std::string line_col(std::string_view text, std::size_t byte) {
  int line = 1, col = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n')
      ++line, col = 1;
    else
      ++col;
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

util::Result<json> read_document(std::string_view text, const std::string& path) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    return Error(ErrorCode::parse, path + ":" + line_col(text, e.byte) + ": not valid JSON")
        .with_hint("give the redistrib_<version>.json file itself, not an HTML page or a truncated download");
  } catch (const json::exception& e) {  // a number out of range (out_of_range.406), found by fuzzing
    return Error(ErrorCode::parse, path + ": not JSON stackpin can read: " + e.what())
        .with_hint("give the redistrib_<version>.json file itself, not an HTML page or a truncated download");
  }
  if (!doc.is_object()) return invalid(path, "the document", "is not a JSON object");
  return doc;
}

Error invalid_cuda(const std::string& path, const std::string& where, const std::string& what) {
  return invalid_in("CUDA", path, where, what);
}

util::Result<CudaComponent> read_component(const std::string& id, const json& value, const std::string& path) {
  CudaComponent c;
  c.id = id;
  c.name = string_at(value, "name");
  c.license = string_at(value, "license");
  c.license_path = string_at(value, "license_path");
  c.version_text = string_at(value, "version");
  auto v = model::Version::parse(c.version_text);
  if (!v) return invalid_cuda(path, id + ".version", "is missing or not a version such as \"12.4.127\"");
  c.version = *v;
  // a component built per CUDA release lists its variants; each platform then holds one archive
  // per variant, keyed "cuda<variant>" (cuDNN's files nest the same way)
  std::vector<std::string> variants;
  if (value.contains("cuda_variant")) {
    const json& list = value["cuda_variant"];
    static const std::regex k_variant(R"(\d{1,3}(\.\d{1,3})?)");
    if (!list.is_array() || list.empty() || list.size() > 16)
      return invalid_cuda(path, id + ".cuda_variant", "is not a list of CUDA releases such as [\"13.1\"]");
    for (const auto& v : list) {
      if (!v.is_string() || !std::regex_match(v.get<std::string>(), k_variant))
        return invalid_cuda(path, id + ".cuda_variant", "has an entry that is not a CUDA release such as \"13.1\"");
      variants.push_back("cuda" + v.get<std::string>());
    }
  }
  auto add = [&](const std::string& key, const std::string& variant, const json& archive, const std::string& where) -> util::Result<void> {
    SP_TRY_ASSIGN(auto pin, read_pin(archive, path, where, "CUDA"));
    // every archive of a component lies in that component's folder of the redist tree, or in a
    // pool outside it
    if (pin.relative_path.rfind(id + "/", 0) != 0 && pin.relative_path.rfind("../", 0) != 0)
      return invalid_cuda(path, where + ".relative_path", "(" + pin.relative_path + ") is not inside the component's folder " + id + "/");
    CudaComponentArchive a;
    a.platform_key = key;
    a.variant = variant;
    a.platform = model::parse_platform(key);
    a.relative_path = pin.relative_path;
    a.sha256 = pin.sha256;
    a.md5 = pin.md5;
    a.size = pin.size;
    c.archives.push_back(std::move(a));
    return {};
  };
  for (const auto& [key, archive] : value.items()) {
    if (!archive.is_object()) continue;  // name, license, license_path, version, cuda_variant
    std::string where = id + "." + key;
    if (variants.empty() || archive.contains("relative_path")) {
      SP_TRY(add(key, "", archive, where));
      continue;
    }
    for (const auto& [variant, nested] : archive.items()) {
      if (std::find(variants.begin(), variants.end(), variant) == variants.end())
        return invalid_cuda(path, where + "." + variant.substr(0, 40), "is not one of the component's cuda_variant entries");
      if (!nested.is_object()) return invalid_cuda(path, where + "." + variant, "is not an archive object");
      SP_TRY(add(key, variant, nested, where + "." + variant));
    }
  }
  return c;
}

}  // namespace

util::Result<CudaRedistribRelease> parse_cuda_redistrib(std::string_view text, const std::string& path) {
  SP_TRY_ASSIGN(auto doc, read_document(text, path));
  if (doc.contains("cudnn")) return invalid_cuda(path, "the document", "is cuDNN's redistrib file, not CUDA's: pin it under [cudnn]");
  CudaRedistribRelease r;
  r.path = path;
  r.release_date = string_at(doc, "release_date");
  r.release_label = string_at(doc, "release_label");
  r.release_product = string_at(doc, "release_product");
  if (!r.release_product.empty() && r.release_product != "cuda")
    return invalid_cuda(path, "release_product", "is \"" + r.release_product + "\", not \"cuda\"");
  static const std::regex k_id(R"([a-z0-9_]{1,64})");
  for (const auto& [id, value] : doc.items()) {
    if (!value.is_object()) continue;  // release_date, release_label, release_product
    if (!std::regex_match(id, k_id)) return invalid_cuda(path, "the component key \"" + id.substr(0, 80) + "\"", "is not a component name");
    SP_TRY_ASSIGN(auto c, read_component(id, value, path));
    r.components.push_back(std::move(c));
  }
  if (r.components.empty()) return invalid_cuda(path, "the document", "lists no component");
  return r;
}

RedistribProduct redistrib_product(std::string_view text) {
  auto doc = read_document(text, "");
  if (!doc) return RedistribProduct::unknown;
  if (doc->contains("cudnn")) return RedistribProduct::cudnn;
  if (string_at(*doc, "release_product") == "cuda") return RedistribProduct::cuda;
  for (const auto& [id, value] : doc->items())
    if (value.is_object()) return RedistribProduct::cuda;
  return RedistribProduct::unknown;
}

namespace {

// "https://host/...", "file:///...", "ftp://...": a scheme (a letter, then letters, digits, '+', '-'
// or '.') and "://".
bool is_url(const std::string& s) {
  const auto at = s.find("://");
  if (at == std::string::npos || at == 0 || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(at),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.'; });
}

}  // namespace

bool is_redist_relative_path(std::string_view path) {
  if (path.empty() || path.size() > 1024 || path.front() == '/' || path.find_first_of("\\%?#") != std::string_view::npos) return false;
  while (path.substr(0, 3) == "../") path.remove_prefix(3);
  if (path.empty() || path.find("..") != std::string_view::npos) return false;  // not even inside a name: no traversal to explain
  for (std::size_t at = 0; at <= path.size();) {
    const std::size_t end = std::min(path.find('/', at), path.size());
    const std::string_view name = path.substr(at, end - at);
    if (name.empty() || name == "." || name == "..") return false;
    at = end + 1;
  }
  return true;
}

util::Result<std::string> redist_url(const std::string& base, std::string_view relative) {
  const auto scheme = is_url(base) ? base.find("://") : std::string::npos;
  const auto root = scheme == std::string::npos ? std::string::npos : base.find('/', scheme + 3);
  if (root == std::string::npos || base.back() != '/')
    return util::Error(util::ErrorCode::invalid, "'" + base + "' is not the URL of a directory (scheme://host/path/)");
  std::string dir = base;
  std::string_view rest = relative;
  while (rest.substr(0, 3) == "../") {
    if (dir.size() - 1 <= root)
      return util::Error(util::ErrorCode::invalid, "the archive path " + std::string(relative) + " climbs above the root of " +
                                                       base.substr(0, root + 1) + " (from " + base + ")");
    dir.erase(dir.rfind('/', dir.size() - 2) + 1);
    rest.remove_prefix(3);
  }
  return dir + std::string(rest);
}

util::Result<std::string> archive_url(const std::string& manifest, std::string_view relative, const std::string& official) {
  if (relative.substr(0, 3) != "../") return redist_url(official, relative);
  if (!is_url(manifest))
    return util::Error(util::ErrorCode::invalid, manifest + " lists " + std::string(relative) +
                                                     ", a path out of the redist tree into its host's pool, and a local file does not say "
                                                     "which host that is")
        .with_hint(
            "let stackpin read the manifest from its host: point STACKPIN_NVIDIA_BASE or [nvidia] base at it and run "
            "`stackpin lock` without --redistrib");
  return redist_url(manifest.substr(0, manifest.rfind('/') + 1), relative);
}

std::vector<model::Version> listed_releases(std::string_view listing) {
  static const std::regex k_name(R"(redistrib_(\d{1,3}\.\d{1,3}\.\d{1,3})\.json)");
  std::set<model::Version> found;
  for (auto it = std::cregex_iterator(listing.data(), listing.data() + listing.size(), k_name); it != std::cregex_iterator(); ++it)
    if (auto v = model::Version::parse((*it)[1].str())) found.insert(*v);
  return {found.begin(), found.end()};
}

util::Result<RedistribRelease> parse_redistrib(std::string_view text, const std::string& path) {
  SP_TRY_ASSIGN(auto doc, read_document(text, path));
  RedistribRelease r;
  r.path = path;
  if (auto it = doc.find("release_date"); it != doc.end() && it->is_string()) r.release_date = it->get<std::string>();
  if (auto it = doc.find("release_label"); it != doc.end() && it->is_string()) r.release_label = it->get<std::string>();
  auto cudnn = doc.find("cudnn");
  if (cudnn == doc.end() || !cudnn->is_object())
    return invalid(path, "the document", "has no \"cudnn\" component (is it the redistrib file of another product?)");
  auto ver = cudnn->find("version");
  std::optional<model::Version> v;
  if (ver != cudnn->end() && ver->is_string()) v = model::Version::parse(ver->get<std::string>());
  if (!v || v->size() != 4) return invalid(path, "cudnn.version", "is missing or not a four-part version such as \"9.1.0.70\"");
  r.version = *v;
  for (const auto& [key, value] : cudnn->items()) {
    if (!value.is_object()) continue;  // name, license, version, cuda_variant
    auto platform = model::parse_platform(key);
    std::string where = "cudnn." + key;
    if (!platform) {
      if (value.contains("relative_path") || key.rfind("linux-", 0) == 0 || key.rfind("windows-", 0) == 0) r.skipped.push_back(key);
      continue;
    }
    // flat (one archive), nested (one per "cudaNN" key), or both at once (9.27.0's windows-arm64)
    const bool flat = value.contains("relative_path");
    const std::size_t first = r.archives.size();
    if (flat) {
      SP_TRY_ASSIGN(auto a, read_archive(value, path, where, *platform, 0, key, r.version));
      r.archives.push_back(std::move(a));
    }
    for (const auto& [variant, archive] : value.items()) {
      if (flat && !archive.is_object()) continue;  // the flat archive's own fields
      static const std::regex k_key(R"(cuda(\d{1,3}))");
      std::smatch m;
      if (!std::regex_match(variant, m, k_key))
        return invalid(path, where + "." + variant.substr(0, 40), "is not a CUDA variant key such as \"cuda12\"");
      SP_TRY_ASSIGN(auto a, read_archive(archive, path, where + "." + variant, *platform, std::stoi(m[1].str()), key, r.version));
      r.archives.push_back(std::move(a));
    }
    // Two archives for one CUDA major: a build for one CUDA release (_cuda13.4) beside the
    // major's own (_cuda13) leaves the major's; two of the same kind cannot be told apart.
    for (std::size_t i = first; i < r.archives.size(); ++i)
      for (std::size_t j = first; j < i; ++j) {
        if (r.archives[i].cuda != r.archives[j].cuda) continue;
        const bool i_release = !r.archives[i].cuda_release.empty(), j_release = !r.archives[j].cuda_release.empty();
        if (i_release == j_release)
          return invalid(path, where,
                         "lists two archives for CUDA " + std::to_string(r.archives[i].cuda) + " (" + r.archives[j].relative_path +
                             " and " + r.archives[i].relative_path + "): stackpin cannot tell which one NVIDIA means");
        const std::size_t drop = i_release ? i : j;
        r.release_builds.push_back(key + ": " + r.archives[drop].relative_path);
        r.archives.erase(r.archives.begin() + static_cast<std::ptrdiff_t>(drop));
        i = first;  // look again from the start: the positions moved
        j = first;
        break;
      }
    // a build for one CUDA release alone is not the major's archive: it is named, not pinned
    for (std::size_t i = first; i < r.archives.size();)
      if (!r.archives[i].cuda_release.empty()) {
        r.release_builds.push_back(key + ": " + r.archives[i].relative_path);
        r.archives.erase(r.archives.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
  }
  if (r.archives.empty()) return invalid(path, "cudnn", "lists no archive for linux-x86_64, linux-sbsa, linux-aarch64 or windows-x86_64");
  return r;
}

}  // namespace format
