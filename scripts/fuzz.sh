#!/usr/bin/env bash
# Runs stackpin's fuzz targets with libFuzzer under AddressSanitizer and UndefinedBehaviorSanitizer
# (docs/robustness.md), as many at once as there are cores, and prints the executions of each and
# in total.
#
#   scripts/fuzz.sh [--seconds N] [--corpus DIR] [TARGET...]
#
#   --seconds N   time per target (default 60)
#   --corpus DIR  where the growing corpora are kept between runs (default ~/.cache/stackpin-fuzz);
#                 each target's starts from the seeds that stackpin_fuzz_seeds writes
#   TARGET        only these targets (default: all; `--list` prints them)
#
# A crash or sanitizer report leaves its input in DIR/artifacts/ and fails the run; put the input
# into tests/data/fuzz/<target>/ with the fix, and the normal suite replays it from then on.
# Builds in build-sanitize/ (the same build as `scripts/test.sh`).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
corpus=${STACKPIN_FUZZ_CORPUS:-${XDG_CACHE_HOME:-$HOME/.cache}/stackpin-fuzz}
targets=()
list=0
while (($#)); do
  case $1 in
    --seconds) seconds=$2; shift ;;
    --corpus) corpus=$2; shift ;;
    --list) list=1 ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
all=(manifest lock python oci receipt journal redistrib settings ld_cache elf fatbin library_identity pe windows_paths version extract tar_scan zip_directory stage quote)
if ((list)); then printf '%s\n' "${all[@]}"; exit 0; fi
if ((${#targets[@]} == 0)); then targets=("${all[@]}"); fi
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz.sh: no target '$t' (scripts/fuzz.sh --list)" >&2; exit 2; }
done

scripts/install-deps.sh --tools --sanitize >/dev/null
build="build-sanitize"
scripts/configure.sh sanitize
names=()
for t in "${targets[@]}"; do names+=("stackpin_fuzz_$t"); done
cmake --build "$build" -j"$(nproc)" --target stackpin_fuzz_seeds "${names[@]}"

seeds=$build/fuzz/seeds
"$build/fuzz/stackpin_fuzz_seeds" "$seeds" >/dev/null
mkdir -p "$corpus/artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export STACKPIN_FUZZ_ARTIFACTS=$corpus/artifacts

# one libFuzzer process per core at a time: a target uses one core
jobs=$(nproc 2>/dev/null || echo 2)
run_target() {
  local t=$1 dict=() rc
  mkdir -p "$corpus/$t"
  if [[ -d $seeds/$t ]]; then cp -n "$seeds/$t"/* "$corpus/$t"/ 2>/dev/null || true; fi
  [[ -f fuzz/dict/$t.dict ]] && dict=(-dict="fuzz/dict/$t.dict")
  set +e
  "$build/fuzz/stackpin_fuzz_$t" -max_total_time="$seconds" -print_final_stats=1 -timeout=20 -rss_limit_mb=2048 \
    -max_len=1048576 -artifact_prefix="$corpus/artifacts/$t-" "${dict[@]}" "$corpus/$t" >"$corpus/$t.log" 2>&1
  rc=$?
  set -e
  echo "$rc" >"$corpus/$t.rc"
}
running=0
for t in "${targets[@]}"; do
  rm -f "$corpus/$t.rc"
  run_target "$t" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

total=0
failed=()
printf '%-15s %12s %10s %8s  %s\n' target executions 'exec/s' corpus result
for t in "${targets[@]}"; do
  log=$corpus/$t.log
  rc=$(cat "$corpus/$t.rc" 2>/dev/null || echo 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  files=$(find "$corpus/$t" -type f | wc -l)
  result=ok
  if ((rc != 0)); then
    result="FAILED (exit $rc, see $log)"
    failed+=("$t")
  fi
  printf '%-15s %12s %10s %8s  %s\n' "$t" "${execs:-0}" "${rate:-0}" "$files" "$result"
  total=$((total + ${execs:-0}))
done
printf '%-15s %12s\n' total "$total"
if ((${#failed[@]})); then
  echo "fuzz.sh: ${failed[*]} found a crash or sanitizer report: the inputs are in $corpus/artifacts/" >&2
  exit 1
fi
