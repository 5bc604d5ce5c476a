// A virtual environment provisioned from the Python lock. pip installs, stackpin decides what: each
// package's wheel for this machine, by URL, with --require-hashes (pip refuses a byte that is not the
// lock's), --no-deps (nothing the lock does not list gets in) and --no-index (no index is asked
// anything). A venv records absolute paths (its scripts' #! lines, bin/activate), so it cannot be
// built elsewhere and moved into place; instead the previous environment is moved aside, the new one
// built where it will live, and the previous one deleted only after pip succeeded, or moved back.
#include <algorithm>
#include <map>
#include <set>

#include "core/python/python_env.hpp"
#include "format/pip_report.hpp"
#include "python/python_tool.hpp"
#include "util/file_lock.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace core {
namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

namespace {

constexpr const char* k_record = ".stackpin-pylock";

fs::path venv_python(const fs::path& venv) { return util::host_is_windows() ? venv / "Scripts" / "python.exe" : venv / "bin" / "python"; }

model::Platform venv_platform() {
  if (util::host_is_windows()) return util::host_arch() == "aarch64" ? model::Platform::windows_arm64 : model::Platform::windows_x86_64;
  return model::host_linux_platform();
}

// The packages pip lists in the environment: normalized name -> version. nullopt when pip cannot say.
std::optional<std::map<std::string, std::string>> installed(const fs::path& venv, const PythonToolOptions& o) {
  auto run = detail::run_python_tool(
      {venv_python(venv).string(), "-m", "pip", "list", "--isolated", "--format=json", "--disable-pip-version-check"}, o);
  if (!run.started || run.exit_code != 0) return std::nullopt;
  return format::parse_pip_list(run.output);
}

bool matches(const std::map<std::string, std::string>& have, const std::vector<PinnedWheel>& want) {
  std::set<std::string> wanted_names;
  for (const auto& w : want) {
    wanted_names.insert(w.name);
    auto it = have.find(w.name);
    if (it == have.end() || it->second != w.version) return false;
  }
  for (const auto& [name, version] : have)
    if (!wanted_names.count(name) && name != "pip" && name != "setuptools" && name != "wheel") return false;
  return true;
}

util::Result<std::string> interpreter_version(const std::string& python, const PythonToolOptions& o) {
  auto run = detail::run_python_tool({python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"}, o);
  if (!run.started || run.exit_code != 0)
    return Error(ErrorCode::not_found, python + " does not run: " + detail::tail_lines(run.output.empty() ? run.error : run.output, 3));
  return std::string(util::trim(run.output));
}

util::Status rename_dir(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) return Error(ErrorCode::io, "cannot move " + from.string() + " to " + to.string() + ": " + ec.message());
  return {};
}

}  // namespace

util::Result<VenvResult> provision_venv(const model::PyLock& lock, const std::string& lock_sha256, const fs::path& venv_in,
                                        const PythonToolOptions& o) {
  std::error_code ec;
  fs::path venv = fs::absolute(venv_in, ec).lexically_normal();
  if (venv.filename().empty()) venv = venv.parent_path();  // "env/" is env
  const fs::path previous = venv.string() + ".stackpin-previous";
  VenvResult res;
  res.venv = venv;
  SP_TRY_ASSIGN(auto want, pinned_wheels(lock, venv_platform()));
  SP_TRY_ASSIGN(std::string python, detail::python_interpreter(o));
  SP_TRY_ASSIGN(std::string version, interpreter_version(python, o));
  res.python_version = version;
  if (lock.requires_python.rfind("==", 0) == 0) {
    std::string want_py = lock.requires_python.substr(2);
    if (want_py.size() > 2 && want_py.substr(want_py.size() - 2) == ".*") want_py.resize(want_py.size() - 2);
    if (version != want_py && version.rfind(want_py + ".", 0) != 0)
      return Error(ErrorCode::usage, python + " is Python " + version + ", and " + lock.path + " is for Python " + want_py +
                                         " (requires-python " + lock.requires_python + ")")
          .with_hint("set STACKPIN_PYTHON to a Python " + want_py + " interpreter, or change [python] version and lock again");
  }

  // one run at a time on an environment
  if (!venv.parent_path().empty()) fs::create_directories(venv.parent_path(), ec);
  SP_TRY_ASSIGN(auto held, util::FileLock::acquire(venv.string() + ".stackpin-lock"));
  (void)held;

  // A run killed half-way: with the new environment's record (written last) in place it finished,
  // and only the previous one's deletion was cut short; otherwise the previous one comes back.
  if (fs::exists(previous, ec)) {
    if (fs::exists(venv / k_record, ec)) {
      fs::remove_all(previous, ec);
      if (ec) return Error(ErrorCode::io, "cannot remove " + previous.string() + ", left by an earlier run: " + ec.message());
    } else {
      fs::remove_all(venv, ec);
      if (ec) return Error(ErrorCode::io, "cannot remove the half-built environment " + venv.string() + ": " + ec.message());
      SP_TRY(rename_dir(previous, venv));
    }
  }

  const bool existed = fs::exists(venv, ec);
  res.created = !existed;
  if (existed) {
    // only a virtual environment (or an empty directory) is ever moved aside and replaced
    const bool empty_dir = fs::is_directory(venv, ec) && fs::directory_iterator(venv, ec) == fs::directory_iterator();
    if (!empty_dir && !fs::is_regular_file(venv / "pyvenv.cfg", ec))
      return Error(ErrorCode::usage, venv.string() + " exists and is not a virtual environment (no pyvenv.cfg): stackpin replaces only one")
          .with_hint("give --venv (or [python] venv) a new directory or an existing venv");
    auto recorded = util::read_file(venv / k_record);
    if (recorded && util::trim(*recorded) == lock_sha256)
      if (auto have = installed(venv, o); have && matches(*have, want)) {
        res.unchanged = true;
        return res;
      }
    SP_TRY(rename_dir(venv, previous));
  }
  // back to how it was: the half-built environment goes, the previous one comes back
  std::string restored;
  auto restore = [&]() {
    std::error_code e2;
    fs::remove_all(venv, e2);
    if (!existed) return;
    fs::rename(previous, venv, e2);
    restored = e2 ? " (the previous environment could not be moved back from " + previous.string() + ": " + e2.message() +
                        "; the next run moves it back)"
                  : " (the previous environment is back)";
  };

  auto made = detail::run_python_tool({python, "-m", "venv", venv.string()}, o);
  if (!made.started || made.timed_out || made.exit_code != 0) {
    restore();
    return Error(ErrorCode::not_found, "python -m venv " + venv.string() + " failed" + restored + ":\n" +
                                           detail::tail_lines(made.output.empty() ? made.error : made.output, 8))
        .with_hint("apt-get install python3-venv");
  }
  std::string requirements;
  for (const auto& w : want) requirements += w.requirement + "\n";
  auto tmp = util::TempDir::create(o.work_dir.empty() ? fs::temp_directory_path() : o.work_dir, "stackpin-venv-");
  if (!tmp) {
    restore();
    return std::move(tmp).error();
  }
  const fs::path req = tmp->path() / "requirements.txt";
  if (auto st = util::write_file_atomic(req, requirements); !st) {
    restore();
    return st.error();
  }
  // --isolated: no pip.conf or PIP_* variable of the user adds an index or changes what is installed
  auto pip = detail::run_python_tool(
      {venv_python(venv).string(), "-m", "pip", "install", "--isolated", "--require-hashes", "--no-deps", "--no-index",
       "--only-binary=:all:", "--disable-pip-version-check", "--no-input", "--quiet", "-r", req.string()},
      o);
  if (!pip.started || pip.timed_out || pip.exit_code != 0) {
    restore();
    const bool hash = pip.output.find("HASHES") != std::string::npos || pip.output.find("hash") != std::string::npos;
    return Error(hash ? ErrorCode::mismatch : ErrorCode::io, "pip could not install " + lock.path + " into " + venv.string() + restored +
                                                                 ":\n" +
                                                                 detail::tail_lines(pip.output.empty() ? pip.error : pip.output, 20))
        .with_hint(hash ? "a wheel is not the one the lock pins: `stackpin lock MANIFEST --check` names it"
                        : "check that the wheels' URLs are reachable (a proxy: https_proxy)");
  }
  if (auto st = util::write_file_atomic(venv / k_record, lock_sha256 + "\n"); !st) {
    restore();
    return st.error();
  }
  if (existed) {
    // out of the way first, so that a run killed while it is deleted finds no ".stackpin-previous"
    const fs::path discard = venv.string() + ".stackpin-discard";
    fs::remove_all(discard, ec);
    fs::rename(previous, discard, ec);
    fs::remove_all(ec ? previous : discard, ec);
  }
  res.changed = true;
  for (const auto& w : want) res.installed.push_back(w.name + " " + w.version);
  return res;
}

}  // namespace core
