// PEP 503 pages are HTML with one anchor per file, the file's hash in the URL's fragment
// (`#sha256=<hex>`). Only anchors' href attributes are read, the way pip's own parser reads them:
// no HTML library is needed, and nothing on the page is trusted beyond the link and its hash.
#include "format/simple_index.hpp"

#include <algorithm>
#include <cctype>

#include "model/pylock.hpp"
#include "util/strings.hpp"

namespace format {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string unescape_html(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '&') {
      auto semi = s.find(';', i);
      if (semi != std::string::npos && semi - i <= 6) {
        std::string ent = s.substr(i + 1, semi - i - 1);
        const char* rep = ent == "amp" ? "&" : ent == "lt" ? "<" : ent == "gt" ? ">" : ent == "quot" ? "\"" : ent == "#39" ? "'" : nullptr;
        if (rep) {
          out += rep;
          i = semi;
          continue;
        }
      }
    }
    out += s[i];
  }
  return out;
}

// `href` made absolute against `page` (scheme://host/path/).
std::string resolve(const std::string& href, const std::string& page) {
  if (href.find("://") != std::string::npos) return href;
  auto scheme_end = page.find("://");
  if (scheme_end == std::string::npos) return {};
  auto host_end = page.find('/', scheme_end + 3);
  const std::string origin = host_end == std::string::npos ? page : page.substr(0, host_end);
  std::string base_path = host_end == std::string::npos ? "/" : page.substr(host_end);
  base_path = base_path.substr(0, base_path.find_first_of("?#"));
  std::string path;
  if (href.rfind("//", 0) == 0) return page.substr(0, scheme_end + 1) + href;
  if (!href.empty() && href[0] == '/')
    path = href;
  else
    path = base_path.substr(0, base_path.rfind('/') + 1) + href;
  // remove dot segments
  std::vector<std::string> out;
  for (const auto& seg : util::split(path, '/')) {
    if (seg == ".") continue;
    if (seg == "..") {
      if (out.size() > 1) out.pop_back();
      continue;
    }
    out.push_back(seg);
  }
  std::string joined = util::join(out, "/");
  if (joined.empty() || joined[0] != '/') joined = "/" + joined;
  return origin + joined;
}

}  // namespace

std::vector<IndexFile> parse_simple_index(std::string_view html, const std::string& page_url) {
  std::vector<IndexFile> out;
  const std::string low = lower(html);
  std::size_t pos = 0;
  while ((pos = low.find("<a", pos)) != std::string::npos) {
    auto end = low.find('>', pos);
    if (end == std::string::npos) break;
    if (pos + 2 < low.size() && !std::isspace(static_cast<unsigned char>(low[pos + 2]))) {
      pos += 2;
      continue;
    }
    std::string_view tag(html.data() + pos, end - pos);
    std::string_view ltag(low.data() + pos, end - pos);
    pos = end;
    auto h = ltag.find("href");
    while (h != std::string::npos && h > 0 && !std::isspace(static_cast<unsigned char>(ltag[h - 1]))) h = ltag.find("href", h + 4);
    if (h == std::string::npos) continue;
    std::size_t i = h + 4;
    while (i < tag.size() && std::isspace(static_cast<unsigned char>(tag[i]))) ++i;
    if (i >= tag.size() || tag[i] != '=') continue;
    ++i;
    while (i < tag.size() && std::isspace(static_cast<unsigned char>(tag[i]))) ++i;
    if (i >= tag.size()) continue;
    std::string value;
    if (tag[i] == '"' || tag[i] == '\'') {
      auto close = tag.find(tag[i], i + 1);
      if (close == std::string_view::npos) continue;
      value = std::string(tag.substr(i + 1, close - i - 1));
    } else {
      auto stop = tag.find_first_of(" \t\r\n", i);
      value = std::string(tag.substr(i, stop == std::string_view::npos ? std::string_view::npos : stop - i));
    }
    value = unescape_html(value);
    IndexFile f;
    auto hash = value.find('#');
    std::string fragment = hash == std::string::npos ? std::string() : value.substr(hash + 1);
    value = value.substr(0, hash);
    if (fragment.rfind("sha256=", 0) == 0) {
      std::string hex = util::to_lower(fragment.substr(7));
      if (hex.size() == 64 && util::is_hex(hex)) f.sha256 = hex;
    }
    f.url = resolve(value, page_url);
    if (f.url.empty()) continue;
    std::string path = f.url.substr(0, f.url.find('?'));
    f.file = model::url_file_name(path);
    if (f.file.empty() || f.file.find_first_of("/\\") != std::string::npos) continue;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace format
