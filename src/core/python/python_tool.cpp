// The interpreter stackpin runs pip with, found once the same way for lock and apply.
#include "python/python_tool.hpp"

#include "util/strings.hpp"

namespace core::detail {

using util::Error;
using util::ErrorCode;

util::Result<std::string> python_interpreter(const PythonToolOptions& o) {
  util::SystemEnv system;
  const util::Env& env = o.env ? *o.env : static_cast<const util::Env&>(system);
  std::string want = o.python;
  if (want.empty()) want = env.get("STACKPIN_PYTHON").value_or("");
  if (want.empty()) want = util::host_is_windows() ? "python.exe" : "python3";
  auto found = probe::find_program(want, env);
  if (!found)
    return Error(ErrorCode::not_found, "no Python interpreter: " + want + " is not on PATH")
        .with_hint(util::host_is_windows() ? "install Python 3 from python.org, or set STACKPIN_PYTHON to python.exe"
                                           : "apt-get install python3 python3-pip python3-venv, or set STACKPIN_PYTHON");
  return *found;
}

util::Status require_pip(const std::string& python, const PythonToolOptions& o) {
  auto run = run_python_tool({python, "-m", "pip", "--version", "--disable-pip-version-check"}, o);
  if (run.started && !run.timed_out && run.exit_code == 0) return {};
  return Error(ErrorCode::not_found, python + " has no pip: " + tail_lines(run.output.empty() ? run.error : run.output, 3))
      .with_hint("apt-get install python3-pip (pip 22.2 or later), or set STACKPIN_PYTHON to an interpreter that has it");
}

probe::ProgramRun run_python_tool(const std::vector<std::string>& argv, const PythonToolOptions& o) {
  util::SystemEnv system;
  return probe::run_program(argv, o.env ? *o.env : static_cast<const util::Env&>(system), o.timeout_ms);
}

std::string tail_lines(const std::string& output, std::size_t n) {
  auto lines = util::split(util::trim(output), '\n');
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(n));
  for (auto& l : lines) l = "  " + util::printable(l, 300);
  return util::join(lines, "\n");
}

}  // namespace core::detail
