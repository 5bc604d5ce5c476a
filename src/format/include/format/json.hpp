#pragma once
// JSON output for --json: one document per command, the envelope of ARCHITECTURE's contract:
//   {"schema": 1, "command": ..., "ok": bool, "findings": [...], "report": {...}, "error": {...}|null}
// The JSON library stays inside this layer; callers get text.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/check_report.hpp"
#include "model/convtest.hpp"
#include "model/diff.hpp"
#include "model/doctor.hpp"
#include "model/fetch.hpp"
#include "model/finding.hpp"
#include "model/kernels.hpp"
#include "model/machine.hpp"
#include "model/upgrade.hpp"
#include "util/result.hpp"

namespace format {

// An opaque JSON value built by the to_json functions below.
class JsonDoc {
 public:
  JsonDoc();
  ~JsonDoc();
  JsonDoc(const JsonDoc& other);
  JsonDoc& operator=(const JsonDoc& other);
  std::string dump(int indent = 2) const;
  struct Impl;
  Impl& impl() { return *m_impl; }
  const Impl& impl() const { return *m_impl; }

 private:
  std::unique_ptr<Impl> m_impl;
};

JsonDoc to_json(const model::Finding& f);
JsonDoc to_json(const util::Error& e);
JsonDoc to_json(const model::CheckReport& r);
// {"manifests": [report, ...]}
JsonDoc to_json(const std::vector<model::CheckReport>& reports);
JsonDoc to_json(const model::ConvReport& r);
// {"a": {path, name}, "b": {...}, "counts": {...}, "rows": [{group, component, a, b, weight, reason}]};
// a value one side does not set is null.
JsonDoc to_json(const model::DiffReport& r);
// {"expected": {...}, "windows": {drives, path, ..., "desktop": order, "python_order": order|null}|null}
// (doctor_json.cpp); the findings go in the envelope.
JsonDoc to_json(const model::DoctorReport& r);
// What `doctor` found on a Linux/WSL2 machine (format/machine_json.cpp).
JsonDoc to_json(const model::MachineReport& r);
// {"cache_dir", "offline", "mirrors", "archives": [{platform, file, url, tried, path, sha256, size,
// status, attempts, bytes_downloaded, error|null}]} (fetch_json.cpp).
JsonDoc to_json(const model::FetchReport& r);
// {"gpus", "files_seen", "archives": [{path, sha256, size, pinned_by, libraries}], "libraries":
// [{path, archive, format, size, containers, sections, sass, ptx, targets: [{name, kind, arch,
// variant, images, stored_bytes, uncompressed_bytes, compressed, ptx_isa}], gpus: [{gpu, fit, via,
// ptx_isa, jit_cuda, jit_cuda_at_least, jit_driver, ptx_bytes}]}]} (inspect_json.cpp).
JsonDoc to_json(const model::InspectReport& r);
// {"manifest", "candidates": [{product, from, to, fits, why_not, changes, source}], "notes"}
JsonDoc to_json(const model::UpgradeReport& r);
JsonDoc empty_object();

// One file `generate` wrote: its path ("-" for stdout), size, and its text when it went to stdout
// (which then carries only the JSON document).
struct GeneratedFile {
  std::string path;
  std::uint64_t bytes = 0;
  std::optional<std::string> text;
};
// {"kind", "files": [{path, bytes, text|null}]}
JsonDoc generated_json(const std::string& kind, const std::vector<GeneratedFile>& files);
// {"file": path|"-", "packages", "files", "notes", "document": the SPDX document when it went to
// stdout}: what `sbom` wrote.
JsonDoc sbom_json(const std::string& file, std::size_t packages, std::size_t files, const std::vector<std::string>& notes,
                  const std::optional<std::string>& document);
// {"manifest": text, "output": path|null, "name", "cuda", "cudnn"}: what `capture` wrote.
JsonDoc captured_json(const std::string& manifest_text, const std::string& output, const std::string& name, const std::string& cuda,
                      const std::string& cudnn);

// Reading other programs' JSON files (a CUDA toolkit's version.json, conda-meta/*.json): the
// string at a path of object keys ({"cuda", "version"}). nullopt when a key is absent or the value
// is not a string. Errors: parse (the text is not JSON).
util::Result<std::optional<std::string>> json_string_at(std::string_view text, const std::vector<std::string>& keys);

// The components a CUDA toolkit's version.json lists: every top-level object but "cuda" that holds
// a string "version" ({"cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "12.4.127"}}),
// sorted by id; at most 512, each string at most 256 bytes (longer: skipped, since NVIDIA's are
// short). Errors: parse (the text is not JSON, or not an object).
struct VersionJsonComponent {
  std::string id, name, version;
};
util::Result<std::vector<VersionJsonComponent>> version_json_components(std::string_view text);

std::string envelope(const std::string& command, bool ok, const std::vector<model::Finding>& findings, const JsonDoc& report,
                     const util::Error* error);

}  // namespace format
