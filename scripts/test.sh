#!/usr/bin/env bash
# Installs what stackpin needs (Debian packages), builds it with its tests, and runs the whole
# suite under CTest. Extra arguments go to ctest (e.g. -L unit).
#
#   scripts/test.sh [CTEST ARGS...]             the g++ build in build/ (CMake preset `default`)
#   scripts/test.sh --sanitize [CTEST ARGS...]  a clang build in build-sanitize/ (preset `sanitize`)
#        with AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer (a finding fails the
#        test); it builds only the unit and cli test programs, and the fuzz targets that
#        scripts/fuzz.sh runs
#
# Both compile through ccache (~/.cache/stackpin/ccache). With CI=true (as .ci/run runs), warnings
# are errors and debug information is line tables only (cmake/build_speed.cmake).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
if [[ ${1:-} == --sanitize ]]; then
  shift
  scripts/install-deps.sh --tools --sanitize
  build="build-sanitize"
  scripts/configure.sh sanitize
  # leaks are errors; a UBSan report aborts the test that hit it
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
else
  scripts/install-deps.sh --tools
  scripts/configure.sh default
fi
# Do ctest's arguments select the label $1 (-L/--label-regex, -LE/--label-exclude)?
wants_label() {
  local label=$1 sel='' excl=''
  shift
  while (($#)); do
    case $1 in
      -L | --label-regex) sel=${2:-}; shift ;;
      -LE | --label-exclude) excl=${2:-}; shift ;;
    esac
    shift
  done
  [[ -z $sel || $label =~ $sel ]] && [[ -z $excl || ! $label =~ $excl ]]
}
wants_containers() { wants_label container "$@"; }
# The container tests need a Docker engine and the local images: start dockerd unless an engine
# answers (stopped again on exit, unless another run still uses it) and build the images once.
# Without them those tests skip, saying why, and the rest of the suite runs. The images (a
# debootstrap download, the first time) are prepared in the background while the code compiles.
images_pid=
if wants_containers "$@"; then
  engine=$PWD/scripts/container-engine.sh
  if "$engine" start --holder $$; then
    images_log=$(mktemp)
    # a failed build ends the run: the image job is stopped before the engine it uses
    trap '{ [[ -n $images_pid ]] && kill "$images_pid" 2>/dev/null && wait "$images_pid"; } || true; rm -f "$images_log"; "$engine" stop --holder $$' EXIT
    ("$engine" images >"$images_log" 2>&1) &
    images_pid=$!
  else
    echo "test.sh: no container engine could be started; the container tests will skip"
  fi
fi

cmake --build "$build" -j"$(nproc)"

# The windows tests run stackpin.exe under Wine: cross-build it (mingw-w64, its libraries from
# Debian's source packages, cached outside the checkout) with the DLL test doubles. Without it
# those tests skip, saying why, and the rest of the suite runs.
if [[ $build == build ]] && wants_label windows "$@"; then
  if scripts/build-windows.sh --tests; then
    export STACKPIN_WINDOWS_BUILD=$PWD/build-windows
  else
    echo "test.sh: the Windows build failed; the windows tests will skip"
  fi
fi
if [[ -n $images_pid ]]; then
  if ! wait "$images_pid"; then
    cat "$images_log"
    echo "test.sh: a test image could not be built; the container tests that need it will skip"
  else
    cat "$images_log"
  fi
  rm -f "$images_log"
  images_pid=
  # the Dev Containers CLI (npm, pinned), which reads and builds the generated devcontainer.json
  devcontainer_cli_version=0.89.0
  npm_dir=${STACKPIN_NPM_CACHE:-/var/cache/stackpin-npm}
  cli=$npm_dir/node_modules/.bin/devcontainer
  if [[ ! -x $cli || $("$cli" --version 2>/dev/null) != "$devcontainer_cli_version" ]]; then
    mkdir -p "$npm_dir"
    npm install --no-audit --no-fund --prefix "$npm_dir" "@devcontainers/cli@$devcontainer_cli_version" >/dev/null 2>&1 ||
      echo "test.sh: npm could not install @devcontainers/cli; its container test will skip"
  fi
  [[ -x $cli ]] && export STACKPIN_DEVCONTAINER_CLI=$cli
fi
cd "$build"
ctest --output-on-failure -j"$(nproc)" "$@"
