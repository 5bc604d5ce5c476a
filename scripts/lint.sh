#!/usr/bin/env bash
# Checks the project's habits on its own files, changing nothing; CI (.ci/run) runs it first.
#
#   scripts/lint.sh [--fix]
#
#   1. clang-format: every C and C++ file follows .clang-format (--fix rewrites them instead)
#   2. clang-tidy: src/ passes the checks in .clang-tidy (among them: no function over 150 lines)
#   3. shellcheck: the project's shell scripts
#   4. the README's size: at most 12 KiB
#
# Installs what it needs (scripts/install-deps.sh --lint); clang-tidy reads the compile commands of
# build-lint/ (CMake preset `lint`: every file on its own, as no unity batch is; nothing is
# compiled), and each file's result is kept by scripts/tidy.py until the file, a header or the
# tools change.
# Exits 1 when a check fails, naming the files.
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
case ${1:-} in
  --fix) fix=1 ;;
  "") ;;
  -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

scripts/configure.sh lint
# the files the Linux build compiles: the Windows platform files (*_windows.cpp, *_cng.cpp,
# download_winhttp.cpp) are not in its compile commands; the Windows build compiles them with
# the same warnings (scripts/build-windows.sh)
mapfile -t units < <(git ls-files 'src/*.cpp' | while read -r f; do grep -qF "\"$PWD/$f\"" build-lint/compile_commands.json && echo "$f"; done)
if ((${#units[@]} < 100)); then
  echo "lint: build-lint/compile_commands.json lists only ${#units[@]} files of src/; clang-tidy would check too little" >&2
  exit 1
fi
# clang-tidy's own exit code says little (it fails on notes too); its findings are what count.
scripts/tidy.py build-lint "${units[@]}" >/tmp/stackpin-lint-tidy.$$
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

# the README stays a five-minute read: detail belongs in docs/
readme_max=12288
readme_size=$(wc -c <README.md)
if ((readme_size > readme_max)); then
  echo "lint: README.md is $readme_size bytes, over $readme_max (12 KiB): move the detail into docs/" >&2
  failed+=(readme)
else
  echo "lint: README.md: $readme_size of $readme_max bytes"
fi

if ((${#failed[@]})); then
  echo "lint: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "lint: ok"
