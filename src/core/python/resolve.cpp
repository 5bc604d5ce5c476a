// The Python lock is pip's resolution, written down: for each target platform pip runs with that
// platform's wheel tags, the manifest's Python version and binary wheels only, in dry-run mode with
// a JSON report (pip's installation report, format version 1), so that it picks exactly what it
// would install there without installing anything. stackpin then merges the targets' choices into
// one PEP 751 lock: a package every target gets once, the others with a marker naming their targets.
// (pip before 23.3 takes platform options only with --target: a directory of the temporary one,
// where nothing is written in dry-run mode.) pip's report has each wheel's URL and, from the index, its hash; the size comes from the
// server (the response head of a request that is aborted before the body), and a wheel whose index gave no hash, or whose server gives no
// length, is downloaded and hashed rather than left unpinned.
#include <algorithm>
#include <map>
#include <set>

#include "core/archives/http.hpp"
#include "core/python/python_env.hpp"
#include "crypto/sha256.hpp"
#include "format/pip_report.hpp"
#include "python/python_tool.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

namespace {

constexpr const char* k_pypi_simple = "https://pypi.org/simple";
constexpr std::uint64_t k_max_report = 64u << 20;
constexpr std::uint64_t k_max_wheel = 16ull << 30;

// The platform tags pip is given for a target (pip expands manylinux2014 to 2010 and 1 itself, but
// not the PEP 600 names): glibc 2.17 to 2.35, Ubuntu 22.04's, the oldest of NVIDIA's current CUDA
// images; Windows' own tag.
std::vector<std::string> pip_platform_tags(model::Platform p) {
  if (model::is_windows(p)) return {p == model::Platform::windows_arm64 ? "win_arm64" : "win_amd64"};
  const std::string arch = (p == model::Platform::linux_x86_64) ? "x86_64" : "aarch64";
  std::vector<std::string> out;
  for (int minor = 35; minor >= 17; --minor) out.push_back("manylinux_2_" + std::to_string(minor) + "_" + arch);
  out.push_back("manylinux2014_" + arch);
  return out;
}

// pip evaluates environment markers (`; sys_platform == "linux"`) against the interpreter it runs in,
// whatever --platform and --python-version say, so a Windows target resolved on Linux would get the
// Linux-only dependencies. This runs pip with packaging's marker environment set to the target's:
// the same resolver, asked about the machine the lock is for.
constexpr const char* k_pip_for_target = R"PY(
import json, sys
from pip._vendor.packaging import markers
target = json.loads(sys.argv[1])
original = markers.default_environment
def target_environment():
    env = original()
    env.update(target)
    return env
markers.default_environment = target_environment
from pip._internal.cli.main import main
sys.exit(main(sys.argv[2:]))
)PY";

// The marker values of a target platform and Python version (PEP 508's names).
std::string marker_environment(model::Platform p, const std::string& py, const std::string& full) {
  const bool win = model::is_windows(p);
  std::string machine = p == model::Platform::linux_x86_64     ? "x86_64"
                        : p == model::Platform::windows_x86_64 ? "AMD64"
                        : p == model::Platform::windows_arm64  ? "ARM64"
                                                               : "aarch64";
  return std::string("{\"sys_platform\": \"") + (win ? "win32" : "linux") + "\", \"platform_system\": \"" + (win ? "Windows" : "Linux") +
         "\", \"os_name\": \"" + (win ? "nt" : "posix") + "\", \"platform_machine\": \"" + machine + "\", \"python_version\": \"" + py +
         "\", \"python_full_version\": \"" + full +
         "\", \"implementation_name\": \"cpython\", \"platform_python_implementation\": \"CPython\"}";
}

