#!/bin/sh
# bench_smoke: bench/run --smoke prints every row of its table.
set -u
out=$(mktemp "${TMPDIR:-/tmp}/bench-smoke-XXXXXX")
trap 'rm -f "$out" "$out.err"' EXIT
fail() { echo "bench_smoke: $*"; echo "--- stdout"; cat "$out"; echo "--- stderr"; tail -20 "$out.err"; exit 1; }

"$SPROF_SRC/bench/run" --smoke --build "$SPROF_BUILD" >"$out" 2>"$out.err" || fail "bench/run exited $?"

# a row is there when its label is followed by figures or by "skipped:"
row() { # LABEL HZ_OR_THREADS
    grep -Eq "^$1 +$2 " "$out" || fail "no row for '$1' at $2"
    if grep -E "^$1 +$2 " "$out" | grep -q 'no successful run'; then fail "row '$1' $2 has no successful run"; fi
}
for hz in 1000 10000; do
    row "floor: timer thread" $hz
    for m in perf_event cpuclock posix_timer itimer; do
        row "sprof preload $m" $hz
        row "sprof linked $m" $hz
    done
    row "perf record -g" $hz
    row "gperftools" $hz
done
for t in 1 2; do
    for p in "sprof preload perf_event" "sprof preload cpuclock" "perf record -g" "gperftools"; do
        row "$p" $t
    done
done
for l in "sprof-fold" "perf report --stdio" "perf script \\| stackcollapse-perf.pl" "sprof-symmap generation" \
         "symmap lookups/s" "addr2line -f -i" "== Bytes per sample" "== Targets"; do
    grep -Eq "^$l" "$out" || fail "no row '$l'"
done
n=$(grep -Ec ' (PASS|MISS|n/a)$' "$out")
[ "$n" -ge 17 ] || fail "expected >= 17 target verdicts, got $n"
echo "bench_smoke: every row printed ($(grep -c 'skipped' "$out") skipped)"
