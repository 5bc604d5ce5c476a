#!/usr/bin/env bash
# Installs what stackpin needs (Debian packages), builds it with its tests, and runs the whole
# suite under CTest. Extra arguments go to ctest (e.g. -L unit).
#
#   scripts/test.sh [CTEST ARGS...]        clang with AddressSanitizer, UndefinedBehaviorSanitizer
#        and LeakSanitizer in build-sanitize/ (CMake preset `sanitize`): every label runs under the
#        sanitizers (a finding fails its test), and the fuzz targets scripts/fuzz.sh runs are built
#        from the same objects. This is the README's test command and CI's (.ci/run).
#   scripts/test.sh --gcc [CTEST ARGS...]  the g++ build in build/ (preset `default`), the one
#        scripts/demo.sh builds, without sanitizers
#
# Both compile through ccache (~/.cache/stackpin/ccache). With CI=true (as .ci/run runs), warnings
# are errors, debug information is line tables only and each layer compiles in unity batches
# (cmake/build_speed.cmake).
set -euo pipefail
cd "$(dirname "$0")/.."
build="build-sanitize"
case ${1:-} in
  --gcc) shift; build=build ;;
  --sanitize) shift ;;  # the default; kept for the command lines that name it
esac
if [[ $build == build ]]; then
  scripts/install-deps.sh --tools
  scripts/configure.sh default
else
  scripts/install-deps.sh --tools --sanitize
  scripts/configure.sh sanitize
  # leaks are errors; a UBSan report aborts the test that hit it
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
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
images_pid="" windows_pid="" engine="" images_log="" windows_log=""
# a failed build ends the run: the background jobs are stopped (the image job before the engine
# it uses), and the engine is left to the runs that still hold it
# shellcheck disable=SC2317  # run by the EXIT trap below
cleanup() {
  local pid
  for pid in "$images_pid" "$windows_pid"; do
    if [[ -n $pid ]]; then kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; fi
  done
  rm -f "$images_log" "$windows_log"
  if [[ -n $engine ]]; then "$engine" stop --holder $$; fi
  return 0
}
trap cleanup EXIT
if wants_containers "$@"; then
  if "$PWD/scripts/container-engine.sh" start --holder $$; then
    engine=$PWD/scripts/container-engine.sh
    images_log=$(mktemp)
    ("$engine" images >"$images_log" 2>&1) &
    images_pid=$!
  else
    echo "test.sh: no container engine could be started; the container tests will skip"
  fi
fi
# The Windows cross-build's libraries (built from Debian's source packages once, then cached)
# are made in the background too: their configure scripts leave a core free most of the time.
if wants_label windows "$@"; then
  windows_log=$(mktemp)
  (scripts/build-windows.sh --deps >"$windows_log" 2>&1) &
  windows_pid=$!
fi

cmake --build "$build" -j"$(nproc)"

# The windows tests run stackpin.exe under Wine: cross-build it (mingw-w64, its libraries from
# Debian's source packages, cached outside the checkout) with the DLL test doubles. Without it
# those tests skip, saying why, and the rest of the suite runs.
# Libraries that cannot be made here (no Debian source package, no mingw-w64) are something
# absent: the windows tests skip. stackpin's own sources failing to cross-compile (mingw-w64's GCC
# warns where clang does not, and warnings are errors) fail the run once the rest has run.
windows_broken=""
if [[ -n $windows_pid ]]; then
  deps_ok=1
  wait "$windows_pid" || deps_ok=0  # a failure shows again, with its reason, in the build below
  windows_pid=
  cat "$windows_log"
  if scripts/build-windows.sh --tests; then
    export STACKPIN_WINDOWS_BUILD=$PWD/build-windows
  elif ((deps_ok)); then
    windows_broken="test.sh: stackpin's Windows build failed (its errors are above); the windows tests were skipped"
    echo "$windows_broken"
  else
    echo "test.sh: the Windows build's libraries could not be made here; the windows tests will skip"
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
# Two tests per core: many of them wait (on Docker builds, Wine, their loopback servers, fsync)
# for much of their time, and one per core left a third of the cores idle. STACKPIN_TEST_JOBS
# sets another number.
rc=0
ctest --output-on-failure -j"${STACKPIN_TEST_JOBS:-$(($(nproc) * 2))}" "$@" || rc=$?
if [[ -n $windows_broken ]]; then
  echo "$windows_broken" >&2
  rc=1
fi
exit "$rc"