// Fills the wheel's size (the server's Content-Length) and, when missing or `hash_always`, its
// SHA-256 by reading the bytes; a file:// wheel is always hashed where it is (and must agree with a
// hash pip gave). Errors: io, not_found, mismatch (a local file of another hash), invalid (larger
// than k_max_wheel).
util::Status measure_wheel(model::PyWheel& w, const PythonToolOptions& o, bool hash_always) {
  if (auto local = model::file_url_path(w.url); !local.empty()) {
    auto hashed = crypto::hash_file(local);
    if (!hashed) return std::move(hashed).error().with_context("reading the wheel " + w.name);
    w.size = hashed->size;
    const std::string hex = crypto::to_hex(hashed->digest);
    if (!w.sha256.empty() && w.sha256 != hex)
      return Error(ErrorCode::mismatch, "the wheel " + local + " has SHA-256 " + hex + ", not the index's " + w.sha256);
    w.sha256 = hex;
    return {};
  }
  const bool read_body = w.sha256.empty() || hash_always;
  crypto::Sha256 h;
  std::uint64_t got = 0;
  std::optional<std::uint64_t> length;
  net::Sink sink;
  sink.start = [&](const net::Response& head) {
    length = head.length;
    return read_body;  // without the hash to take, the head is all that is needed
  };
  sink.data = [&](const char* data, std::size_t size) {
    got += size;
    if (got > k_max_wheel) return false;
    h.update(data, size);
    return true;
  };
  net::Request req = http_request(w.url, o.env);
  auto a = net::attempt(req, sink);
  if (a.error && !(a.aborted_by_sink && !read_body))
    return Error(a.error->code == ErrorCode::not_found ? ErrorCode::not_found : ErrorCode::io,
                 "the wheel " + w.name + " could not be read from " + w.url + ": " + a.error->message)
        .with_hint("check the index is reachable (a proxy: https_proxy), then lock again");
  if (got > k_max_wheel)
    return Error(ErrorCode::invalid, w.url + " is larger than " + std::to_string(k_max_wheel >> 30) + " GiB: not a wheel");
  if (read_body) {
    if (length && *length != got)
      return Error(ErrorCode::io, w.url + " announced " + std::to_string(*length) + " bytes and sent " + std::to_string(got));
    const std::string hex = crypto::to_hex(h.finish());
    if (!w.sha256.empty() && w.sha256 != hex)
      return Error(ErrorCode::mismatch, w.url + " sends bytes of SHA-256 " + hex + ", not the index's " + w.sha256)
          .with_hint("the index and the file it links disagree: lock from another index or mirror");
    w.size = got;
    w.sha256 = hex;
  } else if (length) {
    w.size = *length;
  } else {
    return measure_wheel(w, o, true);  // the server gives no length: the bytes do
  }
  return {};
}

// The index a wheel came from: the one on the wheel's host (PyPI's files are on files.pythonhosted.org).
std::string index_of(const std::string& url, const PythonIndexes& ix) {
  if (!ix.find_links.empty()) return {};
  std::vector<std::string> all{ix.index_url};
  all.insert(all.end(), ix.extra_index_urls.begin(), ix.extra_index_urls.end());
  auto host = [](const std::string& u) {
    auto s = u.find("://");
    if (s == std::string::npos) return std::string();
    return u.substr(0, u.find('/', s + 3));
  };
  for (const auto& i : all)
    if (!i.empty() && host(i) == host(url)) return i;
  if (host(url) == "https://files.pythonhosted.org")
    for (const auto& i : all)
      if (host(i) == "https://pypi.org") return i;
  return all.size() == 1 ? all.front() : std::string();
}

}  // namespace

std::vector<model::Platform> python_platforms(const model::Manifest& m) {
  std::vector<model::Platform> raw;
  if (m.cudnn)
    for (const auto& a : m.cudnn->archives) raw.push_back(a.platform.value);
  if (m.cuda)
    for (const auto& a : m.cuda->archives) raw.push_back(a.platform.value);
  if (m.windows) raw.push_back(m.windows_platform());
  if (m.linux) raw.push_back(model::host_linux_platform());
  if (m.docker) raw.push_back(model::Platform::linux_x86_64);
  if (raw.empty()) raw.push_back(util::host_is_windows() ? model::Platform::windows_x86_64 : model::host_linux_platform());
  std::sort(raw.begin(), raw.end());
  std::vector<model::Platform> out;
  std::set<std::string> markers;
  for (auto p : raw)
    if (markers.insert(model::python_marker(p)).second) out.push_back(p);
  return out;
}

