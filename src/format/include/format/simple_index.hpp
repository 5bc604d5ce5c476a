// A package's page of a PEP 503 "simple" index, as pip reads it.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace format {

struct IndexFile {
  std::string file;    // the link's last path component, percent-encoding undone ("torch-2.9.0+cu130-...whl")
  std::string url;     // absolute, without the fragment
  std::string sha256;  // from a "#sha256=" fragment, lower case; "" when the link has none
};

// The links of a PEP 503 project page (HTML): each <a href="..."> whose target is a file, resolved
// against `page_url` (absolute, root-relative and relative hrefs; HTML's &amp; and the like undone).
// Malformed markup is skipped, never an error: a page pip cannot read yields no file.
std::vector<IndexFile> parse_simple_index(std::string_view html, const std::string& page_url);

}  // namespace format
