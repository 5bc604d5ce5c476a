// Wheels and a PEP 503 index for the Python lock's tests.
#include "wheels.hpp"

#include <map>
#include <stdexcept>

#include "model/pylock.hpp"
#include "test_support.hpp"
#include "util/fs.hpp"

namespace fixtures {

std::string wheel_file_name(const WheelSpec& spec) {
  std::string n = spec.name;
  for (auto& c : n)
    if (c == '-' || c == '.') c = '_';
  return n + "-" + spec.version + "-" + spec.tag + ".whl";
}

Info make_wheel(const fs::path& dir, const WheelSpec& spec) {
  std::string n = spec.name;
  for (auto& c : n)
    if (c == '-' || c == '.') c = '_';
  const std::string dist_info = n + "-" + spec.version + ".dist-info";
  std::string metadata = "Metadata-Version: 2.1\nName: " + spec.name + "\nVersion: " + spec.version + "\nRequires-Python: >=3.8\n";
  for (const auto& r : spec.requires_dist) metadata += "Requires-Dist: " + r + "\n";
  const bool pure = spec.tag.size() >= 4 && spec.tag.substr(spec.tag.size() - 4) == "-any";
  std::string wheel = "Wheel-Version: 1.0\nGenerator: stackpin-tests\nRoot-Is-Purelib: " + std::string(pure ? "true" : "false") +
                      "\nTag: " + spec.tag + "\n";
  std::vector<Entry> entries = spec.files;
  entries.push_back({dist_info + "/METADATA", Kind::file, metadata});
  entries.push_back({dist_info + "/WHEEL", Kind::file, wheel});
  std::string record;
  for (const auto& e : entries)
    if (e.kind == Kind::file) record += e.path + ",,\n";
  record += dist_info + "/RECORD,,\n";
  entries.push_back({dist_info + "/RECORD", Kind::file, record});
  fs::create_directories(dir);
  fs::path out = dir / wheel_file_name(spec);
  write_archive(out, Format::zip, entries);
  return fixtures::info(out);
}

}  // namespace fixtures

namespace testing_support {

namespace {
std::string percent_plus(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '+' ? std::string("%2B") : std::string(1, c);
  return out;
}
}  // namespace

void serve_wheel_index(HttpServer& server, const std::vector<std::filesystem::path>& wheels, bool hashes) {
  std::map<std::string, std::string> pages;
  for (const auto& w : wheels) {
    const std::string file = w.filename().string();
    auto parsed = model::parse_wheel_name(file);
    if (!parsed) throw std::runtime_error("not a wheel: " + file);
    const std::string project = model::normalize_python_name(parsed->name);
    auto i = fixtures::info(w);
    server.serve("/files/" + file, read_text(w));
    server.serve("/files/" + percent_plus(file), read_text(w));  // the server does not decode paths
    pages[project] +=
        "<a href=\"../../files/" + percent_plus(file) + (hashes ? "#sha256=" + i.sha256 : std::string()) + "\">" + file + "</a><br/>\n";
  }
  std::string root = "<!DOCTYPE html><html><body>\n";
  for (const auto& [project, links] : pages) {
    server.serve("/simple/" + project + "/", "<!DOCTYPE html><html><body>\n" + links + "</body></html>\n");
    root += "<a href=\"" + project + "/\">" + project + "</a>\n";
  }
  server.serve("/simple/", root + "</body></html>\n");
}

namespace {
std::string python() {
  const char* py = std::getenv("STACKPIN_PYTHON");
  return py && *py ? std::string(py) : tool_path("python3");
}
}  // namespace

std::string python_minor_version() {
  if (python().empty()) return {};
  auto r = run_process({python(), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"});
  if (r.exit_code != 0) return {};
  std::string v = r.out;
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
  return v;
}

std::string python_tools_missing() {
  const std::string py = python();
  if (py.empty()) return "no python3 on PATH (apt-get install python3)";
  if (run_process({py, "-m", "pip", "--version"}).exit_code != 0) return py + " -m pip does not run (apt-get install python3-pip)";
  if (run_process({py, "-c", "import venv, ensurepip"}).exit_code != 0) return py + " has no venv/ensurepip (apt-get install python3-venv)";
  return {};
}

}  // namespace testing_support
