#!/usr/bin/env bash
# Checks the project's habits on its own files, changing nothing; CI (.ci/run) runs it first.
#
#   scripts/lint.sh [--fix]
#
#   1. clang-format: every C and C++ file follows .clang-format (--fix rewrites them instead)
#   2. clang-tidy: src/ passes the checks in .clang-tidy (among them: no function over 150 lines)
#   3. shellcheck: the project's shell scripts
#
# Installs what it needs (scripts/install-deps.sh --lint); configures build-lint/ for the compile
# commands clang-tidy reads (nothing is compiled). Exits 1 when a check fails, naming the files.
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
case ${1:-} in
  --fix) fix=1 ;;
  "") ;;
  -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "lint.sh: unknown option $1 (--fix)" >&2; exit 2 ;;
esac

scripts/install-deps.sh --lint >/dev/null
failed=()

mapfile -t sources < <(git ls-files '*.cpp' '*.hpp' '*.c' '*.h' | grep -v '^tests/layering/third_party/')
if ((fix)); then
  clang-format -i "${sources[@]}"
  echo "lint: formatted ${#sources[@]} files"
elif clang-format --dry-run --Werror "${sources[@]}" 2>/tmp/stackpin-lint-format.$$; then
  echo "lint: clang-format: ${#sources[@]} files follow .clang-format"
else
  grep -o '^[^:]*:' /tmp/stackpin-lint-format.$$ | sort -u | sed 's/:$//; s/^/  /' >&2
  echo "lint: clang-format: the files above differ from .clang-format (scripts/lint.sh --fix rewrites them)" >&2
  failed+=(clang-format)
fi
rm -f /tmp/stackpin-lint-format.$$

cmake -S . -B build-lint -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DSTACKPIN_BUILD_TESTS=ON >/dev/null
# the files the Linux build compiles: the Windows platform files (*_windows.cpp, *_cng.cpp,
# download_winhttp.cpp) are not in its compile commands; the Windows build compiles them with
# the same warnings (scripts/build-windows.sh)
mapfile -t units < <(git ls-files 'src/*.cpp' | while read -r f; do grep -qF "\"$PWD/$f\"" build-lint/compile_commands.json && echo "$f"; done)
# clang-tidy's own exit code says little (it fails on notes too); its findings are what count.
printf '%s\n' "${units[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p build-lint --quiet >/tmp/stackpin-lint-tidy.$$ 2>/dev/null || true
if grep -qE '(warning|error): ' /tmp/stackpin-lint-tidy.$$; then
  grep -E '(warning|error): ' /tmp/stackpin-lint-tidy.$$ | sort -u >&2
  echo "lint: clang-tidy: the findings above (.clang-tidy says which checks run)" >&2
  failed+=(clang-tidy)
else
  echo "lint: clang-tidy: ${#units[@]} files of src/ pass .clang-tidy"
fi
rm -f /tmp/stackpin-lint-tidy.$$

mapfile -t scripts < <(git ls-files '*.sh' .ci/run)
if shellcheck "${scripts[@]}"; then
  echo "lint: shellcheck: ${#scripts[@]} scripts pass"
else
  echo "lint: shellcheck: the findings above" >&2
  failed+=(shellcheck)
fi

if ((${#failed[@]})); then
  echo "lint: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "lint: ok"
