#!/usr/bin/env bash
# Run every libFuzzer harness for SECONDS each (default 30), starting from
# its corpus in tests/fuzz/corpus/<name>/. New interesting inputs go to a
# scratch corpus; crashes/leaks/timeouts stop the run with the reproducer
# saved under build-fuzz/findings/<name>/ (add it to the corpus once fixed).
# Usage: tests/fuzz/run.sh [SECONDS] [HARNESS...]
# SPROF_FUZZ_RUNS=N also stops a harness after N executions (long local runs:
# SPROF_FUZZ_RUNS=10000000 tests/fuzz/run.sh 3600). SPROF_FUZZ_BUILD picks
# the build directory (default build-fuzz/ in the source tree).
# SPROF_FUZZ_MAX_LEN caps input size (default 65536): line-oriented inputs
# gain little from long ones, and libFuzzer's growing length limit slows
# long runs (folded_parse: ~2,400/s falling to ~1,100/s as inputs neared 30 KB).
set -euo pipefail
secs=${1:-30}
shift || true
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${SPROF_FUZZ_BUILD:-$src/build-fuzz}
command -v clang >/dev/null || { echo "fuzz: clang not installed (apt-get install clang libfuzzer-14-dev)"; exit 1; }
cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER=clang -DSPROF_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  for f in "$src"/tests/fuzz/*_fuzz.c; do
    h=$(basename "$f" _fuzz.c)
    [ -d "$src/tests/fuzz/corpus/$h" ] && harnesses+=("$h")
  done
fi
failed=0
for h in "${harnesses[@]}"; do
  cmake --build "$build" --target "${h}_fuzzer" -j2 >/dev/null
  work="$build/corpus-work/$h"; findings="$build/findings/$h"
  mkdir -p "$work" "$findings"
  log="$build/$h.log"
  runs=()
  [ -n "${SPROF_FUZZ_RUNS:-}" ] && runs=(-runs="$SPROF_FUZZ_RUNS")
  t0=$(date +%s)
  if "$build/bin/${h}_fuzzer" -max_total_time="$secs" "${runs[@]}" -timeout=10 -rss_limit_mb=2048 \
       -max_len="${SPROF_FUZZ_MAX_LEN:-65536}" -artifact_prefix="$findings/" -print_final_stats=1 \
       "$work" "$src/tests/fuzz/corpus/$h" >"$log" 2>&1; then
    execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
    rate=$(grep -m1 'stat::average_exec_per_sec' "$log" | awk '{print $2}')
    echo "fuzz $h: ok, ${execs:-?} executions in $(( $(date +%s) - t0 ))s (${rate:-?}/s)"
  else
    echo "fuzz $h: FAILED (see $log; reproducer in $findings/)"
    tail -n 30 "$log"
    failed=1
  fi
done
exit $failed
