#!/usr/bin/env bash
# Installs everything stackpin needs to build and test, from Debian 12's own packages, and builds
# liblzma 5.8.1 from Debian 13's source package (scripts/build-liblzma.sh: Debian 12's 5.4.1
# decodes xz at about half the speed). Idempotent: packages already present are left alone, and
# an existing liblzma build is kept. Run as root (or with sudo for apt-get).
#
#   scripts/install-deps.sh            build + test dependencies
#   scripts/install-deps.sh --sanitize also clang and its sanitizer and libFuzzer runtimes
#   scripts/install-deps.sh --lint     also clang-format, clang-tidy and shellcheck (scripts/lint.sh)
#   scripts/install-deps.sh --tools    also the checkers the tests run when present
#                                      (shellcheck, dpkg-dev, lintian, fakeroot, xz-utils, unzip,
#                                      python3-yaml for the environment.yml parse test, nodejs
#                                      with node-ajv and node-js-yaml for the JSON schema checks
#                                      of generated CI files and SBOMs, npm for the Dev Containers
#                                      CLI) and
#                                      the container tests' engine (docker.io, cgroupfs-mount,
#                                      debootstrap: see scripts/container-engine.sh) and Wine
#                                      (wine, wine64) for the windows tests, and the registry
#                                      tests' docker-registry, skopeo and htpasswd
#                                      (apache2-utils); the mingw-w64 cross
#                                      compiler comes with scripts/build-windows.sh
set -euo pipefail

build_pkgs=(
  build-essential cmake pkg-config
  ninja-build ccache lld  # the presets' generator, the compiler cache, the linker (cmake/build_speed.cmake)
  libarchive-dev liblzma-dev zlib1g-dev libssl-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev
  libcurl4-openssl-dev libgtest-dev libgmock-dev libisal-dev
  dpkg-dev  # dpkg-source, for apt-get source (scripts/build-liblzma.sh)
)
tool_pkgs=(shellcheck groff-base xz-utils unzip zip python3 python3-yaml nodejs node-ajv node-js-yaml lintian fakeroot docker.io cgroupfs-mount debootstrap wine wine64
  docker-registry skopeo apache2-utils)  # the registry tests: the reference registry, an independent client, htpasswd
# the sanitizer build the tests and fuzz targets run on (scripts/test.sh, scripts/fuzz.sh): clang
# with its runtime libraries (ASan, UBSan, LSan, libFuzzer)
sanitize_pkgs=(clang libclang-rt-dev)
# scripts/lint.sh: the formatter, the static checker and the shell checker (Debian 12's: clang 14)
lint_pkgs=(clang-format clang-tidy shellcheck python3)

want=("${build_pkgs[@]}")
for arg in "$@"; do
  case $arg in
    --tools)
      want+=("${tool_pkgs[@]}")
      # npm, for the Dev Containers CLI the container tests install (scripts/test.sh); a nodejs
      # from elsewhere may bring its own npm and conflict with Debian's
      command -v npm >/dev/null || want+=(npm)
      ;;
    --sanitize) want+=("${sanitize_pkgs[@]}") ;;
    --lint) want+=("${lint_pkgs[@]}") ;;
    *) echo "install-deps: unknown option $arg (--tools, --sanitize, --lint)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#want[@]} packages present"
else
  SUDO=
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# As the calling user, into its cache, where CMake looks for it.
if ! "$(dirname "$0")/build-liblzma.sh"; then
  echo "install-deps: WARNING: no liblzma 5.8.1; stackpin builds with Debian 12's liblzma 5.4.1, which decodes xz about twice as slowly" >&2
fi
