#pragma once
// Running the Python interpreter and pip for the python area.
#include <string>
#include <vector>

#include "core/python/python_env.hpp"
#include "probe/program.hpp"

namespace core::detail {

// The interpreter: PythonToolOptions::python, else STACKPIN_PYTHON, else python3 on PATH.
// Errors: not_found (with the package to install).
util::Result<std::string> python_interpreter(const PythonToolOptions& o);

// Errors: not_found when `python -m pip` does not run.
util::Status require_pip(const std::string& python, const PythonToolOptions& o);

probe::ProgramRun run_python_tool(const std::vector<std::string>& argv, const PythonToolOptions& o);

// The last `n` lines of a program's output, for an error message.
std::string tail_lines(const std::string& output, std::size_t n);

}  // namespace core::detail