util::Result<PythonIndexes> python_indexes(const model::Manifest& m, const model::Lock& lock) {
  PythonIndexes ix;
  if (m.python_index) {
    const std::string& v = m.python_index->value;
    if (v.find("://") != std::string::npos) {
      ix.index_url = v;
      return ix;
    }
    fs::path dir = v;
    if (dir.is_relative() && !m.path.empty()) dir = fs::path(m.path).parent_path() / dir;
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      return Error(ErrorCode::not_found, "[python] index names " + dir.string() + ", which is not a directory")
          .at(m.locate(m.python_index->pos))
          .with_hint("give a directory of wheels, a PEP 503 tree, or an index URL");
    dir = fs::absolute(dir, ec).lexically_normal();
    bool wheels_here = false;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".whl") wheels_here = true;
    if (wheels_here)
      ix.find_links = dir.string();
    else
      ix.index_url = (dir.generic_string().rfind('/', 0) == 0 ? "file://" : "file:///") + dir.generic_string();
    return ix;
  }
  bool pypi = false;
  for (const auto& f : lock.frameworks) {
    if (f.index_url.empty() || f.index_url == k_pypi_simple)
      pypi = true;
    else if (ix.index_url.empty())
      ix.index_url = f.index_url;
    else if (f.index_url != ix.index_url &&
             std::find(ix.extra_index_urls.begin(), ix.extra_index_urls.end(), f.index_url) == ix.extra_index_urls.end())
      ix.extra_index_urls.push_back(f.index_url);
  }
  if (ix.index_url.empty())
    ix.index_url = k_pypi_simple;
  else if (pypi)
    ix.extra_index_urls.push_back(k_pypi_simple);
  return ix;
}

