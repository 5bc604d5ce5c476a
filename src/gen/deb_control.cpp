// Debian control data. The control file is RFC 822-like: one "Field: value" per line, a
// continuation line starts with a space, and a blank line ends the paragraph, so any line break
// or blank line smuggled into a value would create fields. Single-line fields therefore have
// every control character turned into a space, and the long description is re-flowed line by
// line under Debian's rules (" " prefix, " ." for an empty line).
#include "gen/deb_control.hpp"

#include <algorithm>
#include <cstdio>

#include "util/strings.hpp"

namespace gen {

namespace {

std::string one_line(const std::string& s) {
  std::string out;
  for (char c : s) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  auto b = out.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  auto e = out.find_last_not_of(' ');
  return out.substr(b, e - b + 1);
}

}  // namespace

bool valid_package_name(const std::string& n) {
  if (n.size() < 2) return false;
  auto ok_first = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!ok_first(n[0])) return false;
  return std::all_of(n.begin(), n.end(), [&](char c) { return ok_first(c) || c == '+' || c == '.' || c == '-'; });
}

bool valid_version(const std::string& v) {
  if (v.empty() || !(v[0] >= '0' && v[0] <= '9')) return false;
  return std::all_of(v.begin(), v.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '+' || c == '-' || c == '~' ||
           c == ':';
  });
}

util::Result<std::string> render_control(const DebControl& c) {
  if (!valid_package_name(c.package))
    return util::Error(util::ErrorCode::invalid, "'" + c.package + "' is not a valid Debian package name");
  if (!valid_version(c.version)) return util::Error(util::ErrorCode::invalid, "'" + c.version + "' is not a valid Debian version");
  for (const auto& [field, value] : {std::pair<const char*, const std::string*>{"Architecture", &c.architecture},
                                     {"Maintainer", &c.maintainer},
                                     {"Description", &c.synopsis}})
    if (one_line(*value).empty()) return util::Error(util::ErrorCode::invalid, std::string("the package's ") + field + " is empty");
  std::string out;
  auto field = [&](const char* name, const std::string& value) {
    std::string v = one_line(value);
    if (!v.empty()) out += std::string(name) + ": " + v + "\n";
  };
  auto list = [&](const char* name, const std::vector<std::string>& items) {
    std::vector<std::string> clean;
    for (const auto& i : items)
      if (auto v = one_line(i); !v.empty()) clean.push_back(v);
    if (!clean.empty()) out += std::string(name) + ": " + util::join(clean, ", ") + "\n";
  };
  field("Package", c.package);
  field("Version", c.version);
  field("Architecture", c.architecture);
  field("Maintainer", c.maintainer);
  if (c.installed_size_kib) field("Installed-Size", std::to_string(c.installed_size_kib));
  list("Depends", c.depends);
  list("Recommends", c.recommends);
  list("Breaks", c.breaks);
  list("Conflicts", c.conflicts);
  list("Replaces", c.replaces);
  list("Provides", c.provides);
  field("Section", c.section);
  field("Priority", c.priority);
  field("Multi-Arch", c.multi_arch);
  field("Homepage", c.homepage);
  out += "Description: " + one_line(c.synopsis) + "\n";
  for (const auto& raw : c.description) {
    std::string line = one_line(raw);
    if (line.empty()) {
      out += " .\n";
      continue;
    }
    // Word-wrap to 79 columns (Debian's limit for description lines); a longer word stays whole.
    std::string cur;
    for (const auto& word : util::split(line, ' ')) {
      if (word.empty()) continue;
      if (!cur.empty() && cur.size() + 1 + word.size() > 78) {
        out += " " + cur + "\n";
        cur.clear();
      }
      cur += (cur.empty() ? "" : " ") + word;
    }
    if (!cur.empty()) out += " " + cur + "\n";
  }
  return out;
}

std::string render_md5sums(const std::map<std::string, std::string>& md5_by_path) {
  std::string out;
  for (const auto& [path, md5] : md5_by_path) out += md5 + "  " + path + "\n";
  return out;
}

std::string render_shlibs(const std::vector<std::string>& sonames, const std::string& dependency) {
  std::vector<std::string> lines;
  for (const auto& s : sonames) {
    auto pos = s.find(".so.");
    if (pos == std::string::npos || s.rfind("lib", 0) != 0) continue;
    lines.push_back(s.substr(0, pos) + " " + s.substr(pos + 4) + " " + dependency);
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string render_ldconfig_trigger() { return "activate-noawait ldconfig\n"; }

std::string render_copyright(const std::string& upstream_name, const std::string& upstream_source, const std::string& copyright,
                             const std::string& license_name, const std::string& license_text) {
  std::string out = "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n";
  out += "Upstream-Name: " + one_line(upstream_name) + "\n";
  out += "Source: " + one_line(upstream_source) + "\n\n";
  out += "Files: *\nCopyright: " + one_line(copyright) + "\nLicense: " + one_line(license_name) + "\n";
  std::string text = license_text;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' || text.back() == '\t')) text.pop_back();
  for (const auto& raw : util::split(text, '\n')) {
    std::string line = raw;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    for (char& ch : line)
      if (ch == '\t') ch = ' ';
    bool blank = line.find_first_not_of(' ') == std::string::npos;
    out += blank ? " .\n" : " " + line + "\n";
  }
  return out;
}

std::string render_changelog(const std::string& package, const std::string& version, const std::string& change,
                             const std::string& maintainer, std::int64_t date_epoch) {
  // Days since 1970-01-01 to a civil date (proleptic Gregorian), without the C library's time zone state.
  std::int64_t days = date_epoch >= 0 ? date_epoch / 86400 : (date_epoch - 86399) / 86400;
  std::int64_t secs = date_epoch - days * 86400;
  int wday = static_cast<int>(((days % 7) + 11) % 7);  // 1970-01-01 was a Thursday
  std::int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
  std::int64_t doe = z - era * 146097, yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
  int mday = static_cast<int>(doy - (153 * mp + 2) / 5 + 1), mon = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  int year = static_cast<int>(yoe + era * 400 + (mon <= 2 ? 1 : 0));
  static const char* k_days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char* k_months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char date[64];
  std::snprintf(date, sizeof date, "%s, %02d %s %04d %02d:%02d:%02d +0000", k_days[wday], mday, k_months[mon - 1], year,
                static_cast<int>(secs / 3600), static_cast<int>(secs / 60 % 60), static_cast<int>(secs % 60));
  return package + " (" + version + ") unstable; urgency=medium\n\n  * " + one_line(change) + "\n\n -- " + one_line(maintainer) + "  " +
         date + "\n";
}

std::string render_lintian_overrides(const std::string& package, const std::vector<std::pair<std::string, std::string>>& tag_reason) {
  std::string out;
  for (const auto& [tag, reason] : tag_reason) out += "# " + one_line(reason) + "\n" + package + ": " + tag + "\n";
  return out;
}

}  // namespace gen
