// Reading NVIDIA's redistrib_*.json. The CUDA variant of an archive is taken from the key that
// holds it ("cuda12") in the per-variant shape; in the older one-variant shape there is no such
// key, so it comes from the file name NVIDIA gives every archive (..._cuda11-archive.tar.xz), and
// a file whose name does not tell is refused rather than guessed. "size" is a string in NVIDIA's
// files; a number is accepted too. Platforms stackpin cannot provision are listed, not refused.
#include "format/redistrib.hpp"

#include <nlohmann/json.hpp>

#include <regex>

#include "util/strings.hpp"

namespace format {
namespace {

using nlohmann::json;
using util::Error;
using util::ErrorCode;

Error invalid(const std::string& path, const std::string& where, const std::string& what) {
  return Error(ErrorCode::invalid, path + ": " + where + " " + what)
      .with_hint(
          "give NVIDIA's redistrib_<version>.json for cuDNN, as published at https://developer.download.nvidia.com/compute/cudnn/redist/");
}

util::Result<RedistribArchive> read_archive(const json& j, const std::string& path, const std::string& where, model::Platform platform,
                                            int cuda_from_key) {
  if (!j.is_object()) return invalid(path, where, "is not an object");
  RedistribArchive a;
  a.platform = platform;
  auto str = [&](const char* key) -> std::string {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  a.relative_path = str("relative_path");
  if (a.relative_path.empty() || a.relative_path.find("..") != std::string::npos || a.relative_path.front() == '/')
    return invalid(path, where + ".relative_path", "is missing or not a relative path inside the redist tree");
  a.sha256 = util::to_lower(str("sha256"));
  if (a.sha256.size() != 64 || !util::is_hex(a.sha256)) return invalid(path, where + ".sha256", "is missing or not 64 hexadecimal digits");
  a.md5 = util::to_lower(str("md5"));
  if (!a.md5.empty() && (a.md5.size() != 32 || !util::is_hex(a.md5))) return invalid(path, where + ".md5", "is not 32 hexadecimal digits");
  auto size = j.find("size");
  if (size != j.end() && size->is_number_unsigned())
    a.size = size->get<std::uint64_t>();
  else if (size != j.end() && size->is_string())
    a.size = util::parse_u64(size->get<std::string>()).value_or(0);
  if (a.size == 0) return invalid(path, where + ".size", "is missing or not a positive number of bytes");
  static const std::regex k_variant(R"(_cuda(\d{1,3})(\.\d+)?-archive\.)");
  std::smatch m;
  int from_name = std::regex_search(a.relative_path, m, k_variant) ? std::stoi(m[1].str()) : 0;
  a.cuda = cuda_from_key ? cuda_from_key : from_name;
  if (a.cuda == 0) return invalid(path, where, "does not say which CUDA major the archive is built for");
  if (cuda_from_key && from_name && from_name != cuda_from_key)
    return invalid(
        path, where,
        "is listed under cuda" + std::to_string(cuda_from_key) + " but its file is a cuda" + std::to_string(from_name) + " build");
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

}  // namespace

util::Result<RedistribRelease> parse_redistrib(std::string_view text, const std::string& path) {
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
    if (value.contains("relative_path")) {
      SP_TRY_ASSIGN(auto a, read_archive(value, path, where, *platform, 0));
      r.archives.push_back(std::move(a));
      continue;
    }
    for (const auto& [variant, archive] : value.items()) {
      static const std::regex k_key(R"(cuda(\d{1,3}))");
      std::smatch m;
      if (!std::regex_match(variant, m, k_key)) return invalid(path, where + "." + variant, "is not a CUDA variant key such as \"cuda12\"");
      SP_TRY_ASSIGN(auto a, read_archive(archive, path, where + "." + variant, *platform, std::stoi(m[1].str())));
      r.archives.push_back(std::move(a));
    }
  }
  if (r.archives.empty()) return invalid(path, "cudnn", "lists no archive for linux-x86_64, linux-sbsa, linux-aarch64 or windows-x86_64");
  return r;
}

}  // namespace format
