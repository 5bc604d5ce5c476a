#!/usr/bin/env bash
# Checks the project's habits on its own files, changing nothing; CI (.ci/run) runs it first.
#
#   scripts/lint.sh [--fix]
#
#   1. clang-format: every C and C++ file follows .clang-format (--fix rewrites them instead)
#   2. clang-tidy: src/ passes the checks in .clang-tidy (among them: no function over 150 lines)
#   3. shellcheck: the project's shell scripts
#   4. the README's size: at most 12 KiB
#   5. every test program's source keeps what it defines in a namespace named after its file, so
#      that CI's unity batches of test files compile whichever files share a batch
#
# Installs what it needs (scripts/install-deps.sh --lint); clang-tidy reads the compile commands of
# build-lint/ (CMake preset `lint`: the unity batches CI compiles; nothing is compiled), and each
# unit's result is kept by scripts/tidy.py until one of its files, a header or the tools change.
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
# what the Linux build compiles: its unity batches (each layer's sources, 8 to a batch, as CI
# compiles them: clang-tidy parses the headers once per batch) and the sources compiled apart. The
# Windows platform files (*_windows.cpp, *_cng.cpp, download_winhttp.cpp) are not among them; the
# Windows build compiles them with the same warnings (scripts/build-windows.sh).
mapfile -t units < <(python3 - build-lint "$PWD" <<'PY'
import json, os, sys
build, root = sys.argv[1], sys.argv[2]
for e in json.load(open(os.path.join(build, "compile_commands.json"))):
    f = os.path.normpath(os.path.join(e["directory"], e["file"]))
    if f.startswith(os.path.join(root, build, "src", "unity") + os.sep) or f.startswith(os.path.join(root, "src") + os.sep):
        print(os.path.relpath(f, root))
PY
)
# the sources those cover: the batches' members and the files on their own
covered=0
for u in "${units[@]}"; do
  if [[ $u == build-lint/* ]]; then covered=$((covered + $(grep -c '^#include ".*\.cpp"' "$u"))); else covered=$((covered + 1)); fi
done
if ((covered < 100)); then
  echo "lint: build-lint/compile_commands.json covers only $covered files of src/; clang-tidy would check too little" >&2
  exit 1
fi
# clang-tidy's own exit code says little (it fails on notes too); its findings are what count.
scripts/tidy.py build-lint "${units[@]}" >/tmp/stackpin-lint-tidy.$$
if grep -qE '(warning|error): ' /tmp/stackpin-lint-tidy.$$; then
  grep -E '(warning|error): ' /tmp/stackpin-lint-tidy.$$ | sort -u >&2
  echo "lint: clang-tidy: the findings above (.clang-tidy says which checks run)" >&2
  failed+=(clang-tidy)
else
  echo "lint: clang-tidy: $covered files of src/ (in ${#units[@]} units) pass .clang-tidy"
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

# tests/unit/lock_test.cpp opens `namespace lock_test {` and closes it on its last line
mapfile -t test_sources < <(git ls-files 'tests/unit/*_test.cpp' 'tests/cli/*_test.cpp' 'tests/container/*_test.cpp' \
  'tests/e2e/*_test.cpp' 'tests/gpu/*_test.cpp' 'tests/windows/*_test.cpp')
unwrapped=()
for f in "${test_sources[@]}"; do
  ns=$(basename "$f" .cpp)
  if ! grep -qx "namespace $ns {" "$f" || [[ $(tail -n 1 "$f") != "}  // namespace $ns" ]]; then unwrapped+=("$f"); fi
done
if ((${#unwrapped[@]})); then
  for f in "${unwrapped[@]}"; do
    ns=$(basename "$f" .cpp)
    echo "lint: $f: put what it defines in \`namespace $ns {\` ... \`}  // namespace $ns\` (its last line)" >&2
  done
  failed+=(test-namespaces)
else
  echo "lint: test sources: ${#test_sources[@]} keep their definitions in their file's namespace"
fi

if ((${#failed[@]})); then
  echo "lint: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "lint: ok"
