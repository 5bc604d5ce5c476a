// Names of the Windows DLL search sources doctor reports.
#include "model/doctor.hpp"

namespace model {

const char* to_string(SearchSource s) {
  switch (s) {
    case SearchSource::app_dir: return "app-dir";
    case SearchSource::system32: return "system32";
    case SearchSource::system16: return "system16";
    case SearchSource::windows_dir: return "windows-dir";
    case SearchSource::cwd: return "cwd";
    case SearchSource::path: return "path";
    case SearchSource::user_path: return "user-path";
    case SearchSource::dll_dir: return "dll-dir";
  }
  return "?";
}

const char* to_string(PathMapping m) {
  switch (m) {
    case PathMapping::mapped: return "mapped";
    case PathMapping::drive_unmapped: return "drive-not-mapped";
    case PathMapping::unc: return "unc";
    case PathMapping::relative: return "relative";
    case PathMapping::variable: return "variable";
    case PathMapping::empty: return "empty";
  }
  return "?";
}

}  // namespace model
