#pragma once
// The rules of core::doctor_linux, grouped by what they judge (doctor_linux*.cpp).
#include <optional>
#include <string>
#include <vector>

#include "knowledge/knowledge_base.hpp"
#include "model/finding.hpp"
#include "model/machine.hpp"
#include "model/manifest.hpp"

namespace core::doctor_rules {

struct Ctx {
  const model::MachineReport& r;
  const model::Manifest* m;  // may be null
  const knowledge::KnowledgeBase& kb;
  std::vector<model::Finding>& out;

  model::Finding& add(std::string rule, model::Severity sev, std::string subject);
  // the manifest's pins, when it has them
  std::optional<model::Version> cuda() const;
  std::optional<model::Version> cudnn() const;
  void point_at(model::Finding& f, model::Pos pos) const;
};

// The copy that holds a file (by directory and soname major), nullptr when none does.
const model::CudnnCopy* copy_of(const model::MachineReport& r, const std::string& real_path);
// The best version a copy reveals ("9.1.0"): the library's, else the header's, else "".
std::string copy_version(const model::CudnnCopy& c);
std::string join_lines(const std::vector<std::string>& items, const std::string& sep = "; ");

// doctor_linux.cpp
void os(Ctx& c);
void wsl(Ctx& c);
void driver(Ctx& c);
void toolkits(Ctx& c);
void toolkit_components(Ctx& c);
void nvcc(Ctx& c);
// doctor_linux_python.cpp
void conda(Ctx& c);
void frameworks(Ctx& c);
void python_environment(Ctx& c);
// doctor_linux_gpu.cpp
void gpus(Ctx& c);
// doctor_linux_cudnn.cpp
void cudnn_copies(Ctx& c);
void loader(Ctx& c);
void ld_library_path(Ctx& c);

}  // namespace core::doctor_rules
