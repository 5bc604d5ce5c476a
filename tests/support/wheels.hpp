#pragma once
// Python wheels made at test time (PEP 427 zips with METADATA, WHEEL and RECORD) and a PEP 503
// index serving them from the test HTTP server, so that pip resolves and installs real wheels
// without reaching any real index.
#include <filesystem>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "http_server.hpp"

namespace fixtures {

struct WheelSpec {
  std::string name;                        // distribution name as published ("nvidia-cudnn-cu13")
  std::string version;                     // "9.13.0.50", "2.9.0+cu130"
  std::string tag = "py3-none-any";        // python-abi-platform
  std::vector<std::string> requires_dist;  // METADATA Requires-Dist lines
  std::vector<Entry> files;                // the package's own files
};

// The wheel's file name: name with '-' as '_', then version and tag.
std::string wheel_file_name(const WheelSpec& spec);

// Writes the wheel into `dir`. Returns its path, SHA-256 and size.
Info make_wheel(const fs::path& dir, const WheelSpec& spec);

}  // namespace fixtures

namespace testing_support {

// Serves `wheels` as a PEP 503 index: /simple/ (the project list), /simple/<project>/ (links to
// /files/<wheel>#sha256=<hex>, or without the fragment when `hashes` is false) and the files.
// Serving again replaces the pages: a wheel left out is gone from its project's page.
void serve_wheel_index(HttpServer& server, const std::vector<std::filesystem::path>& wheels, bool hashes = true);

// The interpreter's "X.Y" (python3 on PATH, or STACKPIN_PYTHON); "" when it does not run.
std::string python_minor_version();

// Why a test of pip and venvs cannot run here ("" when it can): python3 with pip and venv.
std::string python_tools_missing();

}  // namespace testing_support
