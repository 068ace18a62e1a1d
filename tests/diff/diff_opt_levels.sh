#!/usr/bin/env bash
# sprof-diff keyed by Ruby identity (issue 19, must-have 5): the example
# built at -O1 and at -O2 (C names, clones and inlining differ) is profiled
# once each; the diff must join each Ruby method of the example into one
# row with samples on both sides, and each side's total share of it must be
# within 4 pp of the CPU split the example measured itself in that run
# (SPROF_EXAMPLE_SPLIT: per-method thread CPU).
set -euo pipefail
: "${SPROF_BIN:?}" "${SPROF_BUILD:?}" "${SPROF_LIB:?}"
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$SPROF_BUILD/tests/diff/optlevels
fail() { echo "diff_opt_levels: FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
for o in O1 O2; do
  "$src/examples/build.sh" "$work/app-$o" --bin "$SPROF_BIN" -- "-$o" >"$work/build-$o.log" 2>&1 ||
    { cat "$work/build-$o.log" >&2; fail "building the example at -$o"; }
  SPROF_QUIET=1 SPROF_OUT="$work/$o.bin" SPROF_HZ=2000 SPROF_EXAMPLE_SPLIT="$work/split-$o.txt" \
    LD_PRELOAD="$SPROF_LIB/libsprof.so" "$work/app-$o" 0.8 >/dev/null || fail "running the -$o build"
done
unset ASAN_OPTIONS
# the two builds really differ in their C
cmp -s "$work/app-O1" "$work/app-O2" && fail "the -O1 and -O2 binaries are identical"
"$SPROF_BIN/sprof-diff" --json -b "$work/O1.bin" "$work/app-O1.symmap" -a "$work/O2.bin" "$work/app-O2.symmap" \
  >"$work/diff.json" 2>"$work/diff.err" || { cat "$work/diff.err" >&2; fail "sprof-diff"; }
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
d = json.load(open(f"{work}/diff.json"))
rows = d["rows"]
def split(path):
    out = {}
    for line in open(path):
        f = line.split()
        if f and f[0] == "method":
            out[" ".join(f[1:-2])] = float(f[-1])
    return out
truth = {"before": split(f"{work}/split-O1.txt"), "after": split(f"{work}/split-O2.txt")}
bad = []
for method in truth["before"]:
    matches = [r for r in rows if r["method"] == method]
    if len(matches) != 1:
        bad.append(f"{method}: {len(matches)} rows (want 1)")
        continue
    r = matches[0]
    for side in ("before", "after"):
        share = r["total"][side + "_pct"]
        want = truth[side][method]
        print(f"{method:24s} {side:6s} profile {share:6.2f}%  measured {want:6.2f}%")
        if abs(share - want) > 4:
            bad.append(f"{method} {side}: {share:.2f}% against {want:.2f}% measured")
if bad:
    sys.exit("diff_opt_levels: FAIL: " + "; ".join(bad))
print("diff_opt_levels: PASS")
PY
