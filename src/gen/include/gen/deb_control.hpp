#pragma once
// The text members of a Debian binary package (deb_control.cpp): control, md5sums, shlibs,
// triggers, the copyright file, the Debian changelog and the lintian overrides.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "util/result.hpp"

namespace gen {

struct DebControl {
  std::string package, version, architecture, maintainer;
  std::string section, priority = "optional", homepage, multi_arch;
  std::uint64_t installed_size_kib = 0;
  std::vector<std::string> depends, recommends, conflicts, replaces, provides, breaks;
  std::string synopsis;                  // one line
  std::vector<std::string> description;  // the long description: each entry is word-wrapped on its own lines;
                                         // "" = a blank line between paragraphs
};

// Valid Debian package name ([a-z0-9][a-z0-9+.-]+) and version ([epoch:]upstream[-revision]).
bool valid_package_name(const std::string& name);
bool valid_version(const std::string& version);

// The control file (fields in dpkg's canonical order). Every value is made single-line and the
// long description is word-wrapped to 79 columns under Debian's continuation rules (" " prefix, " ." for a blank line), so no
// user-supplied text can add or break a field. Errors: invalid (a bad name, version or an empty
// required field).
util::Result<std::string> render_control(const DebControl& c);

// "md5hex  path" lines, sorted by path (paths without the leading "./").
std::string render_md5sums(const std::map<std::string, std::string>& md5_by_path);

// One shlibs line per shared library: "<name> <soname-version> <dependency>" for sonames of the
// form <name>.so.<version> ("libcudnn 9 ..."); other sonames are skipped.
std::string render_shlibs(const std::vector<std::string>& sonames, const std::string& dependency);

// "activate-noawait ldconfig": dpkg runs ldconfig once after the transaction.
std::string render_ldconfig_trigger();

// A machine-readable (DEP-5) copyright file whose License paragraph carries `license_text`.
std::string render_copyright(const std::string& upstream_name, const std::string& upstream_source, const std::string& copyright,
                             const std::string& license_name, const std::string& license_text);

// One Debian changelog entry; `date_epoch` is rendered in RFC 5322 form (UTC).
std::string render_changelog(const std::string& package, const std::string& version, const std::string& change,
                             const std::string& maintainer, std::int64_t date_epoch);

// The lintian overrides file: a comment with the reason above each "<package>: <tag>" line.
std::string render_lintian_overrides(const std::string& package, const std::vector<std::pair<std::string, std::string>>& tag_reason);

}  // namespace gen