util::Result<model::PyLock> resolve_pylock(const model::Manifest& m, const model::Lock& lock, const PythonToolOptions& o) {
  if (!m.python)
    return Error(ErrorCode::usage, "the manifest has [frameworks] but no [python] version: the wheels depend on it")
        .at(m.locate(m.frameworks_pos))
        .with_hint("add [python] version = \"3.12\"");
  if (lock.frameworks.empty() && m.python_packages.empty())
    return Error(ErrorCode::usage, "the manifest pins no framework and no [python] packages: there is no Python environment to lock");
  SP_TRY_ASSIGN(PythonIndexes ix, python_indexes(m, lock));
  SP_TRY_ASSIGN(std::string python, detail::python_interpreter(o));
  SP_TRY(detail::require_pip(python, o));
  SP_TRY_ASSIGN(util::TempDir tmp, util::TempDir::create(o.work_dir.empty() ? fs::temp_directory_path() : o.work_dir, "stackpin-pip-"));
  const std::string py = m.python->value.prefix(2);

  const auto platforms = python_platforms(m);
  struct Merged {
    model::PyPackage pkg;
    std::vector<model::Platform> on;
  };
  std::map<std::pair<std::string, std::string>, Merged> merged;
  for (model::Platform p : platforms) {
    const fs::path report = tmp.path() / (std::string("report-") + model::to_string(p) + ".json");
    std::vector<std::string> argv{
        python, "-c", k_pip_for_target, marker_environment(p, py, m.python->value.size() >= 3 ? m.python->value.text() : py + ".0"),
        "install", "--dry-run", "--ignore-installed", "--quiet", "--report", report.string(), "--disable-pip-version-check", "--no-input",
        "--only-binary=:all:", "--python-version", py, "--implementation", "cp", "--target", (tmp.path() / "target").string(),
        // no pip.conf or PIP_* variable of the user adds an index or changes the resolution
        "--isolated"};
    for (const auto& tag : pip_platform_tags(p)) argv.insert(argv.end(), {"--platform", tag});
    if (!ix.find_links.empty()) {
      argv.insert(argv.end(), {"--no-index", "--find-links", ix.find_links});
    } else {
      argv.insert(argv.end(), {"--index-url", ix.index_url});
      for (const auto& e : ix.extra_index_urls) argv.insert(argv.end(), {"--extra-index-url", e});
    }
    for (const auto& f : lock.frameworks) argv.push_back(f.requirement);
    for (const auto& p : m.python_packages) argv.push_back(p.value);
    auto run = detail::run_python_tool(argv, o);
    const std::string where = std::string("for ") + model::to_string(p) + " (Python " + py + ")";
    if (!run.started) return Error(ErrorCode::not_found, "pip could not be started: " + run.error);
    if (run.timed_out)
      return Error(ErrorCode::io, "pip did not finish resolving " + where + " in " + std::to_string(o.timeout_ms / 1000) + " s");
    if (run.exit_code != 0)
      return Error(ErrorCode::invalid, "pip could not resolve the frameworks " + where + ":\n" + detail::tail_lines(run.output, 25))
          .with_context("locking the Python environment")
          .with_hint(ix.find_links.empty() ? "check that " + ix.index_url + " serves wheels of these releases for " + model::to_string(p) +
                                                 " and Python " + py
                                           : "check that " + ix.find_links + " holds wheels of these releases for " + model::to_string(p));
    auto text = util::read_file(report);
    if (!text) return std::move(text).error().with_context("reading pip's report " + where);
    if (text->size() > k_max_report) return Error(ErrorCode::invalid, "pip's report " + where + " is larger than 64 MiB");
    SP_TRY_ASSIGN(auto chosen, format::parse_pip_report(*text, where));
    for (auto& c : chosen) {
      auto& slot = merged[{c.name, c.version}];
      slot.pkg.name = c.name;
      slot.pkg.version = c.version;
      slot.on.push_back(p);
      // the URL's file name, percent-encoding undone (download.pytorch.org writes '+' as %2B)
      const std::string decoded = model::url_file_name(c.url);
      if (!model::parse_wheel_name(decoded) ||
          !(c.url.rfind("https://", 0) == 0 || c.url.rfind("http://", 0) == 0 || c.url.rfind("file:///", 0) == 0))
        return Error(ErrorCode::invalid,
                     "pip chose " + c.name + " " + c.version + " from " + util::printable(c.url, 160) + ", which is not a wheel's URL")
            .with_hint("stackpin pins wheels by http(s) or file URL only");
      bool known = false;
      for (const auto& w : slot.pkg.wheels) known = known || w.url == c.url;
      if (known) continue;
      model::PyWheel w;
      w.name = decoded;
      w.url = c.url;
      w.sha256 = c.sha256;
      slot.pkg.index = index_of(c.url, ix);
      slot.pkg.wheels.push_back(std::move(w));
    }
  }
  model::PyLock out;
  out.created_by = "stackpin";
  out.requires_python = "==" + py + ".*";
  for (auto p : platforms) out.environments.push_back(model::python_marker(p));
  for (auto& [key, slot] : merged) {
    if (slot.on.size() != platforms.size()) {
      std::vector<std::string> ms;
      for (auto p : slot.on) ms.push_back("(" + model::python_marker(p) + ")");
      slot.pkg.marker = ms.size() == 1 ? model::python_marker(slot.on.front()) : util::join(ms, " or ");
    }
    for (auto& w : slot.pkg.wheels) SP_TRY(measure_wheel(w, o, false));
    std::sort(slot.pkg.wheels.begin(), slot.pkg.wheels.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    out.packages.push_back(std::move(slot.pkg));
  }
  return out;
}

}  // namespace core
