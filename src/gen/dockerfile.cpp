// The Dockerfile generator. Three stages:
//   cudnn    FROM ${BASE_IMAGE}: the archive arrives (COPY from a context stackpin laid out and
//            verified, or ADD from NVIDIA's URL), is checked with sha256sum in a RUN step before
//            anything reads it (BuildKit's ADD --checksum is not in the Docker engine Debian
//            ships), and only the runtime libraries are kept.
//   runtime  FROM ${BASE_IMAGE}: those libraries, an ld.so.conf.d entry that puts them before
//            any other copy, ldconfig, CUDNN_PATH and LD_LIBRARY_PATH, the frameworks, labels.
//   test     FROM runtime: the standalone stackpin-convtest, run at build time (it must find the
//            CUDA runtime and cuDNN through the image's loader; "no GPU", exit 3, is the expected
//            result of a build) and as the image's command for `docker run --gpus all`.
// With cuda = "archive" (a hermetic image) a stage `cuda` comes first: the pinned CUDA components'
// archives, checked by size and SHA-256 before any is unpacked, laid out as /usr/local/cuda-X.Y and
// split into run-time files (for runtime) and the rest (for a stage `devel`, FROM runtime).
// Values reach the Dockerfile in three ways, each with its own rule: comments go through
// comment_safe; LABEL values are Dockerfile double-quoted strings (gen::dockerfile_quote); paths,
// URLs and file names used in COPY/ADD/RUN must be plain (no blanks, quotes, '$' or line breaks)
// and are refused otherwise, since NVIDIA's names and stackpin's own paths always are.
#include "gen/dockerfile.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "gen/quote.hpp"
#include "util/strings.hpp"

namespace gen {

namespace {

// A file or directory name that needs no quoting anywhere in a Dockerfile or a RUN line.
bool plain_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' || c == '-';
  });
}

// An image reference, path or URL: no blanks, quotes, shell operators, globs or expansions.
bool plain_argument(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' || c == '-' ||
           c == '/' || c == ':' || c == '@' || c == '=' || c == '%' || c == '~' || c == ',';
  });
}

// The build argument that names a wheel index: PIP_INDEX_URL (pip reads it) for PyPI, where no
// --index-url is given; PYTORCH_INDEX_URL for PyTorch's; WHEEL_INDEX_URL for another; a number
// after a name already taken.
std::string index_arg(const std::string& url, const std::vector<std::string>& taken) {
  if (url.empty()) return "PIP_INDEX_URL";
  std::string base = url.rfind("https://download.pytorch.org/", 0) == 0 ? "PYTORCH_INDEX_URL" : "WHEEL_INDEX_URL";
  std::string name = base;
  for (int n = 2; std::find(taken.begin(), taken.end(), name) != taken.end(); ++n) name = base + "_" + std::to_string(n);
  return name;
}

