// stackpin diff: the [targets.*] sections. A target section says how the stack is deployed
// (where cuDNN's files go, which image or channels it is built from). Where the files go is
// likely breaking when the loader or the package manager finds other files; where the same files
// merely live (a prefix the activation scripts follow) is compatible. A section on one side only
// is compatible: the other side may still be deployed there, it just does not say how, and a
// capture describes only the machine it was taken on.
#include "diff/diff_rows.hpp"

#include "util/strings.hpp"

namespace core::diff_detail {

namespace {

using model::DiffWeight;

std::string one_side_target(const std::string& what) {
  return "only one side describes a " + what +
         " target: the other may still be deployed there, it just does not say how (a capture describes only the "
         "machine it was taken on)";
}

// A whole section as one line, for the row of a section present on one side only.
template <class T, class Summary>
Side section(const std::optional<T>& t, Summary summary) {
  return t ? Side{summary(*t), t->pos} : Side{};
}

void windows(Differ& d) {
  const auto& A = d.a.windows;
  const auto& B = d.b.windows;
  if (!A && !B) return;
  const std::string rule = "diff.windows", group = "targets.windows";
  if (!A || !B) {
    auto summary = [](const model::WindowsTarget& t) {
      std::string s = std::string("layout ") + model::to_string(t.layout.value);
      if (t.prefix) s += ", prefix " + t.prefix->value;
      if (t.cuda_path) s += ", cuda_path " + t.cuda_path->value;
      return s;
    };
    return d.add(rule, group, "targets.windows", section(A, summary), section(B, summary), DiffWeight::compatible,
                 one_side_target("Windows"));
  }
  d.text(rule, group, "targets.windows.layout", Side{model::to_string(A->layout.value), A->layout.pos},
         Side{model::to_string(B->layout.value), B->layout.pos}, DiffWeight::likely_breaking,
         "isolated keeps cuDNN in its own prefix, found through PATH; cuda-merge copies it into the CUDA toolkit "
         "tree: which cudnn64_*.dll a program loads, and what CUDA_PATH finds, differ",
         DiffWeight::compatible, "");
  d.text(rule, group, "targets.windows.prefix", side_of(A->prefix), side_of(B->prefix), DiffWeight::compatible,
         "another install location: stackpin's activation scripts follow the prefix, only what hard-codes the "
         "old path must change",
         DiffWeight::compatible, "only one side stages into a prefix of its own; the layout row weighs where cuDNN goes");
  d.text(rule, group, "targets.windows.cuda_path", side_of(A->cuda_path), side_of(B->cuda_path), DiffWeight::likely_breaking,
         "another CUDA toolkit tree on the Windows machine: CUDA_PATH, the CUDA DLLs programs load and, for "
         "cuda-merge, where cuDNN's files go",
         DiffWeight::compatible, "only one side names the CUDA toolkit tree (an isolated layout does not need it)");
}

void linux_target(Differ& d) {
  const auto& A = d.a.linux;
  const auto& B = d.b.linux;
  if (!A && !B) return;
  const std::string rule = "diff.linux", group = "targets.linux";
  if (!A || !B) {
    auto summary = [](const model::LinuxTarget& t) {
      std::string s = std::string("layout ") + model::to_string(t.layout.value);
      if (t.prefix) s += ", prefix " + t.prefix->value;
      return s;
    };
    return d.add(rule, group, "targets.linux", section(A, summary), section(B, summary), DiffWeight::compatible,
                 one_side_target("Linux/WSL2"));
  }
  d.text(rule, group, "targets.linux.layout", Side{model::to_string(A->layout.value), A->layout.pos},
         Side{model::to_string(B->layout.value), B->layout.pos}, DiffWeight::likely_breaking,
         "lib64 stages the archive under a prefix the loader finds through LD_LIBRARY_PATH or ld.so.conf; deb "
         "installs packages into the system library directory: the loader finds other files, and the package "
         "manager owns them",
         DiffWeight::compatible, "");
  d.text(rule, group, "targets.linux.prefix", side_of(A->prefix), side_of(B->prefix), DiffWeight::compatible,
         "another install location: stackpin's activation scripts and ld.so.conf entry follow the prefix, only "
         "what hard-codes the old path must change",
         DiffWeight::compatible, "only one side names a prefix; the layout row weighs where cuDNN goes");
}

void docker(Differ& d) {
  const auto& A = d.a.docker;
  const auto& B = d.b.docker;
  if (!A && !B) return;
  const std::string rule = "diff.docker", group = "targets.docker";
  if (!A || !B) {
    auto summary = [](const model::DockerTarget& t) {
      std::string s = t.base_image ? t.base_image->value : std::string("default base image");
      return s + ", cuDNN from " + model::to_string(t.cudnn.value);
    };
    return d.add(rule, group, "targets.docker", section(A, summary), section(B, summary), DiffWeight::compatible,
                 one_side_target("Docker"));
  }
  d.text(rule, group, "targets.docker.base_image", side_of(A->base_image), side_of(B->base_image), DiffWeight::likely_breaking,
         "another base image: another OS userland (Ubuntu release, glibc) and another CUDA runtime inside the image",
         DiffWeight::likely_breaking, "only one side names a base image, so the images cannot be compared");
  d.text(rule, group, "targets.docker.base_digest", side_of(A->base_digest), side_of(B->base_digest), DiffWeight::likely_breaking,
         "different image bytes (the tag was rebuilt, or another image): packages inside may have changed", DiffWeight::compatible,
         "only one side pins the image by digest; the other takes whatever its tag points to when built");
  d.text(rule, group, "targets.docker.cudnn", Side{model::to_string(A->cudnn.value), A->cudnn.pos},
         Side{model::to_string(B->cudnn.value), B->cudnn.pos}, DiffWeight::likely_breaking,
         "archive stages the pinned archive; apt installs NVIDIA's packages, which can be another build of the same "
         "X.Y.Z (NVIDIA's deb of 8.9.5 is 8.9.5.29, the archive 8.9.5.30) in another directory",
         DiffWeight::compatible, "");
}

Side channels_of(const std::optional<model::CondaTarget>& t) {
  if (!t) return {};
  if (t->channels.empty()) return Side{std::nullopt, t->pos};
  std::vector<std::string> names;
  for (const auto& c : t->channels) names.push_back(c.value);
  return Side{util::join(names, ", "), t->channels.front().pos};
}

void conda(Differ& d) {
  const auto& A = d.a.conda;
  const auto& B = d.b.conda;
  if (!A && !B) return;
  const std::string rule = "diff.conda", group = "targets.conda";
  if (!A || !B) {
    auto summary = [](const model::CondaTarget& t) {
      std::vector<std::string> names;
      for (const auto& c : t.channels) names.push_back(c.value);
      std::string s = names.empty() ? std::string("default channels") : "channels " + util::join(names, ", ");
      if (t.cudnn) s += ", cudnn " + t.cudnn->value.text();
      return s;
    };
    return d.add(rule, group, "targets.conda", section(A, summary), section(B, summary), DiffWeight::compatible, one_side_target("conda"));
  }
  d.text(rule, group, "targets.conda.channels", channels_of(A), channels_of(B), DiffWeight::likely_breaking,
         "other channels, or another order (conda's channel priority), resolve other builds of the same packages",
         DiffWeight::likely_breaking, "only one side lists channels; the other gets conda's defaults, which publish other builds");

  // The cuDNN conda installs: targets.conda.cudnn when set, else [cudnn] version.
  auto effective = [](const model::Manifest& m, const model::CondaTarget& t) -> std::pair<std::optional<model::Version>, Side> {
    if (t.cudnn) return {t.cudnn->value, Side{t.cudnn->value.text(), t.cudnn->pos}};
    if (m.cudnn) return {m.cudnn->version.value, Side{m.cudnn->version.value.text() + " (= [cudnn] version)", t.pos}};
    return {std::nullopt, Side{}};
  };
  auto [va, sa] = effective(d.a, *A);
  auto [vb, sb] = effective(d.b, *B);
  if (va && vb)
    weigh_cudnn(d, rule, group, "targets.conda.cudnn", *va, sa, *vb, sb);
  else if (va || vb)
    d.add(rule, group, "targets.conda.cudnn", sa, sb, DiffWeight::likely_breaking,
          "only one side says which cuDNN conda installs, so the environments cannot be compared");
}

}  // namespace

void diff_targets(Differ& d) {
  windows(d);
  linux_target(d);
  docker(d);
  conda(d);
}

}  // namespace core::diff_detail
