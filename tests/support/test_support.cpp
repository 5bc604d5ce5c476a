// Test helpers: source and binary paths, scratch directories, running stackpin and capturing its
// output. Starting processes, mounts and hashing are per platform (platform_posix.cpp,
// platform_windows.cpp).
#include "test_support.hpp"

#include "util/file_lock.hpp"

#include <gtest/gtest.h>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace testing_support {
namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path cached_archive(const fs::path& cache, const std::string& sha256, const std::string& file) {
  fs::path plain = cache / "sha256" / sha256 / file;
  std::error_code ec;
  auto boot = util::boot_identity();
  if (fs::exists(plain, ec) || !boot) return plain;
  return cache / "sha256" / sha256 / ".unsynced" / *boot / file;
}

bool have_tool(const std::string& name) { return !tool_path(name).empty(); }

RunResult run_process(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& cwd) {
  return Process(argv, env, cwd).wait();
}

std::string show(const RunResult& r) { return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "--- stderr\n" + r.err; }

RunResult stackpin(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<std::string> argv{binary().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, env);
}

ScratchDir::ScratchDir() {
  static std::mt19937_64 rng{std::random_device{}()};
  m_path = fs::temp_directory_path() / ("stackpin-test-" + std::to_string(rng()));
  fs::create_directories(m_path);
}
ScratchDir::~ScratchDir() {
  if (::testing::Test::HasFailure()) {
    // Kept for the post-mortem: what the failing test left is exactly what it saw.
    std::cerr << "[   kept   ] " << m_path.string() << " (the test failed; remove it when done)\n";
    return;
  }
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

unsigned test_seed() {
  unsigned seed = 0;
  const char* v = std::getenv("STACKPIN_TEST_SEED");
  if (v && *v)
    seed = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
  else
    seed = std::random_device{}();
  std::cerr << "[   seed   ] " << seed << " (STACKPIN_TEST_SEED=" << seed << " repeats this run)\n";
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  return seed;
}
fs::path ScratchDir::write(const std::string& name, const std::string& content) const {
  fs::path p = m_path / name;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

std::string schema_errors(const std::string& schema, const fs::path& file, std::string& skip) {
  std::string node = tool_path("node");
  if (node.empty()) {
    skip = "no node on PATH to run the JSON schema validator (scripts/install-deps.sh --tools installs nodejs, node-ajv, node-js-yaml)";
    return {};
  }
  auto r = run_process({node, (source_dir() / "tests/support/schema_check.js").string(),
                        (source_dir() / "tests/data/schemas" / schema).string(), file.string()},
                       {"NODE_PATH=/usr/share/nodejs"});
  if (r.exit_code == 2) {
    skip = "the JSON schema validator cannot run: " + r.err;
    return {};
  }
  return r.exit_code == 0 ? std::string() : r.err + r.out;
}

}  // namespace testing_support
