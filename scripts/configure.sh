#!/usr/bin/env bash
# Configures one of the CMake presets (CMakePresets.json) quietly; the build folder is the preset's.
#
#   scripts/configure.sh PRESET [CMAKE ARGS...]     (default, sanitize, lint)
#
# A folder configured earlier with another generator (Unix Makefiles, before the presets) has its
# CMake cache cleared first; its objects are rebuilt, mostly from the compiler cache.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:?usage: scripts/configure.sh PRESET [CMAKE ARGS...]}
shift
case $preset in
  default) dir=build ;;
  sanitize) dir=build-sanitize ;;
  lint) dir=build-lint ;;
  *) echo "configure.sh: no preset '$preset' (default, sanitize, lint)" >&2; exit 2 ;;
esac
if [[ -f $dir/CMakeCache.txt ]] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$dir/CMakeCache.txt"; then
  echo "configure.sh: $dir was configured with another generator; clearing its CMake cache"
  rm -rf "${dir:?}/CMakeCache.txt" "${dir:?}/CMakeFiles"
fi
log=$(mktemp)
if ! cmake --preset "$preset" "$@" >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "configure.sh: cmake --preset $preset failed (above)" >&2
  exit 1
fi
rm -f "$log"