// "# text" lines of at most ~100 columns (words are never split).
std::string comment(const std::string& text) {
  std::string out, line;
  std::string t = comment_safe(text);
  std::size_t i = 0;
  while (i < t.size()) {
    auto sp = t.find(' ', i);
    std::string word = t.substr(i, sp == std::string::npos ? std::string::npos : sp - i);
    i = sp == std::string::npos ? t.size() : sp + 1;
    if (!line.empty() && line.size() + 1 + word.size() > 98) {
      out += "# " + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += "# " + line + "\n";
  return out;
}

// Part of a RUN step: xz for tar -J, installed from the distribution when the base lacks it (a
// minimal Debian does); only in the stages that unpack, which the image does not keep.
const std::string k_need_xz =
    "    if ! command -v xz >/dev/null 2>&1; then \\\n"
    "      apt-get update && apt-get install -y --no-install-recommends xz-utils && rm -rf /var/lib/apt/lists/*; \\\n"
    "    fi; \\\n";

// Where stage `cuda` leaves the toolkit's two parts, each rooted at / (COPY --from=cuda DIR/ /), and
// where stage `cudnn` leaves cuDNN's files for the devel stage.
const std::string k_runtime_tree = "/opt/stackpin/runtime";
const std::string k_devel_tree = "/opt/stackpin/devel";
const std::string k_cudnn_devel = "/opt/stackpin/cudnn-devel";
// Stage `cuda`'s record of which component gave each file, for the `sbom` stage.
const std::string k_owners = "/opt/stackpin/owners";
// Stage `sbom`: the runtime stage's files from the archives, the writer and its plan, the document.
const std::string k_sbom_dir = "/opt/stackpin/sbom";
const std::string k_sbom_document = "/opt/stackpin/sbom.spdx.json";

// Stage `cuda`: every component archive arrives, its size and SHA-256 are checked (all of them,
// before any is unpacked), and each is laid out as the toolkit's tree the way `stackpin stage` lays
// it out (lib/ becomes lib64/, the files at the archive's top, its LICENSE, go to
// share/doc/<component>/); then the run-time files move to their own tree.
std::string cuda_stage(const DockerfileSpec& s, const std::string& tmp) {
  const std::string t = k_devel_tree + s.cuda_prefix;
  const std::string dir = s.cuda_prefix.substr(std::string("/usr/local/").size());
  std::uint64_t total = 0;
  for (const auto& a : s.cuda_archives) total += a.size;
  std::string d;
  d += "# --- cuda: the pinned CUDA components, each checked by size and SHA-256 before any is unpacked ---\n";
  d += "FROM ${BASE_IMAGE} AS cuda\n";
  if (s.from_url) {
    d += "# Downloaded at build time from the pinned URLs (" + std::to_string(s.cuda_archives.size()) + " archives, " +
         std::to_string(total) + " bytes).\n";
    for (const auto& a : s.cuda_archives) d += "ADD " + a.url + " " + tmp + "/" + a.file + "\n";
  } else {
    d += "# From the build context, where stackpin put the archives after verifying them (" + std::to_string(s.cuda_archives.size()) +
         " archives, " + std::to_string(total) + " bytes).\n";
    d += "COPY";
    for (const auto& a : s.cuda_archives) d += " archives/" + a.file + " \\\n    ";
    d += tmp + "/\n";
  }
  d += "RUN set -eu; \\\n";
  d += "    cd " + tmp + "; \\\n";
  d += "    for a in";
  for (const auto& a : s.cuda_archives) d += " \\\n        " + a.file + ":" + std::to_string(a.size);
  d += "; do \\\n";
  d += "      f=${a%:*}; n=${a##*:}; \\\n";
  d += "      [ \"$(stat -c %s \"$f\")\" = \"$n\" ] || { echo \"$f: $(stat -c %s \"$f\") bytes, the pin says $n\" >&2; exit 1; }; \\\n";
  d += "    done; \\\n";
  d += "    printf '%s  %s\\n'";
  for (const auto& a : s.cuda_archives) d += " \\\n        " + a.sha256 + " " + a.file;
  d += " \\\n      | sha256sum -c -; \\\n";
  d += k_need_xz;
  d += "    T=" + t + "; \\\n";
  d += "    mkdir -p \"$T\"; \\\n";
  if (s.sbom_in_build) d += "    : > " + k_owners + "; \\\n";
  d += "    for a in";
  for (const auto& a : s.cuda_archives) d += " \\\n        " + a.component + ":" + a.file;
  d += "; do \\\n";
  d += "      c=${a%%:*}; mkdir -p \"u/$c\"; \\\n";
  // the modes the archive says, less group and world write and the set-id bits, as stage has them
  d += "      tar -xJf \"${a#*:}\" -C \"u/$c\" --strip-components=1 --no-same-owner --no-same-permissions; \\\n";
  d += "      chmod -R go-w,ug-s \"u/$c\"; \\\n";
  d += "      for e in \"u/$c\"/*; do \\\n";
  d += "        [ -e \"$e\" ] || continue; n=${e##*/}; [ \"$n\" != lib ] || n=lib64; \\\n";
  // with an SBOM to write in the build: "<component><TAB><path in the image>" per file it copies
  const std::string in_image = s.cuda_prefix.substr(1);
  d += "        if [ -d \"$e\" ]; then mkdir -p \"$T/$n\"; cp -a \"$e/.\" \"$T/$n/\";";
  if (s.sbom_in_build) d += " \\\n          find \"$e\" -type f -printf \"$c\\t" + in_image + "/$n/%P\\n\" >> " + k_owners + ";";
  d += " \\\n        else mkdir -p \"$T/share/doc/$c\"; cp -a \"$e\" \"$T/share/doc/$c/\";";
  if (s.sbom_in_build) d += " \\\n          printf '%s\\t%s\\n' \"$c\" \"" + in_image + "/share/doc/$c/$n\" >> " + k_owners + ";";
  d += " fi; \\\n";
  d += "      done; \\\n";
  d += "      rm -rf \"u/$c\"; \\\n";
  d += "    done; \\\n";
  d += "    printf '%s\\n'";
  for (const auto& l : s.version_json) d += " \\\n        '" + l + "'";
  d += " \\\n      > \"$T/version.json\"; \\\n";
  d += "    ln -s " + dir + " " + k_devel_tree + "/usr/local/cuda; \\\n";
  d += "    cd " + k_devel_tree + "; \\\n";
  // run-time files: versioned shared objects and their SONAME links, shared objects without a
  // version that are files and not links (CUPTI's libnvperf_host.so, loaded at run time), outside
  // stubs/; the licences; version.json; the /usr/local/cuda link
  const std::string runtime_files =
      "find . ! -type d \\( \\( -name 'lib*.so.*' -o -name 'lib*.so' -type f \\) ! -path '*/stubs/*' -o -path '." + s.cuda_prefix +
      "/share/doc/*' -o -path '." + s.cuda_prefix + "/version.json' -o -path ./usr/local/cuda \\)";
  d += "    " + runtime_files + " > " + tmp + "/runtime-files; \\\n";
  d += "    mkdir -p " + k_runtime_tree + "; \\\n";
  // through a file, not a pipe: sh has no pipefail, and a failed write must stop the step
  d += "    tar -cf " + tmp + "/runtime.tar -T " + tmp + "/runtime-files; \\\n";
  d += "    tar -xf " + tmp + "/runtime.tar -C " + k_runtime_tree + "; \\\n";
  d += "    " + runtime_files + " -delete; \\\n";
  d += "    rm -rf " + tmp + "\n\n";
  return d;
}

// Stage `sbom`, when the archives were not at hand where the Dockerfile was generated: the files the
// runtime stage receives from them, at their paths in the image, listed with their SHA-1 and
// SHA-256 by stackpin's SPDX writer, following the plan stackpin made (stackpin/spdx-plan.tsv).
std::string sbom_stage(const DockerfileSpec& s) {
  const std::string tree = k_sbom_dir + "/tree";
  std::string d;
  d += "# --- sbom: the runtime stage's files from the archives, listed as SPDX 2.3 ---------------------\n";
  d += "FROM ${BASE_IMAGE} AS sbom\n";
  if (s.hermetic) {
    d += "COPY --from=cuda " + k_runtime_tree + "/ " + tree + "/\n";
    d += "COPY --from=cuda " + k_owners + " " + k_sbom_dir + "/owners\n";
  }
  if (!s.apt) d += "COPY --from=cudnn " + s.prefix + "/ " + tree + s.prefix + "/\n";
  d += "COPY stackpin/spdx-plan.tsv stackpin/spdx-writer.sh " + k_sbom_dir + "/\n";
  d += "RUN sh " + k_sbom_dir + "/spdx-writer.sh " + k_sbom_dir + "/spdx-plan.tsv " + (s.hermetic ? k_sbom_dir + "/owners" : "/dev/null") +
       " " + tree + " " + k_sbom_document + "\n\n";
  return d;
}

// The runtime image's labels, then (hermetic images) stage `devel`.
std::string labels_and_devel(const DockerfileSpec& s) {
  std::string d;
  if (s.sbom) {
    d += "# What the image redistributes: every archive, licence and run-time file (SPDX 2.3, stackpin sbom).\n";
    d += "COPY sbom.spdx.json /usr/share/doc/stackpin/sbom.spdx.json\n";
  } else if (s.sbom_in_build) {
    d += "# What the image redistributes: every archive, licence and run-time file (SPDX 2.3), listed by stage sbom.\n";
    d += "COPY --from=sbom " + k_sbom_document + " /usr/share/doc/stackpin/sbom.spdx.json\n";
  }
  d += "LABEL org.opencontainers.image.title=" + dockerfile_quote(s.manifest_name) + " \\\n";
  if (!s.manifest_description.empty())
    d += "      org.opencontainers.image.description=" + dockerfile_quote(s.manifest_description) + " \\\n";
  d += "      io.stackpin.manifest=" + dockerfile_quote(s.manifest_file) + " \\\n";
  d += "      io.stackpin.manifest.sha256=" + dockerfile_quote(s.manifest_sha256) + " \\\n";
  d += "      io.stackpin.cuda=" + dockerfile_quote(s.cuda_version) + " \\\n";
  if (!s.gpu_archs.empty()) {
    std::string archs;
    for (const auto& a : s.gpu_archs) archs += (archs.empty() ? "" : ",") + a;
    d += "      io.stackpin.gpu.arch=" + dockerfile_quote(archs) + " \\\n";
  }
  if (s.hermetic) {
    d += "      org.opencontainers.image.base.name=" + dockerfile_quote(s.base_image) + " \\\n";
    std::string ids;
    for (const auto& a : s.cuda_archives) ids += (ids.empty() ? "" : ",") + a.component;
    d += "      io.stackpin.cuda.components=" + dockerfile_quote(ids) + " \\\n";
    for (const auto& a : s.cuda_archives)
      d += "      io.stackpin.cuda.archive." + a.component + ".sha256=" + dockerfile_quote(a.sha256) + " \\\n";
  }
  if (s.sbom || s.sbom_in_build) d += "      io.stackpin.sbom=\"/usr/share/doc/stackpin/sbom.spdx.json\" \\\n";
  d += "      io.stackpin.cudnn=" + dockerfile_quote(s.cudnn_version);
  if (!s.apt) d += " \\\n      io.stackpin.cudnn.archive.sha256=" + dockerfile_quote(s.archive_sha256);
  d += "\n\n";

  if (s.hermetic) {
    d += "# --- devel: the runtime plus the rest of the toolkit (compilers, headers, static and stub ---------\n";
    d += "# libraries, as the components provide them) and cuDNN's headers, for building CUDA extensions.\n";
    d += "FROM runtime AS devel\n";
    d += "COPY --from=cuda " + k_devel_tree + "/ /\n";
    if (!s.include_dev) d += "COPY --from=cudnn " + k_cudnn_devel + "/ /\n";
    d += "ENV LIBRARY_PATH=/usr/local/cuda/lib64/stubs\n";
    if (s.sbom || s.sbom_in_build)  // inherited from runtime: say what it covers
      d += "LABEL io.stackpin.sbom.covers=\"the runtime stage, not the compilers, headers and static libraries devel adds\"\n";
    d += "\n";
  }
  return d;
}

// Every value the Dockerfile will hold, checked before any is written.
util::Status validate(const DockerfileSpec& s) {
  auto refuse = [](const std::string& what, const std::string& v) {
    return util::Error(util::ErrorCode::invalid, what + " \"" + comment_safe(v) + "\" cannot be written into a Dockerfile")
        .with_hint("use a value of letters, digits and . _ + - / : @ = % ~ , only (no blanks, quotes, shell operators or globs)");
  };
  if (!plain_argument(s.base_image)) return refuse("the base image", s.base_image);
  if (!plain_argument(s.prefix) || s.prefix.front() != '/') return refuse("the image path", s.prefix);
  if (!s.apt) {
    if (!plain_name(s.archive_file)) return refuse("the archive name", s.archive_file);
    if (s.from_url && !plain_argument(s.archive_url)) return refuse("the archive URL", s.archive_url);
    if (!plain_name(s.archive_lib_dir)) return refuse("the archive's library directory", s.archive_lib_dir);
  } else if (!plain_argument(s.apt_package) || (!s.apt_package_dev.empty() && !plain_argument(s.apt_package_dev))) {
    return refuse("the apt package", s.apt_package);
  }
  if (s.hermetic) {
    if (!plain_argument(s.cuda_prefix) || s.cuda_prefix.rfind("/usr/local/", 0) != 0 || s.cuda_prefix.find('/', 11) != std::string::npos)
      return refuse("the toolkit's path", s.cuda_prefix);
    if (s.cuda_archives.empty())
      return util::Error(util::ErrorCode::invalid, "a hermetic image needs the archives of its CUDA components")
          .with_hint("list them in [cuda] components");
    for (const auto& a : s.cuda_archives) {
      if (!plain_name(a.component)) return refuse("the component name", a.component);
      if (!plain_name(a.file)) return refuse("the archive name", a.file);
      if (s.from_url && !plain_argument(a.url)) return refuse("the archive URL", a.url);
      if (a.sha256.size() != 64 || !plain_name(a.sha256)) return refuse("the SHA-256", a.sha256);
    }
    for (const auto& l : s.version_json)
      if (l.find('\'') != std::string::npos || std::any_of(l.begin(), l.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
        return refuse("the version.json line", l);
    // cuda>=13.0,driver>=580.65.06: constraint names, versions, comparators and commas only
    if (!std::all_of(s.require_cuda.begin(), s.require_cuda.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == ',' || c == '>' || c == '=' || c == '<';
        }))
      return refuse("NVIDIA_REQUIRE_CUDA", s.require_cuda);
  }
  for (const auto& f : s.frameworks)
    if (!plain_argument(f.pip_requirement) || (!f.index_url.empty() && !plain_argument(f.index_url)))
      return refuse("the framework requirement", f.pip_requirement);
  for (const auto& r : s.python_requirements) {
    auto words = util::split(r, ' ');
    if (words.size() != 4 || !std::all_of(words.begin(), words.end(), plain_argument)) return refuse("the pinned wheel", r);
  }

  return {};
}

}  // namespace

// The frameworks' virtual environment: the Python lock's wheels by hash when the spec has them, else
// one pip call per index with the frameworks' requirements.
std::string frameworks_section(const DockerfileSpec& s) {
  std::string d;
  d += "\n# Frameworks, in a virtual environment (Ubuntu 24.04's Python refuses system-wide pip installs).\n";
  if (!s.python.empty())
    d += "# The manifest pins Python " + comment_safe(s.python) + "; the image uses the base image's python3, checked below.\n";
  for (const auto& f : s.frameworks)
    if (!f.cudnn_note.empty()) d += comment(f.cudnn_note);
  d += "RUN apt-get update \\\n";
  d += "    && apt-get install -y --no-install-recommends python3 python3-venv \\\n";
  d += "    && rm -rf /var/lib/apt/lists/* \\\n";
  d += "    && python3 -m venv /opt/stackpin-venv";
  if (!s.python.empty())
    d += " \\\n    && /opt/stackpin-venv/bin/python -c 'import sys; v=\"%d.%d\" % sys.version_info[:2]; print(\"python\", v, "
         "\"(manifest: " +
         s.python + ")\" if v == \"" + s.python + "\" else \"- WARNING: the manifest pins " + s.python + "\")'";
  d += "\n";
  if (!s.python_requirements.empty()) {
    d += "# The wheels of the Python lock, each by URL and SHA-256: pip refuses any other byte (--require-hashes),\n"
         "# installs nothing the lock does not list (--no-deps) and asks no index (--no-index).\n";
    d += "RUN printf '%s\\n' \\\n";
    for (const auto& r : s.python_requirements) d += "        '" + r + "' \\\n";
    d += "        > /tmp/stackpin-pylock.txt \\\n"
         "    && /opt/stackpin-venv/bin/pip install --no-cache-dir --require-hashes --no-deps --no-index --only-binary=:all: \\\n"
         "        -r /tmp/stackpin-pylock.txt \\\n"
         "    && rm /tmp/stackpin-pylock.txt\n";
    d += "ENV PATH=/opt/stackpin-venv/bin:${PATH}\n";
  }
  // One pip call per index: PyTorch's wheels come from the index of their CUDA variant. Each
  // index is a build argument declared just before its step, so that a mirror or proxy of it can
  // be given without editing the file, and changing one invalidates that step alone.
  std::vector<std::string> indexes;
  for (const auto& f : s.frameworks)
    if (s.python_requirements.empty())
      if (std::find(indexes.begin(), indexes.end(), f.index_url) == indexes.end()) indexes.push_back(f.index_url);
  std::vector<std::string> args;
  for (const auto& idx : indexes) {
    std::string reqs;
    for (const auto& f : s.frameworks)
      if (f.index_url == idx) reqs += " " + f.pip_requirement;
    std::string arg = index_arg(idx, args);
    args.push_back(arg);
    if (idx.empty()) {
      d += "# PyPI, or the index pip is given: --build-arg PIP_INDEX_URL=https://mirror.example/simple\n";
      d += "ARG PIP_INDEX_URL\n";
      d += "RUN /opt/stackpin-venv/bin/pip install --no-cache-dir" + reqs + "\n";
    } else {
      d += "# A mirror or proxy of " + comment_safe(idx) + ": --build-arg " + arg + "=https://mirror.example/...\n";
      d += "ARG " + arg + "=" + idx + "\n";
      d += "RUN /opt/stackpin-venv/bin/pip install --no-cache-dir" + reqs + " --index-url \"${" + arg + "}\"\n";
    }
  }
  if (s.python_requirements.empty()) d += "ENV PATH=/opt/stackpin-venv/bin:${PATH}\n";
  return d;
}

util::Result<std::string> render_dockerfile(const DockerfileSpec& s) {
  SP_TRY(validate(s));
  std::string d;
  d += comment("Generated by stackpin from " + s.manifest_file + " (manifest \"" + s.manifest_name + "\", sha256 " + s.manifest_sha256 +
               "). Regenerate it with `stackpin generate dockerfile`; do not edit.");
  d += "#\n";
  d += "# Build the image:  docker build --target runtime -t " + comment_safe(s.manifest_name) + " .\n";
  if (s.test_stage)
    d += "# Test it:          docker build --target test -t " + comment_safe(s.manifest_name) + "-test . && docker run --rm --gpus all " +
         comment_safe(s.manifest_name) + "-test\n";
  if (s.hermetic) {
    d += "# Build tools:      docker build --target devel -t " + comment_safe(s.manifest_name) + "-devel .\n";
    d += "# The toolkit comes from the pinned CUDA components' archives, not from the base image; another base\n";
    d += "# (a mirror, an air-gapped registry): --build-arg BASE_IMAGE=registry.example/debian:bookworm-slim\n";
  } else {
    d += "# Another base (a mirror, an air-gapped registry): --build-arg BASE_IMAGE=registry.example/cuda:tag\n";
  }
  for (const auto& n : s.base_notes) d += comment(n);
  d += "ARG BASE_IMAGE=" + s.base_image + "\n\n";

  const std::string tmp = "/tmp/stackpin";
  const std::string libdir = s.prefix + "/lib64";
  if (s.hermetic) d += cuda_stage(s, tmp);
  if (!s.apt) {
    d += "# --- cudnn: the pinned archive, checked by SHA-256 before anything reads it -------------------\n";
    d += "FROM ${BASE_IMAGE} AS cudnn\n";
    if (s.from_url) {
      d += "# Downloaded at build time from the pinned URL (" + std::to_string(s.archive_size) + " bytes).\n";
      d += "ADD " + s.archive_url + " " + tmp + "/" + s.archive_file + "\n";
    } else {
      d += "# From the build context, where stackpin put the archive after verifying it (" + std::to_string(s.archive_size) + " bytes).\n";
      d += "COPY archives/" + s.archive_file + " " + tmp + "/" + s.archive_file + "\n";
    }
    d += "RUN set -eu; \\\n";
    d += "    cd " + tmp + "; \\\n";
    d += "    echo '" + s.archive_sha256 + "  " + s.archive_file + "' | sha256sum -c -; \\\n";
    d += "    test \"$(stat -c %s " + s.archive_file + ")\" = " + std::to_string(s.archive_size) + "; \\\n";
    d += k_need_xz;
    d += "    mkdir -p unpacked " + libdir + "; \\\n";
    d += "    tar -xJf " + s.archive_file + " -C unpacked --strip-components=1 --no-same-owner --no-same-permissions; \\\n";
    d += "    chmod -R go-w,ug-s unpacked; \\\n";
    if (s.include_dev) {
      d += "    cp -P unpacked/" + s.archive_lib_dir + "/* " + libdir + "/; \\\n";
      d += "    cp -R unpacked/include " + s.prefix + "/include; \\\n";
    } else {
      d += "    cp -P unpacked/" + s.archive_lib_dir + "/lib*.so.* " + libdir + "/; \\\n";
    }
    d += "    cp unpacked/LICENSE " + s.prefix + "/LICENSE; \\\n";
    if (s.hermetic && !s.include_dev) {  // the devel stage's part: headers, link names, static libraries
      const std::string dev = k_cudnn_devel + s.prefix;
      d += "    mkdir -p " + dev + "/lib64; \\\n";
      d += "    cp -R unpacked/include " + dev + "/include; \\\n";
      d += "    find unpacked/" + s.archive_lib_dir + " -mindepth 1 -maxdepth 1 ! -type d ! -name 'lib*.so.*' -exec cp -P {} " + dev +
           "/lib64/ ';'; \\\n";
    }
    d += "    rm -rf " + tmp + "\n\n";
  }
  if (s.sbom_in_build) d += sbom_stage(s);

  d += "# --- runtime: the image --------------------------------------------------------------------\n";
  d += "FROM ${BASE_IMAGE} AS runtime\n";
  if (s.apt) {
    d += "# cuDNN from NVIDIA's apt repository (configured in NVIDIA's CUDA images), exact versions, held.\n";
    std::string pkgs = s.apt_package + (s.include_dev && !s.apt_package_dev.empty() ? " " + s.apt_package_dev : "");
    std::string names;
    for (const auto& p : {s.apt_package, s.include_dev ? s.apt_package_dev : std::string()})
      if (!p.empty()) names += " " + p.substr(0, p.find('='));
    d += "RUN apt-get update \\\n";
    d += "    && apt-get install -y --no-install-recommends " + pkgs + " \\\n";
    d += "    && apt-mark hold" + names + " \\\n";
    d += "    && rm -rf /var/lib/apt/lists/*\n";
  } else {
    if (s.hermetic) {
      d += "# The toolkit's run-time files: versioned shared libraries, licences, version.json.\n";
      d += "COPY --from=cuda " + k_runtime_tree + "/ /\n";
    }
    d += "COPY --from=cudnn " + s.prefix + "/ " + s.prefix + "/\n";
    d += "# Found first by every program: an ld.so.conf.d entry sorted before the others, and the loader path.\n";
    d += "RUN echo " + libdir + " > /etc/ld.so.conf.d/000-stackpin-cudnn.conf";
    if (s.hermetic) d += " \\\n    && echo " + s.cuda_prefix + "/lib64 > /etc/ld.so.conf.d/001-stackpin-cuda.conf \\\n   ";
    d += " && ldconfig\n";
    d += "ENV CUDNN_PATH=" + s.prefix + " \\\n";
    d += "    LD_LIBRARY_PATH=" + libdir + "${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}";
    if (s.hermetic) {
      // What NVIDIA's container toolkit reads (NVIDIA_*) and what build tools and users expect.
      d += " \\\n    CUDA_VERSION=" + s.cuda_version + " \\\n";
      d += "    CUDA_HOME=/usr/local/cuda \\\n";
      d += "    PATH=/usr/local/cuda/bin:${PATH} \\\n";
      d += "    NVIDIA_VISIBLE_DEVICES=all \\\n";
      d += "    NVIDIA_DRIVER_CAPABILITIES=compute,utility";
      if (!s.require_cuda.empty()) d += " \\\n    NVIDIA_REQUIRE_CUDA=\"" + s.require_cuda + "\"";
    }
    d += "\n";
  }

  if (!s.frameworks.empty()) d += frameworks_section(s);

  d += labels_and_devel(s);

  if (!s.test_stage) return d;
  d += "# --- test: the conv test inside the image ----------------------------------------------------\n";
  d += "FROM runtime AS test\n";
  d += "COPY stackpin/stackpin-convtest /usr/local/bin/stackpin-convtest\n";
  std::string expect = " --expect-cudnn " + s.convtest_expect_cudnn + " --expect-cuda " + std::to_string(s.cuda_major);
  d += "# At build time there is no GPU: the libraries must load (exit 1 fails the build); 3 = nothing to run on.\n";
  d += "RUN stackpin-convtest" + expect + "; rc=$?; [ \"$rc\" -eq 0 ] || [ \"$rc\" -eq 3 ]\n";
  d += "CMD [\"stackpin-convtest\"";
  for (const auto& a : {std::string("--expect-cudnn"), s.convtest_expect_cudnn, std::string("--expect-cuda"), std::to_string(s.cuda_major)})
    d += ", \"" + a + "\"";
  d += "]\n";
  return d;
}

std::vector<std::pair<std::string_view, std::string_view>> embedded_gen_scripts();  // gen_scripts.cpp, made by cmake/embed.cmake

std::string_view spdx_writer_script() {
  for (const auto& [name, text] : embedded_gen_scripts())
    if (name == "spdx-writer.sh") return text;
  return {};
}

bool copies_archives(const DockerfileSpec& s) { return (!s.apt || s.hermetic) && !s.from_url; }

std::string render_dockerignore(const DockerfileSpec& s) {
  std::string out = "# Generated by stackpin: the build context holds only what the Dockerfile copies.\n*\n";
  if (!s.from_url)
    for (const auto& a : s.cuda_archives) out += "!archives/" + a.file + "\n";
  if (!s.apt && !s.from_url) out += "!archives/" + s.archive_file + "\n";
  if (s.test_stage) out += "!stackpin/stackpin-convtest\n";
  if (s.sbom) out += "!sbom.spdx.json\n";
  if (s.sbom_in_build) out += "!stackpin/spdx-plan.tsv\n!stackpin/spdx-writer.sh\n";
  return out;
}

std::string render_devcontainer(const DockerfileSpec& s) {
  std::string base = s.base_image;
  std::string out = "{\n";
  out += "  \"name\": " + json_quote(s.manifest_name) + ",\n";
  out += "  \"build\": {\n";
  out += "    \"dockerfile\": \"Dockerfile\",\n";
  out += "    \"context\": \".\",\n";
  out += "    \"target\": \"runtime\",\n";
  out += "    \"args\": { \"BASE_IMAGE\": " + json_quote(base) + " }\n";
  out += "  },\n";
  out += "  \"hostRequirements\": { \"gpu\": true },\n";
  out += "  \"runArgs\": [\"--gpus\", \"all\"],\n";
  out += "  \"containerEnv\": {\n";
  out += "    \"STACKPIN_MANIFEST\": " + json_quote(s.manifest_file) + ",\n";
  out += "    \"STACKPIN_MANIFEST_SHA256\": " + json_quote(s.manifest_sha256) + "\n";
  out += "  }\n";
  out += "}\n";
  return out;
}

}  // namespace gen
