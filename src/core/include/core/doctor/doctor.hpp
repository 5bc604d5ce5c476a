#pragma once
// Area core/doctor: judging a machine. doctor.cpp joins the parts; linux/ judges what
// probe::inspect_machine saw on a Linux or WSL2 machine, windows/ a Windows tree through the DLL
// search order (core/windows), each rule a function that adds findings.
//
// `stackpin doctor`: what is wrong with a machine's GPU stack, each finding with what was seen
// and the fix. Windows mode judges a Windows tree (a mounted disk, a copy, a fixture) from any OS
// through the DLL search order; the Linux checks of the running machine join the same report.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "knowledge/knowledge_base.hpp"
#include "model/doctor.hpp"
#include "model/machine.hpp"
#include "model/manifest.hpp"
#include "util/env.hpp"
#include "util/result.hpp"

namespace core {

struct WindowsDoctorOptions {
  std::filesystem::path root;                                  // the local directory C:\ maps to
  std::vector<std::pair<char, std::filesystem::path>> drives;  // other drive letters (--drive D=DIR)
  std::string path;                                            // PATH (the machine value when user_path is set)
  std::optional<std::string> user_path;                        // the User-scope PATH value
  std::string app_dir;                                         // the application's directory (Windows path)
  std::string cwd;                                             // the current directory
  std::string python;                                          // python.exe (3.8+) of the environment
  std::vector<std::string> dll_dirs;                           // os.add_dll_directory() directories
  std::map<std::string, std::string> env;                      // values for %NAME% beyond the defaults
  bool live = false;                                           // this running Windows machine: also ask its loader
  std::vector<std::string> path_first;  // folders a program finds first on PATH after an activation (apply's tree), real loader included
  std::optional<std::string> driver_version;  // live: what nvml.dll reports ("" when no driver answers)
  std::vector<model::GpuDevice> gpus;         // live: the GPUs nvml.dll lists; else the manifest's [gpus] are judged
};

// The running Windows machine as WindowsDoctorOptions: C:\ and every other drive that exists as
// themselves, PATH from the registry's Machine and User values (`machine_path`, `user_path`),
// the current directory, and the process's values for the variables PATH entries name.
WindowsDoctorOptions live_windows_doctor_options(const util::Env& env, std::string machine_path, std::optional<std::string> user_path);

struct DoctorOptions {
  const model::Manifest* manifest = nullptr;    // expectations; nullptr: report what is found
  std::optional<WindowsDoctorOptions> windows;  // judge this Windows tree instead of the machine
  const util::Env* env = nullptr;               // the running machine's environment (Linux checks)
  std::vector<std::string> site_packages;       // Python environments to read frameworks from (default: python3's)
};

// Runs the checks the options ask for and returns every finding with the views it took.
// Errors: usage (a --windows-root or --drive directory that does not exist, a drive letter that
// is not one, an --app-dir / --cwd / --python / --dll-dir that is not an absolute Windows path).
util::Result<model::DoctorReport> doctor(const DoctorOptions& options, const knowledge::KnowledgeBase& kb);

// The parts doctor() is made of.
// What the manifest pins, for the judgements, into report.expected; findings for what it cannot
// tell (a [targets.windows] without a DLL directory doctor can derive) into report.findings.
void doctor_expectations(const model::Manifest* manifest, const knowledge::KnowledgeBase& kb, model::DoctorReport& report);
// The Windows view and its findings (doctor_windows.cpp). Errors: as doctor().
util::Status doctor_windows(const WindowsDoctorOptions& options, const knowledge::KnowledgeBase& kb, model::DoctorReport& report,
                            const model::Manifest* manifest = nullptr);

}  // namespace core
