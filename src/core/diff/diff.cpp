// stackpin diff: two manifests (or captures) compared component by component.
//
// A difference is weighed by what it does to software that runs on the stack, not by how large
// it looks. A different major of CUDA or cuDNN changes library names and ABI, so binaries built
// for one side do not load on the other: breaking. A different minor keeps the ABI but changes
// APIs, framework wheels and numerics: likely breaking. Patch releases and build numbers keep
// both: compatible (a cuDNN build number is still reported, because two builds of one X.Y.Z are
// different archives that no library can tell apart). Where a manifest leaves a value to
// stackpin (the driver minimum, an NVIDIA archive's hash), the value stackpin would use is
// compared, so that a derived minimum and a pinned one meet on equal terms. docs/check-and-diff.md
// lists every weight with its reason; this file and diff_targets.cpp implement them.
#include "core/diff/diff.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "diff/diff_rows.hpp"
#include "model/contracts.hpp"

namespace core {
namespace diff_detail {

using model::DiffWeight;
using model::Pos;
using model::Version;

void Differ::add(const std::string& rule, const std::string& group, const std::string& component, const Side& sa, const Side& sb,
                 DiffWeight weight, std::string reason) {
  if (weight != DiffWeight::same) {
    auto& f = model::add_finding(report.findings, rule, model::severity_of(weight), component);
    f.seen = sa.value.value_or("(not set)");
    f.expected = sb.value.value_or("(not set)");
    f.fix = reason;
    if (sa.pos.line > 0)
      f.where = a.locate(sa.pos);
    else if (sb.pos.line > 0)
      f.where = b.locate(sb.pos);
  } else {
    reason.clear();
  }
  report.rows.push_back(model::DiffRow{group, component, sa.value, sb.value, weight, std::move(reason)});
}

void Differ::text(const std::string& rule, const std::string& group, const std::string& component, const Side& sa, const Side& sb,
                  DiffWeight differ, const std::string& why, DiffWeight one_side, const std::string& why_one_side) {
  if (!sa.value && !sb.value) return;
  if (sa.value && sb.value)
    add(rule, group, component, sa, sb, *sa.value == *sb.value ? DiffWeight::same : differ, why);
  else
    add(rule, group, component, sa, sb, one_side, why_one_side);
}

std::optional<std::size_t> first_difference(const Version& a, const Version& b) {
  std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i)
    if (a.part(i) != b.part(i)) return i;
  return std::nullopt;
}

namespace {
std::string num(std::uint32_t v) { return std::to_string(v); }

// What cudnnGetVersion() returns for X.Y.Z: X*1000+Y*100+Z up to 8.x, X*10000+Y*100+Z from 9.
std::string cudnn_integer(const Version& v) {
  std::uint64_t m = v.major(), n = v.minor(), p = v.patch();
  return std::to_string(m < 9 ? m * 1000 + n * 100 + p : m * 10000 + n * 100 + p);
}
}  // namespace

void weigh_cudnn(Differ& d, const std::string& rule, const std::string& group, const std::string& component, const Version& va,
                 const Side& sa, const Version& vb, const Side& sb) {
  auto i = first_difference(va, vb);
  if (!i) return d.add(rule, group, component, sa, sb, DiffWeight::same, "");
  switch (*i) {
    case 0:
      return d.add(rule, group, component, sa, sb, DiffWeight::breaking,
                   "cuDNN " + num(va.major()) + " and " + num(vb.major()) + " are different majors: the libraries have other names (" +
                       model::cudnn_library_name(va.major(), false) + " vs " + model::cudnn_library_name(vb.major(), false) + ", " +
                       model::cudnn_library_name(va.major(), true) + " vs " + model::cudnn_library_name(vb.major(), true) +
                       ") and another API, so software built for one does not load the other");
    case 1:
      return d.add(rule, group, component, sa, sb, DiffWeight::likely_breaking,
                   "another cuDNN minor (" + va.prefix(2) + " vs " + vb.prefix(2) +
                       "): the API is kept within a major, but software built against the newer minor may call what "
                       "the older lacks, and algorithm choices and numerical results change");
    case 2:
      return d.add(rule, group, component, sa, sb, DiffWeight::compatible,
                   "another patch release of cuDNN " + va.prefix(2) + ": same API and ABI, fixes only");
    default:
      return d.add(rule, group, component, sa, sb, DiffWeight::compatible,
                   "the same cuDNN " + va.prefix(3) + " in two builds (" + num(va.part(3)) + " vs " + num(vb.part(3)) +
                       "): different archives with different hashes, yet both libraries report " + cudnn_integer(va) +
                       " (cudnnGetVersion), so nothing on a machine tells them apart: only a manifest, a receipt "
                       "or package metadata records which build is installed");
  }
}

namespace {

using model::Platform;

void diff_info(Differ& d) {
  d.text("diff.manifest", "manifest", "name", Side{d.a.name.value, d.a.name.pos}, Side{d.b.name.value, d.b.name.pos},
         DiffWeight::compatible, "a label: it names files and images, nothing installed depends on it", DiffWeight::compatible, "");
  d.text("diff.manifest", "manifest", "description", side_of(d.a.description), side_of(d.b.description), DiffWeight::compatible,
         "prose for people: nothing installed depends on it", DiffWeight::compatible, "prose for people: nothing installed depends on it");
}

void diff_cuda(Differ& d) {
  Side sa = d.a.cuda ? Side{d.a.cuda->version.value.text(), d.a.cuda->version.pos} : Side{};
  Side sb = d.b.cuda ? Side{d.b.cuda->version.value.text(), d.b.cuda->version.pos} : Side{};
  const std::string rule = "diff.cuda", group = "CUDA", comp = "cuda.version";
  if (!d.a.cuda && !d.b.cuda) return;
  if (!d.a.cuda || !d.b.cuda)
    return d.add(rule, group, comp, sa, sb, DiffWeight::breaking,
                 "only one side has a CUDA toolkit: cuDNN, the frameworks and every compiled program are built for "
                 "one, so the stacks cannot be the same");
  const Version& va = d.a.cuda->version.value;
  const Version& vb = d.b.cuda->version.value;
  auto i = first_difference(va, vb);
  if (!i) return d.add(rule, group, comp, sa, sb, DiffWeight::same, "");
  if (*i == 0)
    return d.add(rule, group, comp, sa, sb, DiffWeight::breaking,
                 "CUDA " + num(va.major()) + " and " + num(vb.major()) +
                     " are different majors: programs and libraries built for one do not load the other's runtime "
                     "(libcudart.so." +
                     num(va.major()) + " vs libcudart.so." + num(vb.major()) +
                     "), cuDNN builds and framework wheels are made per major, and the driver floors differ");
  if (*i == 1)
    return d.add(rule, group, comp, sa, sb, DiffWeight::likely_breaking,
                 "another CUDA minor (" + va.prefix(2) + " vs " + vb.prefix(2) +
                     "): minor-version compatibility runs code built for the older minor, but the toolkit's "
                     "libraries, the framework wheels (cu" +
                     num(va.major()) + num(va.minor()) + " vs cu" + num(vb.major()) + num(vb.minor()) +
                     ") and the driver minimum change, and code built for the newer minor may need its APIs");
  return d.add(rule, group, comp, sa, sb, DiffWeight::compatible,
               "a patch release of CUDA " + va.prefix(2) + ": same ABI, same framework wheels");
}

void diff_cudnn(Differ& d) {
  const auto& A = d.a.cudnn;
  const auto& B = d.b.cudnn;
  if (!A && !B) return;
  Side sa = A ? Side{A->version.value.text(), A->version.pos} : Side{};
  Side sb = B ? Side{B->version.value.text(), B->version.pos} : Side{};
  if (!A || !B)
    return d.add("diff.cudnn", "cuDNN", "cudnn.version", sa, sb, DiffWeight::breaking,
                 "only one side has cuDNN: every framework and program that uses it fails to load on the other");
  weigh_cudnn(d, "diff.cudnn", "cuDNN", "cudnn.version", A->version.value, sa, B->version.value, sb);

  Side ca = A->cuda ? Side{std::to_string(A->cuda->value), A->cuda->pos} : Side{};
  Side cb = B->cuda ? Side{std::to_string(B->cuda->value), B->cuda->pos} : Side{};
  std::string why = "cuDNN built for CUDA " + ca.value.value_or("?") + " (the _cuda" + ca.value.value_or("?") +
                    " archive) links that major's libraries (libcublasLt.so." + ca.value.value_or("?") + "): with a CUDA " +
                    cb.value.value_or("?") + " runtime it does not load or fails to initialize (CUDNN_STATUS_NOT_INITIALIZED)";
  d.text("diff.cudnn", "cuDNN", "cudnn.cuda", ca, cb, DiffWeight::breaking, why, DiffWeight::likely_breaking,
         "only one side says which CUDA major its cuDNN build is for, so the builds cannot be compared");
}

// The hash and size stackpin would verify an archive against: the pinned ones, else for an
// origin = "nvidia" archive NVIDIA's published values from the knowledge base (as verify does).
struct ArchiveBytes {
  std::optional<std::string> sha256;
  std::optional<std::uint64_t> size;
  bool sha256_from_kb = false, size_from_kb = false;
};

ArchiveBytes bytes_of(const model::Manifest& m, const model::ArchivePin& p, const knowledge::KnowledgeBase& kb) {
  ArchiveBytes out;
  if (p.sha256) out.sha256 = p.sha256->value;
  if (p.size) out.size = p.size->value;
  if ((out.sha256 && out.size) || p.origin.value != model::Origin::nvidia || !m.cudnn || !m.cudnn->cuda) return out;
  const auto* fact = kb.cudnn_archive(m.cudnn->version.value, m.cudnn->cuda->value, p.platform.value);
  if (!fact) return out;
  if (!out.sha256 && !fact->sha256.empty()) {
    out.sha256 = fact->sha256;
    out.sha256_from_kb = true;
  }
  if (!out.size && fact->size) {
    out.size = *fact->size;
    out.size_from_kb = true;
  }
  return out;
}

void diff_archive(Differ& d, Platform platform) {
  const model::ArchivePin* pa = d.a.archive_for(platform);
  const model::ArchivePin* pb = d.b.archive_for(platform);
  if (!pa && !pb) return;
  const std::string rule = "diff.archive", p = model::to_string(platform);
  const std::string group = "archive " + p, base = "cudnn.archives[" + p + "]";
  if (!pa || !pb) {
    auto side = [](const model::ArchivePin* x) {
      if (!x) return Side{};
      std::string name = x->file_name();
      return Side{name.empty() ? std::string("pinned") : name, x->pos};
    };
    return d.add(rule, group, base, side(pa), side(pb), DiffWeight::compatible,
                 "only one side pins an archive for " + p +
                     ": machines of that platform can be staged from that side only; a capture pins just its own "
                     "machine's platform, so a platform the other side lacks changes nothing on the machines both cover");
  }
  ArchiveBytes ba = bytes_of(d.a, *pa, d.kb), bb = bytes_of(d.b, *pb, d.kb);
  const char* k_kb = " (NVIDIA's, from the knowledge base)";
  bool hashes_known = ba.sha256 && bb.sha256;
  bool same_bytes = hashes_known && *ba.sha256 == *bb.sha256;
  bool other_bytes = hashes_known && !same_bytes;

  Side ha = ba.sha256 ? Side{*ba.sha256 + (ba.sha256_from_kb ? k_kb : ""), pa->sha256 ? pa->sha256->pos : pa->pos} : Side{};
  Side hb = bb.sha256 ? Side{*bb.sha256 + (bb.sha256_from_kb ? k_kb : ""), pb->sha256 ? pb->sha256->pos : pb->pos} : Side{};
  if (hashes_known)
    d.add(rule, group, base + ".sha256", ha, hb, same_bytes ? DiffWeight::same : DiffWeight::likely_breaking,
          "different archive bytes (another cuDNN build, a repack, or a mistyped hash): the same files cannot be "
          "assumed, and one side's `verify` and `stage` refuse the other side's archive");
  else if (ha.value || hb.value)
    d.add(rule, group, base + ".sha256", ha, hb, DiffWeight::compatible,
          "only one side has a hash (pinned, or NVIDIA's from the knowledge base): nothing proves the bytes are "
          "the same, nothing says they differ; pin it (`check` reports archive.hash-missing)");

  Side za = ba.size ? Side{std::to_string(*ba.size) + (ba.size_from_kb ? k_kb : ""), pa->size ? pa->size->pos : pa->pos} : Side{};
  Side zb = bb.size ? Side{std::to_string(*bb.size) + (bb.size_from_kb ? k_kb : ""), pb->size ? pb->size->pos : pb->pos} : Side{};
  if (ba.size && bb.size) {
    if (*ba.size == *bb.size)
      d.add(rule, group, base + ".size", za, zb, DiffWeight::same, "");
    else if (other_bytes)
      d.add(rule, group, base + ".size", za, zb, DiffWeight::compatible, "follows from the different bytes, which the sha256 row weighs");
    else
      d.add(rule, group, base + ".size", za, zb, DiffWeight::likely_breaking,
            same_bytes ? "the hashes agree but the sizes do not: one side's size is wrong, and its `verify` refuses the "
                         "real archive"
                       : "different sizes mean different archive bytes");
  } else if (za.value || zb.value) {
    d.add(rule, group, base + ".size", za, zb, DiffWeight::compatible, "only one side has a size; the hash identifies the bytes");
  }

  // Where the bytes come from matters only when nothing proves which bytes they are.
  DiffWeight where_weight = hashes_known ? DiffWeight::compatible : DiffWeight::likely_breaking;
  std::string where_why = same_bytes    ? "another place for the same bytes (the hashes agree)"
                          : other_bytes ? "another file, whose bytes the sha256 row weighs"
                                        : "another file, and no hash on both sides proves the bytes are the same";
  d.text(rule, group, base + ".url", side_of(pa->url), side_of(pb->url), where_weight, where_why, DiffWeight::compatible,
         "only one side says where to download from; the hash, not the URL, identifies the archive");
  d.text(rule, group, base + ".file", side_of(pa->file), side_of(pb->file), DiffWeight::compatible,
         "the name to look for in --archives DIR: `verify` finds a renamed archive by its size and hash", DiffWeight::compatible,
         "the name to look for in --archives DIR: `verify` finds a renamed archive by its size and hash");
  d.text(rule, group, base + ".origin", Side{model::to_string(pa->origin.value), pa->origin.pos},
         Side{model::to_string(pb->origin.value), pb->origin.pos}, same_bytes ? DiffWeight::compatible : DiffWeight::likely_breaking,
         same_bytes ? "a local copy of NVIDIA's archive (the hashes agree)"
                    : "NVIDIA's archive on one side, a repack, mirror copy or fixture on the other: its bytes are not "
                      "known to be NVIDIA's",
         DiffWeight::compatible, "");
}

// The driver minimum stackpin applies: the pinned one, else the one `check` derives from [cuda].
struct DriverSide {
  Side side;
  std::optional<Version> version;
  std::string source;
};

DriverSide driver_of(const model::Manifest& m, model::Os os, const knowledge::KnowledgeBase& kb) {
  DriverSide out;
  model::DriverMinimum need = kb.required_driver(m, os);
  if (need.pinned) {
    const auto& pin = os == model::Os::linux ? m.driver->linux : m.driver->windows;
    out.side = Side{need.pinned->text(), pin->pos};
    out.version = need.pinned;
    return out;
  }
  if (!m.cuda) return out;
  Pos pos = m.driver ? m.driver->pos : m.cuda->version.pos;
  out.source = need.source;
  if (need.required) {
    out.version = need.required;
    out.side = Side{need.effective + " (derived from CUDA " + m.cuda->version.value.text() + ")", pos};
  } else {
    out.side = Side{"unknown (not pinned, and CUDA " + m.cuda->version.value.text() + " is not in the knowledge base)", pos};
  }
  return out;
}

void diff_driver(Differ& d, model::Os os) {
  DriverSide da = driver_of(d.a, os, d.kb), db = driver_of(d.b, os, d.kb);
  if (!da.side.value && !db.side.value) return;
  const std::string rule = "diff.driver", group = "driver", comp = std::string("driver.") + model::to_string(os);
  model::DiffWeight w = DiffWeight::likely_breaking;
  std::string why = "only one side's minimum is known, so a machine's driver cannot be judged against both";
  if (da.version && db.version) {
    if (*da.version == *db.version) {
      w = DiffWeight::same;
    } else {
      const Version& lo = *da.version < *db.version ? *da.version : *db.version;
      const Version& hi = *da.version < *db.version ? *db.version : *da.version;
      why = "a machine whose driver is at least " + lo.text() + " but below " + hi.text() +
            " runs one stack and not the other; drivers are backward compatible, so " + hi.text() + " serves both";
    }
  }
  std::size_t before = d.report.findings.size();
  d.add(rule, group, comp, da.side, db.side, w, why);
  if (d.report.findings.size() > before) {
    auto& f = d.report.findings.back();
    f.source = !da.source.empty() ? da.source : db.source;
  }
}

void diff_frameworks(Differ& d) {
  for (const auto& name : model::framework_names()) {
    auto ia = d.a.frameworks.find(name), ib = d.b.frameworks.find(name);
    bool in_a = ia != d.a.frameworks.end(), in_b = ib != d.b.frameworks.end();
    if (!in_a && !in_b) continue;
    Side sa = in_a ? Side{ia->second.value.text(), ia->second.pos} : Side{};
    Side sb = in_b ? Side{ib->second.value.text(), ib->second.pos} : Side{};
    const std::string rule = "diff.framework", group = "frameworks", comp = "frameworks." + name;
    if (!in_a || !in_b) {
      d.add(rule, group, comp, sa, sb, DiffWeight::likely_breaking,
            "only one side installs " + name + ": code that imports it fails on the other");
      continue;
    }
    const Version& va = ia->second.value;
    const Version& vb = ib->second.value;
    auto i = first_difference(va, vb);
    if (!i)
      d.add(rule, group, comp, sa, sb, DiffWeight::same, "");
    else if (*i == 0)
      d.add(rule, group, comp, sa, sb, DiffWeight::breaking,
            name + " " + num(va.major()) + " and " + num(vb.major()) +
                " are different majors: APIs are removed, and compiled extensions and saved artefacts do not carry over");
    else if (*i == 1)
      d.add(rule, group, comp, sa, sb, DiffWeight::likely_breaking,
            "another " + name + " minor (" + va.prefix(2) + " vs " + vb.prefix(2) +
                "): minors change APIs, the CUDA variants built and the cuDNN a wheel bundles, and compiled "
                "extensions must be rebuilt");
    else
      d.add(rule, group, comp, sa, sb, DiffWeight::compatible,
            "a patch release of " + name + " " + va.prefix(2) + ": fixes, same API and the same CUDA variants");
  }
}

void diff_python(Differ& d) {
  Side sa = side_of(d.a.python), sb = side_of(d.b.python);
  if (!sa.value && !sb.value) return;
  const std::string rule = "diff.python", group = "Python", comp = "python.version";
  if (!d.a.python || !d.b.python)
    return d.add(rule, group, comp, sa, sb, DiffWeight::likely_breaking,
                 "only one side pins Python: the framework wheels may not exist for the Python the other side gets");
  const Version& va = d.a.python->value;
  const Version& vb = d.b.python->value;
  auto i = first_difference(va, vb);
  if (!i) return d.add(rule, group, comp, sa, sb, DiffWeight::same, "");
  if (*i <= 1)
    return d.add(rule, group, comp, sa, sb, DiffWeight::breaking,
                 "Python " + va.prefix(2) + " and " + vb.prefix(2) + " have different ABIs: compiled wheels (cp" + num(va.major()) +
                     num(va.minor()) + " vs cp" + num(vb.major()) + num(vb.minor()) +
                     "), every framework wheel among them, install for one only");
  return d.add(rule, group, comp, sa, sb, DiffWeight::compatible, "a patch release of Python " + va.prefix(2) + ": same ABI, same wheels");
}

// [python] packages (a capture's NVIDIA wheels): a different cuDNN wheel is another cuDNN inside the
// frameworks, whatever the distance between the releases; another CUDA library wheel is another
// library under every kernel; anything else weighs by its version.
void diff_python_packages(Differ& d) {
  auto pins = [](const model::Manifest& m) {
    std::map<std::string, std::pair<std::string, model::Pos>> out;
    for (const auto& p : m.python_packages) {
      auto eq = p.value.find("==");
      out[p.value.substr(0, eq)] = {p.value.substr(eq + 2), p.pos};
    }
    return out;
  };
  const auto a = pins(d.a), b = pins(d.b);
  std::set<std::string> names;
  for (const auto& [n, v] : a) names.insert(n);
  for (const auto& [n, v] : b) names.insert(n);
  for (const auto& name : names) {
    auto ia = a.find(name), ib = b.find(name);
    Side sa = ia != a.end() ? Side{ia->second.first, ia->second.second} : Side{};
    Side sb = ib != b.end() ? Side{ib->second.first, ib->second.second} : Side{};
    const std::string rule = "diff.python-package", group = "Python packages", comp = "python.packages." + name;
    const bool cudnn = name.rfind("nvidia-cudnn", 0) == 0;
    const bool nvidia = name.rfind("nvidia-", 0) == 0 || name.rfind("cuda-", 0) == 0;
    if (ia == a.end() || ib == b.end()) {
      d.add(rule, group, comp, sa, sb, nvidia ? DiffWeight::likely_breaking : DiffWeight::compatible,
            "only one side has " + name + (nvidia ? ": the other side's frameworks load that library from elsewhere (the system's)" : ""));
      continue;
    }
    if (sa.value == sb.value) {
      d.add(rule, group, comp, sa, sb, DiffWeight::same, "");
      continue;
    }
    auto va = Version::parse(sa.value->substr(0, sa.value->find_first_not_of("0123456789.")));
    auto vb = Version::parse(sb.value->substr(0, sb.value->find_first_not_of("0123456789.")));
    const bool other_major = !va || !vb || va->major() != vb->major();
    if (cudnn)
      d.add(rule, group, comp, sa, sb, DiffWeight::breaking,
            "another cuDNN inside the frameworks (" + *sa.value + " vs " + *sb.value +
                "): torch loads this wheel's cuDNN, so convolutions choose other algorithms and give other results and speeds");
    else if (nvidia)
      d.add(
          rule, group, comp, sa, sb, other_major ? DiffWeight::breaking : DiffWeight::likely_breaking,
          "another " + name + " under the frameworks' kernels" + (other_major ? ": another CUDA major" : ": results and speed may differ"));
    else
      d.add(rule, group, comp, sa, sb, other_major ? DiffWeight::likely_breaking : DiffWeight::compatible,
            other_major ? "another major of " + name + ": its API may differ" : "another release of " + name + " of the same major");
  }
}

// Whether a manifest's cuDNN build supports a compute capability: true, false, or nullopt (unknown).
std::optional<bool> cudnn_supports(const model::Manifest& m, const knowledge::KnowledgeBase& kb, const Version& cc) {
  if (!m.cudnn || !m.cudnn->cuda) return std::nullopt;
  const auto* row = kb.cudnn_arch_support(m.cudnn->version.value, m.cudnn->cuda->value);
  if (!row) return std::nullopt;
  return !(cc < row->min_cc);
}

// The GPUs each stack must run on: one the other side no longer names, or no longer supports
// with its cuDNN, is a GPU that stops working.
void diff_gpus(Differ& d) {
  auto a = d.kb.gpu_archs(d.a), b = d.kb.gpu_archs(d.b);
  if (a.empty() && b.empty()) return;
  std::set<Version> all;
  for (const auto& [cc, pos] : a) all.insert(cc);
  for (const auto& [cc, pos] : b) all.insert(cc);
  for (const auto& cc : all) {
    auto ia = a.find(cc), ib = b.find(cc);
    Side sa = ia != a.end() ? Side{"compute capability " + cc.text(), ia->second} : Side{};
    Side sb = ib != b.end() ? Side{"compute capability " + cc.text(), ib->second} : Side{};
    const std::string rule = "diff.gpus", group = "GPUs", comp = "gpus." + cc.text();
    if (ib == b.end()) {
      d.add(rule, group, comp, sa, sb, DiffWeight::breaking,
            "B no longer names GPUs of compute capability " + cc.text() +
                ", which A runs on: nothing checks that B's cuDNN, nvcc and framework "
                "builds still carry kernels for them");
      continue;
    }
    if (ia == a.end()) {
      d.add(rule, group, comp, sa, sb, DiffWeight::compatible, "B also runs on compute capability " + cc.text());
      continue;
    }
    auto sup_a = cudnn_supports(d.a, d.kb, cc), sup_b = cudnn_supports(d.b, d.kb, cc);
    if (sup_a.value_or(true) && sup_b && !*sup_b) {
      d.add(rule, group, comp, sa, sb, DiffWeight::breaking,
            "B's cuDNN " + d.b.cudnn->version.value.text() + " no longer supports compute capability " + cc.text() + ", which A's does");
      continue;
    }
    d.add(rule, group, comp, sa, sb, DiffWeight::same, "");
  }
}

// The GPU code of each side's cuDNN libraries, as their locks recorded it from the archives' bytes:
// an architecture whose SASS A carries and B does not is lost.
void diff_gpu_code(Differ& d, const model::Lock* la, const model::Lock* lb) {
  if (!la || !lb) return;
  using Targets = std::set<model::GpuTarget>;
  auto code = [](const model::LockedArchive& x, model::CodeKind kind) {
    Targets out;
    for (const auto& l : x.libraries)
      for (const auto& t : l.targets)
        if (t.target.kind == kind) out.insert(t.target);
    return out;
  };
  auto text = [](const Targets& ts) {
    std::string s;
    for (const auto& t : ts) s += (s.empty() ? "" : " ") + t.name();
    return s;
  };
  for (const auto& name : model::platform_names()) {
    auto p = model::parse_platform(name);
    const auto* xa = p ? la->archive_for(*p) : nullptr;
    const auto* xb = p ? lb->archive_for(*p) : nullptr;
    if (!xa || !xb || !xa->kernels_read || !xb->kernels_read) continue;
    const Targets sass_a = code(*xa, model::CodeKind::sass), sass_b = code(*xb, model::CodeKind::sass);
    const Targets ptx_a = code(*xa, model::CodeKind::ptx), ptx_b = code(*xb, model::CodeKind::ptx);
    auto shown = [&](const Targets& sass, const Targets& ptx) { return "SASS " + text(sass) + (ptx.empty() ? "" : ", PTX " + text(ptx)); };
    const Side sa{shown(sass_a, ptx_a), {}}, sb{shown(sass_b, ptx_b), {}};
    const std::string rule = "diff.gpu-code", group = "cuDNN", comp = "gpu-code." + name;
    Targets lost, gained;
    std::set_difference(sass_a.begin(), sass_a.end(), sass_b.begin(), sass_b.end(), std::inserter(lost, lost.end()));
    std::set_difference(sass_b.begin(), sass_b.end(), sass_a.begin(), sass_a.end(), std::inserter(gained, gained.end()));
    if (!lost.empty()) {
      d.add(rule, group, comp, sa, sb, DiffWeight::breaking,
            "B's cuDNN libraries for " + name + " no longer carry SASS for " + text(lost) + " (A's do, by their locks): GPUs of " +
                (lost.size() == 1 ? "that architecture" : "those architectures") +
                " run B only through the driver's JIT from PTX, or not at all");
    } else if (!gained.empty() || ptx_a != ptx_b) {
      d.add(rule, group, comp, sa, sb, DiffWeight::compatible,
            gained.empty() ? "the PTX differs; every SASS architecture of A is still there"
                           : "B's cuDNN libraries for " + name + " also carry SASS for " + text(gained));
    } else {
      d.add(rule, group, comp, sa, sb, DiffWeight::same, "");
    }
  }
}

}  // namespace
}  // namespace diff_detail

model::DiffReport diff_manifests(const model::Manifest& a, const model::Manifest& b, const knowledge::KnowledgeBase& kb,
                                 const model::Lock* lock_a, const model::Lock* lock_b) {
  using namespace diff_detail;
  model::DiffReport report;
  report.a = {a.path, a.name.value};
  report.b = {b.path, b.name.value};
  Differ d{a, b, kb, report};
  diff_info(d);
  diff_cuda(d);
  diff_cudnn(d);
  for (const auto& p : model::platform_names())
    if (auto platform = model::parse_platform(p)) diff_archive(d, *platform);
  diff_driver(d, model::Os::linux);
  diff_driver(d, model::Os::windows);
  diff_frameworks(d);
  diff_python_packages(d);
  diff_python(d);
  diff_gpus(d);
  diff_gpu_code(d, lock_a, lock_b);
  diff_targets(d);
  return report;
}

}  // namespace core
